package io.github.rspy.bridge;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Downstream demand on its way upstream, let through a window: at most {@code size} requested
 * elements in flight (requested upstream and not yet arrived), and more requested once half of
 * them have arrived.
 *
 * <p>Why: downstream demand may be unbounded and the upstream synchronous ({@code Flux.range}
 * emits inside {@code request}; a Python publisher pushes before its {@code request} returns).
 * Forwarded whole, one request could fill an adapter's queue with billions of elements before
 * its consumer saw any. Through the window the queue holds at most {@code size}, and upstream
 * is still never asked for more than downstream requested (§1.1 end to end).
 *
 * <p>{@link #add} may be called from any thread; {@link #take} only from the adapter's drain
 * loop, which then requests what it returned (so calls upstream are serial, §2.7).
 */
public final class DemandWindow {
    private final long size;
    private final AtomicLong pending = new AtomicLong(); // requested downstream, not yet forwarded
    private volatile long forwarded; // requested upstream in all; written by the drain only

    public DemandWindow(long size) {
        if (size < 1) {
            throw new IllegalArgumentException("a demand window holds at least 1 element, got " + size);
        }
        this.size = size;
    }

    /** Downstream requested {@code n > 0} more (summed and capped, §3.8, §3.17). */
    public void add(long n) {
        Demand.add(pending, n);
    }

    /**
     * How many elements to request upstream now, given that {@code arrived} of those forwarded
     * so far have arrived: 0 while more than half the window is in flight or nothing is pending.
     * What it returns counts as forwarded, so the caller must request exactly that much.
     */
    public long take(long arrived) {
        long inFlight = forwarded - arrived;
        long room = size - inFlight;
        if (room <= 0 || (inFlight > 0 && room < size / 2)) {
            return 0; // replenish by half windows, not an element at a time
        }
        long n = Math.min(pending.get(), room);
        if (n == 0) {
            return 0;
        }
        Demand.produced(pending, n); // unbounded demand stays pending for ever (§3.17)
        // Counted before the caller requests: an upstream that emits inside request() is checked
        // against it (§1.1) before request() returns.
        forwarded = Demand.addCap(forwarded, n);
        return n;
    }

    /** Whether downstream requested more than was forwarded yet. */
    public boolean hasPending() {
        return pending.get() != 0;
    }

    /** Its counts, for diagnostics. */
    public String describe() {
        return "demand pending " + pending.get() + ", forwarded " + forwarded;
    }

    /** Requested upstream in all: an upstream that sends more breaks §1.1. */
    public long forwarded() {
        return forwarded;
    }
}
