package io.github.rspy.spark.sink;

import io.github.rspy.bridge.Demand;
import io.github.rspy.bridge.Drain;
import io.github.rspy.spark.common.ClientLostException;
import io.github.rspy.spark.common.StreamStats;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.spark.sql.streaming.StreamingQueryManager;
import org.reactivestreams.Subscriber;

/**
 * The one subscription of a registered subscriber, fed by the {@code reactive-streams} sink. A
 * commit offers a micro-batch ({@link #deliver}) and waits; one drain loop behind a
 * work-in-progress counter makes each row the subscriber's value and calls {@code onNext} while
 * there is demand, and runs on whichever thread signalled last: the commit, or a {@code request}
 * (so rows flow without a thread hand-off, as in RxJava's range). Signals are serial (§1.3) and
 * {@code onSubscribe} comes first (§1.9).
 *
 * <p><b>Bound.</b> A row becomes a value only when it is handed to {@code onNext}, within demand
 * (§1.1): besides the micro-batch's rows as bytes, nothing is buffered. The commit returns once
 * every row was processed: {@code onNext} returned, for a JVM subscriber; for a Python one, its
 * side reported it through the {@link SinkLink} (the bridge in between queues no more than the
 * demand Python signalled).
 *
 * <ul>
 *   <li>{@code request(n)} adds demand (capped at {@code Long.MAX_VALUE}, §3.17) and runs the
 *       drain; a request made inside {@code onNext} only adds demand, the running loop takes it:
 *       no recursion (§3.3).
 *   <li>{@code request(n <= 0)} ends the stream with {@code onError(IllegalArgumentException)}
 *       (§3.9); rows of that and later batches are dropped, the query goes on.
 *   <li>{@code cancel()}: rows of that and later batches are dropped (the query goes on); the
 *       subscriber is signalled nothing more and its reference is released (§3.13).
 *   <li>A subscriber method that throws (a Python subscriber that raises) has its subscription
 *       cancelled, the error is logged and nothing more is signalled (§2.13); unlike a cancel,
 *       the commit then fails the query with an error naming the subscriber and the exception.
 *   <li>The query's end (detected by the sink) is {@code onComplete}, or {@code onError} if the
 *       query failed. A stop interrupts the commit: the rest of its batch is left for a re-run.
 * </ul>
 */
final class SinkSubscription implements SinkEpochs {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");

    private final String name;
    private final StreamStats stats;
    private final String run;
    private final boolean acknowledging; // a Python subscriber: its SinkLink acknowledges rows
    private final int batchRows; // > 0: elements are Arrow batches of at most this many rows
    private final int columnRows; // > 0: rows may go as the bridge's ColumnRows of at most this many
    /** The most rows in one ColumnRows element to the bridge, and the fewest (fewer go one by one). */
    static final int COLUMN_ROWS_MAX = 65_536;
    static final int COLUMN_ROWS_MIN = 16;

    private final Object lock = new Object(); // the waiting commit's monitor
    private long failureAcked; // guarded by lock: rows processed when the subscriber failed

    private final Drain drain = Drain.inline(this::pass);
    private final AtomicLong requested = new AtomicLong(); // demand not yet used
    private final AtomicLong acknowledged = new AtomicLong(); // rows the subscriber processed
    private volatile long handed; // rows passed to onNext; written by the drain only
    private volatile Epoch epoch; // the batch a commit offers, or null
    private volatile Subscriber<Object> subscriber; // null once the stream is over (§3.13)
    private volatile boolean cancelled;
    private volatile IllegalArgumentException invalidRequest;
    private volatile IllegalStateException failure; // the subscriber threw (§2.13)
    private volatile boolean ending;
    private volatile Throwable endError;
    private volatile boolean ended;
    private boolean subscribed; // drain loop only
    private volatile boolean stopOnClientLoss;
    private volatile StreamingQueryManager queries;
    private volatile String queryId;
    private volatile long epochId = -1; // of the batch delivered last (SinkEpochs)
    private volatile long waitingSince; // System.nanoTime() when the waiting commit began; 0: none waits
    private volatile long lastBatchWaitNanos; // written by the commit thread only
    private volatile long totalWaitNanos; // written by the commit thread only

    SinkSubscription(String name, Subscriber<Object> subscriber, StreamStats stats, String run,
            boolean acknowledging, int batchRows, int columnRows) {
        this.batchRows = batchRows;
        this.columnRows = columnRows;
        this.name = name;
        this.subscriber = subscriber;
        this.stats = stats;
        this.run = run;
        this.acknowledging = acknowledging;
    }

    /** A batch on offer: the drain reads it; handed counts from {@code base}. */
    private static final class Epoch {
        final SinkBatch batch;
        final DeliveryLog.Record record;
        final long skipped; // rows an earlier run delivered
        final long base; // handed when the batch was offered
        volatile boolean withdrawn; // the commit was interrupted: hand nothing more over

