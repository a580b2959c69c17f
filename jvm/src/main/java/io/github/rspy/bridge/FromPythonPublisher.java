package io.github.rspy.bridge;

import io.github.rspy.bridge.arrow.ArrowBatches;
import io.github.rspy.bridge.arrow.ArrowHandover;
import io.github.rspy.bridge.arrow.ArrowRows;
import io.github.rspy.bridge.arrow.ColumnRows;
import io.github.rspy.bridge.arrow.OwnedElements;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A Java {@link Publisher} backed by a Python publisher: each Java subscriber gets its own
 * Python subscription, whose elements Python pushes back in batches.
 */
public final class FromPythonPublisher implements Publisher<Object> {
    private final BridgeRuntime runtime;
    private final PythonPublisherFactory factory;

    FromPythonPublisher(BridgeRuntime runtime, PythonPublisherFactory factory) {
        this.runtime = runtime;
        this.factory = factory;
    }

    @Override
    public void subscribe(Subscriber<? super Object> subscriber) {
        Objects.requireNonNull(subscriber, "§1.9: subscribe(null)");
        runtime.register(new Handle(runtime, factory, subscriber)).schedule();
    }

    /**
     * One Java subscriber's subscription, and the handle Python pushes to.
     *
     * <p>The Java subscriber's {@code request}/{@code cancel} only record state (§3.4, §3.5).
     * One {@link Drain} does everything else: it subscribes on the Python side, then calls
     * {@code onSubscribe} (§1.9), forwards demand to Python in one crossing per drain pass,
     * and delivers what Python pushed, never more than requested (§1.1).
     * Python never gets more demand than the Java subscriber signalled, so the queue never holds
     * more than that either.
     */
    public static final class Handle implements Subscription, BridgeRuntime.Adapter, ArrowHandover {
        private final BridgeRuntime runtime;
        private final Drain drain;
        // Python's pushes, whole: one queue node per batch, not per element; a batch is a
        // List<Object> or a RowsMadeAhead.
        private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
        private List<Object> current = List.of(); // the batch being delivered; drain only
        private int next; // its next element; drain only
        private final DemandWindow window; // the Java subscriber's demand, on its way to Python
        private final AtomicLong pushed = new AtomicLong(); // total Python pushed
        private final AtomicLong requested = new AtomicLong(); // Java demand not yet delivered
        private final AtomicLong delivered = new AtomicLong(); // total delivered to the subscriber
        private volatile PythonPublisherFactory factory;
        private volatile Subscriber<? super Object> subscriber;
        private volatile PythonSource source;
        private volatile boolean started;
        private volatile boolean cancelled;
        private volatile IllegalArgumentException invalidRequest;
        private volatile boolean done;
        private volatile Throwable error;
        private volatile boolean pythonSubscribed;
        private volatile boolean pythonReleased;
        private volatile boolean columnRows; // the subscriber takes Arrow rows as ColumnRows
        // After a cancel, the subscriber stays referenced until Python's side of the subscription
        // is garbage: the JVM then drops it exactly when the Python publisher drops its own
        // subscriber, so a Python publisher that ignores cancel (and holds on) fails §3.13.
        private volatile Subscriber<? super Object> retained;

        Handle(BridgeRuntime runtime, PythonPublisherFactory factory, Subscriber<? super Object> subscriber) {
            this.runtime = runtime;
            this.factory = factory;
            this.subscriber = subscriber;
            this.window = new DemandWindow(runtime.demandWindow());
            this.drain = new Drain(this::pass, runtime::execute, this::release);
        }

        // The Java subscriber's Subscription.

        @Override
        public void request(long n) {
            if (n > 0) {
                Demand.add(requested, n); // §3.8, §3.17
                window.add(n);
            } else if (invalidRequest == null) {
                invalidRequest = Demand.illegalRequest(n); // §3.9, signalled by the drain
            }
            schedule();
        }

        @Override
        public void cancel() {
            cancelled = true; // §3.5, §3.7: the drain cancels Python's side and drops references
            schedule();
        }

