package io.github.rspy.spark.connect;

import io.github.rspy.bridge.Demand;
import io.github.rspy.bridge.WireValues;
import io.github.rspy.bridge.arrow.ArrowBatches;
import io.github.rspy.bridge.arrow.ArrowHandover;
import io.github.rspy.bridge.arrow.ArrowRows;
import io.github.rspy.bridge.arrow.ColumnRows;
import io.github.rspy.bridge.arrow.OwnedElements;
import io.github.rspy.bridge.arrow.RowsFromPython;
import io.github.rspy.spark.common.ClientLostException;
import io.github.rspy.spark.StreamRegistry;
import io.github.rspy.spark.connect.wire.Call;
import io.github.rspy.spark.connect.wire.Status;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A Python publisher in a Spark Connect client, registered for the {@code reactive-streams}
 * source (the {@code register_publisher} op): a JVM publisher whose subscriptions live in the
 * client. Each {@code subscribe}, {@code request(n)} and {@code cancel} becomes a notice on the
 * registration's stream ({@code subscribe}, {@code demand}, {@code cancel}, with the
 * subscription's number); the client subscribes its publisher and pushes what it emits with the
 * {@code push} op. A push beyond the demand signalled is refused and ends that subscription
 * with §1.1's error. Signals to a subscriber are serial (§1.3): one push at a time per
 * subscription, under its lock.
 */
final class ClientPublisher implements Publisher<Object>, Registered {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark.connect");

    private final String scope;
    private final String name;
    private final PublisherStream stream;
    private final Map<Long, Feed> feeds = new ConcurrentHashMap<>();
    private final AtomicLong numbers = new AtomicLong();
    private volatile String lost; // why the client is gone
    private volatile boolean unregistered;

    ClientPublisher(String scope, String name, PublisherStream stream) {
        this.scope = scope;
        this.name = name;
        this.stream = stream;
    }

    @Override
    public void subscribe(Subscriber<? super Object> subscriber) {
        Objects.requireNonNull(subscriber, "§1.9: subscribe(null)");
        Feed feed = new Feed(numbers.incrementAndGet(), subscriber);
        String gone = lost;
        if (gone != null) {
            subscriber.onSubscribe(feed); // §1.9: onSubscribe first
            feed.end(new ClientLostException(lostMessage(gone)));
            return;
        }
        feeds.put(feed.number, feed);
        stream.notice(Status.newBuilder().setSubscribe(Status.SubscribeNotice.newBuilder().setSub(feed.number)).build());
        subscriber.onSubscribe(feed);
    }

    /**
     * The {@code push} op: {@code elements} for subscription {@code number}, then its end if
     * {@code end} is set (with {@code END_ERROR}, {@code error} is the Python exception).
     * Returns the Status to reply: {@code ok}, or {@code cancelled} if that subscription is over
     * (the client then cancels its own).
     */
    Status push(long number, byte[] elements, Call.End end, String error) {
        Feed feed = feeds.get(number);
        if (feed == null) {
            return Wire.cancelledSubscription(number);
        }
        return feed.push(elements, end, error);
    }

    /** The registration's stream ended because the client is gone: every subscription fails. */
    void lost(String reason) {
        lost = reason;
        for (Feed feed : feeds.values()) {
            feed.end(new ClientLostException(lostMessage(reason)));
        }
    }

    @Override
    public void unregistered() {
        unregistered = true;
        closeIfIdle();
    }

    private void closeIfIdle() {
        if (unregistered && feeds.isEmpty()) { // no query holds a subscription: nothing to serve
            stream.cancel(ConnectStream.CLOSED, true);
        }
    }

    private String lostMessage(String reason) {
        return "the Spark Connect client that registered the publisher '" + name + "' is gone (" + reason
                + "): the streaming query fails (option onClientLoss=stop stops it instead)";
    }

    /** One subscription, as the source holds it; its elements come from the client's pushes. */
    private final class Feed implements Subscription, ArrowHandover {
        final long number;
        private Subscriber<? super Object> subscriber; // null once over (§3.13); guarded by this
        private final AtomicLong requested = new AtomicLong(); // demand not yet met (§3.17 cap)
        private volatile boolean columnRows; // the subscriber takes Arrow rows as ColumnRows

        @Override
        public void takeColumnRows() {
            columnRows = true;
        }

