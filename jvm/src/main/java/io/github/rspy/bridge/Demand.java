package io.github.rspy.bridge;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Demand arithmetic for every adapter on the JVM side, the bridge's and the Spark connectors'
 * (Java and Scala), kept in one place as RxJava's {@code BackpressureHelper} and Reactor's
 * {@code Operators} keep theirs: adapters never write these sums inline, so a fix here fixes
 * them all.
 *
 * <p>Demand counts requested elements not yet delivered. Requests add up (§3.8); a sum that
 * reaches {@code Long.MAX_VALUE} stays there and means "unbounded", which delivering never uses
 * up (§3.17). A request of {@code n <= 0} is refused with one {@link IllegalArgumentException}
 * (§3.9), whichever adapter signals it.
 */
public final class Demand {
    /** Demand that is never used up (§3.17). */
    public static final long UNBOUNDED = Long.MAX_VALUE;

    private Demand() {}

    /** {@code a + b} for demands {@code >= 0}, capped at {@link #UNBOUNDED} (§3.17). */
    public static long addCap(long a, long b) {
        long sum = a + b;
        return sum < 0 ? UNBOUNDED : sum; // two non-negative longs overflow only into the negatives
    }

    /** {@code a × b} for demands {@code >= 0}, capped at {@link #UNBOUNDED} (§3.17). */
    public static long multiplyCap(long a, long b) {
        return b != 0 && a > UNBOUNDED / b ? UNBOUNDED : a * b;
    }

    /**
     * Adds {@code n > 0} to {@code demand}, capped (§3.8, §3.17). Returns the demand before, so
     * that an emit loop started by the request that lifts demand from 0 knows it is that one.
     */
    public static long add(AtomicLong demand, long n) {
        for (;;) {
            long current = demand.get();
            if (current == UNBOUNDED) {
                return UNBOUNDED;
            }
            if (demand.compareAndSet(current, addCap(current, n))) {
                return current;
            }
        }
    }

    /**
     * Takes {@code n} delivered elements off {@code demand}, unless it is unbounded (§3.17).
     * Returns the demand after. Only the adapter's drain calls it, for elements it delivered
     * within demand (§1.1), so the result is never negative; concurrent {@link #add}s are kept.
     */
    public static long produced(AtomicLong demand, long n) {
        for (;;) {
            long current = demand.get();
            if (current == UNBOUNDED) {
                return UNBOUNDED;
            }
            long left = current - n;
            if (left < 0) { // a bug in the adapter, not the subscriber's: say so rather than wrap
                throw new IllegalStateException("§1.1: " + n + " elements delivered against a demand of " + current);
            }
            if (demand.compareAndSet(current, left)) {
                return left;
            }
        }
    }

    /** The error a subscription signals for {@code request(n)} with {@code n <= 0} (§3.9). */
    public static IllegalArgumentException illegalRequest(long n) {
        return new IllegalArgumentException(illegalRequestMessage(n));
    }

    /** {@link #illegalRequest(long)}, naming the subscription, where a user may have several. */
    public static IllegalArgumentException illegalRequest(long n, String where) {
        return new IllegalArgumentException(illegalRequestMessage(n) + " (" + where + ")");
    }

    private static String illegalRequestMessage(long n) {
        // The same words as the Python side's, so the rule reads alike on both sides.
        return "§3.9: request(n) must be called with n > 0 (non-positive requests are illegal), got " + n;
    }
}
