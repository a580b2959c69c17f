package io.github.rspy.spark;

import io.github.rspy.spark.common.StreamStats;
import io.github.rspy.spark.sink.NamedSubscriber;
import io.github.rspy.spark.sink.SinkLink;
import io.github.rspy.spark.source.NamedPublisher;
import io.github.rspy.spark.source.PublisherSource;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import java.util.function.Function;
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
 *
 * <p>A name can also hold a publisher factory, which makes a new publisher for an argument
 * string: Spark Connect clients name it with an argument ({@link #publisher(String, String)}),
 * the streaming source applies it to null.
 */
public final class StreamRegistry {
    private static final ConcurrentHashMap<String, Entry> ENTRIES = new ConcurrentHashMap<>();

    /**
     * The session conf that names a Spark Connect session's own names (its server session id):
     * set by the Connect plugin when a client registers, read by the format from the session
     * that starts a query. A scoped name hides nothing and is seen by no other session.
     */
    public static final String SCOPE_CONF = "spark.rspy.connect.scope";
    private static final char SCOPE_SEPARATOR = '\u0000';

    private StreamRegistry() {}

    /**
     * A name's publisher or subscriber, its counters, and what the source ({@link NamedPublisher}:
     * rows parked for restarts) or the sink ({@link NamedSubscriber}: the subscription a query
     * claimed) keeps of it.
     */
    static final class Entry {
        final String name;
        final Publisher<?> publisher; // a factory's: one made by the factory for each subscriber
        final Function<String, ?> factory;
        final Subscriber<Object> subscriber;
        final StreamStats stats = new StreamStats();
        final NamedPublisher source; // a publisher's, else null
        final NamedSubscriber sink; // a subscriber's, else null

        private Entry(String name, Publisher<?> publisher, Subscriber<Object> subscriber, SinkLink link) {
            this(name, publisher, null, subscriber, link);
        }

        private Entry(String name, Publisher<?> publisher, Function<String, ?> factory, Subscriber<Object> subscriber,
                SinkLink link) {
            this.name = name;
            this.publisher = publisher;
            this.factory = factory;
            this.subscriber = subscriber;
            this.source = publisher == null ? null : new NamedPublisher(name, publisher, stats);
            this.sink = subscriber == null ? null : new NamedSubscriber(name, subscriber, link, stats);
        }

        /** Elements parked for restarts (for stream_stats). */
        long parkedElements() {
            return source == null ? 0 : source.parkedElements();
        }
    }

    /**
     * Registers an {@code org.reactivestreams.Publisher} or a {@code Flow.Publisher} under
     * {@code name}, for {@code spark.readStream.format("reactive-streams").option("publisher", name)}.
     *
     * @throws IllegalStateException if the name is taken
     */
    public static void registerPublisher(String name, Object publisher) {
        put(new Entry(checkName(name), toPublisher(publisher), null, null));
    }

    /**
     * Registers a publisher factory under {@code name}: {@code factory.apply(arg)} returns an
     * {@code org.reactivestreams.Publisher} or a {@code Flow.Publisher} for an argument string
     * ({@code arg} may be null), a new one for each subscriber. Spark Connect clients pass the
     * argument ({@code jvm_publisher(spark, name, arg)}); the streaming source passes null.
     *
     * @throws IllegalStateException if the name is taken
     */
    public static void registerPublisherFactory(String name, Function<String, ?> factory) {
        java.util.Objects.requireNonNull(factory, "factory");
        String checked = checkName(name);
        put(new Entry(checked, factoryPublisher(checked, factory), factory, null, null));
    }

    /**
     * The publisher registered as {@code name}, or the one its factory makes for {@code arg}.
     *
     * @throws IllegalArgumentException if no publisher or factory is registered as {@code name}
     *     (the message lists the names that are), if {@code arg} is given for a plain publisher,
     *     or if the factory returns something else than a publisher
     */
    public static Publisher<?> publisher(String name, String arg) {
        Entry entry = name == null ? null : ENTRIES.get(name);
        if (entry == null || entry.publisher == null) {
            Set<String> publishers = new TreeSet<>();
            ENTRIES.forEach((key, e) -> {
                if (e.publisher != null && key.indexOf(SCOPE_SEPARATOR) < 0) { // no session's own names
                    publishers.add(key);
                }
            });
            throw new IllegalArgumentException("no publisher is registered as '" + name + "'"
                    + (entry == null ? "" : " (it names a subscriber)") + "; registered publishers: " + publishers);
        }
        if (entry.factory != null) {
            return make(name, entry.factory, arg);
        }
        if (arg != null) {
            throw new IllegalArgumentException("'" + name + "' is registered as a publisher, not a publisher factory: "
                    + "it takes no argument, got '" + arg + "'");
        }
        return entry.publisher;
    }

    private static Publisher<?> make(String name, Function<String, ?> factory, String arg) {
        Object made = factory.apply(arg);
        if (!isPublisher(made)) {
            throw new IllegalArgumentException("the publisher factory registered as '" + name + "' returned "
                    + (made == null ? "null" : "a " + made.getClass().getName()) + " for the argument "
                    + (arg == null ? "null" : "'" + arg + "'") + ": an org.reactivestreams.Publisher or "
                    + "Flow.Publisher is needed");
        }
        return toPublisher(made);
    }

    /**
     * A factory as one publisher, for the streaming source: each subscriber gets the factory's
     * publisher for a null argument, or (onSubscribe first, §1.9) the factory's failure.
     */
    private static Publisher<Object> factoryPublisher(String name, Function<String, ?> factory) {
        return subscriber -> {
            Publisher<?> made;
            try {
                made = make(name, factory, null);
            } catch (RuntimeException e) {
                subscriber.onSubscribe(new org.reactivestreams.Subscription() {
                    @Override
                    public void request(long n) {}

                    @Override
                    public void cancel() {}
                });
                subscriber.onError(e);
                return;
            }
            @SuppressWarnings("unchecked")
            Publisher<Object> typed = (Publisher<Object>) made;
            typed.subscribe(subscriber);
        };
    }

    /**
     * Registers an {@code org.reactivestreams.Subscriber} (or {@code Flow.Subscriber}) under
     * {@code name}, for {@code df.writeStream.format("reactive-streams").option("subscriber",
     * name)}; it receives each row as an {@code org.apache.spark.sql.Row}.
     *
     * @throws IllegalStateException if the name is taken
     */
    public static void registerSubscriber(String name, Object subscriber) {
        put(new Entry(checkName(name), null, toSubscriber(subscriber), null));
    }

    /**
     * As {@link #registerSubscriber}, for a Python subscriber behind the bridge: each row arrives
     * as an {@code Object[]} of plain values (a tuple in Python; see {@code RowValues}), and the
     * Python side reports through {@code link} what its subscriber processed or raised.
     */
    public static void registerPythonSubscriber(String name, Object subscriber, SinkLink link) {
        put(new Entry(checkName(name), null, toSubscriber(subscriber), java.util.Objects.requireNonNull(link)));
    }

    /**
     * Registers a publisher under {@code name} for the queries of one Spark Connect session
     * only ({@code scope}, see {@link #SCOPE_CONF}); refused if the name is taken there or
     * globally.
     */
    public static void registerScopedPublisher(String scope, String name, Object publisher) {
        putScoped(scope, new Entry(checkName(name), toPublisher(publisher), null, null));
    }

    /** As {@link #registerPythonSubscriber}, for the queries of one Spark Connect session only. */
    public static void registerScopedSubscriber(String scope, String name, Object subscriber, SinkLink link) {
        putScoped(scope, new Entry(checkName(name), null, toSubscriber(subscriber), java.util.Objects.requireNonNull(link)));
    }

    /**
     * The broadcasts that carry the Arrow data of the {@code reactive-streams} sources' planned
     * micro-batches to the executors and that the sources hold (each is destroyed once its
     * micro-batch is committed; a stop lets go of the rest, which Spark's {@code ContextCleaner}
     * removes): for diagnostics and tests.
     */
    public static int liveSourceBroadcasts() {
        return PublisherSource.liveBroadcasts();
    }

    /** Frees a session's {@code name}; whether it was registered there. */
    public static boolean unregisterScoped(String scope, String name) {
        return scope != null && name != null && ENTRIES.remove(scoped(scope, name)) != null;
    }

    /** The names Connect sessions registered, of every session (for the plugin's diagnostics). */
    public static java.util.List<String> scopedNames() {
        java.util.List<String> names = new java.util.ArrayList<>();
        for (String key : ENTRIES.keySet()) {
            int at = key.indexOf(SCOPE_SEPARATOR);
            if (at >= 0) {
                names.add(key.substring(at + 1));
            }
        }
        return names;
    }

    /** Frees every name of the session {@code scope} (it closed); how many there were. */
    public static int unregisterScope(String scope) {
        String prefix = scope + SCOPE_SEPARATOR;
        int freed = 0;
        for (String key : ENTRIES.keySet()) {
            if (key.startsWith(prefix) && ENTRIES.remove(key) != null) {
                freed++;
            }
        }
        return freed;
    }

    /** Frees a session's {@code name}: the publisher or subscriber it held, or null if none. */
    public static Object unregisterScopedValue(String scope, String name) {
        Entry entry = scope == null || name == null ? null : ENTRIES.remove(scoped(scope, name));
        return entry == null ? null : entry.publisher != null ? entry.publisher : entry.subscriber;
    }

    /** Frees a session's {@code name} if it still holds {@code value} (a publisher or subscriber). */
    public static boolean unregisterScoped(String scope, String name, Object value) {
        Entry entry = scope == null || name == null ? null : ENTRIES.get(scoped(scope, name));
        return entry != null && (entry.publisher == value || entry.subscriber == value)
                && ENTRIES.remove(scoped(scope, name), entry);
    }

    /** Whether {@code name} is registered for the session {@code scope} (null: no session) or globally. */
    public static boolean isRegistered(String scope, String name) {
        return name != null && (scope != null && ENTRIES.containsKey(scoped(scope, name)) || ENTRIES.containsKey(name));
    }

    /** As {@link #statsMap(String)}, the session's own name first. */
    public static Map<String, Long> statsMap(String scope, String name) {
        return statsMapOf(find(scope, name));
    }

    private static String scoped(String scope, String name) {
        return scope + SCOPE_SEPARATOR + name;
    }

    /** The key a lookup from the session {@code scope} finds {@code name} under. */
    private static String find(String scope, String name) {
        return scope != null && name != null && ENTRIES.containsKey(scoped(scope, name)) ? scoped(scope, name) : name;
    }

    private static void putScoped(String scope, Entry entry) {
        if (scope == null || scope.isEmpty()) {
            throw new IllegalArgumentException("a scoped registration needs a session scope");
        }
        if (ENTRIES.containsKey(entry.name)) {
            throw new IllegalStateException("the name '" + entry.name + "' is already registered: unregister it first");
        }
        String key = scoped(scope, entry.name);
        if (ENTRIES.putIfAbsent(key, entry) != null) {
            throw new IllegalStateException("the name '" + entry.name + "' is already registered: unregister it first");
        }
    }

    /** Frees {@code name}; whether it was registered. Running queries keep what they took. */
    public static boolean unregister(String name) {
        return name != null && ENTRIES.remove(name) != null;
    }

    public static boolean isRegistered(String name) {
        return name != null && ENTRIES.containsKey(name);
    }

    /** The names registered globally (not a Connect session's own). */
    public static Set<String> names() {
        Set<String> names = new TreeSet<>();
        for (String key : ENTRIES.keySet()) {
            if (key.indexOf(SCOPE_SEPARATOR) < 0) {
                names.add(key);
            }
        }
        return names;
    }

    /** The counters of a registered name. */
    public static StreamStats stats(String name) {
        return lookup(name, "anything").stats;
    }

    /** The counters of a registered name by name, with {@code parked}: elements kept for restarts. */
    public static Map<String, Long> statsMap(String name) {
        Entry entry = lookup(name, "anything");
        Map<String, Long> map = entry.stats.toMap();
        map.put("parked", entry.parkedElements());
        return map;
    }

    private static Map<String, Long> statsMapOf(String key) {
        Entry entry = lookup(key, "anything");
        Map<String, Long> map = entry.stats.toMap();
        map.put("parked", entry.parkedElements());
        return map;
    }

    public static boolean isPublisher(Object o) {
        return o instanceof Publisher || o instanceof Flow.Publisher;
    }

    public static boolean isSubscriber(Object o) {
        return o instanceof Subscriber || o instanceof Flow.Subscriber;
    }

    static Entry publisherEntry(String scope, String name) {
        Entry entry = lookup(scope, name, "publisher");
        if (entry.publisher == null) {
            throw new IllegalArgumentException("'" + name + "' is registered as a subscriber, not a publisher: "
                    + "the reactive-streams source reads from a publisher");
        }
        return entry;
    }

    static Entry subscriberEntry(String scope, String name) {
        Entry entry = lookup(scope, name, "subscriber");
        if (entry.subscriber == null) {
            throw new IllegalArgumentException("'" + name + "' is registered as a publisher, not a subscriber: "
                    + "the reactive-streams sink writes to a subscriber");
        }
        return entry;
    }

    private static Entry lookup(String scope, String name, String kind) {
        Entry entry = name == null ? null : ENTRIES.get(find(scope, name));
        if (entry == null) {
            throw new IllegalArgumentException("no " + kind + " is registered as '" + name + "'; registered "
                    + kind + "s: " + visible(scope, kind.equals("publisher")) + "; register it before load() or "
                    + "start(), in the session that runs the query (a pipeline's own files), and keep it "
                    + "registered while the query runs (Python: reactive_streams.spark "
                    + "register_publisher/register_subscriber; Java: StreamRegistry)");
        }
        return entry;
    }

    private static Entry lookup(String key, String kind) {
        Entry entry = key == null ? null : ENTRIES.get(key);
        if (entry == null) {
            throw new IllegalArgumentException("no " + kind + " is registered as '" + key + "': register it first "
                    + "(Python: reactive_streams.spark register_publisher/register_subscriber; Java: StreamRegistry)");
        }
        return entry;
    }

    /** The names of the publishers (or subscribers) a lookup from the session {@code scope} sees. */
    private static Set<String> visible(String scope, boolean publishers) {
        Set<String> names = new TreeSet<>();
        String own = scope == null ? null : scope + SCOPE_SEPARATOR;
        ENTRIES.forEach((key, e) -> {
            if ((publishers ? e.publisher : e.subscriber) == null) {
                return;
            }
            if (key.indexOf(SCOPE_SEPARATOR) < 0) {
                names.add(key);
            } else if (own != null && key.startsWith(own)) {
                names.add(key.substring(own.length()));
            }
        });
        return names;
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