        /**
         * A push's elements: the bridge's tagged bytes, values ({@code 'P'}, {@code 'q'},
         * {@code 'd'}), rows as Arrow ({@code 'A'}: {@link ColumnRows} for a subscriber that takes
         * them, else values) or Arrow record batches ({@code 'B'}: roots the subscriber owns).
         */
        private List<?> decode(byte[] body) {
            if (body.length == 0) {
                return List.of();
            }
            if (body[0] == ArrowRows.TAG) {
                return columnRows ? RowsFromPython.decodeColumns(ElementReplies.Memory.ARROW, body)
                        : RowsFromPython.decode(ElementReplies.Memory.ARROW, body);
            }
            if (body[0] == ArrowBatches.TAG) {
                return ArrowBatches.decodeBatches(ElementReplies.Memory.ARROW, body);
            }
            return WireValues.decode(body);
        }

        Feed(long number, Subscriber<? super Object> subscriber) {
            this.number = number;
            this.subscriber = subscriber;
        }

        @Override
        public void request(long n) {
            if (n <= 0) { // §3.9
                end(Demand.illegalRequest(n, "publisher '" + name + "' of a Spark Connect client"));
                return;
            }
            synchronized (this) {
                if (subscriber == null) {
                    return; // §3.6
                }
            }
            Demand.add(requested, n); // before the notice: the client may push at once
            stream.notice(Status.newBuilder().setDemand(Status.DemandNotice.newBuilder().setSub(number).setN(n)).build()); // §3.4: never waits for the client
        }

        @Override
        public void cancel() {
            synchronized (this) {
                if (subscriber == null) {
                    return; // §3.7
                }
                subscriber = null; // §3.13
            }
            over(true);
        }

        synchronized Status push(byte[] body, Call.End end, String error) {
            Subscriber<? super Object> s = subscriber;
            if (s == null) {
                return Wire.cancelledSubscription(number);
            }
            List<?> elements = decode(body); // bytes no reader takes: the error is the reply
            long weight = 0; // column rows count their rows
            for (Object element : elements) {
                weight += ColumnRows.weight(element);
            }
            if (weight > requested.get()) {
                closeUndelivered(elements, 0);
                IllegalStateException excess = new IllegalStateException("§1.1: the publisher registered as '" + name
                        + "' in a Spark Connect client pushed " + weight + " elements with " + requested.get()
                        + " requested");
                end(excess);
                return Wire.error(excess);
            }
            requested.addAndGet(-weight);
            for (int i = 0; i < elements.size(); i++) {
                Object element = elements.get(i);
                if (subscriber == null) {
                    closeUndelivered(elements, i);
                    break; // cancelled from within onNext (§3.6)
                }
                if (element == null) {
                    end(new NullPointerException("§2.13: the publisher registered as '" + name + "' emitted None"));
                    break;
                }
                s.onNext(element);
            }
            if (end == Call.End.END_COMPLETE) {
                end(null);
            } else if (end == Call.End.END_ERROR) {
                end(new IllegalStateException("the publisher registered as '" + name + "' failed in the Spark Connect "
                        + "client: " + error));
            }
            return Wire.ok();
        }

        /** Signals the end ({@code onComplete} if {@code error} is null) unless it is over. */
        void end(Throwable error) {
            Subscriber<? super Object> s;
            synchronized (this) {
                s = subscriber;
                subscriber = null; // §3.13
                if (s != null) {
                    try {
                        if (error == null) {
                            s.onComplete();
                        } else {
                            s.onError(error);
                        }
                    } catch (RuntimeException e) { // §2.13: the subscriber broke the rules
                        LOG.log(Level.WARNING, "a subscriber of '" + name + "' threw from its end signal", e);
                    }
                }
            }
            if (s != null) {
                over(!(error instanceof ClientLostException) && error != null); // tell the client to stop
            }
        }

        private void over(boolean tellClient) {
            feeds.remove(number);
            if (tellClient && lost == null) {
                stream.notice(Status.newBuilder().setCancel(Status.CancelNotice.newBuilder().setSub(number)).build());
            }
            closeIfIdle();
        }
    }

    /** Closes the Arrow elements from {@code from} on that nobody took. */
    private static void closeUndelivered(List<?> elements, int from) {
        if (elements instanceof OwnedElements) {
            for (int i = 0; i < from; i++) {
                ((OwnedElements) elements).set(i, null); // delivered: their subscriber's
            }
            ((OwnedElements) elements).closeUndelivered();
        }
    }

    @Override
    public String toString() {
        return "ClientPublisher[" + name + ", scope " + scope + "]";
    }

    /** Frees the name now if it still names this publisher. */
    void unregister() {
        StreamRegistry.unregisterScoped(scope, name, this);
    }
}
