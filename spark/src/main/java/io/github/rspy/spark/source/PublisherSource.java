package io.github.rspy.spark.source;

import io.github.rspy.bridge.Demand;
import io.github.rspy.bridge.FromPythonPublisher;
import io.github.rspy.bridge.arrow.ArrowHandover;
import io.github.rspy.spark.common.ClientLostException;
import io.github.rspy.spark.common.ElementRows;
import io.github.rspy.spark.common.Format;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.streaming.StreamingQueryManager;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.CompositeReadLimit;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.ReportsSourceMetrics;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A Structured Streaming micro-batch source fed by a registered {@code Publisher}, asking it
 * only for what the query can take, a little ahead of the query.
 *
 * <p><b>Demand.</b> The source holds at most {@code bound = maxRecordsPerTrigger × (1 +
 * prefetch)} elements (see {@link SourceOptions}): received elements not yet released by a
 * finished micro-batch, plus demand signalled and not yet met, never exceed it (§1.1 held end to
 * end). It requests the bound when the query starts, and as much again as each finished
 * micro-batch releases, so the next batch's elements arrive while Spark runs this one. A
 * publisher that emits more than requested fails the query (§1.1).
 *
 * <p><b>Rows.</b> Each element becomes an {@code UnsafeRow} as it arrives ({@link ElementRows});
 * a micro-batch's partitions carry those bytes to the executors. Offsets count elements ({@link
 * ElementOffset}).
 *
 * <p><b>What is available.</b> Before it answers Spark with less than a batch's worth ({@code
 * maxRecordsPerTrigger}; under Trigger.Once a batch then takes all it finds), the
 * source lets the publisher answer the demand under way: it waits until no
 * element has arrived for {@link #LINGER_MS} (and, for a Python publisher, the bridge has
 * delivered all it pushed), at most {@link #MAX_WAIT_MS} in all, or {@link
 * #FIRST_ELEMENT_WAIT_MS} for a subscription's first element (then {@link #MAX_WAIT_MS} from
 * it on). So {@code processAllAvailable()}
 * returns once every element the publisher had ready is processed, and {@code
 * Trigger.AvailableNow} stops once the publisher has completed or has nothing ready.
 * {@link #reportLatestOffset} reports every element received, not only what fits one trigger.
 *
 * <p><b>Errors and completion.</b> The elements received before a publisher's {@code onError}
 * (or before an element that does not fit the schema) are processed; then the query fails with
 * that very exception. After {@code onComplete} and the last element's batch, the source's
 * {@code exhausted} metric is {@code "true"} (progress {@code sources[0].metrics}).
 *
 * <p><b>Restarts.</b> A publisher is not replayable. When a query stops, the elements the source
 * received and Spark has not committed are kept for its checkpoint; a restart of the query in
 * the same driver continues with them, so a stop and restart lose nothing. Then it subscribes
 * again to the publisher registered under the name and numbers what that subscription emits on
 * from them (a cold publisher such as {@code rs.from_iterable} starts over from its first
 * element). Elements of a planned batch that are gone (the driver died) fail the query, or with
 * {@code failOnDataLoss=false} are counted in the {@code lostElements} metric with a warning.
 *
 * <p>Internal to the connectors: the format's provider makes it.
 */
public final class PublisherSource implements MicroBatchStream, SupportsTriggerAvailableNow, ReportsSourceMetrics {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");
    /** A publisher has nothing more ready after this long without an element. */
    static final long LINGER_MS = 100;
    /** ... and has finished a burst (a push across the bridge) after this long. */
    static final long SETTLE_MS = 5;
    /** The longest the source waits for the publisher before answering Spark. */
    static final long MAX_WAIT_MS = 500;
    /** ... for a subscription's first element: a publisher may need a while to start. */
    static final long FIRST_ELEMENT_WAIT_MS = 2_000;
    /** ... for a publisher to call {@code onSubscribe} (§1.9) at the start. */
    static final long SUBSCRIBE_WAIT_MS = 10_000;
    /** About how many bytes of rows one partition (one task) carries. */
    static final int PARTITION_BYTES = 512 * 1024;
    /** ... of Arrow batches, which reach the task through the block manager. */
    static final long ARROW_PARTITION_BYTES = 8L << 20;

    private final NamedPublisher entry;
    private final ElementRows rows;
    private final SourceOptions options;
    private final String checkpoint;
    private final long bound;
    private final StreamingQueryManager queries; // of the session that started the query, if known
    private volatile boolean stopping; // asked the query to stop: its Connect client is gone

    // Guarded by this.
    private SourceBuffer buffer; // rows (a RowBuffer) or, once the first element was a batch, an ArrowBuffer
    private boolean elementsKnown; // the first element arrived (or a restart's): rows or batches
    private boolean batchElements; // ... Arrow batches: demand counts batches, offsets rows
    private long largestBatch; // rows of the largest Arrow batch received: what a batch may bring
    // Broadcasts of planned micro-batches of Arrow batches, by their end: destroyed at their commit
    // (their tasks have ended), let go of at a stop (see letGo).
    private final java.util.TreeMap<Long, List<org.apache.spark.broadcast.Broadcast<byte[][]>>> broadcasts =
            new java.util.TreeMap<>();
    private final UnsafeRowWriter writer;
    private long outstanding; // demand signalled (or about to be) and not yet met
    private boolean started;
    private boolean stopped;
    private boolean completed;
    private Throwable error; // the publisher's, or an element's that did not fit
    private long lost;
    private long maxHeld;
    private long emitted; // elements (rows, or Arrow batches) the publisher emitted to this run
    private long lastActivity = System.nanoTime();
    private boolean firstArrived; // the subscription delivered an element
    private long firstArrivedAt; // System.nanoTime() of that element

    // Signals to the publisher's subscription, sent by one loop at a time (§2.7).
    private final AtomicInteger upstreamWip = new AtomicInteger();
    private final AtomicLong pendingDemand = new AtomicLong();
    private volatile Subscription upstream;
    // The subscription hands its Arrow elements over (a Python or Connect publisher's): the source
    // closes each. Kept apart from upstream, which the cancel clears while an element may still
    // be on its way in (the bridge's drain checked for a cancel just before it delivered it).
    private volatile boolean ownsElements;
    private volatile boolean cancelRequested;
    private volatile boolean upstreamDone;

    /** A source of {@code entry}'s publisher, as {@code rows}, for the query checkpointed at {@code checkpoint}. */
    public PublisherSource(NamedPublisher entry, ElementRows rows, SourceOptions options, String checkpoint,
            StreamingQueryManager queries) {
        this.entry = entry;
        this.queries = queries;
        this.rows = rows;
        this.options = options;
        this.checkpoint = checkpoint;
        this.bound = options.bound();
        this.writer = new UnsafeRowWriter(rows.width(), 64);
    }

    @Override
    public Offset initialOffset() {
        return new ElementOffset(0);
    }

    @Override
    public Offset deserializeOffset(String json) {
        return ElementOffset.parse(json);
    }

    @Override
    public ReadLimit getDefaultReadLimit() {
        return ReadLimit.maxRows(options.maxRecordsPerTrigger);
    }

    @Override
    public Offset latestOffset() {
        throw new UnsupportedOperationException("the reactive-streams source admits rows through "
                + "latestOffset(start, limit) (SupportsAdmissionControl)");
    }

    /** Trigger.AvailableNow: nothing to fix in advance; the query stops when nothing is ready. */
    @Override
    public void prepareForTriggerAvailableNow() {}

    /**
     * The end of the next micro-batch: up to {@code limit} of the elements received after
     * {@code startOffset}, once a batch's worth has arrived or the publisher has answered the
     * demand under way; null if there are none. Spark calls it once the batch ending at {@code startOffset} is finished, so its
     * elements are released here and as many more requested. With nothing left to take, a
     * publisher's error is thrown, as it came.
     */
    @Override
    public Offset latestOffset(Offset startOffset, ReadLimit limit) {
        long start = ElementOffset.of(startOffset);
        startAt(start, start);
        long most = maxRows(limit); // maxRecordsPerTrigger, unless Trigger.Once lifts it
        synchronized (this) {
            release(start);
        }
        signalUpstream();
        awaitReady(start, Math.min(most, options.maxRecordsPerTrigger), most); // a batch's worth (Once: then all)
        long end;
        Throwable failure = null;
        synchronized (this) {
            end = start + Math.min(Math.max(0, buffer.end() - start), most);
            if (batchElements && end > start) {
                end = ((ArrowBuffer) buffer).cut(start, end); // whole batches, at least one
            }
            if (end == start && error != null) {
                failure = error;
            }
            syncStats();
        }
        if (failure instanceof ClientLostException && options.stopOnClientLoss) {
            if (!stopping) {
                stopping = true;
                ClientLostException.stopQuery(queries,
                        SparkContext.getOrCreate().getLocalProperty(Format.QUERY_ID), failure.getMessage());
            }
            return null; // what it received is processed; the query stops rather than fails
        }
        if (failure != null) {
            throw unchecked(failure);
        }
        return end > start ? new ElementOffset(end) : null;
    }

    /** Every element received, whether or not one trigger can take them all. */
    @Override
    public synchronized Offset reportLatestOffset() {
        return started ? new ElementOffset(buffer.end()) : null;
    }

    @Override
    public InputPartition[] planInputPartitions(Offset startOffset, Offset endOffset) {
        long start = ElementOffset.of(startOffset);
        long end = ElementOffset.of(endOffset);
        startAt(start, end); // a restart re-runs the last planned batch before asking for a new one
        synchronized (this) {
            syncStats();
            if (buffer instanceof RowBuffer) {
                return ((RowBuffer) buffer).slice(start, end, PARTITION_BYTES).toArray(new InputPartition[0]);
            }
            List<byte[][]> slices = ((ArrowBuffer) buffer).slice(start, end, ARROW_PARTITION_BYTES);
            List<org.apache.spark.broadcast.Broadcast<byte[][]>> shared = broadcast(slices);
            InputPartition[] partitions = new InputPartition[slices.size()];
            for (int i = 0; i < partitions.length; i++) {
                partitions[i] = new ArrowPartition(shared.get(i));
            }
            List<org.apache.spark.broadcast.Broadcast<byte[][]>> replaced = broadcasts.put(end, shared);
            if (replaced != null) { // the same batch planned again: its tasks use the new ones
                letGo(replaced); // a task of the old plan may still be on its way
            }
            return partitions;
        }
    }

    /** Where {@link #broadcast} makes broadcasts: off the query's thread. */
    private static final java.util.concurrent.ExecutorService BROADCASTING =
            java.util.concurrent.Executors.newCachedThreadPool(task -> {
                Thread t = new Thread(task, "reactive-streams source broadcasts");
                t.setDaemon(true);
                return t;
            });

    /**
     * Each slice as a broadcast. Made on another thread, which a stop does not interrupt, and
     * waited for without giving in to an interrupt (set again after): an interrupted broadcast
     * fails half-stored, and Spark logs {@code ERROR TorrentBroadcast: Store broadcast ... fail}
     * for an ordinary {@code query.stop()}. The stop waits the few milliseconds this takes.
     */
    private static List<org.apache.spark.broadcast.Broadcast<byte[][]>> broadcast(List<byte[][]> slices) {
        SparkContext spark = SparkContext.getOrCreate();
        java.util.concurrent.Future<List<org.apache.spark.broadcast.Broadcast<byte[][]>>> made = BROADCASTING.submit(() -> {
            org.apache.spark.api.java.JavaSparkContext context =
                    org.apache.spark.api.java.JavaSparkContext.fromSparkContext(spark);
            List<org.apache.spark.broadcast.Broadcast<byte[][]>> shared = new java.util.ArrayList<>(slices.size());
            for (byte[][] slice : slices) {
                shared.add(context.broadcast(slice));
                LIVE_BROADCASTS.incrementAndGet();
            }
            return shared;
        });
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    return made.get();
                } catch (InterruptedException e) {
                    interrupted = true; // the query is stopping: it stops once these exist
                } catch (java.util.concurrent.ExecutionException e) {
                    throw unchecked(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Frees the broadcasts of planned micro-batches that end by {@code upTo} (all: Long.MAX_VALUE). */
    private void destroyBroadcasts(long upTo) {
        java.util.Map<Long, List<org.apache.spark.broadcast.Broadcast<byte[][]>>> done = broadcasts.headMap(upTo, true);
        for (List<org.apache.spark.broadcast.Broadcast<byte[][]>> shared : done.values()) {
            destroy(shared);
        }
        done.clear();
    }

    private static void destroy(List<org.apache.spark.broadcast.Broadcast<byte[][]>> shared) {
        for (org.apache.spark.broadcast.Broadcast<byte[][]> streams : shared) {
            streams.destroy(); // non-blocking: the block manager drops it everywhere
            LIVE_BROADCASTS.decrementAndGet();
        }
    }

    /**
     * Broadcasts whose tasks may not have ended (a batch a stop interrupted, or planned again):
     * not destroyed, since the scheduler may be serializing one of those tasks right now (a
     * destroyed broadcast fails it with {@code [INTERNAL_ERROR_BROADCAST] Attempted to use
     * Broadcast(N) after it was destroyed}). The source lets go of them; Spark's {@code
     * ContextCleaner} removes each once nothing refers to it (the tasks, the query's last plan).
     */
    private static void letGo(List<org.apache.spark.broadcast.Broadcast<byte[][]>> shared) {
        LIVE_BROADCASTS.addAndGet(-shared.size());
    }

    /** Broadcasts of every source's planned micro-batches not yet destroyed (see {@link #liveBroadcasts}). */
    static final AtomicInteger LIVE_BROADCASTS = new AtomicInteger();

    /**
     * The broadcasts of planned micro-batches that every source holds: {@code
     * StreamRegistry.liveSourceBroadcasts()}, for diagnostics and tests. Internal to the connectors.
     */
    public static int liveBroadcasts() {
        return LIVE_BROADCASTS.get();
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new RowsPartition.ReaderFactory(rows.width());
    }

    @Override
    public void commit(Offset end) {
        synchronized (this) {
            if (!started) {
                return; // nothing received yet, nothing to release
            }
            destroyBroadcasts(ElementOffset.of(end));
            release(ElementOffset.of(end));
        }
        signalUpstream();
    }

    /**
     * The query stopped: cancel the subscription (§3.13); the elements received and not yet
     * committed wait for a restart of this query.
     */
    @Override
    public void stop() {
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
            // Committed batches' broadcasts are gone already; the rest belong to a batch whose
            // tasks the stop is cancelling, and may still be serializing.
            for (List<org.apache.spark.broadcast.Broadcast<byte[][]>> shared : broadcasts.values()) {
                letGo(shared);
            }
            broadcasts.clear();
            if (started) {
                if (buffer instanceof ArrowBuffer) {
                    ((ArrowBuffer) buffer).seal(); // parked as bytes: no Arrow memory held
                }
                entry.park(checkpoint, buffer, rows.schema());
                buffer = new RowBuffer(buffer.end());
                syncStats();
            }
        }
        cancelRequested = true;
        signalUpstream();
    }

    @Override
    public synchronized Map<String, String> metrics(Optional<Offset> latestConsumedOffset) {
        Map<String, String> metrics = new LinkedHashMap<>();
        long consumed = latestConsumedOffset.map(ElementOffset::of).orElse(started ? buffer.base() : 0L);
        metrics.put("bufferedElements", Long.toString(started ? buffer.end() - consumed : 0));
        metrics.put("demandBound", Long.toString(bound));
        metrics.put("outstandingDemand", Long.toString(outstanding));
        metrics.put("emittedElements", Long.toString(emitted));
        metrics.put("maxBufferedElements", Long.toString(maxHeld));
        metrics.put("lostElements", Long.toString(lost));
        metrics.put("publisherCompleted", Boolean.toString(completed));
        metrics.put("exhausted", Boolean.toString(completed && started && consumed >= buffer.end()));
        return metrics;
    }

    @Override
    public String toString() {
        return "reactive-streams[publisher=" + entry.name + "]";
    }

    // Internals.

    /**
     * Starts once, at the first offset Spark names: continues with what a stopped run of this
     * query left (see {@link NamedPublisher#park}), accounts for the elements of a planned
     * batch [{@code from}, {@code plannedEnd}) that are gone, then subscribes.
     */
    @SuppressWarnings("unchecked")
    private void startAt(long from, long plannedEnd) {
        synchronized (this) {
            if (started || stopped) {
                return;
            }
            started = true;
            buffer = entry.unpark(checkpoint, from, rows.schema());
            if (buffer == null) {
                buffer = new RowBuffer(from); // an ArrowBuffer if the first element is a batch
            } else {
                elementsKnown = true; // what a stopped run received: rows, or batches
                batchElements = buffer instanceof ArrowBuffer && ((ArrowBuffer) buffer).heldBatches();
                if (batchElements) {
                    largestBatch = Math.max(1, buffer.size());
                }
            }
            maxHeld = buffer.size();
            if (buffer.end() < plannedEnd) {
                long missing = plannedEnd - buffer.end();
                String what = this + ": elements " + buffer.end() + ".." + (plannedEnd - 1) + " of a micro-batch "
                        + "planned before the query restarted are gone (the driver that received them stopped "
                        + "without keeping them, and a publisher cannot replay)";
                if (options.failOnDataLoss) {
                    throw new IllegalStateException(what + ". Start the query with option(\"failOnDataLoss\", "
                            + "\"false\") to go on without them (they are counted in the lostElements metric), "
                            + "or with a new checkpoint");
                }
                LOG.warning(what + "; going on without them (failOnDataLoss=false)");
                lost += missing;
                buffer.restartAt(plannedEnd);
            }
            syncStats();
            topUp();
            lastActivity = System.nanoTime();
        }
        ((Publisher<Object>) entry.publisher).subscribe(new Upstream());
    }

    /** Drops the elements before {@code upTo} (their batch is finished) and asks for as many. */
    private void release(long upTo) {
        buffer.release(upTo);
        syncStats();
        if (completed || error != null || stopped || cancelRequested) {
            return;
        }
        if (topUp()) {
            lastActivity = System.nanoTime();
        }
    }

    /**
     * Requests what the bound leaves room for; whether it did. Rows: the bound, less what is held
     * and requested. Before the first element, one element: it tells rows from Arrow batches,
     * and a publisher of batches must not be asked for a bound's worth of them. Batches: as many
     * as fit if each were as large as the largest so far, and at least one when nothing is held
     * or requested (a batch larger than the bound crosses whole).
     */
    private boolean topUp() {
        long room;
        if (!elementsKnown) {
            room = 1 - outstanding;
        } else if (batchElements) {
            room = (bound - buffer.size()) / Math.max(1, largestBatch) - outstanding;
            if (room <= 0 && outstanding == 0 && buffer.size() == 0) {
                room = 1;
            }
        } else {
            room = bound - buffer.size() - outstanding;
        }
        if (room <= 0) {
            return false;
        }
        outstanding += room;
        Demand.add(pendingDemand, room);
        return true;
    }

    /**
     * Waits while fewer than {@code want} elements follow {@code start} and the publisher may
     * still be answering the demand under way, then while more than that (up to {@code most})
     * is still arriving (see the class comment).
     */
    private synchronized void awaitReady(long start, long want, long most) {
        long begin = System.nanoTime();
        try {
            while (!stopped && error == null && !completed && outstanding > 0) {
                long available = buffer.end() - start;
                if (available >= most || (available >= want ? settled(SETTLE_MS) : settled(LINGER_MS))) {
                    return;
                }
                // A first element that came late during this wait gets the whole MAX_WAIT_MS for
                // the rest of the batch: waiting for it must not use up the time the batch has.
                long waited = System.nanoTime() - (firstArrived ? Math.max(begin, firstArrivedAt) : begin);
                long patience = upstream == null ? SUBSCRIBE_WAIT_MS
                        : firstArrived ? MAX_WAIT_MS : FIRST_ELEMENT_WAIT_MS;
                if (waited > TimeUnit.MILLISECONDS.toNanos(patience)) {
                    return;
                }
                wait(1);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UncheckedIOException(new InterruptedIOException( // what Spark takes for a stop
                    "interrupted while waiting for the publisher registered as '" + entry.name + "'"));
        }
    }

    /**
     * Whether the publisher has answered all the demand it can for now: nothing has arrived for
     * {@code quietMs}, and the bridge is not still carrying what a Python publisher pushed.
     */
    private boolean settled(long quietMs) {
        Subscription s = upstream;
        if (s == null || !firstArrived || pendingDemand.get() > 0 || upstreamWip.get() > 0) {
            return false; // not started, or demand not yet signalled
        }
        if (s instanceof FromPythonPublisher.Handle && !((FromPythonPublisher.Handle) s).isIdle()) {
            return false;
        }
        return System.nanoTime() - lastActivity > TimeUnit.MILLISECONDS.toNanos(quietMs);
    }

    /** Sends pending demand, or the cancel, to the publisher: one caller at a time (§2.7). */
    private void signalUpstream() {
        if (upstreamWip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            Subscription s = upstream;
            if (s != null) {
                if (upstreamDone || cancelRequested) {
                    upstream = null; // §3.13: nothing more to say to it
                    if (!upstreamDone) {
                        s.cancel();
                    }
                } else {
                    long n = pendingDemand.getAndSet(0);
                    if (n > 0) {
                        entry.stats.addRequested(n);
                        try {
                            s.request(n); // may emit on this thread: onNext only buffers
                        } catch (RuntimeException e) {
                            fail(new IllegalStateException("§3.16: request() of the publisher registered as '"
                                    + entry.name + "' threw " + e, e));
                        }
                    }
                }
            }
            missed = upstreamWip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void fail(Throwable t) {
        synchronized (this) {
            if (error == null && !completed) {
                error = t;
            }
        }
        cancelRequested = true;
    }

    /**
     * Holds {@code item} at offset {@code buffer.end()}: a row as {@code UnsafeRow} bytes, an Arrow
     * batch as its IPC stream (checked against the schema; a batch from Python, which the source
     * owns, is closed, a JVM publisher's is its own). Rows and batches do not mix.
     */
    private void append(Object item) {
        boolean batch = item instanceof org.apache.arrow.vector.VectorSchemaRoot;
        if (!elementsKnown) {
            batchElements = batch;
            if (batch && buffer instanceof RowBuffer) {
                buffer = new ArrowBuffer(buffer.end(), rows.schema());
            }
        }
        if (batch != batchElements) {
            closeIfOwned(item);
            throw new IllegalArgumentException(this + ": element " + buffer.end() + " is " + (batch
                    ? "an Arrow batch, after rows" : "a row (" + item.getClass().getTypeName() + "), after Arrow batches")
                    + ": a publisher's elements are all rows or all Arrow batches");
        }
        if (item instanceof io.github.rspy.bridge.arrow.ColumnRows && buffer instanceof RowBuffer) {
            try (io.github.rspy.bridge.arrow.ColumnRows columns = (io.github.rspy.bridge.arrow.ColumnRows) item) {
                for (Object row : columns.values()) { // rows held as bytes: these too
                    appendRow(row);
                }
            }
            return;
        }
        if (item instanceof io.github.rspy.bridge.arrow.ColumnRows) { // rows from Python, as they crossed
            io.github.rspy.bridge.arrow.ColumnRows columns = (io.github.rspy.bridge.arrow.ColumnRows) item;
            try {
                if (((ArrowBuffer) buffer).appendColumns(columns)) {
                    entry.stats.addArrowRows(columns.rows());
                } else {
                    for (Object row : columns.values()) { // other columns: row by row, checked as rows are
                        appendRow(row);
                    }
                }
            } finally {
                columns.close();
            }
            return;
        }
        if (!batch) {
            appendRow(item);
            return;
        }
        ArrowBuffer arrow = (ArrowBuffer) buffer;
        org.apache.arrow.vector.VectorSchemaRoot root = (org.apache.arrow.vector.VectorSchemaRoot) item;
        try {
            int count = arrow.appendBatch(root, this + ": the Arrow batch at element " + buffer.end());
            entry.stats.addArrowRows(count);
            largestBatch = Math.max(largestBatch, count);
        } finally {
            closeIfOwned(item);
        }
    }

    /** A row of values: written as an {@code UnsafeRow}, kept as its bytes or in an Arrow batch. */
    private void appendRow(Object item) {
        rows.write(writer, item, buffer.end());
        if (buffer instanceof ArrowBuffer) {
            ((ArrowBuffer) buffer).appendRow(writer.getRow());
        } else {
            ((RowBuffer) buffer).append(writer);
        }
    }

    /** Closes a batch handed over (from Python, classic or Connect): the source owns it (a JVM publisher keeps its own). */
    private void closeIfOwned(Object item) {
        if (ownsElements && item instanceof AutoCloseable) {
            try {
                ((AutoCloseable) item).close();
            } catch (Exception e) {
                LOG.log(java.util.logging.Level.WARNING, "closing an Arrow batch failed", e);
            }
        }
    }

    /** Brings the counters that {@code rss.stream_stats} reads up to date. */
    private void syncStats() {
        entry.stats.setBuffered(buffer.size(), maxHeld);
    }

    private static long maxRows(ReadLimit limit) {
        if (limit instanceof ReadMaxRows) {
            return ((ReadMaxRows) limit).maxRows();
        }
        long max = Long.MAX_VALUE;
        if (limit instanceof CompositeReadLimit) {
            for (ReadLimit part : ((CompositeReadLimit) limit).getReadLimits()) {
                max = Math.min(max, maxRows(part));
            }
        }
        return max; // ReadAllAvailable, or limits in files or bytes: all that is buffered
    }

    /** The publisher's own exception when it can be thrown as is. */
    private static RuntimeException unchecked(Throwable t) {
        if (t instanceof RuntimeException) {
            return (RuntimeException) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        if (t instanceof IOException) {
            return new UncheckedIOException((IOException) t);
        }
        return new IllegalStateException(t.toString(), t);
    }

    /** The source's subscriber: it only converts and buffers, so it never blocks the publisher. */
    private final class Upstream implements Subscriber<Object> {
        @Override
        public void onSubscribe(Subscription s) {
            if (s == null) {
                throw new NullPointerException("§2.13: onSubscribe(null)");
            }
            boolean accept;
            synchronized (PublisherSource.this) {
                accept = upstream == null && !upstreamDone && !stopped;
                if (accept) {
                    upstream = s;
                    ownsElements = s instanceof ArrowHandover;
                    if (s instanceof ArrowHandover && (buffer.size() == 0 || buffer instanceof ArrowBuffer)) {
                        // A Python publisher's rows (classic or Connect) are kept in the Arrow
                        // batches they cross in, which Spark reads as columns.
                        if (buffer instanceof RowBuffer) {
                            buffer = new ArrowBuffer(buffer.end(), rows.schema());
                        }
                        ((ArrowHandover) s).takeColumnRows();
                    }
                }
            }
            if (!accept) {
                s.cancel(); // §2.5, or the query has already stopped
                return;
            }
            signalUpstream();
        }

        @Override
        public void onNext(Object item) {
            if (item == null) {
                throw new NullPointerException("§2.13: onNext(null)");
            }
            boolean failed = false;
            boolean signal = false;
            synchronized (PublisherSource.this) {
                if (stopped || error != null) {
                    closeIfOwned(item);
                    return;
                }
                long weight = io.github.rspy.bridge.arrow.ColumnRows.weight(item); // rows from Python count each
                if (weight > outstanding) {
                    closeIfOwned(item);
                    error = new IllegalStateException("§1.1: the publisher registered as '" + entry.name
                            + "' emitted more elements than the " + bound + " requested");
                    failed = true;
                } else {
                    try {
                        boolean first = !elementsKnown;
                        append(item);
                        outstanding -= weight;
                        if (first) {
                            elementsKnown = true;
                            signal = topUp(); // the rest of the bound, now that it is known what comes
                        }
                        if (buffer.size() > maxHeld) {
                            maxHeld = buffer.size();
                        }
                        emitted += weight;
                        entry.stats.addElements(weight); // rows, or a batch
                        entry.stats.setBuffered(buffer.size(), maxHeld);
                        lastActivity = System.nanoTime();
                        if (!firstArrived) {
                            firstArrived = true;
                            firstArrivedAt = lastActivity;
                        }
                    } catch (IllegalArgumentException e) { // it does not fit: the query fails here
                        error = e;
                        failed = true;
                    }
                }
            }
            if (failed) {
                cancelRequested = true;
            }
            if (failed || signal) {
                signalUpstream();
            }
        }

        @Override
        public void onError(Throwable t) {
            if (t == null) {
                throw new NullPointerException("§2.13: onError(null)");
            }
            synchronized (PublisherSource.this) {
                if (error == null && !completed) {
                    error = t;
                }
                syncStats();
            }
            upstreamDone = true;
            signalUpstream();
        }

        @Override
        public void onComplete() {
            synchronized (PublisherSource.this) {
                completed = true;
                syncStats();
            }
            upstreamDone = true;
            signalUpstream();
        }
    }
}