        Epoch(SinkBatch batch, DeliveryLog.Record record, long base) {
            this.batch = batch;
            this.record = record;
            this.skipped = batch.position();
            this.base = base;
        }

        long rows() {
            return batch.size() - skipped;
        }

        private Boolean columnRows; // drain only

        /** Whether its rows fit the bridge's ColumnRows (checked once). */
        boolean columnRows() {
            if (columnRows == null) {
                columnRows = io.github.rspy.bridge.arrow.ColumnRows.fits(batch.arrowSchema());
            }
            return columnRows;
        }
    }

    @Override
    public long epoch() {
        return epochId;
    }

    @Override
    public String queryId() {
        return queryId;
    }

    /** The query run (or query id) that took this subscription. */
    String run() {
        return run;
    }

    /** Whether the stream is over: cancelled, failed or completed. */
    boolean isEnded() {
        return ended || cancelled || invalidRequest != null || failure != null;
    }

    /** Signals {@code onSubscribe}. */
    void start() {
        drain();
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            if (invalidRequest == null) {
                invalidRequest = Demand.illegalRequest(n, "reactive-streams sink '" + name + "'"); // §3.9
            }
        } else {
            stats.addRequested(n);
            Demand.add(requested, n); // §3.8, §3.17
        }
        drain();
    }

    @Override
    public void cancel() {
        cancelled = true;
        drain();
    }

    /** Whether the stream failed because its Spark Connect client is gone (the query fails with it). */
    boolean isClientLost() {
        return failure instanceof ClientLostException;
    }

    /** What a lost Spark Connect client does to the query writing here: stop it, or fail it. */
    void onClientLoss(boolean stop, StreamingQueryManager queries, String queryId) {
        this.queries = queries;
        this.queryId = queryId;
        this.stopOnClientLoss = stop;
    }

    /**
     * The Spark Connect client of this subscriber is gone ({@link SinkLink#clientLost}): the
     * query fails at its current or next commit, or is stopped (option {@code onClientLoss}).
     */
    void clientLost(String reason) {
        String message = "the Spark Connect client that registered the subscriber '" + name + "' is gone (" + reason
                + ")";
        if (stopOnClientLoss) {
            ClientLostException.stopQuery(queries, queryId, message); // its stop interrupts a waiting commit
            return;
        }
        fail(new ClientLostException(message + ": the streaming query fails (option onClientLoss=stop stops it "
                + "instead)"), acknowledged.get());
        drain();
    }

    /** A Python subscriber processed {@code rows} more rows ({@link SinkLink}). */
    void acknowledge(long rows) {
        acknowledged.addAndGet(rows);
        wake();
    }

    /** A Python subscriber raised ({@link SinkLink}), after processing {@code rows} more. */
    void subscriberRaised(long rows, String error) {
        long processed = acknowledged.addAndGet(rows);
        fail(new IllegalStateException("the subscriber registered as '" + name + "' raised " + error
                + "; §2.13: its subscription is cancelled and the streaming query stops"), processed);
        drain();
    }

    /**
     * Delivers the rows of {@code batch} after those {@code record} says an earlier run delivered,
     * in order, as the subscriber's demand allows: blocks the calling (commit) thread until the
     * subscriber requested and processed them all; {@code record} follows how far it got.
     *
     * <p>Returns normally once they are delivered, or dropped because the subscriber cancelled
     * or ended the stream. Throws the subscriber's failure (§2.13), or, if the thread is
     * interrupted (the query is stopping), an {@code UncheckedIOException} of an {@code
     * InterruptedIOException}, which Spark takes for the stop it is.
     */
    void deliver(SinkBatch batch, DeliveryLog.Record record) {
        long began = System.nanoTime();
        waitingSince = began;
        try {
            deliverWaiting(batch, record);
        } finally {
            long waited = System.nanoTime() - began;
            lastBatchWaitNanos = waited;
            totalWaitNanos += waited;
            waitingSince = 0;
        }
    }

    /**
     * What the sink reports in a query's progress ({@code ReportsSinkMetrics}): the rows handed
     * to the subscriber, the demand it signalled and has not used, and how long commits waited
     * for it to request and process their batches (the backpressure a slow subscriber puts on
     * the query): the last batch's, all batches', and the one waiting now.
     */
    java.util.Map<String, String> metrics() {
        java.util.Map<String, String> metrics = new java.util.LinkedHashMap<>();
        long since = waitingSince;
        metrics.put("deliveredRows", Long.toString(handed));
        metrics.put("outstandingDemand", Long.toString(requested.get()));
        metrics.put("lastBatchWaitMs", Long.toString(lastBatchWaitNanos / 1_000_000));
        metrics.put("totalWaitMs", Long.toString(totalWaitNanos / 1_000_000));
        metrics.put("waitingMs", Long.toString(since == 0 ? 0 : (System.nanoTime() - since) / 1_000_000));
        return metrics;
    }

    private void deliverWaiting(SinkBatch batch, DeliveryLog.Record record) {
        batch.skip(record.delivered());
        record.open();
        epochId = record.epoch; // before its first row: what the subscriber reads with it
        Epoch offered = new Epoch(batch, record, handed); // the drain is idle: no batch on offer
        epoch = offered;
        drain();
        try {
            synchronized (lock) {
                while (!isOver() && (handed - offered.base < offered.rows()
                        || acknowledged.get() - offered.base < offered.rows())) {
                    lock.wait();
                }
            }
        } catch (InterruptedException e) {
            offered.withdrawn = true; // the record keeps what was delivered: a re-run delivers the rest
            epoch = null;
            stats.addDropped(Math.max(0, offered.rows() - (handed - offered.base)));
            try {
                record.interrupted(); // saved before the interrupt is set again: file writes refuse it
            } catch (RuntimeException notSaved) {
                LOG.log(Level.WARNING, "a stopped delivery of the sink's subscriber '" + name + "' was not recorded "
                        + "in the checkpoint: a new driver delivers that batch from its start", notSaved);
            }
            Thread.currentThread().interrupt();
            // What Spark recognises as the query being stopped.
            throw new UncheckedIOException(new InterruptedIOException("interrupted while waiting for the demand "
                    + "of the subscriber registered as '" + name + "'"));
        }
        offered.withdrawn = true;
        epoch = null;
        stats.addDropped(Math.max(0, offered.rows() - (handed - offered.base)));
        IllegalStateException failed = failure;
        if (failed != null) {
            long delivered;
            synchronized (lock) {
                delivered = offered.skipped + Math.max(0, failureAcked - offered.base);
            }
            try {
                record.seal(delivered);
            } catch (RuntimeException notSaved) {
                failed.addSuppressed(notSaved);
            }
            throw failed;
        }
        record.complete(); // delivered, or dropped after a cancel (the query goes on)
    }

    private volatile Runnable afterQueryEnd;

    /** Runs {@code hook} when the query that took this subscription ends. */
    void afterQueryEnd(Runnable hook) {
        afterQueryEnd = hook;
    }

    /** The query ended: {@code onComplete}, or {@code onError(failure)}. */
    void end(Throwable queryFailure) {
        LocalHandover.drop(this); // rows of a write the query's end left behind
        Runnable hook = afterQueryEnd;
        if (hook != null) {
            afterQueryEnd = null;
            hook.run();
        }
        if (ending) {
            return;
        }
        endError = queryFailure;
        ending = true;
        drain();
    }

    private boolean isOver() {
        return cancelled || invalidRequest != null || failure != null || ending || subscriber == null;
    }

    private void wake() {
        synchronized (lock) {
            lock.notifyAll();
        }
    }

    private void fail(IllegalStateException error, long processed) {
        synchronized (lock) {
            if (failure == null) {
                failureAcked = processed;
                failure = error;
            }
            lock.notifyAll();
        }
    }

    private void drain() {
        drain.signal(); // a signal during a pass is taken by it: no recursion from onNext into request (§3.3)
    }

    private void pass() {
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
            } else if (cancelled || failure != null) {
                finish(); // §3.13; a failed subscriber is signalled nothing more (§2.13)
                s = null;
            }
        }
        Epoch e = epoch;
        if (s != null && e != null) {
            s = emit(s, e);
        }
        if (s != null && ending) {
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
        Epoch offered = epoch;
        if (offered == null || !offered.batch.hasNext() || isOver()) {
            wake(); // a commit may wait for what this pass did (acknowledge() wakes it for the rest)
        }
    }

    /** Hands rows of {@code e} to {@code s} while there is demand (§1.1); null if {@code s} failed. */
    private Subscriber<Object> emit(Subscriber<Object> s, Epoch e) {
        if (batchRows > 0) {
            return emitBatches(s, e);
        }
        long demand = requested.get();
        long emitted = 0;
        boolean any = demand != 0 && e.batch.hasNext();
        if (any) {
            stats.addBuffered(1); // the row inside onNext: one at a time (counted once per run, not per row)
        }
        boolean columns = columnRows > 0 && e.columnRows();
        while (emitted != demand && e.batch.hasNext()) { // no more than requested (§1.1)
            if (e.withdrawn || cancelled || invalidRequest != null || failure != null || ending) {
                break; // checked before each row (§1.8 for a cancel)
            }
            // Rows as Arrow columns, as many as the demand allows (§1.1), all but the batch's last.
            long many = columns ? Math.min(Math.min(demand - emitted, e.batch.left() - 1), columnRows) : 0;
            Object item;
            int rows = 1;
            if (many >= COLUMN_ROWS_MIN) {
                try (org.apache.arrow.vector.VectorSchemaRoot root = e.batch.nextBatch((int) many)) {
                    item = io.github.rspy.bridge.arrow.ColumnRows.of(root);
                }
                rows = (int) many;
                stats.addArrowRows(rows);
            } else {
                item = e.batch.next(); // made now: nothing waits as a value
                if (acknowledging && !e.batch.hasNext()) {
                    item = SinkLink.markLast(item); // Python reports what it processed after this one
                }
            }
            emitted += rows;
            handed += rows; // the drain is the only writer
            long count = handed - e.base;
            e.record.advance(e.skipped + count);
            try {
                s.onNext(item);
            } catch (Throwable t) {
                s = failed(s, "onNext", t); // the row it threw on counts as delivered
                break;
            }
            if (!acknowledging) {
                acknowledged.addAndGet(rows); // a JVM subscriber processed it in onNext
            }
        }
        if (any) {
            stats.addBuffered(-1);
        }
        if (emitted != 0) {
            stats.addElements(emitted);
            Demand.produced(requested, emitted); // §3.17: unbounded demand is never used up
        }
        return s;
    }

    /**
     * Hands rows of {@code e} to {@code s} as Arrow batches of at most {@code batchRows} rows, one
     * per unit of demand (§1.1); null if {@code s} failed or a batch could not be made. Each root
     * is made when it is handed over and closed when {@code onNext} returns: a subscriber that
     * keeps one copies it (the bridge does, for Python). Handed and acknowledged count rows.
     */
    private Subscriber<Object> emitBatches(Subscriber<Object> s, Epoch e) {
        long demand = requested.get();
        long emitted = 0;
        boolean any = demand != 0 && e.batch.hasNext();
        if (any) {
            stats.addBuffered(1); // the batch inside onNext
        }
        while (emitted != demand && e.batch.hasNext()) { // no more than requested (§1.1)
            if (e.withdrawn || cancelled || invalidRequest != null || failure != null || ending) {
                break; // checked before each batch (§1.8 for a cancel)
            }
            org.apache.arrow.vector.VectorSchemaRoot root;
            try {
                root = e.batch.nextBatch(batchRows);
            } catch (RuntimeException | OutOfMemoryError t) { // the sink's failure, not the subscriber's
                IllegalStateException error = new IllegalStateException("the sink could not make an Arrow batch "
                        + "for the subscriber registered as '" + name + "': " + t, t);
                fail(error, acknowledged.get()); // what it processed is delivered; the rest goes again
                Subscriber<Object> ended = finish();
                try {
                    ended.onError(error);
                } catch (Throwable thrown) {
                    logFailure(ended, "onError", thrown);
                }
                s = null;
                break;
            }
            int rows = root.getRowCount();
            stats.addArrowRows(rows);
            emitted++;
            handed += rows; // the drain is the only writer
            e.record.advance(e.skipped + (handed - e.base));
            try {
                s.onNext(root);
            } catch (Throwable t) {
                s = failed(s, "onNext", t); // the batch it threw on counts as delivered
                break;
            } finally {
                root.close();
            }
            if (!acknowledging) {
                acknowledged.addAndGet(rows); // a JVM subscriber processed it in onNext
            }
        }
        if (any) {
            stats.addBuffered(-1);
        }
        if (emitted != 0) {
            stats.addElements(emitted);
            Demand.produced(requested, emitted); // §3.17: unbounded demand is never used up
        }
        return s;
    }

    /** Ends the stream: releases the subscriber (§3.13). */
    private Subscriber<Object> finish() {
        Subscriber<Object> s = subscriber;
        subscriber = null;
        ended = true;
        return s;
    }

    /** §2.13: a subscriber method threw: cancel, log, signal nothing more, fail the query. */
    private Subscriber<Object> failed(Subscriber<Object> s, String method, Throwable t) {
        IllegalStateException error = new IllegalStateException("the subscriber registered as '" + name + "' ("
                + s.getClass().getName() + ") threw from " + method + ": " + t
                + "; §2.13: its subscription is cancelled and the streaming query stops", t);
        fail(error, handed);
        finish();
        logFailure(s, method, t);
        return null;
    }

    private void logFailure(Subscriber<Object> s, String method, Throwable t) {
        LOG.log(Level.WARNING, "§2.13: " + method + " of the subscriber registered as '" + name + "' ("
                + s.getClass().getName() + ") threw; its subscription is cancelled", t);
    }
}
