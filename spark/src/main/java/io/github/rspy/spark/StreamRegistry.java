package io.github.rspy.spark;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import org.reactivestreams.FlowAdapters;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * The driver-wide registry of named publishers and subscribers that the {@code
 * reactive-streams} Structured Streaming format reads from ({@code option("publisher", name)})
 * and writes to ({@code option("subscriber", name)}). Static and thread-safe; one namespace for
 * both kinds. Registering a name that is taken is an error until it is unregistered.
 *
 * <p>Unregistering only frees the name: a running query keeps the publisher or subscriber it
 * already took. It lives in the driver's JVM only; executors never look names up.
 */
public final class StreamRegistry {
    private static final ConcurrentHashMap<String, Entry> ENTRIES = new ConcurrentHashMap<>();

    private StreamRegistry() {}

    /** A name's publisher or subscriber, its counters, and the sink that took the subscriber. */
    static final class Entry {
        final String name;
        final Publisher<?> publisher;
        final Subscriber<Object> subscriber;
        final boolean rowsAsMaps;
        final StreamStats stats = new StreamStats();
        private SinkSubscription sink; // guarded by this

        private Entry(String name, Publisher<?> publisher, Subscriber<Object> subscriber, boolean rowsAsMaps) {
            this.name = name;
            this.publisher = publisher;
            this.subscriber = subscriber;
            this.rowsAsMaps = rowsAsMaps;
        }

        /**
         * The subscription of this name's subscriber for the query run {@code run}: made (and
         * {@code onSubscribe} signalled) by the first query that writes to the name. §2.5 allows
         * a subscriber one subscription, so another query, or another run of the same query
         * (a restart), is refused.
         */
        synchronized SinkSubscription claimSink(String run) {
            if (sink == null) {
                sink = new SinkSubscription(name, subscriber, stats, run);
                sink.start();
                SubscriberSink.watchQueryEnd(run, sink);
                return sink;
            }
            if (sink.run().equals(run) && !sink.isEnded()) {
                return sink; // Spark built the write of the same run again
            }
            throw new IllegalStateException("the subscriber registered as '" + name + "' was already subscribed by "
                    + "the streaming query run " + sink.run() + (sink.isEnded() ? ", which has ended" : "")
                    + " (§2.5: a Subscriber is subscribed at most once): register a new subscriber for a new query "
                    + "or a restart");
        }
    }

    /**
     * Registers an {@code org.reactivestreams.Publisher} or a {@code Flow.Publisher} under
     * {@code name}, for {@code spark.readStream.format("reactive-streams").option("publisher", name)}.
     *
     * @throws IllegalStateException if the name is taken
     */
    public static void registerPublisher(String name, Object publisher) {
        put(new Entry(checkName(name), toPublisher(publisher), null, false));
    }

    /**
     * Registers an {@code org.reactivestreams.Subscriber} (or {@code Flow.Subscriber}) under
     * {@code name}, for {@code df.writeStream.format("reactive-streams").option("subscriber",
     * name)}; it receives each row as an {@code org.apache.spark.sql.Row}.
     *
     * @throws IllegalStateException if the name is taken
     */
    public static void registerSubscriber(String name, Object subscriber) {
        put(new Entry(checkName(name), null, toSubscriber(subscriber), false));
    }

    /**
     * As {@link #registerSubscriber}, but each row arrives as a {@code LinkedHashMap} of column
     * name to plain value (nested structs as maps, arrays as lists, dates and timestamps as
     * ISO-8601 strings): the form that crosses the Python bridge by value, used for Python
     * subscribers.
     */
    public static void registerMapSubscriber(String name, Object subscriber) {
        put(new Entry(checkName(name), null, toSubscriber(subscriber), true));
    }

    /** Frees {@code name}; whether it was registered. Running queries keep what they took. */
    public static boolean unregister(String name) {
        return name != null && ENTRIES.remove(name) != null;
    }

    public static boolean isRegistered(String name) {
        return name != null && ENTRIES.containsKey(name);
    }

    public static Set<String> names() {
        return new TreeSet<>(ENTRIES.keySet());
    }

    /** The counters of a registered name. */
    public static StreamStats stats(String name) {
        return lookup(name, "anything").stats;
    }

    public static boolean isPublisher(Object o) {
        return o instanceof Publisher || o instanceof Flow.Publisher;
    }

    public static boolean isSubscriber(Object o) {
        return o instanceof Subscriber || o instanceof Flow.Subscriber;
    }

    static Entry publisherEntry(String name) {
        Entry entry = lookup(name, "publisher");
        if (entry.publisher == null) {
            throw new IllegalArgumentException("'" + name + "' is registered as a subscriber, not a publisher: "
                    + "the reactive-streams source reads from a publisher");
        }
        return entry;
    }

    static Entry subscriberEntry(String name) {
        Entry entry = lookup(name, "subscriber");
        if (entry.subscriber == null) {
            throw new IllegalArgumentException("'" + name + "' is registered as a publisher, not a subscriber: "
                    + "the reactive-streams sink writes to a subscriber");
        }
        return entry;
    }

    private static Entry lookup(String name, String kind) {
        Entry entry = name == null ? null : ENTRIES.get(name);
        if (entry == null) {
            throw new IllegalArgumentException("no " + kind + " is registered as '" + name + "': register it first "
                    + "(Python: reactive_streams.spark register_publisher/register_subscriber; Java: StreamRegistry)");
        }
        return entry;
    }

    private static void put(Entry entry) {
        if (ENTRIES.putIfAbsent(entry.name, entry) != null) {
            throw new IllegalStateException("the name '" + entry.name + "' is already registered: unregister it first");
        }
    }

    private static String checkName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a registered stream needs a non-empty name, got " + name);
        }
        return name;
    }

    @SuppressWarnings("unchecked")
    private static Publisher<?> toPublisher(Object o) {
        if (o instanceof Publisher) {
            return (Publisher<?>) o;
        }
        if (o instanceof Flow.Publisher) {
            return FlowAdapters.toPublisher((Flow.Publisher<Object>) o);
        }
        throw new IllegalArgumentException("an org.reactivestreams.Publisher or Flow.Publisher is needed, got "
                + (o == null ? "null" : o.getClass().getName()));
    }

    @SuppressWarnings("unchecked")
    private static Subscriber<Object> toSubscriber(Object o) {
        if (o instanceof Subscriber) {
            return (Subscriber<Object>) o;
        }
        if (o instanceof Flow.Subscriber) {
            return FlowAdapters.toSubscriber((Flow.Subscriber<Object>) o);
        }
        throw new IllegalArgumentException("an org.reactivestreams.Subscriber or Flow.Subscriber is needed, got "
                + (o == null ? "null" : o.getClass().getName()));
    }
}
