package io.github.rspy.bridge;

import io.github.rspy.bridge.arrow.ArrowBatches;
import io.github.rspy.bridge.arrow.ArrowCData;
import io.github.rspy.bridge.arrow.ArrowRows;
import io.github.rspy.bridge.arrow.ArrowSupport;
import io.github.rspy.bridge.arrow.RowsFromPython;
import io.github.rspy.bridge.arrow.SchemaRows;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Flow;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.reactivestreams.FlowAdapters;
import org.reactivestreams.Processor;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * The JVM side of one Python {@code Bridge}: the factory for its adapters, the executor their
 * drain loops run on, and the registry of live adapters that {@link #close()} ends.
 */
public final class BridgeRuntime implements AutoCloseable {
    static final Logger LOG = Logger.getLogger("io.github.rspy.bridge");
    /** How long a delivery may stay in Python before another thread takes the lane's other work. */
    static final long PYTHON_LANE_STALL_MILLIS = 20;
    private static final AtomicInteger RUNTIMES = new AtomicInteger();

    private final ThreadPoolExecutor executor;
    /**
     * A request's slice: half of iterate's default prefetch, so that a publisher is still making
     * the second half when Python, having taken the first, asks for more. (Measured on a producer
     * of about 1.4 µs a row, issue 45: 256 paid for twice as many crossings, on Py4J more than
     * the overlap gained; 512 was the best of 128, 256, 512 and 8,192 on both backends.)
     */
    static final int REQUEST_SLICE = 512;
    /** The linger by default (see {@link #lingerMicros}): a lone row reaches Python this much later at most. */
    static final long LINGER_MICROS = 500;
    private volatile Executor lingerer = lingerFor(LINGER_MICROS); // null: none
    private final long requestSlice;
    private static final ThreadLocal<BridgeRuntime> DRAIN_THREAD = new ThreadLocal<>(); // a drain thread's runtime
    private static final long CLOSE_WAIT_MILLIS = 5000; // for the drain threads to end (see close)
    private final long[] drainThreads = {0}; // started and not yet ended; guarded by itself
    private final Set<Adapter> live = ConcurrentHashMap.newKeySet();
    private final int maxBatch;
    private final int demandWindow;
    private volatile boolean closed;
    private volatile Object py4jClient;
    private volatile PythonThreadStates threadStates;
    private final String threadPrefix; // of the drain threads' names
    private volatile SerialLane pythonLane; // where the drains run, on the in-process backend
    private final int threads;
    private final ReadWriteLock shutdownGate = new ReentrantReadWriteLock();
    private final java.util.concurrent.atomic.AtomicLong maxQueued = new java.util.concurrent.atomic.AtomicLong();
    private volatile DataChannel dataChannel; // on the Py4J backends, once Python connected
    private volatile DataChannel listening; // between openDataChannel and acceptDataChannel
    private final java.util.Map<Long, ToPythonSubscriber> channelStreams = new ConcurrentHashMap<>();
    /** Batches of at least this many rows cross as Arrow, when Python can read it. */
    static final int ARROW_MIN_ROWS = 16;
    private volatile Object arrowAllocator; // an Arrow BufferAllocator, once useArrowRows(true)
    private volatile boolean arrowCData; // batches cross through the C Data Interface (JPype)
    private final java.util.concurrent.atomic.AtomicLong arrowBatches = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong batchesToPython = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong arrowRows = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong encodedAhead = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong rowsMadeAhead = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong arrowFromPython = new java.util.concurrent.atomic.AtomicLong();

    /** Told when the runtime closes for a reason of the JVM's own (Python implements it). */
    public interface CloseListener {
        void closed(String reason);
    }

    private final java.util.List<CloseListener> closeListeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Something with a drain loop that {@link #close()} must end. */
    interface Adapter {
        void shutdown();

        /** Its state in one line, for {@link BridgeRuntime#describe()}. */
        default String describe() {
            return getClass().getSimpleName();
        }
    }

    /**
     * @param maxBatch most elements in one crossing to Python or from it
     * @param demandWindow most elements each adapter has requested on its subscriber's behalf
     *     and not yet received (see {@link DemandWindow})
     * @param threads the drain threads: every adapter's drain runs on this bounded pool, so a
     *     thousand streams use at most {@code threads} threads (and, on Py4J, as many callback
     *     connections, each served by one Python thread)
     */
    public BridgeRuntime(int maxBatch, int demandWindow, int threads) {
        if (maxBatch < 1 || demandWindow < 1 || threads < 1) {
            throw new IllegalArgumentException("maxBatch, demandWindow and threads must be >= 1, got "
                    + maxBatch + ", " + demandWindow + ", " + threads);
        }
        this.maxBatch = maxBatch;
        this.demandWindow = demandWindow;
        this.requestSlice = Math.min(maxBatch, REQUEST_SLICE);
        this.threads = threads;
        int id = RUNTIMES.incrementAndGet();
        this.threadPrefix = "rspy-bridge-" + id + "-";
        AtomicInteger count = new AtomicInteger();
        ThreadFactory factory = r -> {
            Runnable releasing = () -> {
                // Counted once running, not when made: the pool makes a thread it then never
                // starts when a task comes as it shuts down, and close() would wait for that one.
                drainThreadStarting();
                DRAIN_THREAD.set(this);
                try {
                    PythonThreadStates states = keepThreadState();
                    try {
                        r.run();
                    } finally {
                        dropThreadState(states);
                        releasePy4JConnection();
                    }
                } finally {
                    drainThreadEnded();
                }
            };
            Thread t = new Thread(releasing, threadPrefix + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        // Bounded, and idle threads end (closing their Py4J connections), so an idle bridge
        // holds none. Drains are short (a pass ends when its queue or its demand is empty), so
        // queued drains wait little behind running ones.
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                threads, threads, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), factory);
        pool.allowCoreThreadTimeOut(true);
        this.executor = pool;
    }

    /**
     * On the Py4J backends: the gateway's {@code py4j.PythonClient}, so that each drain thread
     * closes its connection to Python when it ends (the bridge leaves no thread behind), and
     * re-entrant calls survive Py4J's idle cleaner (see {@link Py4JConnectionDeque}).
     */
    public void usePy4JClient(Object client) {
        Py4JConnectionDeque.install(client);
        this.py4jClient = client;
    }

    /**
     * On the in-process backend: each drain thread keeps one Python thread state for its whole
     * life (see {@link PythonThreadStates}). Set before any stream starts.
     */
    public void keepPythonThreadStates(PythonThreadStates states) {
        this.threadStates = states;
    }

    /**
     * On the in-process backend: the drains (which all call Python) run one at a time on a
     * {@link SerialLane} of the pool (wider only while one is stuck), so that the drain threads
     * do not take turns at the GIL for every batch. Set before any stream starts.
     */
    public void callPythonFromOneThreadAtATime() {
        this.pythonLane = new SerialLane(executor, threads, PYTHON_LANE_STALL_MILLIS);
    }

    /**
     * On the Py4J backends: listens on a loopback port for Python's end of the data channel
     * (see {@link DataChannel}), which must present {@code secret}. Returns the port.
     */
    public synchronized int openDataChannel(byte[] secret) {
        if (closed) {
            throw new IllegalStateException("the bridge runtime is closed");
        }
        if (dataChannel != null || listening != null) {
            throw new IllegalStateException("the data channel is open already");
        }
        DataChannel channel = DataChannel.listen(secret);
        listening = channel;
        return channel.port();
    }

    /**
     * On the Py4J backends, where Python has Unix domain sockets: listens at {@code path} (in a
     * directory Python made, that only its user may enter) for Python's end of the data channel,
     * which must present {@code secret}.
     */
    public synchronized void openDataChannelAt(byte[] secret, String path) {
        if (closed) {
            throw new IllegalStateException("the bridge runtime is closed");
        }
        if (dataChannel != null || listening != null) {
            throw new IllegalStateException("the data channel is open already");
        }
        listening = DataChannel.listenAt(secret, path);
    }

    /**
     * Takes Python's connection to the data channel (made before this call), refusing any
     * without the secret; false if none came within {@code timeoutMillis}. Batches go on the
     * channel from then on.
     */
    public boolean acceptDataChannel(long timeoutMillis) {
        DataChannel channel;
        synchronized (this) {
            channel = listening;
            if (channel == null) {
                throw new IllegalStateException("openDataChannel first");
            }
        }
        boolean accepted = channel.accept(timeoutMillis);
        synchronized (this) {
            listening = null;
            if (accepted && !closed) {
                dataChannel = channel;
                channel.startReading(new ChannelStreams(), "rspy-bridge-data-in-" + RUNTIMES.get());
                return true;
            }
        }
        channel.close();
        return false;
    }

    /** The address the data channel listens on, while it does: loopback, or a socket file's path. */
    public synchronized String dataChannelAddress() {
        DataChannel channel = listening;
        return channel == null ? null : channel.address();
    }

    /** Whether batches go to Python on the data channel. */
    public boolean hasDataChannel() {
        DataChannel channel = dataChannel;
        return channel != null && channel.isConnected();
    }

    /**
     * Rows (Object[] or Map) go to Python as Arrow record batches, if {@code on} (Python has
     * pyarrow) and Arrow Java runs here. Returns whether they do.
     */
    public synchronized boolean useArrowRows(boolean on) {
        if (on && arrowAllocator == null && !closed && ArrowSupport.available()) {
            arrowAllocator = ArrowSupport.Allocators.newChild("rspy-bridge-" + System.identityHashCode(this));
        } else if (!on) {
            closeArrowAllocator();
        }
        return arrowAllocator != null;
    }

    /** Batches of rows that went to Python as Arrow. */
    public long arrowBatches() {
        return arrowBatches.get();
    }

    /**
     * Batches the JVM → Python subscribers handed to Python, each one crossing (every encoding):
     * with the elements sent, how many elements a crossing carried.
     */
    public long batchesToPython() {
        return batchesToPython.get();
    }

    void noteBatchToPython() {
        batchesToPython.incrementAndGet();
    }

    /**
     * Rows that went to Python as Arrow without a subscriber's schema (the rest of the rows
     * crossed pickled or as references): against the rows sent, how many took the Arrow path.
     */
    public long arrowRows() {
        return arrowRows.get();
    }

    /**
     * Batches for Python encoded on the pool while the batch before them was delivered (the
     * in-process and gateway-callback paths): how often encoding overlapped Python's work.
     */
    public long encodedAhead() {
        return encodedAhead.get();
    }

    void noteEncodedAhead() {
        encodedAhead.incrementAndGet();
    }

    /**
     * Batches of Arrow rows from Python whose Java rows the pool made while Python encoded the
     * batch after them: how often that work overlapped Python's.
     */
    public long rowsMadeAhead() {
        return rowsMadeAhead.get();
    }

    void noteRowsMadeAhead() {
        rowsMadeAhead.incrementAndGet();
    }

    /**
     * Arrow payloads that arrived from Python: a batch of rows, or a run of record batches (as IPC
     * bytes, or through the C Data Interface).
     */
    public long arrowBatchesFromPython() {
        return arrowFromPython.get();
    }

    /** Bytes the runtime's Arrow allocator holds: 0 between batches. */
    public long arrowAllocatedBytes() {
        Object allocator = arrowAllocator;
        return allocator == null ? 0 : ((org.apache.arrow.memory.BufferAllocator) allocator).getAllocatedMemory();
    }

    /**
     * Bytes held by every Arrow allocator of this JVM that the bridge and the Spark connectors
     * made, child allocators included: every runtime's (closed ones' too, if they leaked), the
     * Spark sink's, the Spark source's, its partitions' and the Connect plugin's. 0 once nothing
     * streams; {@link #arrowAllocatedBytes} counts this runtime's alone.
     */
    public static long jvmArrowAllocatedBytes() {
        return ArrowSupport.available() ? ArrowSupport.Allocators.allocatedBytes() : 0;
    }

    /** Whether Arrow record batches and rows go to Python as Arrow. */
    boolean arrowEnabled() {
        return arrowAllocator != null;
    }

    /**
     * On the in-process backend: Arrow record batches cross through the C Data Interface, if
     * {@code on} and it works here (arrow-c-data and its JNI library); else as IPC bytes.
     * Returns whether they do. Set after {@link #useArrowRows}, before any stream starts.
     */
    public synchronized boolean useArrowCData(boolean on) {
        Object allocator = arrowAllocator;
        arrowCData = false;
        if (on && allocator != null) {
            try {
                arrowCData = ArrowCData.probe((org.apache.arrow.memory.BufferAllocator) allocator);
            } catch (LinkageError | RuntimeException e) {
                LOG.log(Level.INFO, "the Arrow C Data Interface is not usable here: batches cross as bytes", e);
            }
        }
        return arrowCData;
    }

    /** A VectorSchemaRoot taken for Python when it is emitted (see {@link ArrowBatches#take}). */
    Object takeBatch(Object item) {
        Object allocator = arrowAllocator;
        if (allocator == null) {
            return item;
        }
        return ArrowBatches.take(item, (org.apache.arrow.memory.BufferAllocator) allocator, arrowCData);
    }

    /** Batches {@link #takeBatch} took, to Python: through the C Data Interface, or as bytes. */
    Number sendBatches(PythonSink target, Object[] batch, int from, int count) {
        if (!arrowCData) {
            return target.onNextBatch(ArrowBatches.encodeBatches(batch, from, count));
        }
        java.util.List<AutoCloseable> structs = new java.util.ArrayList<>(2 * count);
        try {
            long[] addresses = ArrowCData.export(
                    (org.apache.arrow.memory.BufferAllocator) arrowAllocator, batch, from, count, structs);
            return target.onNextArrowC(addresses);
        } finally {
            ArrowCData.freeStructs(structs); // imported by Python, or released here
        }
    }

    /** Batches Python exported through the C Data Interface, as roots their subscriber owns. */
    List<Object> importArrowC(long[] addresses) {
        Object allocator = arrowAllocator;
        if (allocator == null || !arrowCData) {
            throw new IllegalStateException("Arrow C Data from Python, but this runtime does not use it");
        }
        List<Object> roots = ArrowCData.importBatches((org.apache.arrow.memory.BufferAllocator) allocator, addresses);
        arrowFromPython.incrementAndGet();
        return roots;
    }

    /**
     * Rows of kind {@code kind} that Python exported through the C Data Interface, each batch as
     * {@link io.github.rspy.bridge.arrow.ColumnRows} (see {@link #importArrowC}).
     */
    io.github.rspy.bridge.arrow.OwnedElements importArrowRowsC(byte kind, long[] addresses) {
        return io.github.rspy.bridge.arrow.RowsFromPython.columnsOf(importArrowC(addresses), kind);
    }

    /** The batch's rows as a tagged Arrow IPC stream, or null: not rows of values, or no Arrow here. */
    byte[] encodeArrowRows(Object[] batch, int n) {
        Object allocator = arrowAllocator;
        if (allocator == null) {
            return null;
        }
        try {
            byte[] encoded = ArrowRows.encode((org.apache.arrow.memory.BufferAllocator) allocator, batch, n, ARROW_MIN_ROWS);
            if (encoded != null) {
                arrowBatches.incrementAndGet();
                arrowRows.addAndGet(n);
            }
            return encoded;
        } catch (RuntimeException e) { // closed meanwhile, or out of memory: the codec still works
            LOG.log(Level.FINE, "a batch of rows could not be encoded as Arrow", e);
            return null;
        }
    }

    /** Rows against a schema the subscriber gave: the runs before a bad row, and its error. */
    SchemaRows.Encoded encodeRows(SchemaRows rows, Object[] batch, int n) {
        Object allocator = arrowAllocator;
        if (allocator == null) {
            throw new IllegalStateException("the bridge runtime is closed");
        }
        SchemaRows.Encoded encoded = rows.encode((org.apache.arrow.memory.BufferAllocator) allocator, batch, n);
        arrowBatches.addAndGet(encoded.runs.size());
        return encoded;
    }

    /** Rows ('A') or record batches ('B') that Python sent as Arrow. */
    List<Object> decodeArrow(byte[] payload) {
        Object allocator = arrowAllocator;
        if (allocator == null) {
            throw new IllegalStateException("Arrow from Python, but this runtime has no Arrow");
        }
        org.apache.arrow.memory.BufferAllocator a = (org.apache.arrow.memory.BufferAllocator) allocator;
        List<Object> items = payload[0] == ArrowRows.TAG ? RowsFromPython.decode(a, payload) : ArrowBatches.decodeBatches(a, payload);
        arrowFromPython.incrementAndGet();
        return items;
    }

    /** Arrow rows from Python as {@link io.github.rspy.bridge.arrow.ColumnRows}, for a subscriber that takes them. */
    io.github.rspy.bridge.arrow.OwnedElements decodeArrowColumns(byte[] payload) {
        Object allocator = arrowAllocator;
        if (allocator == null) {
            throw new IllegalStateException("Arrow from Python, but this runtime has no Arrow");
        }
        io.github.rspy.bridge.arrow.OwnedElements items = io.github.rspy.bridge.arrow.RowsFromPython.decodeColumns(
                (org.apache.arrow.memory.BufferAllocator) allocator, payload);
        arrowFromPython.incrementAndGet();
        return items;
    }

    private synchronized void closeArrowAllocator() {
        Object allocator = arrowAllocator;
        arrowAllocator = null;
        arrowCData = false;
        if (allocator != null) {
            try {
                ((org.apache.arrow.memory.BufferAllocator) allocator).close();
            } catch (RuntimeException e) { // still holding bytes: a leak, which the tests look for
                LOG.log(Level.WARNING, "the bridge's Arrow allocator was closed holding memory", e);
            }
        }
    }

    DataChannel dataChannel() {
        return dataChannel;
    }

    /** A Java Subscriber that delivers to a Python subscriber through {@code sink} (JPype). */
    public ToPythonSubscriber toPython(PythonSink sink) {
        return register(new ToPythonSubscriber(this, sink, 0));
    }

    /**
     * A Java Subscriber that delivers to a Python subscriber as frames on the data channel, as
     * stream {@code id} (Python's choice: it reads the frames); its demand and cancel come back
     * the same way.
     */
    public ToPythonSubscriber toPythonOnChannel(long id) {
        DataChannel channel = dataChannel;
        if (channel == null) {
            throw new IllegalStateException("this runtime has no data channel");
        }
        ToPythonSubscriber subscriber = new ToPythonSubscriber(this, new ChannelSink(channel, id), id);
        if (channelStreams.putIfAbsent(id, subscriber) != null) {
            throw new IllegalArgumentException("stream " + id + " is on the data channel already");
        }
        return register(subscriber);
    }

    /** {@link #toPython(PythonSink)}, for rows of {@code schema}: see {@link ToPythonSubscriber#expectRows}. */
    public ToPythonSubscriber toPython(PythonSink sink, byte[] schema) {
        ToPythonSubscriber subscriber = toPython(sink);
        subscriber.expectRows(schema);
        return subscriber;
    }

    /** {@link #toPythonOnChannel(long)}, for rows of {@code schema}: see {@link ToPythonSubscriber#expectRows}. */
    public ToPythonSubscriber toPythonOnChannel(long id, byte[] schema) {
        ToPythonSubscriber subscriber = toPythonOnChannel(id);
        subscriber.expectRows(schema);
        return subscriber;
    }

    void forgetChannelStream(long id) {
        channelStreams.remove(id);
    }

    /** Python's demand and cancels for the streams on the data channel, from its reader. */
    private final class ChannelStreams implements DataChannel.Receiver {
        @Override
        public void request(long id, long n) {
            ToPythonSubscriber subscriber = channelStreams.get(id);
            if (subscriber != null) { // else ended: a late request is a no-op (§3.6)
                subscriber.request(n);
            }
        }

        @Override
        public void cancel(long id) {
            ToPythonSubscriber subscriber = channelStreams.get(id);
            if (subscriber != null) {
                subscriber.cancel();
            }
        }

        @Override
        public void failed(String why) {
            // Python's demand can no longer reach its streams: the runtime ends them all, and
            // Python's side hears why (its close listener), instead of every stream hanging.
            close("the bridge's data channel failed: " + why);
        }
    }

    /** A Java Publisher backed by a Python publisher. */
    public FromPythonPublisher fromPython(PythonPublisherFactory factory) {
        return new FromPythonPublisher(this, factory);
    }

    /** A Java Processor made of a Python processor's two sides. */
    public Processor<Object, Object> processor(ToPythonSubscriber input, FromPythonPublisher output) {
        return new PythonProcessor(input, output);
    }

    /** Whether {@code o} is an org.reactivestreams or java.util.concurrent.Flow publisher. */
    public boolean isPublisher(Object o) {
        return o instanceof Publisher || o instanceof Flow.Publisher;
    }

    /** Subscribes to either kind of publisher; a publisher that throws gets its subscriber failed (§1.9). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void subscribe(Object publisher, ToPythonSubscriber subscriber) {
        try {
            if (publisher instanceof Publisher) {
                ((Publisher) publisher).subscribe(subscriber);
            } else if (publisher instanceof Flow.Publisher) {
                FlowAdapters.toPublisher((Flow.Publisher) publisher).subscribe(subscriber);
            } else {
                throw new IllegalArgumentException("not a Publisher: " + publisher);
            }
        } catch (RuntimeException e) {
            subscriber.failFromSubscribe(e);
        }
    }

    public <T> Flow.Publisher<T> toFlowPublisher(Publisher<T> publisher) {
        return FlowAdapters.toFlowPublisher(publisher);
    }

    public <T> Flow.Subscriber<T> toFlowSubscriber(Subscriber<T> subscriber) {
        return FlowAdapters.toFlowSubscriber(subscriber);
    }

    public <T, U> Flow.Processor<T, U> toFlowProcessor(Processor<T, U> processor) {
        return FlowAdapters.toFlowProcessor(processor);
    }

    /**
     * Drain threads started and not yet past their last call to Python: 0 once {@link #close()}
     * returns (it waits for them), for tests.
     */
    public long drainThreads() {
        synchronized (drainThreads) {
            return drainThreads[0];
        }
    }

    /**
     * What this runtime is doing, for a test that waited in vain: its pool, each live adapter's
     * state, and the stack of each of its drain threads.
     */
    public String describe() {
        StringBuilder out = new StringBuilder();
        out.append("pool: ").append(executor.getPoolSize()).append(" threads, ")
                .append(executor.getActiveCount()).append(" active, ")
                .append(executor.getQueue().size()).append(" queued; lane: ")
                .append(pythonLane == null ? "none" : pythonLane.drainers() + " drainers")
                .append("; closed: ").append(closed).append('\n');
        DataChannel channel = dataChannel;
        if (channel != null) {
            out.append(channel.describe()).append('\n');
        }
        for (Adapter adapter : live) {
            out.append("  ").append(adapter.describe()).append('\n');
        }
        for (java.util.Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            if (e.getKey().getName().startsWith(threadPrefix)) {
                out.append(e.getKey().getName()).append(' ').append(e.getKey().getState()).append('\n');
                for (StackTraceElement frame : e.getValue()) {
                    out.append("    at ").append(frame).append('\n');
                }
            }
        }
        return out.toString();
    }

    /** The number of adapters whose streams have not ended: for tests of §3.13 and leaks. */
    public int liveAdapters() {
        return live.size();
    }

    /** The most elements any adapter of this runtime ever held queued (never above demand). */
    public long maxQueued() {
        return maxQueued.get();
    }

    void noteQueued(long queued) {
        maxQueued.accumulateAndGet(queued, Math::max);
    }

    /** The most drain threads this runtime ever ran at once: never more than its {@code threads}. */
    public int largestThreadCount() {
        return executor.getLargestPoolSize();
    }

    /**
     * How long rows from a producer on its own thread may gather before they cross to Python,
     * when fewer than a batch's worth are queued and more were asked for (see
     * {@code ToPythonSubscriber}); 0 lets them cross as they come. Streams subscribed from then
     * on use it; the bridge sets it before its first.
     *
     * @param micros 0 to 1,000,000 microseconds
     */
    public void lingerMicros(long micros) {
        if (micros < 0 || micros > 1_000_000) {
            throw new IllegalArgumentException("the linger must be 0 to 1,000,000 µs, got " + micros);
        }
        lingerer = micros == 0 ? null : lingerFor(micros);
    }

    private static Executor lingerFor(long micros) {
        return CompletableFuture.delayedExecutor(micros, TimeUnit.MICROSECONDS, Runnable::run);
    }

    /** Runs a task once the linger has passed, on the JDK's delay thread; null for no linger. */
    Executor lingerer() {
        return lingerer;
    }

    /** Most elements in one crossing. */
    public int maxBatch() {
        return maxBatch;
    }

    /** Most elements an adapter has requested on its subscriber's behalf and not yet received. */
    public int demandWindow() {
        return demandWindow;
    }

    public boolean isClosed() {
        return closed;
    }

    /** Calls {@code listener} once, if the runtime is closed from the JVM side (see {@link #close(String)}). */
    public void addCloseListener(CloseListener listener) {
        closeListeners.add(listener);
    }

    /**
     * Closes the runtime for a reason of the JVM's own (the SparkContext stopped, say): the
     * close listeners hear it first, so that the Python side can end its streams with an error.
     */
    public void close(String reason) {
        if (closed) {
            return;
        }
        for (CloseListener listener : closeListeners) {
            try {
                listener.closed(reason);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "a close listener failed", e);
            }
        }
        closeListeners.clear();
        close();
    }

    /** Ends every live adapter (cancelling upstream) and stops the drain threads. */
    @Override
    public void close() {
        closed = true;
        for (Adapter adapter : live.toArray(new Adapter[0])) {
            adapter.shutdown();
        }
        live.clear();
        DataChannel channel;
        synchronized (this) {
            channel = dataChannel;
            dataChannel = null;
            if (listening != null) {
                listening.close();
            }
        }
        if (channel != null) {
            channel.close(); // Python's reader sees the end of the stream and stops
        }
        closeArrowAllocator();
        Lock stopping = shutdownGate.writeLock(); // no drain is being given to the lane meanwhile
        stopping.lock();
        try {
            executor.shutdown();
        } finally {
            stopping.unlock();
        }
        awaitDrainThreads();
    }

    /**
     * Waits, at most {@link #CLOSE_WAIT_MILLIS}, for the drain threads to end: each calls Python
     * as it ends (its thread state, its Py4J connection), and none may do so after the bridge
     * closed, when the interpreter may be exiting (in process, JPype aborts on a call that
     * reaches a JVM it is shutting down). Not on a drain thread of its own: it would wait for itself.
     */
    private void awaitDrainThreads() {
        if (DRAIN_THREAD.get() == this) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
        try {
            // Terminated: every thread the pool started has counted itself (before its tasks)
            // and left its tasks; the rest of each one's end is what the count waits for.
            executor.awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            synchronized (drainThreads) {
                for (long left; drainThreads[0] > 0 && (left = deadline - System.nanoTime()) > 0; ) {
                    TimeUnit.NANOSECONDS.timedWait(drainThreads, left);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (drainThreads) {
            if (drainThreads[0] > 0) {
                LOG.fine("the bridge closed with " + drainThreads[0] + " drain threads still running");
            }
        }
    }

    private void drainThreadStarting() {
        synchronized (drainThreads) {
            drainThreads[0]++;
        }
    }

    /** The very end of a drain thread: after its last call to Python. */
    private void drainThreadEnded() {
        synchronized (drainThreads) {
            drainThreads[0]--;
            drainThreads.notifyAll();
        }
    }

    <A extends Adapter> A register(A adapter) {
        live.add(adapter);
        if (closed) {
            adapter.shutdown();
        }
        return adapter;
    }

    void unregister(Adapter adapter) {
        live.remove(adapter);
    }

    /**
     * Runs a drain (every adapter's drain calls Python): on the Python lane if there is one,
     * else on the pool. False if the runtime is closed and refuses work.
     */
    boolean execute(Runnable drain) {
        SerialLane lane = pythonLane;
        if (lane == null) {
            try {
                executor.execute(drain);
                return true;
            } catch (RejectedExecutionException e) {
                return false;
            }
        }
        // As the pool does: refused once it is shut down; and a drain given before that runs,
        // which the lane's drainers do only if the pool took them before it shut down.
        Lock giving = shutdownGate.readLock();
        giving.lock();
        try {
            if (executor.isShutdown()) {
                return false;
            }
            lane.execute(drain);
            return true;
        } finally {
            giving.unlock();
        }
    }

    /**
     * Runs an adapter's upstream drain (it calls only the JVM publisher, never Python): on the
     * pool, beside the Python lane, so that a publisher working inside {@code request} makes the
     * next elements while the lane hands these to Python. False if the runtime is closed.
     */
    boolean executeUpstream(Runnable drain) {
        try {
            executor.execute(drain);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /**
     * Most elements one {@code request(n)} upstream asks for: a larger demand goes in slices, so
     * that what a publisher emits inside {@code request} reaches Python slice by slice.
     */
    long requestSlice() {
        return requestSlice;
    }

    /** Called on a drain thread after it called Python (see {@link Py4JConnections}). */
    void afterPythonCall() {
        Object client = py4jClient;
        if (client != null) {
            Py4JConnections.tuneCurrentThread(client);
        }
    }

    private PythonThreadStates keepThreadState() {
        PythonThreadStates states = threadStates;
        if (states == null) {
            return null;
        }
        try {
            states.keep();
            return states;
        } catch (RuntimeException | LinkageError e) { // Python is going: calls would fail anyway
            LOG.log(Level.FINE, "keeping a Python thread state failed", e);
            return null;
        }
    }

    private static void dropThreadState(PythonThreadStates states) {
        if (states != null) {
            try {
                states.drop();
            } catch (RuntimeException | LinkageError e) {
                LOG.log(Level.FINE, "dropping a Python thread state failed", e);
            }
        }
    }

    private void releasePy4JConnection() {
        Object client = py4jClient;
        if (client != null) {
            try {
                Py4JConnections.releaseCurrentThread(client);
            } catch (RuntimeException | LinkageError e) {
                LOG.log(Level.FINE, "closing a Py4J connection failed", e);
            }
        }
    }

    static String stackTrace(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }

    static void logPythonFailure(String what, Throwable t) {
        LOG.log(Level.WARNING, "a call into Python failed (" + what + "); the stream is cancelled", t);
    }
}
