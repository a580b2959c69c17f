package io.github.rspy.bridge;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.logging.Level;

/**
 * Runs the tasks given to it one at a time, in order, on a pool's threads: on the in-process
 * backend, the bridge's drains (which all call Python), so that one thread at a time is in Python
 * instead of the pool's threads taking turns at the GIL. (Measured with 1,000 streams of longs
 * into Python subscribers: each batch's call paid for the other threads' hand-offs of the GIL,
 * 1.6–1.9 M elements/s with four threads calling Python against about 3 M/s through one.)
 *
 * <p>A task that does not return soon, such as a subscriber blocking in {@code on_next}, does not
 * hold up the tasks behind it: while the lane has work, a check every {@code stallMillis} (on the
 * JDK's shared delay thread) starts one more drainer, up to {@code maxDrainers}, if every drainer
 * has been inside one task for longer than that and tasks are waiting; a task given to a lane
 * whose drainers are all stuck starts one at once. A drainer leaves once another one is moving, so
 * the lane narrows back to one when the stuck task returns.
 *
 * <p>The pool must not be shut down while tasks may still be given (see {@code BridgeRuntime}):
 * a drainer the pool refuses is not started, and the tasks wait for the drainers running.
 */
final class SerialLane {
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicInteger drainers = new AtomicInteger();
    /** Per drainer slot: System.nanoTime() when its task began, or 0 (a free or idle slot). */
    private final AtomicLongArray taskStarted;
    private final AtomicIntegerArray slotTaken;
    private final AtomicBoolean watching = new AtomicBoolean();
    private final Executor pool;
    private final long stallNanos;
    private final long stallMillis;

    SerialLane(Executor pool, int maxDrainers, long stallMillis) {
        if (maxDrainers < 1) {
            throw new IllegalArgumentException("a lane has at least 1 drainer, got " + maxDrainers);
        }
        this.pool = pool;
        this.taskStarted = new AtomicLongArray(maxDrainers);
        this.slotTaken = new AtomicIntegerArray(maxDrainers);
        this.stallMillis = stallMillis;
        this.stallNanos = TimeUnit.MILLISECONDS.toNanos(stallMillis);
    }

    /** Queues {@code task}, and starts a drainer if none runs or every one is stuck. */
    void execute(Runnable task) {
        tasks.offer(task);
        int n = drainers.get();
        if (n == 0 || stuck() >= n) {
            startDrainer(n);
        }
    }

    /** The drainers running now, never more than {@code maxDrainers}. */
    int drainers() {
        return drainers.get();
    }

    /** Starts a drainer if {@code expected} drainers run and the lane may widen. */
    private void startDrainer(int expected) {
        if (expected >= taskStarted.length() || !drainers.compareAndSet(expected, expected + 1)) {
            return; // another thread started one, or the lane is as wide as it goes
        }
        try {
            pool.execute(this::drain);
        } catch (RejectedExecutionException e) {
            drainers.decrementAndGet(); // shut down: the drainers running take what is queued
            return;
        } catch (RuntimeException | Error e) { // no thread for it (out of memory): not counted
            drainers.decrementAndGet();
            throw e;
        }
        ensureWatching();
    }

    private void drain() {
        int slot = takeSlot();
        try {
            for (;;) {
                Runnable task;
                while ((task = tasks.poll()) != null) {
                    taskStarted.set(slot, System.nanoTime() | 1); // never 0 while a task runs
                    try {
                        task.run();
                    } catch (Throwable e) { // a drain pass must not throw: the lane goes on
                        BridgeRuntime.LOG.log(Level.SEVERE, "a drain pass threw", e);
                    } finally {
                        taskStarted.set(slot, 0);
                    }
                    int n = drainers.get();
                    if (n > 1 && n - stuck() > 1 && drainers.compareAndSet(n, n - 1)) {
                        return; // the lane is moving without this drainer: narrow it again
                    }
                }
                int n = drainers.decrementAndGet();
                // A task queued after the poll above and before the decrement found this drainer
                // still counted and started none: take it, unless another drainer has since.
                if (tasks.isEmpty() || !drainers.compareAndSet(n, n + 1)) {
                    return;
                }
                ensureWatching(); // the watch may have seen the lane idle meanwhile, and stopped
            }
        } finally {
            slotTaken.set(slot, 0);
        }
    }

    private int takeSlot() {
        for (int spins = 0; ; spins++) {
            for (int slot = 0; slot < slotTaken.length(); slot++) {
                if (slotTaken.get(slot) == 0 && slotTaken.compareAndSet(slot, 0, 1)) {
                    return slot;
                }
            }
            // At most maxDrainers drainers run, so a slot frees up at once: a drainer that stopped
            // counting itself is about to release its slot.
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /** Drainers inside one task since longer than the stall time. */
    private int stuck() {
        long now = System.nanoTime();
        int count = 0;
        for (int i = 0; i < taskStarted.length(); i++) {
            long started = taskStarted.get(i);
            if (started != 0 && now - started > stallNanos) {
                count++;
            }
        }
        return count;
    }

    private void ensureWatching() {
        if (watching.compareAndSet(false, true)) {
            watchLater();
        }
    }

    private void watchLater() {
        CompletableFuture.delayedExecutor(stallMillis, TimeUnit.MILLISECONDS, Runnable::run).execute(this::watch);
    }

    /** Widens a lane whose every drainer is stuck while tasks wait; runs while the lane has work. */
    private void watch() {
        int n = drainers.get();
        if (n == 0) {
            watching.set(false);
            if (drainers.get() == 0 || !watching.compareAndSet(false, true)) {
                return; // idle; the next drainer to start watches again
            }
        } else if (!tasks.isEmpty() && stuck() >= n) {
            try {
                startDrainer(n); // every drainer is stuck and tasks wait: one more
            } catch (RuntimeException | Error e) { // no thread for it now: the next check tries again
                BridgeRuntime.LOG.log(Level.WARNING, "could not start a drainer", e);
            }
        }
        watchLater();
    }
}
