package io.github.rspy.bridge;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Work a drain will need next, begun now on another thread so that it overlaps what the drain
 * does meanwhile (a batch encoded while the batch before it is delivered to Python). Whoever
 * comes first does it: the other thread if it began, else {@link #join} itself; so it runs once,
 * and never waits for a thread that is not coming (a pool refusing it, or busy).
 *
 * @param <R> the result; the work must return failures in it, not throw
 */
final class WorkAhead<R> {
    private static final int WAITING = 0;
    private static final int WORKING = 1;
    private static final int DONE = 2;

    private final Supplier<R> work;
    private final AtomicInteger state = new AtomicInteger(WAITING);
    private R result; // published by the write of DONE
    private volatile boolean doneAhead; // by the thread it was offered to

    private WorkAhead(Supplier<R> work) {
        this.work = work;
    }

    /** {@code work}, to be done by {@link #join} unless offered to another thread first. */
    static <R> WorkAhead<R> of(Supplier<R> work) {
        return new WorkAhead<>(work);
    }

    /** Offers the work to {@code runOn} (an executor's; false if it refused, and join does it). */
    void offerTo(Predicate<Runnable> runOn) {
        runOn.test(this::runIfWaiting);
    }

    private void runIfWaiting() {
        if (!state.compareAndSet(WAITING, WORKING)) {
            return; // join() took it
        }
        doneAhead = true;
        R made = work.get();
        synchronized (this) {
            result = made;
            state.set(DONE);
            notifyAll();
        }
    }

    /** Whether the thread it was offered to did it (else {@link #join} did, or nobody yet). */
    boolean wasDoneAhead() {
        return doneAhead;
    }

    /** Whether it is done (its result ready: {@link #join} would not wait or work). */
    boolean isDone() {
        return state.get() == DONE;
    }

    /**
     * Drops the work if nobody began it: true if so (it never runs; its inputs are the caller's
     * to free), false if it runs or ran (the work frees them itself).
     */
    boolean cancel() {
        return state.compareAndSet(WAITING, DONE);
    }

    /** The result: done here if no other thread began it, else waited for. */
    R join() {
        if (state.compareAndSet(WAITING, WORKING)) {
            return work.get();
        }
        boolean interrupted = false;
        synchronized (this) {
            while (state.get() != DONE) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true; // the work is short and running: finish waiting for it
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return result;
    }
}
