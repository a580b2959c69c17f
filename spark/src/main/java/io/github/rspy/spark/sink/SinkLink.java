package io.github.rspy.spark.sink;

/**
 * What a Python subscriber of the {@code reactive-streams} sink shares with the sink, beside the
 * bridge's own subscription: rows reach Python as tuples (or Arrow batches, below), and the
 * Python side
 *
 * <ul>
 *   <li>reads the column names once ({@link #fieldNames()}, set when a query claims the
 *       subscriber, before {@code onSubscribe}) to make {@code pyspark.sql.Row}s of them;
 *   <li>reports how many rows its subscriber processed ({@link #processed}) after the last row
 *       of each micro-batch, which arrives as a list instead of a tuple ({@link #markLast}), so
 *       that the batch's commit returns only once its rows were processed, not merely queued
 *       for Python, at the cost of one crossing per micro-batch;
 *   <li>reports that its subscriber raised ({@link #raised}), before the bridge cancels the
 *       subscription (§2.13), so that the query fails naming the error instead of going on as
 *       after a plain cancel.
 * </ul>
 *
 * <p>A subscriber that asked for Arrow batches ({@link #SinkLink(int)}) gets each micro-batch as
 * {@code VectorSchemaRoot}s of at most that many rows, one element each, which reach Python as
 * {@code pyarrow.RecordBatch}es: demand counts batches, and Python reports the rows of the
 * batches it processed after each crossing (no batch is marked last).
 *
 * Made by the Python side and passed to {@code StreamRegistry.registerPythonSubscriber}.
 */
public final class SinkLink {
    private final int batchRows;
    private volatile String[] fieldNames;
    private volatile SinkSubscription subscription;

    /** A link for a subscriber of rows. */
    public SinkLink() {
        this.batchRows = 0;
    }

    /**
     * A link for a subscriber of Arrow batches of at most {@code maxRowsPerBatch} rows, or Spark's
     * {@code spark.sql.execution.arrow.maxRecordsPerBatch} (read when a query claims it) if 0.
     */
    public SinkLink(int maxRowsPerBatch) {
        if (maxRowsPerBatch < 0) {
            throw new IllegalArgumentException("the rows per Arrow batch must be >= 0 (0: Spark's "
                    + "spark.sql.execution.arrow.maxRecordsPerBatch), got " + maxRowsPerBatch);
        }
        this.batchRows = maxRowsPerBatch == 0 ? -1 : maxRowsPerBatch;
    }

    /** Rows per Arrow batch: 0 for a subscriber of rows, -1 for Spark's default. */
    int batchRows() {
        return batchRows;
    }

    private volatile int columnRowsMost;

    /**
     * Lets a subscriber of rows that is not the bridge's own (Spark Connect's relay) take rows as
     * the bridge's {@code ColumnRows}, at most {@code most} in one element, each counting against
     * its demand (§1.1); before the subscriber is registered.
     */
    public void takeColumnRows(int most) {
        if (most < 1) {
            throw new IllegalArgumentException("the most column rows in one element must be >= 1, got " + most);
        }
        columnRowsMost = most;
    }

    /** The most rows one ColumnRows element may hold for this link's subscriber, 0 if it takes none. */
    int columnRowsMost() {
        return columnRowsMost;
    }

    /** Bytes the sink's Arrow batches hold now, of every subscriber (for tests and diagnostics). */
    public static long arrowAllocatedBytes() {
        return SinkBatch.arrowAllocatedBytes();
    }

    /**
     * Rows write tasks handed over in memory ({@code LocalHandover}, local mode) that no commit
     * has taken yet, of every sink (for tests and diagnostics): 0 between micro-batches.
     */
    public static long parkedRows() {
        return LocalHandover.parkedRows();
    }

    /**
     * Rows the sink's commits took from write tasks in memory since the JVM started, of every
     * sink (for tests and diagnostics): the rest came in the tasks' results (a cluster's executors).
     */
    public static long handedOverRows() {
        return LocalHandover.handedRows();
    }

    /** Micro-batch writes open in memory now, of every sink (for tests and diagnostics). */
    public static int openWrites() {
        return LocalHandover.openWrites();
    }

    /** The sink's column names, or null before a query claimed the subscriber. */
    public String[] fieldNames() {
        return fieldNames;
    }

    /**
     * The epoch of the micro-batch whose rows are being delivered ({@link SinkEpochs#epoch}),
     * -1 before a query claimed the subscriber: Python reads it once per micro-batch, at its
     * first row (the commit of a micro-batch waits for its last row to be processed, so no row
     * of the next one is on its way before then).
     */
    public long epoch() {
        SinkSubscription s = subscription;
        return s == null ? -1 : s.epoch();
    }

    /** The id of the streaming query that claimed the subscriber, or null. */
    public String queryId() {
        SinkSubscription s = subscription;
        return s == null ? null : s.queryId();
    }

    /** The Python subscriber processed {@code rows} more rows. */
    public void processed(long rows) {
        SinkSubscription s = subscription;
        if (s != null) {
            s.acknowledge(rows);
        }
    }

    /**
     * The Python subscriber raised: {@code processed} more rows were handed to it, the last of
     * them the one it raised on (0 if it raised in {@code on_subscribe}); {@code error} names the
     * exception.
     */
    public void raised(long processed, String error) {
        SinkSubscription s = subscription;
        if (s != null) {
            s.subscriberRaised(processed, error);
        }
    }

    /**
     * The Spark Connect client of this subscriber went away: the query that took it fails, or
     * stops (its option {@code onClientLoss}), and {@code afterQueryEnd} runs once it has
     * ended (at once if no query took it).
     */
    public void clientLost(String reason, Runnable afterQueryEnd) {
        SinkSubscription s = subscription;
        if (s != null) {
            s.afterQueryEnd(afterQueryEnd);
            s.clientLost(reason);
        } else {
            afterQueryEnd.run();
        }
    }

    /** Whether a query took the subscriber. */
    public boolean isClaimed() {
        return subscription != null;
    }

    /** The last row of a micro-batch, as Python tells it from the others: a list, not a tuple. */
    static Object markLast(Object values) {
        return java.util.Arrays.asList((Object[]) values);
    }

    /** A query claimed the subscriber: called before its {@code onSubscribe}. */
    void attach(String[] names, SinkSubscription claimed) {
        fieldNames = names;
        subscription = claimed;
    }
}
