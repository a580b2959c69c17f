package io.github.rspy.spark.connect;

/**
 * One stream a Connect client opened: a subscription to a JVM publisher, a DataFrame being
 * fetched, or an upload. It lives in its client session's scope until it ends, and holds a lease
 * that every op naming it renews; the reaper cancels it when the lease runs out (the only sign
 * of a killed client, which does not interrupt a running call; docs/connect-wire.md, "Leases").
 */
abstract class ConnectStream {
    /** The reasons of the client's own ends: the {@code close} op and the {@code cancel} op. */
    static final String CLOSED = "closed";
    static final String CANCELLED_BY_CLIENT = "cancelled by the client";

    final String id;
    final Scope scope;
    final StreamCounters counters;
    private volatile long lastUse = System.nanoTime();

    ConnectStream(String id, Scope scope, String kind, String name) {
        this.id = id;
        this.scope = scope;
        this.counters = new StreamCounters(kind, name, scope);
    }

    /** Renews the lease. */
    final void touch() {
        lastUse = System.nanoTime();
    }

    final boolean idleLongerThan(long nanos) {
        return System.nanoTime() - lastUse > nanos;
    }

    /**
     * Ends the stream for {@code reason}: cancels what it runs (the upstream subscription, the
     * Spark jobs) and frees what it holds. Its client hears {@code cancelled}, or {@code closed}
     * if {@code quietly} (the {@code close} op, a registration freed: a normal end); a fetch in
     * flight is answered in full. Idempotent; never blocks.
     */
    abstract void cancel(String reason, boolean quietly);
}
