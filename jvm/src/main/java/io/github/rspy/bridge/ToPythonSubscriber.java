package io.github.rspy.bridge;

import io.github.rspy.bridge.arrow.ArrowBatches;
import io.github.rspy.bridge.arrow.ColumnRows;
import io.github.rspy.bridge.arrow.SchemaRows;
import java.util.Objects;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A Java {@link Subscriber} that hands what it receives to a Python subscriber, in batches.
 *
 * <p>The Python side calls {@link #request} and {@link #cancel} (its {@code Subscription}).
 * Every signal is recorded and then handled by two {@link Drain}s, each the only one to make its
 * calls. The upstream drain forwards demand (so upstream never sees more than Python asked for,
 * §1.1) and cancels; it alone calls the {@code Subscription}, so those calls are serial (§2.7).
 * The delivery drain hands the queued elements to Python a batch per crossing. They run on
 * different threads, so a publisher that works as it emits (most emit inside {@code request})
 * makes the next rows while Python takes these, and it asks in slices, so that Python's first
 * rows do not wait for a whole request. The queue never holds more than the demand Python
 * signalled. Signals to Python are serial (§1.3) and never run on the caller's stack (§3.3).
 */
public final class ToPythonSubscriber implements Subscriber<Object>, BridgeRuntime.Adapter {
    private final BridgeRuntime runtime;
    private final Drain drain; // delivers to Python
    private final Drain upstreamDrain; // requests and cancels upstream (§2.7)
    private final SpscQueue queue = new SpscQueue(); // onNext produces serially (§1.3), the drain consumes
    private final DemandWindow window; // Python's demand, on its way upstream
    private final java.util.concurrent.Executor lingerer; // the runtime's linger; null: none
    private volatile long offered; // written only by onNext, which is serial (§1.3)
    private volatile long polled; // taken from the queue; written under takeLock
    private final Object takeLock = new Object(); // the queue's consumers: the delivery drain, and takeAhead
    private Taken ahead; // under takeLock: taken before its turn, its encoding begun on the pool
    private volatile boolean inPython; // the delivery drain is inside a call to Python
    private final java.util.concurrent.atomic.AtomicBoolean lingering = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile boolean lingered; // a linger ended: what is queued goes now, however few
    private volatile long sliced; // offered when the upstream drain's last slice returned; written by it only
    private long maxQueued;
    private volatile Thread draining;
    private volatile Thread requesting; // the upstream drain's, inside its request(n)
    private volatile boolean stopUpstream; // the delivery drain's wish: cancel upstream (the upstream drain does)
    private volatile PythonSink sink;
    private volatile Subscription upstream;
    private volatile boolean done;
    private volatile boolean upstreamEnded; // it signalled onComplete or onError: nothing to cancel
    private volatile boolean upstreamLetGo; // cancelled, or found ended: the upstream drain is done with it
    private volatile Throwable error;
    private volatile boolean cancelled;
    private volatile IllegalArgumentException invalidRequest;
    private boolean subscribeSignalled;
    private final long id; // names this stream's frames on the data channel (0: none)
    private final ChannelSink channelSink; // the sink, when it is the data channel's
    private volatile SchemaRows rows; // the subscriber's schema: every element a row of it; or null
    private IllegalArgumentException badRow; // a row that does not fit it; drain only

    ToPythonSubscriber(BridgeRuntime runtime, PythonSink sink, long id) {
        this.runtime = runtime;
        this.sink = sink;
        this.channelSink = sink instanceof ChannelSink ? (ChannelSink) sink : null;
        this.window = new DemandWindow(runtime.demandWindow());
        this.lingerer = runtime.lingerer();
        this.id = id;
        this.drain = new Drain(this::pass, runtime::execute, this::refused);
        this.upstreamDrain = new Drain(this::upstreamPass, runtime::executeUpstream, this::upstreamRefused);
    }

    /**
     * Every element must be a row of {@code schema} (an Arrow schema in IPC format), delivered
     * as Arrow (see {@link SchemaRows}); set before the subscriber is subscribed. A schema that
     * cannot be used fails it, and it then cancels the publisher it is given (§2.5).
     */
    void expectRows(byte[] schema) {
        try {
            if (!runtime.arrowEnabled()) {
                throw new IllegalStateException("rows with a schema need Arrow Java, which this JVM lacks");
            }
            rows = SchemaRows.parse(schema, element -> Codec.isValue(element, 0));
        } catch (RuntimeException e) {
            failFromSubscribe(e);
        }
    }

    /** This stream's id on the data channel (0 without one). */
    public long streamId() {
        return id;
    }

    @Override
    public String describe() {
        return "ToPythonSubscriber " + id + ": " + drain.describe() + ", upstream " + upstreamDrain.describe()
                + ", " + window.describe()
                + ", offered " + offered + ", polled " + polled + ", ahead " + !nothingAhead() + ", done " + done + ", cancelled " + cancelled
                + ", subscribed " + (upstream != null) + ", sink " + (sink != null);
    }

    /** Elements (rows, for column rows) that arrived from upstream so far: Python's describe() subtracts what it was handed. */
    public long arrived() {
        return offered;
    }

    /** On the data channel: the batch of references its OBJECTS frame stands for (Python takes it). */
    public Object[] takeObjects() {
        return requireChannel().takeObjects();
    }

    /** On the data channel: the Throwable of its ERROR frame (Python takes it). */
    public Throwable takeError() {
        return requireChannel().takeError();
    }

    private ChannelSink requireChannel() {
        if (channelSink == null) {
            throw new IllegalStateException("this stream is not on the data channel");
        }
        return channelSink;
    }

    // Signals from the upstream publisher (§2.13: null arguments are refused).

    @Override
    public void onSubscribe(Subscription s) {
        Objects.requireNonNull(s, "§2.13: onSubscribe(null)");
        synchronized (this) { // against abandon()
            if (upstream == null && !cancelled) {
                upstream = s;
                s = null;
            }
        }
        if (s != null) {
            s.cancel(); // §2.5
            return;
        }
        schedule();
        upstreamDrain.signal();
    }

    /**
     * For a subscriber no publisher has subscribed, nor will (a registration withdrawn before a
     * query took it): lets go of its Python side, signalling nothing (no subscription began,
     * so §1.9 asks for none), and cancels a subscription offered later (§2.5). False, and
     * nothing done, if it was subscribed already: that stream goes on.
     */
    public boolean abandon() {
        synchronized (this) {
            if (upstream != null) {
                return false;
            }
            cancelled = true;
        }
        refused();
        return true;
    }

    @Override
    public void onNext(Object item) {
        Objects.requireNonNull(item, "§2.13: onNext(null)");
        if (sink == null) {
            return; // §2.8: after the end (a cancel, say), nothing is kept, nor a batch copied
        }
        // An Arrow batch is copied now: its publisher may refill or close it once this returns.
        Object taken = item;
        long weight = 1; // column rows stand for their rows
        if (runtime.arrowEnabled()) {
            weight = ColumnRows.weight(item);
            try {
                taken = runtime.takeBatch(item);
            } catch (RuntimeException | OutOfMemoryError e) { // no memory to copy the batch into
                cancelUpstream(); // §2.13: never throw at the publisher; end the stream instead
                fail(e);
                return;
            }
        }
        queue.offer(taken);
        long queued = (offered += weight) - polled;
        if (queued > maxQueued) {
            maxQueued = queued;
            runtime.noteQueued(queued);
        }
        if (requesting != Thread.currentThread()) { // inside the upstream drain's request, it signals once the slice is in
            if (worthLingeringFor(queued) && drain.isIdle()) {
                linger(); // a producer on its own thread: rows gather into one batch meanwhile
            } else { // a pass running goes round once more, and lingers then if it should
                schedule();
            }
        }
    }

    @Override
    public void onError(Throwable t) {
        Objects.requireNonNull(t, "§2.13: onError(null)");
        upstreamEnded = true;
        fail(t);
    }

    @Override
    public void onComplete() {
        upstreamEnded = true;
        done = true;
        schedule();
    }

    /** Ends the stream with {@code t} once what is queued went (§1.4). */
    private void fail(Throwable t) {
        error = t;
        done = true;
        schedule();
    }

    // The Python subscriber's Subscription.

    /** Adds demand (§3.8, §3.17); n &lt;= 0 ends the stream (§3.9). */
    public void request(long n) {
        addDemand(n); // the upstream drain forwards it; the delivery has nothing new to hand over
        if (n <= 0) {
            schedule(); // it signals the §3.9 error
        }
    }

    /** Cancels upstream and drops the Python subscriber (§3.5, §3.13); idempotent. */
    public void cancel() {
        cancelled = true;
        schedule();
    }

    @Override
    public void shutdown() {
        cancel();
    }

    void failFromSubscribe(Throwable t) {
        if (upstream == null) {
            upstream = NoSubscription.INSTANCE;
        }
        fail(t);
    }

    /** Python's demand, from a request or returned by a callback; the drains act on it. */
    private void addDemand(long n) {
        if (n > 0) {
            window.add(n);
            upstreamDrain.signal();
        } else if (invalidRequest == null) {
            invalidRequest = Demand.illegalRequest(n); // §3.9, signalled by the drain
        }
    }

    private void schedule() {
        drain.signal();
    }

    /** The runtime is closed: no pass will run again. */
    private void refused() {
        upstreamRefused();
        sink = null;
        forget();
    }

    private void pass() {
        PythonSink target = sink;
        if (target == null) {
            closeQueued(); // what an onNext racing with the end queued: nobody will send it
            return;
        }
        draining = Thread.currentThread();
        try {
            drainOnce(target);
        } catch (RuntimeException e) { // a delivery failed: nothing more can be delivered
            cancelUpstream();
            release();
            if (runtime.isClosed()) { // the bridge closed under this delivery: Python ends the stream
                BridgeRuntime.LOG.log(java.util.logging.Level.FINE, "a delivery ended by close()", e);
            } else {
                signalFailure(target, e);
            }
        } finally {
            draining = null;
        }
    }

    private void drainOnce(PythonSink target) {
        Subscription s = upstream;
        if (cancelled) {
            cancelUpstream();
            release();
            return;
        }
        if (s == null) {
            return;
        }
        if (!subscribeSignalled) {
            subscribeSignalled = true;
            accept(target.onSubscribe());
        }
        IllegalArgumentException invalid = invalidRequest;
        if (invalid != null) { // §3.9, signalled as the publisher this adapter stands for
            cancelUpstream();
            release();
            signalError(target, invalid);
            return;
        }
        while (!cancelled && invalidRequest == null) {
            if (!lingered && nothingAhead() && worthLingeringFor(offered - polled)) {
                linger(); // the rows queued so far would cross as a small batch: more are on their way
                break;
            }
            lingered = false;
            Taken taken = takeNext(channelSink == null);
            if (taken == null) {
                break;
            }
            if (window.hasPending()) {
                upstreamDrain.signal(); // room in the window again (§1.1: it asks only for what Python did)
            }
            // Taken ahead only once half a lingering batch is queued (hence the 2): a few rows taken
            // now would cross next as a small batch, undoing the linger.
            if (taken.encoded != null && !worthLingeringFor(2 * (offered - polled))) {
                takeAhead(); // the next, encoded on the pool while Python takes this
            }
            Number more;
            inPython = true; // rows the upstream drain adds meanwhile are taken ahead (upstreamPass)
            runtime.noteBatchToPython();
            try {
                more = deliver(target, taken);
            } finally {
                inPython = false;
            }
            if (channelSink == null) {
                runtime.afterPythonCall(); // a frame on the data channel is no call through Py4J
            }
            if (badRow != null) { // the rows before it went: upstream cancelled, then onError (§1.4)
                cancelUpstream();
                release();
                signalError(target, badRow);
                return;
            }
            accept(more);
        }
        if (cancelled || invalidRequest != null) {
            schedule(); // the next pass handles it
            return;
        }
        if (done && queue.isEmpty() && nothingAhead()) {
            Throwable e = error;
            release();
            if (e == null) {
                target.onComplete();
            } else {
                signalError(target, e);
            }
        }
    }

    /**
     * One batch to Python: rows as Arrow, other values as the codec's bytes (either on the data
     * channel if large), anything else as references.
     */
    private Number deliver(PythonSink target, Taken taken) {
        Object[] batch = taken.items;
        int n = taken.n;
        SchemaRows schema = rows;
        if (schema != null) {
            return deliverRows(target, schema, batch, n);
        }
        if (taken.encoded != null) {
            return deliverEncoded(target, batch, n, taken.encoded.join());
        }
        long demand = 0;
        for (int from = 0; from < n; ) { // Arrow batches apart from other elements, in order
            byte[] columnRows = ColumnRows.frameOf(batch[from]);
            boolean batches = ArrowBatches.isTaken(batch[from]);
            int count = columnRows != null ? 1 : ArrowBatches.runOfBatches(batch, from, n, batches);
            Number more;
            if (columnRows != null) {
                more = send(target, columnRows);
            } else if (batches) {
                try {
                    more = runtime.sendBatches(target, batch, from, count);
                } catch (RuntimeException e) {
                    ArrowBatches.closeTaken(batch, from, n); // not delivered: nobody else will
                    throw e;
                }
            } else {
                Object[] run = from == 0 && count == n ? batch : java.util.Arrays.copyOfRange(batch, from, from + count);
                more = deliverRun(target, run, count);
            }
            long m = more == null ? 0 : more.longValue();
            if (m < 0) {
                ArrowBatches.closeTaken(batch, from + count, n);
                return m; // §3.9: nothing more is delivered
            }
            demand = Demand.addCap(demand, m);
            from += count;
        }
        return demand;
    }

    /** Bytes to Python: a call of the in-process sink, or a frame of the channel's. */
    private Number send(PythonSink target, byte[] encoded) {
        return target.onNextBatch(encoded);
    }

    /** Rows of the subscriber's schema, as Arrow: the runs before a bad row go, then {@link #badRow} is set. */
    private Number deliverRows(PythonSink target, SchemaRows schema, Object[] batch, int n) {
        SchemaRows.Encoded encoded = runtime.encodeRows(schema, batch, n);
        if (encoded.error != null) {
            ArrowBatches.closeTaken(batch, 0, n); // an Arrow batch is not a row: nobody will take it
        }
        long demand = 0;
        for (byte[] run : encoded.runs) {
            Number more = send(target, run);
            long m = more == null ? 0 : more.longValue();
            if (m < 0) {
                return m; // §3.9: nothing more is delivered
            }
            demand = Demand.addCap(demand, m);
        }
        badRow = encoded.error;
        return demand;
    }

    /**
     * Rows as Arrow; else values pickled; else the batch pickled with the JVM objects that have no
     * Python equivalent as references beside it (a row holding one is still a row, §3c), or, when
     * no element is a value at all, the batch as references.
     */
    private Number deliverRun(PythonSink target, Object[] batch, int n) {
        return deliverEncoded(target, batch, n, encode(batch, n));
    }

    private Number deliverEncoded(PythonSink target, Object[] batch, int n, Encoded encoded) {
        if (encoded.failure != null) { // an element's own code threw as it was read
            if (n == 1) {
                throw new IllegalStateException("an element of class " + batch[0].getClass().getName()
                        + " could not be read: " + encoded.failure, encoded.failure);
            }
            return deliverEach(target, batch, n); // the elements before it still go (§1.4 after them)
        }
        if (encoded.bytes == null) {
            return target.onNextObjects(java.util.Arrays.copyOf(batch, n));
        }
        return encoded.references == null ? send(target, encoded.bytes)
                : target.onNextValues(encoded.bytes, encoded.references);
    }

    /** A batch of plain elements for Python: no JVM work is left once this returns. Never throws. */
    private Encoded encode(Object[] batch, int n) {
        if (Thread.currentThread() != draining) {
            runtime.noteEncodedAhead();
        }
        try {
            byte[] bytes = runtime.encodeArrowRows(batch, n);
            if (bytes == null) {
                bytes = Codec.encodeValues(batch, n);
            }
            if (bytes == null && anyValue(batch, n)) {
                java.util.List<Object> references = new java.util.ArrayList<>();
                bytes = Codec.encodeWithReferences(batch, n, references);
                return new Encoded(bytes, references.toArray(), null);
            }
            return new Encoded(bytes, null, null);
        } catch (RuntimeException e) {
            return new Encoded(null, null, e);
        }
    }

    /** What {@link #encode} made of a batch: its bytes (with references), or its failure. */
    private static final class Encoded {
        final byte[] bytes; // null: the elements cross as references
        final Object[] references;
        final RuntimeException failure;

        Encoded(byte[] bytes, Object[] references, RuntimeException failure) {
            this.bytes = bytes;
            this.references = references;
            this.failure = failure;
        }
    }

    /**
     * The next batch from the queue, or null if none is queued. With {@code split}, rows (which
     * cost the most to encode) are taken half at a time, so that the other half is encoded ahead
     * while Python takes the first: else all that Python's demand let in may come in one batch,
     * leaving nothing to encode meanwhile. (Not on the data channel: there the delivery writes
     * its frame and moves on, and Python's process pays per frame.) Inside a request, what its
     * slice emitted so far waits for the slice: taken as it comes, it would cross in many small
     * batches, each paying a crossing's fixed cost.
     */
    private Taken take(boolean split) { // under takeLock
        long queued = (requesting != null ? sliced : offered) - polled;
        Object item;
        if (queued <= 0 || (item = queue.poll()) == null) {
            return null;
        }
        // Sized to what is queued, not to maxBatch: a thousand streams taking 64 at a time would
        // otherwise zero a maxBatch-sized array every pass.
        int size = (int) Math.min(queued, runtime.maxBatch());
        if (split && size >= 2 * SPLIT_ROWS && (item instanceof Object[] || item instanceof java.util.Map)) {
            size = (size + 1) / 2;
        }
        Object[] items = new Object[size];
        int n = 0;
        long weight = 0;
        boolean arrow = runtime.arrowEnabled();
        boolean plain = rows == null; // schema rows are encoded against their schema, as delivered
        for (; item != null; item = n < items.length ? queue.poll() : null) {
            items[n++] = item;
            if (arrow) {
                weight += ColumnRows.weight(item);
                plain &= !(item instanceof ColumnRows) && !ArrowBatches.isTaken(item);
            } else {
                weight++;
            }
        }
        int count = n;
        polled += weight;
        return new Taken(items, count, weight, plain ? WorkAhead.of(() -> encode(items, count)) : null);
    }

    /** The batch taken ahead, else the next from the queue (`take`). Delivery drain only. */
    private Taken takeNext(boolean split) {
        synchronized (takeLock) {
            Taken taken = ahead;
            if (taken == null) {
                return take(split);
            }
            ahead = null;
            return taken;
        }
    }

    /**
     * Whether {@code queued} rows are too few to cross alone while more are on their way: fewer
     * than {@link #LINGER_ROWS} (or a batch), and upstream asked for more than arrived, the stream
     * not ended. Each crossing has a fixed cost on both sides, so a producer on its own thread,
     * slower than Python, would otherwise reach Python a few rows at a time (about 100 from a
     * publishOn in the issue 45 benchmark, against 360-510 from rows made first). Never when
     * nothing more was asked for: a subscriber's last requested rows go at once.
     */
    private boolean worthLingeringFor(long queued) {
        return queued > 0 && queued < Math.min(LINGER_ROWS, runtime.maxBatch())
                && window.forwarded() > offered && !done && !cancelled && lingerer != null;
    }

    /**
     * Lets the queued rows gather for at most the runtime's linger (once: later calls find the
     * linger armed), then signals the delivery drain; a row that fills the batch signals it
     * sooner (onNext). The queue holds no more than before: only what upstream was asked for.
     */
    private void linger() {
        if (lingering.compareAndSet(false, true)) {
            lingerer.execute(() -> {
                lingered = true; // set first: the pass it starts must not linger again
                lingering.set(false);
                schedule();
            });
        }
    }

    /** Rows a batch from a producer on its own thread gathers before it crosses. */
    static final int LINGER_ROWS = 256;

    /**
     * Takes the next batch before its turn, if none is taken ahead yet, and offers its encoding
     * to the pool, so that it is encoded while Python takes the batch before it. The delivery
     * drain calls it as it hands a batch over; the upstream drain as a slice returns during a
     * delivery, whose rows would otherwise wait for that delivery's end to be taken and encoded.
     * Either way the rows have arrived (§1.1: nothing here asks upstream for more).
     */
    private void takeAhead() {
        synchronized (takeLock) {
            if (ahead != null || sink == null || cancelled) {
                return;
            }
            Taken taken = take(false);
            if (taken == null) {
                return;
            }
            ahead = taken;
            if (taken.encoded != null) {
                taken.encoded.offerTo(runtime::executeUpstream);
            }
        }
        schedule(); // the delivery drain may have ended its pass meanwhile: it delivers this next
    }

    /**
     * What left the JVM side's hands: taken from the queue, less the batch taken ahead, which the
     * JVM still holds. The window counts from here, so that the queue and the batch ahead together
     * hold at most {@code demandWindow} (one read under the lock: polled and ahead change together).
     */
    private long handedOver() {
        synchronized (takeLock) {
            Taken taken = ahead;
            return polled - (taken == null ? 0 : taken.weight);
        }
    }

    private boolean nothingAhead() {
        synchronized (takeLock) {
            return ahead == null;
        }
    }

    /** Fewest rows in each half of a batch split for encoding ahead. */
    private static final int SPLIT_ROWS = 64;

    /** Elements taken from the queue, and their encoding if every one is a plain element. */
    private static final class Taken {
        final Object[] items;
        final int n;
        final long weight; // in rows: column rows stand for theirs
        final WorkAhead<Encoded> encoded; // null: Arrow batches or column rows among them, or schema rows

        Taken(Object[] items, int n, long weight, WorkAhead<Encoded> encoded) {
            this.items = items;
            this.n = n;
            this.weight = weight;
            this.encoded = encoded;
        }
    }

    /** One element at a time, until the one that cannot be read throws. */
    private Number deliverEach(PythonSink target, Object[] batch, int n) {
        long demand = 0;
        for (int i = 0; i < n; i++) {
            Number more = deliverRun(target, new Object[] {batch[i]}, 1);
            long m = more == null ? 0 : more.longValue();
            if (m < 0) {
                return m; // §3.9: nothing more is delivered
            }
            demand = Demand.addCap(demand, m);
        }
        return demand;
    }

    private static boolean anyValue(Object[] batch, int n) {
        for (int i = 0; i < n; i++) {
            if (Codec.isShallowValue(batch[i])) {
                return true;
            }
        }
        return false;
    }

    /**
     * A delivery failed while the bridge is open: the Python subscriber hears why (§1.4), or it
     * would wait for ever for elements no longer coming. If the sink itself is what broke (Python
     * gone), this fails too: only the JVM's log can tell then, and Python's side ends the stream
     * when it sees its end go.
     */
    private static void signalFailure(PythonSink target, RuntimeException e) {
        try {
            signalError(target, new IllegalStateException("the bridge failed delivering to Python: " + e, e));
            BridgeRuntime.LOG.log(java.util.logging.Level.FINE, "a delivery failed; its subscriber was told", e);
        } catch (RuntimeException again) {
            e.addSuppressed(again);
            BridgeRuntime.logPythonFailure("delivering to a Python subscriber", e);
        }
    }

    private static void signalError(PythonSink target, Throwable e) {
        target.onError(e.getClass().getName(), e.getMessage(), BridgeRuntime.stackTrace(e), e);
    }

    /** What a Python callback returns: the demand requested during it, or -1 for a §3.9 error. */
    private void accept(Number demand) {
        long n = demand == null ? 0 : demand.longValue();
        if (n != 0) {
            addDemand(n);
        }
    }

    /**
     * The upstream drain's pass: the only caller of the upstream {@code Subscription}, so its
     * calls are serial (§2.7). Forwards Python's demand through a window of {@code demandWindow}
     * elements, so the queue never holds more than that even when Python's demand is unbounded,
     * and in slices: a publisher that emits inside {@code request} hands each slice to the
     * delivery drain as it is made, and goes on making the next while Python takes it.
     */
    private void upstreamPass() {
        Subscription s = upstream;
        if (s == null) {
            return;
        }
        if (stopUpstream || s == NoSubscription.INSTANCE) {
            if (s != NoSubscription.INSTANCE) {
                upstream = NoSubscription.INSTANCE; // §3.7: one cancel, later calls find nothing
                if (!upstreamEnded) {
                    s.cancel();
                }
            }
            letGo();
            return;
        }
        requesting = Thread.currentThread();
        try {
            for (long n; !stopUpstream && (n = window.take(handedOver())) > 0; ) {
                // Taken here: what waits in the queue or ahead is in flight too. All of n is asked for
                // unless the stream ends meanwhile, when no more is needed.
                for (long slice; n > 0 && !stopUpstream; n -= slice) {
                    slice = Math.min(n, runtime.requestSlice());
                    s.request(slice);
                    long made = sliced = offered;
                    if (made != polled) {
                        schedule(); // what it emitted inside request(n) goes to Python now, as one batch
                        if (inPython) {
                            takeAhead(); // Python is busy: encoded meanwhile, not after its delivery
                        }
                    }
                }
            }
        } catch (RuntimeException e) { // §3.16 broken: the publisher threw from request(n)
            stopUpstream = true;
            upstreamDrain.signal(); // the next pass cancels it
            fail(new IllegalStateException("the JVM publisher's request(n) threw (§3.16): " + e, e));
        } finally {
            requesting = null;
        }
        if (offered != polled) {
            schedule(); // what came from other threads meanwhile waited for the slice
        }
    }

    /** The runtime refused the upstream drain's pass (it is closed): cancels here, once. */
    private void upstreamRefused() {
        Subscription s;
        synchronized (this) {
            s = upstream;
            upstream = NoSubscription.INSTANCE;
        }
        if (s != null && !upstreamEnded) {
            s.cancel();
        }
        letGo();
    }

    /**
     * The upstream drain is done with the subscription. A stream that ended stays registered
     * until then: a cancel made when a request returns is still owed, and close() must find it.
     */
    private void letGo() {
        upstreamLetGo = true;
        if (cancelled) {
            forget(); // release() ran while the cancel was owed: it left this to here
        }
    }

    /**
     * Cancels upstream through the upstream drain (§2.7: it alone calls the subscription): here
     * and now if it is idle, so that a publisher hears its cancel before Python hears the error
     * that follows; else as soon as its {@code request(n)} returns.
     */
    private void cancelUpstream() {
        stopUpstream = true;
        upstreamDrain.signalHere();
    }

    /** Empties the queue and what was taken ahead, closing the batches copied for Python. */
    private void closeQueued() {
        synchronized (takeLock) {
            Taken taken = ahead;
            ahead = null;
            if (taken != null && (taken.encoded == null || taken.encoded.cancel())) {
                ArrowBatches.closeTaken(taken.items, 0, taken.n); // its encoding, had it begun, would free them
            }
            if (runtime.arrowEnabled()) {
                for (Object item; (item = queue.poll()) != null; ) {
                    ArrowBatches.closeTaken(item); // batches copied for Python and never sent
                }
            }
            queue.clear();
        }
    }

    /** Drain thread only (it consumes the queue). */
    private void release() {
        done = true;
        cancelled = true;
        sink = null; // §3.13: the JVM holds no Python proxy after the end
        closeQueued();
        cancelUpstream(); // a no-op if it ended, or was cancelled, before
        if (upstream == null || upstreamLetGo) {
            forget(); // else letGo() does, once the cancel owed is made
        }
    }

    /** Leaves the runtime's registry (idempotent: release() and letGo() may both get here). */
    private void forget() {
        runtime.unregister(this);
        if (channelSink != null) {
            runtime.forgetChannelStream(id);
        }
    }

    /** Stands in for an upstream that is gone, so late calls find nothing to do. */
    enum NoSubscription implements Subscription {
        INSTANCE;

        @Override
        public void request(long n) {}

        @Override
        public void cancel() {}
    }
}
