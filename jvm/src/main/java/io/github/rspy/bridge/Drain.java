package io.github.rspy.bridge;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * One adapter's signalling loop, run one pass at a time however many threads signal it: the
 * work-in-progress counter of RxJava's drain loops, kept here so that no adapter writes it again
 * (the Python side's {@code Drain} is the same kit).
 *
 * <p>Every event first records state (demand added, an element queued, cancelled), then calls
 * {@link #signal}. Only the caller that finds the drain idle starts it; a signal during a pass
 * makes the pass run once more, so no event is lost, and a {@code request} made inside
 * {@code onNext} never recurses into the loop (§3.3). Signals to the subscriber go out only from
 * inside a pass, so they never overlap (§1.3).
 */
public final class Drain {
    private final AtomicInteger wip = new AtomicInteger();
    private final Runnable pass;
    private final Predicate<Runnable> runOn;
    private final Runnable refused;

    /**
     * @param pass one pass of the adapter's loop; it must not throw
     * @param runOn starts the passes (an executor's, {@code BridgeRuntime.execute}); false if
     *     it refused them
     * @param refused what to do, on the signalling thread, when {@code runOn} refuses: no pass
     *     will run again
     */
    public Drain(Runnable pass, Predicate<Runnable> runOn, Runnable refused) {
        this.pass = pass;
        this.runOn = runOn;
        this.refused = refused;
    }

    /** A drain whose passes run inline, on the thread whose signal finds it idle. */
    public static Drain inline(Runnable pass) {
        return new Drain(pass, null, null);
    }

    /** Runs the passes now, or has the running pass go round once more. */
    public void signal() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        if (runOn == null) {
            passes();
        } else if (!runOn.test(this::passes)) {
            refused.run();
        }
    }

    /**
     * Runs the passes now on this thread if the drain is idle (the caller then returns after
     * them), or has the running pass go round once more: for work that should be done at once
     * when it can, such as a cancel before the error that follows it.
     */
    public void signalHere() {
        if (wip.getAndIncrement() == 0) {
            passes();
        }
    }

    /** Whether no pass runs or is pending. */
    public boolean isIdle() {
        return wip.get() == 0;
    }

    /** Its work-in-progress count, for diagnostics: 0 when idle. */
    public String describe() {
        return "drain wip " + wip.get();
    }

    private void passes() {
        int missed = 1;
        for (;;) {
            pass.run();
            missed = wip.addAndGet(-missed);
            if (missed == 0) {
                return;
            }
        }
    }
}
