package io.github.rspy.spark.connect;

import io.github.rspy.bridge.Demand;
import io.github.rspy.bridge.WireValues;
import io.github.rspy.bridge.arrow.ArrowRows;
import io.github.rspy.bridge.arrow.ColumnRows;
import io.github.rspy.spark.connect.wire.Status;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A Connect client's subscription to a JVM publisher (the {@code subscribe} op), or a
 * registration's stream. The JVM subscriber buffers what the publisher sends; the client's
 * reply path ({@link Mux}) sends it as {@code Elements} replies as soon as it is there, a reply's
 * worth at a time ({@link #sendSome}). The client's {@code demand} ops reach the publisher as
 * {@code request(n)} with its exact {@code n}, so the buffer never holds more than the demand not
 * yet met (§1.1).
 *
 * <p>Upstream signals ({@code request}, {@code cancel}) come from several threads (GetStatus
 * handlers, the reaper, the listener bus): they are recorded, then sent by one drain at a time
 * (§2.7), which also keeps a {@code request} made from inside {@code onNext} from recursing.
 */
final class PublisherStream extends ConnectStream implements Subscriber<Object> {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark.connect");
    /** The most elements in one Elements reply, whatever max_batch says (512 KiB of longs). */
    private static final int MAX_BATCH = 1 << 16;
    /** The first size of the arrays a stream gathers a reply in: a thousand streams hold little. */
    private static final int FIRST_ARRAY = 1 << 10;

    private final String name;
    private final int batchSize; // elements in one reply at most
    private final ConnectStreams streams;

    private final ReentrantLock lock = new ReentrantLock();
    private volatile Mux mux; // the reply path that sends this stream's replies
    private final AtomicBoolean queued = new AtomicBoolean(); // in the mux's ready queue
    private boolean ended; // the end was sent, or the mux ended: only the mux's thread touches it
    private Object[] batch = new Object[FIRST_ARRAY]; // a reply being gathered: only the mux's thread
    private final ArrayDeque<Object> buffer = new ArrayDeque<>(); // elements and Notices, guarded by lock
    private long bufferedRows; // elements in the buffer, column rows counted as their rows; guarded by lock
    private volatile java.util.function.BiConsumer<String, String> onEnd; // (state, reason), before the cancel
    private long requested; // positive requests, summed and capped (§3.17); guarded by lock
    private long received; // guarded by lock
    private boolean completed; // guarded by lock
    private Throwable failure; // guarded by lock
    private String cancelReason; // guarded by lock
    private boolean quietCancel; // guarded by lock
    private long maxBuffered; // guarded by lock

    // Upstream signals, recorded by any thread and sent by the drain that wins upstreamWip.
    private final ConcurrentLinkedQueue<Long> pendingRequests = new ConcurrentLinkedQueue<>();
    private final AtomicInteger upstreamWip = new AtomicInteger();
    private volatile Subscription upstream;
    private volatile boolean cancelUpstream;
    private boolean upstreamCancelled; // only the drain touches it
    private boolean requestedOnce; // only the drain touches it
    /** The thread inside the upstream's request(n), if any: what it emits there goes out at once, after. */
    private volatile Thread requesting;
    /**
     * Elements the publisher emitted inside request(n), kept without the lock (signals are serial,
     * §1.3) until it returns or they fill a reply; other accesses hold the lock.
     */
    private Object[] emitted;
    private int emittedCount;
    private long emittedRows; // their weight: column rows count as their rows

    PublisherStream(String id, Scope scope, String name, int maxBatch, ConnectStreams streams) {
        super(id, scope, "publisher", name);
        this.name = name;
        this.batchSize = Math.min(maxBatch, MAX_BATCH);
        this.streams = streams;
    }

    /** The most elements in one reply (column rows counting as their rows). */
    int batchSize() {
        return batchSize;
    }

    private volatile Object registration; // a ClientPublisher or SubscriberRelay this stream serves, if any

    /** What a registration's stream serves: its ClientPublisher or SubscriberRelay. */
    void serves(Object served) {
        registration = served;
    }

    /** The ClientPublisher or SubscriberRelay this stream serves, or null. */
    Object registration() {
        return registration;
    }

    /** A Status event sent in order with the elements: a notice from the server to the client. */
    private record Notice(Status event) {}

    /**
     * Sends {@code event} to the client as a Status reply, after the elements already buffered
     * and before later ones. Notices do not count against demand (they are not elements).
     */
    void notice(Status event) {
        lock.lock();
        try {
            if (cancelReason != null) {
                return;
            }
            if (requesting == Thread.currentThread()) {
                takeEmittedLocked(); // what the publisher emitted before it, in this request(n)
            }
            buffer.add(new Notice(event));
            wake();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code hook} with the end state and reason when the stream ends, before it cancels
     * its upstream: the registrations tell a lost client apart from a close there.
     */
    void onEnd(java.util.function.BiConsumer<String, String> hook) {
        onEnd = hook;
    }

    /** Whether the stream ended for another reason than the client's own close or cancel. */
    static boolean clientLost(String state, String reason) {
        return state.equals("cancelled") && !CLOSED.equals(reason) && !CANCELLED_BY_CLIENT.equals(reason);
    }

    /** The {@code demand} op: {@code request(n)} upstream, with n as the client sent it. */
    void demand(long n) {
        counters.request(n);
        if (n > 0) {
            lock.lock();
            try {
                requested = Demand.addCap(requested, n); // before request(n): its elements may arrive at once
            } finally {
                lock.unlock();
            }
        }
        pendingRequests.add(n);
        drainUpstream();
    }

    @Override
    void cancel(String reason, boolean quietly) {
        lock.lock();
        try {
            if (cancelReason != null) {
                return;
            }
            cancelReason = reason; // wins over an end not yet sent: the client wants nothing more
            quietCancel = quietly;
            wake();
        } finally {
            lock.unlock();
        }
        cancelUpstream = true; // now, rather than when the call's thread wakes up
        drainUpstream();
    }

    // Subscriber: signals from the upstream publisher.

    @Override
    public void onSubscribe(Subscription s) {
        Objects.requireNonNull(s, "§2.13: onSubscribe(null)");
        if (upstream != null) {
            s.cancel(); // §2.5: one subscription only
            return;
        }
        upstream = s;
        drainUpstream();
    }

    @Override
    public void onNext(Object element) {
        Objects.requireNonNull(element, "§2.13: onNext(null)");
        if (requesting == Thread.currentThread()) { // inside our request(n): no lock per element
            if (emitted == null) {
                emitted = new Object[Math.min(batchSize, FIRST_ARRAY)];
            } else if (emittedCount == emitted.length) {
                emitted = Arrays.copyOf(emitted, Math.min(batchSize, 2 * emittedCount));
            }
            emitted[emittedCount++] = element;
            emittedRows += ColumnRows.weight(element);
            if (emittedRows >= batchSize) {
                takeEmitted(); // a full reply: it goes now
            }
            return;
        }
        lock.lock();
        try {
            takeEmittedLocked(); // any left by a request(n) that went on elsewhere: in order
            long weight = ColumnRows.weight(element);
            if (accept(weight)) {
                buffer.add(element);
                if (buffer.size() == 1 || (bufferedRows >= batchSize && bufferedRows - weight < batchSize)) {
                    wake(); // the first element, or a full reply
                }
                return;
            }
        } finally {
            lock.unlock();
        }
        drainUpstream(); // a §1.1 breach: the cancel it recorded
    }

    /** Moves what was emitted inside request(n) to the buffer and wakes the sender. */
    private void takeEmitted() {
        boolean breach;
        lock.lock();
        try {
            breach = takeEmittedLocked();
        } finally {
            lock.unlock();
        }
        if (breach) {
            drainUpstream();
        }
    }

    private boolean takeEmittedLocked() {
        int count = emittedCount;
        if (count == 0) {
            return false;
        }
        int accepted = 0;
        while (accepted < count && accept(ColumnRows.weight(emitted[accepted]))) {
            buffer.add(emitted[accepted++]);
        }
        Arrays.fill(emitted, 0, count, null);
        emittedCount = 0;
        emittedRows = 0;
        if (accepted > 0) {
            wake();
        }
        return accepted < count && failure != null;
    }

    /**
     * Whether the stream takes an element of {@code weight} elements arriving now (its rows, if
     * it is column rows; guarded by lock): not once it has ended (§2.8: elements may still arrive
     * after a cancel), nor beyond the demand: the first such element fails the stream (§1.1) and
     * cancels upstream.
     */
    private boolean accept(long weight) {
        if (completed || failure != null || cancelReason != null) {
            return false;
        }
        if (weight > requested - received) {
            failure = new IllegalStateException("§1.1: the publisher registered as '" + name + "' sent more "
                    + "elements than were requested (" + requested + ")");
            cancelUpstream = true;
            wake();
            return false;
        }
        received += weight;
        bufferedRows += weight;
        if (bufferedRows > maxBuffered) {
            maxBuffered = bufferedRows;
            counters.buffered(maxBuffered);
        }
        return true;
    }

    @Override
    public void onError(Throwable t) {
        Objects.requireNonNull(t, "§2.13: onError(null)");
        terminate(t);
    }

    @Override
    public void onComplete() {
        terminate(null);
    }

    private void terminate(Throwable error) {
        lock.lock();
        try {
            takeEmittedLocked(); // the elements before it, then the end (§1.3: signals are serial)
            if (completed || failure != null) {
                return;
            }
            if (error == null) {
                completed = true;
            } else {
                failure = error;
            }
            wake();
        } finally {
            lock.unlock();
        }
    }

    /** Sends the recorded requests and cancel upstream, one drain at a time (§2.7). */
    private void drainUpstream() {
        if (upstreamWip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            Subscription s = upstream;
            if (s != null && !upstreamCancelled) {
                if (cancelUpstream) {
                    upstreamCancelled = true;
                    pendingRequests.clear();
                    try {
                        s.cancel();
                    } catch (RuntimeException e) {
                        LOG.log(Level.WARNING, "cancel() of the publisher registered as '" + name + "' threw", e);
                    }
                } else {
                    requestPending(s);
                }
            }
            missed = upstreamWip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void requestPending(Subscription s) {
        // Requests made before onSubscribe go up as one sum (§3.17); n <= 0 as is, for §3.9.
        long before = 0;
        if (!requestedOnce) {
            requestedOnce = true;
            for (Long n = pendingRequests.peek(); n != null && n > 0; n = pendingRequests.peek()) {
                before = Demand.addCap(before, pendingRequests.poll());
            }
        }
        requesting = Thread.currentThread();
        try {
            if (before > 0) {
                s.request(before);
            }
            for (Long n = pendingRequests.poll(); n != null && !cancelUpstream; n = pendingRequests.poll()) {
                s.request(n);
            }
        } catch (RuntimeException e) { // §3.16: request must return normally
            terminate(new IllegalStateException("§3.16: request(n) of the publisher registered as '" + name
                    + "' threw " + e, e));
            cancelUpstream = true;
        } finally {
            requesting = null;
            takeEmitted(); // one reply for what request(n) emitted
        }
    }

    /**
     * Starts the stream on {@code mux}: {@code opened} is its first reply, then it subscribes
     * to {@code publisher} (§1.9); from then on the mux sends its replies.
     */
    void start(Publisher<?> publisher, Mux mux) {
        mux.attach(this); // throws if the mux has ended
        this.mux = mux;
        notice(Wire.opened());
        try {
            @SuppressWarnings("unchecked")
            Publisher<Object> typed = (Publisher<Object>) publisher;
            typed.subscribe(this);
        } catch (RuntimeException e) { // §1.9: subscribe must return normally
            terminate(new IllegalStateException("§1.9: subscribe() of the publisher registered as '" + name
                    + "' threw " + e, e));
        }
    }

    /** Something to send: the mux is told once, until it serves this stream ({@link #unqueued}). */
    void wake() {
        Mux m = mux;
        if (m != null && queued.compareAndSet(false, true)) {
            m.ready(this);
        }
    }

    /** The mux took this stream off its ready queue: what arrives from now on wakes it again. */
    void unqueued() {
        queued.set(false);
    }

    /**
     * Sends what is buffered, one reply's worth (on the mux's thread): elements up to the batch
     * size, or a notice, or the end. Returns whether more is waiting. Throws if a reply cannot
     * be sent (the client is gone); the mux then ends the stream ({@link #abandon}).
     */
    boolean sendSome(ExecuteReplies out) {
        if (ended) {
            return false;
        }
        ExecuteReplies replies = out.of(id);
        int n = 0;
        long rows = 0; // the elements taken, column rows counted as their rows
        Notice notice = null;
        boolean done;
        boolean more;
        Throwable error;
        String cancelled;
        boolean quietly;
        lock.lock();
        try {
            cancelled = cancelReason;
            quietly = quietCancel;
            if (cancelled == null) {
                if (buffer.size() > batch.length && batch.length < batchSize) {
                    batch = new Object[Math.min(batchSize, Math.max(buffer.size(), 2 * batch.length))];
                }
                while (n < batch.length && rows < batchSize && !buffer.isEmpty()) {
                    Object next = buffer.poll();
                    if (next instanceof Notice noticed) { // sent after the elements before it
                        notice = noticed;
                        break;
                    }
                    batch[n++] = next;
                    rows += ColumnRows.weight(next);
                }
                bufferedRows -= rows;
            }
            done = buffer.isEmpty() && (completed || failure != null); // ends after what is buffered
            more = !buffer.isEmpty() || done;
            error = failure;
        } finally {
            lock.unlock();
        }
        if (cancelled != null) { // a quiet end (a close) is "closed": the client's side ends too
            replies.status(quietly ? Wire.closed() : Wire.cancelled(cancelled));
            finish("cancelled", cancelled);
            return false;
        }
        if (n > 0) {
            java.util.List<byte[]> encoded = ElementReplies.encode(batch, n);
            if (encoded == null) {
                error = notValues(batch, n);
                done = true;
            } else {
                for (byte[] reply : encoded) {
                    replies.elements(reply);
                    if (reply[0] == ArrowRows.TAG) {
                        counters.arrowReply();
                    }
                }
                counters.sent(rows);
            }
            Arrays.fill(batch, 0, n, null);
        }
        if (notice != null && error == null) {
            replies.status(notice.event());
            return true; // what follows the notice: the next turn
        }
        if (done) {
            if (error == null) {
                replies.status(Wire.complete());
                finish("complete", null);
            } else {
                replies.status(Wire.error(error));
                finish("error", error.getClass().getName() + ": " + error.getMessage());
            }
            return false;
        }
        return more;
    }

    /** The stream failed in its turn on the mux (a bug, not its client): it ends with {@code error}. */
    void fail(ExecuteReplies out, RuntimeException error) {
        if (ended) {
            return;
        }
        lock.lock();
        try {
            if (failure == null) {
                failure = error;
            }
        } finally {
            lock.unlock();
        }
        finish("error", error.toString());
        out.of(id).status(Wire.error(error)); // may throw ClientGone: the mux ends the others then
    }

    /** The mux ended (its client is gone, or closed it): the stream ends, with nothing sent. */
    void abandon(String reason) {
        if (ended) {
            return;
        }
        lock.lock();
        try {
            if (cancelReason == null) {
                cancelReason = reason;
            }
        } finally {
            lock.unlock();
        }
        finish("cancelled", reason);
    }

    /** Ends the stream (on the mux's thread): its hook, the upstream's cancel, its counters. */
    private void finish(String endState, String endReason) {
        ended = true;
        Mux m = mux;
        if (m != null) {
            m.detach(this);
        }
        java.util.function.BiConsumer<String, String> hook = onEnd;
        if (hook != null) {
            try {
                hook.accept(endState, endReason);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "the end of stream " + id + " ('" + name + "') failed", e);
            }
        }
        if (!endState.equals("complete")) {
            cancelUpstream = true;
            drainUpstream();
        }
        counters.end(endState, endReason);
        streams.remove(this);
        lock.lock();
        try {
            buffer.clear(); // nothing will send it
            bufferedRows = 0;
        } finally {
            lock.unlock();
        }
    }

    private IllegalArgumentException notValues(Object[] batch, int n) {
        Object bad = null; // the first element that is neither a value nor a row, else the first row
        for (int i = 0; i < n; i++) {
            if (!WireValues.isValue(batch[i])) {
                if (!ElementReplies.isRow(batch[i])) {
                    bad = batch[i];
                    break;
                }
                bad = bad == null ? batch[i] : bad;
            }
        }
        String type = bad == null ? "unknown" : bad.getClass().getName();
        return new IllegalArgumentException("element of class " + type + " cannot cross Spark Connect: only values "
                + "(null, strings, numbers, booleans, byte arrays, dates, times, UUIDs, and lists, maps and arrays of "
                + "values) and rows "
                + "(Object[]s and Maps of such values, Java records, Spark Rows) can; "
                + "map the publisher's elements to values on the JVM side (publisher '" + name + "')");
    }
}