        @Override
        public void shutdown() {
            cancel();
        }

        /**
         * For a subscriber that takes rows as Arrow columns (the Spark source), asked before its
         * first request: from then on, rows Python sends as Arrow arrive as {@link ColumnRows},
         * one element per batch that stands for its rows, counted row by row against the demand
         * (§1.1). A batch is delivered whole: Python sends no more rows than requested, so the
         * next batch always fits the demand left.
         */
        @Override
        public void takeColumnRows() {
            if (!runtime.arrowEnabled()) {
                return; // no Arrow here: rows come as values
            }
            columnRows = true;
        }

        /**
         * Whether nothing is under way on this subscription: no drain pass runs or is pending,
         * so every element the Python publisher emitted while answering the demand forwarded so
         * far has been delivered. A consumer that wants "what the publisher has ready" waits for
         * it after a request (the Spark source does).
         */
        public boolean isIdle() {
            return drain.isIdle();
        }

        // Called by Python.

        /** A batch: a pickled Python list, packed numbers, or Arrow rows or batches (see {@link Codec}). */
        public void push(byte[] pickled) {
            byte tag = pickled.length > 0 ? pickled[0] : 0;
            List<?> items;
            try {
                if (tag == ArrowRows.TAG) {
                    enqueueRows(runtime.decodeArrowColumns(pickled));
                    return;
                }
                items = tag == ArrowBatches.TAG ? runtime.decodeArrow(pickled) : Codec.decode(pickled);
            } catch (RuntimeException e) { // bytes no reader takes: the stream fails here, not in Python
                fail(e);
                return;
            }
            enqueue(items);
        }

        /**
         * The batch Python wrote on the data channel for stream {@code id} just before this call
         * (which keeps it in order with the other calls): as {@link #push}.
         */
        public void pushFrame(long id) {
            DataChannel channel = runtime.dataChannel();
            if (channel == null) {
                fail(new IllegalStateException("a pushed frame, but this runtime has no data channel"));
                return;
            }
            push(channel.takePushed(id));
        }

        /**
         * Arrow record batches Python exported through the C Data Interface (in process only):
         * the addresses of each one's array and schema, in turn. Each arrives as a root its
         * subscriber owns.
         */
        public void pushArrowC(long[] addresses) {
            List<Object> roots;
            try {
                roots = runtime.importArrowC(addresses);
            } catch (RuntimeException e) {
                fail(e);
                return;
            }
            enqueue(roots);
        }

        /**
         * Rows of kind {@code kind} (tuples or dicts, as {@link #push} takes them tagged) as
         * Arrow record batches Python exported through the C Data Interface (in process only):
         * their buffers are read where they are, and the rows made on the pool meanwhile.
         */
        public void pushArrowRowsC(int kind, long[] addresses) {
            io.github.rspy.bridge.arrow.OwnedElements loaded;
            try {
                loaded = runtime.importArrowRowsC((byte) kind, addresses);
            } catch (RuntimeException e) {
                fail(e);
                return;
            }
            enqueueRows(loaded);
        }

        /** A batch of elements crossing as references (JVM objects that went to Python and back). */
        public void pushObjects(Object[] items) {
            enqueue(java.util.Arrays.asList(items));
        }

        /** Python's side of this subscription is garbage (see {@code retained}). */
        public void pythonReleased() {
            pythonReleased = true;
            retained = null;
        }

        /** The Python publisher completed. */
        public void pushComplete() {
            done = true;
            schedule();
        }

        /**
         * The Python publisher failed; {@code original} is the Java exception itself when the
         * error came from the JVM in the first place.
         */
        public void pushError(String kind, String pythonType, String message, String traceback,
                Throwable original) {
            error = original != null ? original : PythonException.toJava(kind, pythonType, message, traceback);
            done = true;
            schedule();
        }

