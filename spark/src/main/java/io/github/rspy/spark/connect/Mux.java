package io.github.rspy.spark.connect;

import io.github.rspy.spark.connect.wire.Status;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One client connection's reply path (the {@code mux} op): a single long ExecutePlan call that
 * carries the replies of all the connection's streams, each reply naming its stream. The
 * streams ({@link PublisherStream}s: subscriptions and registrations) are opened by quick ops
 * and attach here; the call's one thread sends for all of them, a reply's worth of one stream
 * at a time, taking the streams with something to send in turn, so that a stream whose client
 * asks slowly holds up no other (each holds at most its outstanding demand, §1.1). It sends a
 * heartbeat after a second of silence. When the call ends (the client closed it or is gone, the
 * lease ran out, the session closed), every stream still attached ends with it.
 */
final class Mux extends ConnectStream {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark.connect");
    private static final long HEARTBEAT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ConnectStreams streams;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<PublisherStream> ready = new ArrayDeque<>(); // guarded by lock
    private final List<PublisherStream> attached = new ArrayList<>(); // guarded by lock
    private String cancelReason; // guarded by lock
    private boolean quietCancel; // guarded by lock
    private boolean ended; // guarded by lock: nothing attaches any more

    Mux(String id, Scope scope, ConnectStreams streams) {
        super(id, scope, "mux", null);
        this.streams = streams;
    }

    /** Serves {@code stream} from now on; throws if this call has ended. */
    void attach(PublisherStream stream) {
        lock.lock();
        try {
            if (ended || cancelReason != null) {
                throw new IllegalStateException("the reply path " + id + " has ended (" + cancelReason + ")");
            }
            attached.add(stream);
        } finally {
            lock.unlock();
        }
    }

    /** {@code stream} has something to send: it is queued once until it is served. */
    void ready(PublisherStream stream) {
        lock.lock();
        try {
            ready.add(stream);
            if (ready.size() == 1) {
                changed.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /** A stream that ended leaves. */
    void detach(PublisherStream stream) {
        lock.lock();
        try {
            attached.remove(stream);
        } finally {
            lock.unlock();
        }
    }

    @Override
    void cancel(String reason, boolean quietly) {
        lock.lock();
        try {
            if (cancelReason == null) {
                cancelReason = reason;
                quietCancel = quietly;
                changed.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Serves the streams on the mux call's thread until the call ends: replies {@code opened},
     * then the ready streams' replies in turn, and heartbeats. Throws if interrupted.
     */
    void run(ExecuteReplies replies) throws InterruptedException {
        String reason = "the client is gone";
        String state = "cancelled";
        try {
            replies.status(Wire.opened().toBuilder().setStream(id).build());
            long lastSend = System.nanoTime();
            for (;;) {
                PublisherStream next;
                boolean quietly;
                lock.lock();
                try {
                    long wait = lastSend + HEARTBEAT_NANOS - System.nanoTime();
                    while (ready.isEmpty() && cancelReason == null && wait > 0) {
                        wait = changed.awaitNanos(wait);
                    }
                    reason = cancelReason;
                    quietly = quietCancel;
                    next = reason == null ? ready.poll() : null;
                } finally {
                    lock.unlock();
                }
                if (reason != null) {
                    state = quietly ? "complete" : "cancelled";
                    if (!quietly) {
                        replies.status(Wire.cancelled(reason).toBuilder().setStream(id).build());
                    }
                    break;
                }
                if (next != null) {
                    next.unqueued();
                    if (serve(next, replies)) {
                        next.wake(); // more to send: after the others (one reply's worth a turn)
                    }
                    lastSend = System.nanoTime();
                } else if (System.nanoTime() - lastSend >= HEARTBEAT_NANOS) {
                    replies.status(Wire.heartbeat());
                    lastSend = System.nanoTime();
                }
            }
        } catch (InterruptedException e) {
            reason = "interrupted";
            throw e;
        } catch (ExecuteReplies.ClientGone e) { // a reply could not be sent: the client is gone
            LOG.log(Level.FINE, "reply path " + id + " ends: " + e, e);
            reason = "the client is gone: " + e;
        } finally {
            end(state, reason == null ? "the client is gone" : reason);
        }
    }

    /**
     * One turn of {@code stream}: whether it has more to send. A stream that fails in its turn
     * (not the call: {@link ExecuteReplies.ClientGone} ends them all) ends alone, with the error.
     */
    private static boolean serve(PublisherStream stream, ExecuteReplies replies) {
        try {
            return stream.sendSome(replies);
        } catch (ExecuteReplies.ClientGone e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "stream " + stream.id + " failed in its turn on its reply path", e);
            stream.fail(replies, e);
            return false;
        }
    }

    /** Ends every stream still attached (nothing can reach their client now), then this one. */
    private void end(String state, String reason) {
        List<PublisherStream> left;
        lock.lock();
        try {
            ended = true;
            if (cancelReason == null) {
                cancelReason = reason;
            }
            left = new ArrayList<>(attached);
            attached.clear();
            ready.clear();
        } finally {
            lock.unlock();
        }
        for (PublisherStream stream : left) {
            try {
                stream.abandon(ConnectStream.CLOSED.equals(reason) ? "the client is gone: its reply path closed"
                        : reason);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "ending stream " + stream.id + " with its reply path failed", e);
            }
        }
        counters.end(state, reason);
        streams.remove(this);
    }
}
