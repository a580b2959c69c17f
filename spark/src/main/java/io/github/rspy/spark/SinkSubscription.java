package io.github.rspy.spark;

import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The one subscription of a registered subscriber, fed by the {@code reactive-streams} sink:
 * {@link #deliver} hands over a micro-batch's rows only as the subscriber's demand allows,
 * waiting for more demand in between, so a slow subscriber slows the query down instead of
 * growing a buffer. Every signal goes through one drain loop behind a work-in-progress counter,
 * so signals are serial (§1.3) and {@code onSubscribe} comes first (§1.9).
 *
 * <ul>
 *   <li>{@code request(n)} only adds demand (capped at {@code Long.MAX_VALUE}, §3.17) and wakes
 *       the waiting commit: it never delivers on the caller's stack (§3.3).
 *   <li>{@code request(n <= 0)} ends the stream with {@code onError(IllegalArgumentException)}
 *       (§3.9); rows of that and later batches are dropped.
 *   <li>{@code cancel()}: rows of that and later batches are dropped (the query goes on); the
 *       subscriber is signalled nothing more and its reference is released (§3.13).
 *   <li>The query's end (detected by the sink) is {@code onComplete}, or {@code onError} if the
 *       query failed, after the rows already handed over.
 *   <li>A subscriber method that throws has its subscription cancelled; the error is logged and
 *       nothing more is signalled (§2.13).
 * </ul>
 */
final class SinkSubscription implements Subscription {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");

    private final String name;
    private final StreamStats stats;
    private final String run;

    private final Object demandLock = new Object();
    private long credit; // guarded by demandLock: demand not yet claimed by deliver()

    private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger wip = new AtomicInteger();
    private volatile Subscriber<Object> subscriber; // null once the stream is over (§3.13)
    private volatile boolean cancelled;
    private volatile IllegalArgumentException invalidRequest;
    private volatile boolean ending;
    private volatile Throwable endError;
    private volatile boolean ended;
    private boolean subscribed; // drain loop only

    SinkSubscription(String name, Subscriber<Object> subscriber, StreamStats stats, String run) {
        this.name = name;
        this.subscriber = subscriber;
        this.stats = stats;
        this.run = run;
    }

    /** The query run (or query id) that took this subscription. */
    String run() {
        return run;
    }

    /** Whether the stream is over: cancelled, failed or completed. */
    boolean isEnded() {
        return ended || cancelled || invalidRequest != null;
    }

    /** Signals {@code onSubscribe}. */
    void start() {
        drain();
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            if (invalidRequest == null) {
                invalidRequest = new IllegalArgumentException(
                        "§3.9: request(n) needs n > 0, got " + n + " (reactive-streams sink '" + name + "')");
            }
            wake();
            drain();
            return;
        }
        stats.addRequested(n);
        synchronized (demandLock) {
            credit = credit + n < 0 ? Long.MAX_VALUE : credit + n; // §3.17
            demandLock.notifyAll();
        }
    }

    @Override
    public void cancel() {
        cancelled = true;
        wake();
        drain();
    }

    /**
     * Hands {@code items} to the subscriber in order, as its demand allows: blocks the calling
     * (commit) thread until the subscriber has requested them all, the stream has ended (the
     * rest are dropped) or the thread is interrupted (the query is stopping).
     */
    void deliver(List<?> items) {
        int next = 0;
        try {
            while (next < items.size()) {
                long claimed;
                synchronized (demandLock) {
                    while (credit == 0 && !isOver()) {
                        demandLock.wait();
                    }
                    if (isOver()) {
                        break;
                    }
                    claimed = Math.min(credit, items.size() - next);
                    credit -= claimed;
                }
                for (long i = 0; i < claimed; i++) {
                    stats.addBuffered(1); // within demand: never more than requested
                    queue.offer(items.get(next++));
                }
                drain();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stats.addDropped(items.size() - next);
            // What Spark recognises as the query being stopped.
            throw new UncheckedIOException(new InterruptedIOException(
                    "interrupted while waiting for the demand of the subscriber registered as '" + name + "'"));
        }
        stats.addDropped(items.size() - next);
    }

    /** The query ended: {@code onComplete}, or {@code onError(failure)}, after what was handed over. */
    void end(Throwable failure) {
        if (ending) {
            return;
        }
        endError = failure;
        ending = true;
        wake();
        drain();
    }

    private boolean isOver() {
        return cancelled || invalidRequest != null || ending || subscriber == null;
    }

    private void wake() {
        synchronized (demandLock) {
            demandLock.notifyAll();
        }
    }

    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            Subscriber<Object> s = subscriber;
            if (s != null && !subscribed) {
                subscribed = true;
                try {
                    s.onSubscribe(this);
                } catch (Throwable t) {
                    s = failed(s, "onSubscribe", t);
                }
            }
            if (s != null) {
                IllegalArgumentException invalid = invalidRequest;
                if (invalid != null) {
                    s = finish();
                    try {
                        s.onError(invalid); // §3.9
                    } catch (Throwable t) {
                        logFailure(s, "onError", t);
                    }
                    s = null;
                } else if (cancelled) {
                    finish();
                    s = null;
                }
            }
            while (s != null) {
                if (cancelled || invalidRequest != null) {
                    break; // the next pass ends the stream
                }
                Object item = queue.poll();
                if (item == null) {
                    break;
                }
                stats.addBuffered(-1);
                stats.addElements(1); // counted as handed over, before the subscriber sees it
                try {
                    s.onNext(item);
                } catch (Throwable t) {
                    s = failed(s, "onNext", t);
                }
            }
            if (s != null && ending && queue.isEmpty() && !cancelled && invalidRequest == null) {
                s = finish();
                Throwable error = endError;
                try {
                    if (error == null) {
                        s.onComplete();
                    } else {
                        s.onError(error);
                    }
                } catch (Throwable t) {
                    logFailure(s, error == null ? "onComplete" : "onError", t);
                }
            }
            if (subscriber == null) {
                clear();
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    /** Ends the stream: releases the subscriber (§3.13) and wakes a waiting commit. */
    private Subscriber<Object> finish() {
        Subscriber<Object> s = subscriber;
        subscriber = null;
        ended = true;
        clear();
        wake();
        return s;
    }

    private void clear() {
        while (queue.poll() != null) {
            stats.addBuffered(-1);
            stats.addDropped(1);
        }
    }

    /** §2.13: a subscriber method threw: cancel, log, signal nothing more. */
    private Subscriber<Object> failed(Subscriber<Object> s, String method, Throwable t) {
        cancelled = true;
        finish();
        logFailure(s, method, t);
        return null;
    }

    private void logFailure(Subscriber<Object> s, String method, Throwable t) {
        LOG.log(Level.WARNING, "§2.13: " + method + " of the subscriber registered as '" + name + "' ("
                + s.getClass().getName() + ") threw; its subscription is cancelled", t);
    }
}