        private void enqueue(List<?> items) {
            long weight = items.size();
            if (columnRows) {
                weight = 0;
                for (Object item : items) {
                    weight += ColumnRows.weight(item);
                }
            }
            for (Object item : items) {
                if (item == null) {
                    pushed.addAndGet(weight);
                    closeIfOwned(items);
                    fail(new NullPointerException("§2.13: the Python publisher emitted None"));
                    return;
                }
            }
            offer(items, weight);
        }

        /**
         * Arrow rows from Python, loaded: as {@link ColumnRows} to a subscriber that takes them,
         * else only loaded here, their Java rows made on the pool while Python encodes the next.
         */
        private void enqueueRows(io.github.rspy.bridge.arrow.OwnedElements loaded) {
            if (columnRows) {
                enqueue(loaded);
            } else {
                enqueueAhead(new RowsMadeAhead(loaded, runtime::noteRowsMadeAhead));
            }
        }

        private void enqueueAhead(RowsMadeAhead rows) {
            if (offer(rows, rows.count())) {
                rows.offerTo(runtime::executeUpstream); // after it is queued: a cancel then closes it
            }
        }

        /** A batch of {@code weight} elements queued, unless it breaks §1.1 or nobody will take it. */
        private boolean offer(Object batch, long weight) {
            long total = pushed.addAndGet(weight);
            long asked = window.forwarded();
            if (total > asked) { // §1.1, kept by the Python publisher or reported here
                closeIfOwned(batch);
                fail(new IllegalStateException("§1.1: the Python publisher emitted " + total
                        + " elements, more than the " + asked + " requested"));
                return false;
            }
            queue.offer(batch);
            if (subscriber == null) { // released meanwhile: nobody will take them
                closeQueued();
                return false;
            }
            runtime.noteQueued(total - delivered.get());
            schedule();
            return true;
        }

        private void fail(Throwable t) {
            if (!done) {
                error = t;
                done = true;
                PythonSource s = source;
                if (s != null) {
                    s.cancel();
                }
            }
            schedule();
        }

        void schedule() {
            drain.signal();
        }

        private void pass() {
            Subscriber<? super Object> target = subscriber;
            if (target == null) {
                return;
            }
            try {
                drainOnce(target);
            } catch (RuntimeException e) { // Python or the gateway failed
                release();
                signalError(target, e);
            }
        }

        private void drainOnce(Subscriber<? super Object> target) {
            if (!started) {
                started = true;
                // Python's side first: once the Java subscriber holds its subscription, the
                // publisher counts it (a multicast Python processor emits only when every
                // subscriber it knows has demand; §1.11). Python sends nothing before a request.
                PythonPublisherFactory f = factory;
                factory = null;
                RuntimeException refused = null;
                try {
                    source = f.subscribe(this);
                    pythonSubscribed = source != null;
                } catch (RuntimeException e) {
                    refused = e;
                }
                try {
                    target.onSubscribe(this); // §1.9: the subscriber's first signal
                } catch (RuntimeException e) {
                    BridgeRuntime.LOG.warning("§2.13: onSubscribe threw " + e + "; the subscription is cancelled");
                    cancelled = true;
                }
                if (refused != null) {
                    throw refused; // pass() signals it, after onSubscribe (§1.9)
                }
            }
            if (cancelled) {
                if (pythonSubscribed && !pythonReleased && !done) {
                    retained = target;
                }
                cancelSource();
                release();
                return;
            }
            IllegalArgumentException invalid = invalidRequest;
            if (invalid != null) {
                cancelSource();
                release();
                signalError(target, invalid); // §3.9
                return;
            }
            for (;;) {
                boolean asked = forwardToPython();
                long sent = deliver(target);
                if (cancelled || invalidRequest != null || (!asked && sent == 0)) {
                    break;
                }
            }
            if (cancelled || invalidRequest != null) {
                schedule();
                return;
            }
            if (done && next == current.size() && queue.isEmpty()) {
                Throwable e = error;
                release();
                if (e == null) {
                    try {
                        target.onComplete();
                    } catch (RuntimeException ex) {
                        BridgeRuntime.LOG.warning("§2.13: onComplete threw " + ex);
                    }
                } else {
                    signalError(target, e);
                }
            }
        }

