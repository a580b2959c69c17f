package io.github.rspy.spark.testing;

import io.github.rspy.spark.StreamRegistry;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The JVM publishers the Python tests of Spark Connect name, registered on the server by the
 * conf {@code spark.rspy.connect.registrars=io.github.rspy.spark.testing.ConnectTestStreams}:
 *
 * <ul>
 *   <li>{@code longs}: a factory; its argument is a count n (decimal; null: {@code
 *       Long.MAX_VALUE}), and its publisher emits the Longs 0..n-1. It passes the TCK's
 *       PublisherVerification (the Python tests run it across Connect);
 *   <li>{@code failing}: {@code onSubscribe}, then {@code onError(IllegalStateException("failing
 *       on purpose"))};
 *   <li>{@code never}: {@code onSubscribe}, then nothing ({@link #neverCancels} counts cancels);
 *   <li>{@code values}: a factory; emits "a", 1.5, true, a list [null, 2] and 7, then completes
 *       (null itself is not an element: §2.13);
 *   <li>{@code objects}: emits one {@code new Object()}, which is not a value, then completes.
 *   <li>{@code table_rows}: a factory; its argument is {@code kind:n}, and its publisher emits n rows
 *       (i, i / 2.0, "r" + i) for i = 0..n-1, of the kind: {@code tuples} ({@code Object[]}),
 *       {@code maps} (keys id, half, name), {@code records} (a Java record of those components),
 *       {@code spark} (Spark {@code Row}s with that schema) or {@code mixed} ({@code Object[]}s,
 *       with a {@code List} of the same values at n / 2 and a bare Long i after every row
 *       whose i is 29 modulo 30).
 *   <li>{@code overflowing}: breaks §1.1 on purpose: each {@code request(n)} emits n + 1 Longs
 *       (0, 1, ...), inside the request.
 *   <li>{@code stored_blocks}: emits one string, the ids of the RDDs of {@code
 *       dataframe_from_publisher} uploads whose blocks the server's block manager still holds,
 *       separated by spaces;
 *   <li>{@code query}: a factory; its argument is a streaming query id, of any session, and its
 *       publisher emits one string: {@code active} (not terminated yet), {@code stopped}, or
 *       {@code failed: <the exception>}, from a listener on the server's SparkContext.
 * </ul>
 */
public final class ConnectTestStreams {
    private static final AtomicLong NEVER_CANCELS = new AtomicLong();
    private static final Object[] VALUES = {"a", 1.5, true, Arrays.asList(null, 2), 7};

    private ConnectTestStreams() {}

    /** The ids of the upload RDDs ({@code StoredBatches}) with blocks still stored, space-separated. */
    private static String storedBlocks() {
        StringBuilder ids = new StringBuilder();
        for (var rdd : scala.jdk.javaapi.CollectionConverters.asJava(
                org.apache.spark.SparkContext.getOrCreate().getPersistentRDDs()).values()) {
            if (rdd.getClass().getSimpleName().equals("StoredBatches")
                    && io.github.rspy.spark.dataframe.ArrowChunks.storedBlocks(rdd.id())[0] > 0) {
                ids.append(ids.length() == 0 ? "" : " ").append(rdd.id());
            }
        }
        return ids.toString();
    }

    /** Registers the publishers; names already registered are kept as they are. */
    public static synchronized void register() {
        if (!StreamRegistry.isRegistered("longs")) {
            StreamRegistry.registerPublisherFactory("longs",
                    arg -> new CountedPublisher(arg == null ? Long.MAX_VALUE : Long.parseLong(arg.trim()), i -> i));
        }
        if (!StreamRegistry.isRegistered("failing")) {
            StreamRegistry.registerPublisher("failing", (Publisher<Object>) subscriber -> {
                Objects.requireNonNull(subscriber, "§1.9: subscribe(null)");
                IdleSubscription subscription = new IdleSubscription(subscriber, false);
                subscriber.onSubscribe(subscription);
                subscription.fail(new IllegalStateException("failing on purpose"));
            });
        }
        if (!StreamRegistry.isRegistered("never")) {
            StreamRegistry.registerPublisher("never", (Publisher<Object>) subscriber -> {
                Objects.requireNonNull(subscriber, "§1.9: subscribe(null)");
                subscriber.onSubscribe(new IdleSubscription(subscriber, true));
            });
        }
        if (!StreamRegistry.isRegistered("values")) {
            StreamRegistry.registerPublisherFactory("values", arg -> new CountedPublisher(VALUES.length,
                    i -> VALUES[(int) i]));
        }
        listen();
        if (!StreamRegistry.isRegistered("query")) {
            StreamRegistry.registerPublisherFactory("query", arg -> new CountedPublisher(1,
                    i -> TERMINATED.getOrDefault(String.valueOf(arg), "active")));
        }
        if (!StreamRegistry.isRegistered("stored_blocks")) {
            StreamRegistry.registerPublisherFactory("stored_blocks", arg -> new CountedPublisher(1,
                    i -> storedBlocks()));
        }
        if (!StreamRegistry.isRegistered("table_rows")) {
            StreamRegistry.registerPublisherFactory("table_rows", arg -> {
                String[] parts = String.valueOf(arg).split(":");
                return rowsOf(parts[0], Long.parseLong(parts[1]));
            });
        }
        if (!StreamRegistry.isRegistered("objects")) {
            StreamRegistry.registerPublisher("objects", new CountedPublisher(1, i -> new Object()));
        }
        if (!StreamRegistry.isRegistered("overflowing")) {
            StreamRegistry.registerPublisher("overflowing", (Publisher<Object>) subscriber -> {
                Objects.requireNonNull(subscriber, "§1.9: subscribe(null)");
                subscriber.onSubscribe(new Subscription() {
                    private long next;

                    @Override
                    public void request(long n) {
                        for (long i = 0; i <= n; i++) { // one too many: the §1.1 breach the tests expect
                            subscriber.onNext(next++);
                        }
                    }

                    @Override
                    public void cancel() {}
                });
            });
        }
    }

    /** The {@code table_rows} factory's record. */
    public record Reading(long id, double half, String name) {}

    private static final org.apache.spark.sql.types.StructType READING = new org.apache.spark.sql.types.StructType()
            .add("id", "long").add("half", "double").add("name", "string");

    private static Publisher<Object> rowsOf(String kind, long n) {
        LongFunction<Object> row = switch (kind) {
            case "tuples" -> i -> new Object[] {i, i / 2.0, "r" + i};
            case "maps" -> i -> {
                java.util.Map<String, Object> map = new java.util.LinkedHashMap<>();
                map.put("id", i);
                map.put("half", i / 2.0);
                map.put("name", "r" + i);
                return map;
            };
            case "records" -> i -> new Reading(i, i / 2.0, "r" + i);
            case "spark" -> i -> new org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema(
                    new Object[] {i, i / 2.0, "r" + i}, READING);
            case "mixed" -> null;
            default -> throw new IllegalArgumentException("table_rows: unknown kind " + kind);
        };
        if (row != null) {
            return new CountedPublisher(n, row);
        }
        java.util.List<Object> mixed = new java.util.ArrayList<>();
        for (long i = 0; i < n; i++) {
            Object[] values = {i, i / 2.0, "r" + i};
            mixed.add(i == n / 2 ? Arrays.asList(values) : values);
            if (i % 30 == 29) {
                mixed.add(i);
            }
        }
        return new CountedPublisher(mixed.size(), i -> mixed.get((int) i));
    }

    private static final java.util.Map<String, String> TERMINATED = new java.util.concurrent.ConcurrentHashMap<>();
    private static boolean listening; // guarded by the class

    private static void listen() {
        if (listening) {
            return;
        }
        listening = true;
        org.apache.spark.SparkContext.getOrCreate().addSparkListener(new org.apache.spark.scheduler.SparkListener() {
            @Override
            public void onOtherEvent(org.apache.spark.scheduler.SparkListenerEvent event) {
                if (event instanceof org.apache.spark.sql.streaming.StreamingQueryListener.QueryTerminatedEvent end) {
                    TERMINATED.put(end.id().toString(),
                            end.exception().isDefined() ? "failed: " + end.exception().get() : "stopped");
                }
            }
        });
    }

    /** How many subscriptions to {@code never} were cancelled. */
    public static long neverCancels() {
        return NEVER_CANCELS.get();
    }

    /**
     * Emits {@code element(0) .. element(count - 1)}, as the reactive-streams examples'
     * {@code RangePublisher} does: the subscription is the demand counter, and only the
     * {@code request} that lifts it from 0 runs the emit loop (§3.3: a request from inside
     * {@code onNext} only adds to it).
     */
    static final class CountedPublisher implements Publisher<Object> {
        private final long count;
        private final LongFunction<Object> element;

        CountedPublisher(long count, LongFunction<Object> element) {
            if (count < 0) {
                throw new IllegalArgumentException("a count >= 0 is needed, got " + count);
            }
            this.count = count;
            this.element = element;
        }

        @Override
        public void subscribe(Subscriber<? super Object> subscriber) {
            Objects.requireNonNull(subscriber, "§1.9: subscribe(null)");
            try {
                subscriber.onSubscribe(new CountedSubscription(subscriber, count, element));
            } catch (RuntimeException e) { // §2.13: the subscriber broke the rules; its state is unknown
                new IllegalStateException("§2.13: onSubscribe threw", e).printStackTrace();
            }
        }
    }

    private static final class CountedSubscription extends AtomicLong implements Subscription {
        private static final long serialVersionUID = 1L;
        private final transient Subscriber<? super Object> downstream;
        private final long end;
        private final transient LongFunction<Object> element;
        private long index; // only the emit loop touches it
        private volatile boolean cancelled;
        private volatile IllegalArgumentException invalidRequest;

        CountedSubscription(Subscriber<? super Object> downstream, long end, LongFunction<Object> element) {
            this.downstream = downstream;
            this.end = end;
            this.element = element;
        }

        @Override
        public void request(long n) {
            if (n <= 0) { // §3.9, signalled from the emit loop, which serializes signals (§1.3)
                invalidRequest = new IllegalArgumentException(
                        "§3.9: request(n) must be called with n > 0 (non-positive requests are illegal), got " + n);
                n = 1; // so that the loop runs to report it
            }
            for (;;) {
                long requested = get();
                long update = requested + n;
                if (update < 0) {
                    update = Long.MAX_VALUE; // §3.17: demand is capped, "effectively unbounded"
                }
                if (compareAndSet(requested, update)) {
                    if (requested == 0) { // only the request lifting demand from 0 emits (§3.3)
                        emit(update);
                    }
                    return;
                }
            }
        }

        @Override
        public void cancel() {
            cancelled = true; // §3.5, §3.7: idempotent; the loop stops at its next check (§1.8)
        }

        private void emit(long requested) {
            long emitted = 0;
            long at = index;
            try {
                for (;;) {
                    IllegalArgumentException invalid = invalidRequest;
                    if (invalid != null) {
                        cancelled = true; // §1.6: after onError the subscription is cancelled
                        downstream.onError(invalid);
                        return;
                    }
                    while (at != end && emitted != requested) { // §1.1: never more than requested
                        if (cancelled) {
                            return;
                        }
                        downstream.onNext(element.apply(at));
                        at++;
                        emitted++;
                    }
                    if (at == end) {
                        if (!cancelled) {
                            cancelled = true; // §1.6
                            downstream.onComplete();
                        }
                        return;
                    }
                    long fresh = get();
                    if (fresh == requested) {
                        index = at;
                        requested = addAndGet(-requested); // §3.17: MAX - MAX is 0, ending the loop
                        if (requested == 0) {
                            return;
                        }
                        emitted = 0;
                    } else {
                        requested = fresh;
                    }
                }
            } catch (RuntimeException e) { // §2.13: a signal threw; cancel, never signal again
                cancelled = true;
                new IllegalStateException("§2.13: the subscriber threw from a signal", e).printStackTrace();
            }
        }
    }

    /** The subscription of {@code failing} and {@code never}: it never emits. */
    private static final class IdleSubscription implements Subscription {
        private final Subscriber<? super Object> downstream;
        private final boolean countsCancel;
        private boolean done; // guarded by this

        IdleSubscription(Subscriber<? super Object> downstream, boolean countsCancel) {
            this.downstream = downstream;
            this.countsCancel = countsCancel;
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                fail(new IllegalArgumentException(
                        "§3.9: request(n) must be called with n > 0 (non-positive requests are illegal), got " + n));
            }
        }

        /** Signals {@code error} unless the subscription ended (§1.7: one terminal signal). */
        synchronized void fail(Throwable error) { // §1.3: under the lock, never overlapping another signal
            if (!done) {
                done = true;
                downstream.onError(error);
            }
        }

        @Override
        public synchronized void cancel() {
            if (!done) {
                done = true;
                if (countsCancel) {
                    NEVER_CANCELS.incrementAndGet();
                }
            }
        }
    }
}