        private void cancelSource() {
            PythonSource s = source;
            source = null;
            if (s != null && !done) {
                s.cancel(); // before release(): once liveAdapters() drops, Python has been told
            }
        }

        /**
         * Forwards the Java subscriber's demand to Python through a window of {@code maxBatch}
         * elements: a synchronous Python publisher emits inside {@code request}, and unbounded
         * demand must not make it emit without end before anything is delivered.
         */
        private boolean forwardToPython() {
            PythonSource s = source;
            if (s == null || done) {
                return false;
            }
            long n = window.take(pushed.get());
            if (n == 0) {
                return false;
            }
            s.request(n); // Python pushes what it emits synchronously before this returns
            runtime.afterPythonCall();
            return true;
        }

        /** The next element Python pushed, or null; it stays queued until {@link #taken}; drain only. */
        @SuppressWarnings("unchecked") // a fresh, mutable list (Codec.decode, Arrays.asList): emptied as delivered
        private Object peek() {
            while (next == current.size()) {
                Object batch = queue.peek();
                if (batch == null) {
                    return null;
                }
                if (batch instanceof RowsMadeAhead) {
                    RowsMadeAhead ahead = (RowsMadeAhead) batch;
                    if (!ahead.isMade()) {
                        forwardToPython(); // Python encodes the next batch while these rows are made
                    }
                    List<Object> rows;
                    try {
                        rows = ahead.rows();
                    } catch (RuntimeException e) { // the rows before these went; the rest go nowhere
                        fail(e);
                        closeQueued();
                        return null;
                    }
                    queue.poll();
                    current = rows;
                } else {
                    current = (List<Object>) queue.poll();
                }
                next = 0;
            }
            return current.get(next);
        }

        /** The element {@link #peek} gave is delivered: the queue no longer holds it. */
        private void taken() {
            current.set(next++, null);
        }

        /** Delivers queued elements within demand (§1.1); how many (column rows count their rows). */
        private long deliver(Subscriber<? super Object> target) {
            long r = requested.get();
            long sent = 0;
            Object item;
            while (sent != r && !cancelled && (item = peek()) != null) {
                long weight = columnRows ? ColumnRows.weight(item) : 1;
                if (weight > r - sent) {
                    break; // not within the demand (Python sent more than asked: never, see takeColumnRows)
                }
                taken();
                try {
                    target.onNext(item);
                } catch (RuntimeException e) {
                    BridgeRuntime.LOG.warning("§2.13: onNext threw " + e + "; the subscription is cancelled");
                    cancelled = true;
                    break;
                }
                sent += weight;
            }
            if (sent > 0) {
                delivered.addAndGet(sent);
                Demand.produced(requested, sent); // §3.17: unbounded demand is never used up
            }
            return sent;
        }

        /** Undelivered elements the bridge made (Arrow roots) are closed: nobody else will. */
        private static void closeIfOwned(Object batch) {
            if (batch instanceof OwnedElements) {
                ((OwnedElements) batch).closeUndelivered();
            } else if (batch instanceof RowsMadeAhead) {
                ((RowsMadeAhead) batch).closeUndelivered();
            }
        }

        /** Every queued batch dropped, what the bridge made in them closed. */
        private void closeQueued() {
            for (Object batch; (batch = queue.poll()) != null; ) {
                closeIfOwned(batch);
            }
        }

        private static void signalError(Subscriber<? super Object> target, Throwable e) {
            try {
                target.onError(e);
            } catch (RuntimeException ex) {
                BridgeRuntime.LOG.warning("§2.13: onError threw " + ex);
            }
        }

        private void release() {
            cancelled = true;
            done = true;
            subscriber = null; // §3.13
            source = null;
            factory = null;
            closeIfOwned(current);
            closeQueued();
            current = List.of();
            next = 0;
            runtime.unregister(this);
        }
    }
}
