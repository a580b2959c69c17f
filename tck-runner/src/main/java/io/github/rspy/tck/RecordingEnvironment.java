package io.github.rspy.tck;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The TCK's {@link TestEnvironment}, keeping a copy of the asynchronous errors of the test in
 * progress. A TCK test often fails on what it waited for ("produced no element after first
 * request within 2000 ms") while the reason reached its subscriber earlier as an {@code onError}
 * the TCK only stored: the bridge's own diagnosis, such as §1.1's "emitted 2 elements, more than
 * the 1 requested". {@link #causes} gives those to the report.
 */
final class RecordingEnvironment extends TestEnvironment {
    private static final int MAX_CAUSES = 3;
    private final List<Throwable> seen = new CopyOnWriteArrayList<>();

    RecordingEnvironment(long timeoutMillis, long noSignalsTimeoutMillis, long pollTimeoutMillis) {
        super(timeoutMillis, noSignalsTimeoutMillis, pollTimeoutMillis);
    }

    @Override
    public void flop(String msg) {
        seen.add(new AssertionError(msg));
        super.flop(msg);
    }

    @Override
    public void flop(Throwable thr, String msg) {
        seen.add(thr);
        super.flop(thr, msg);
    }

    @Override
    public void flop(Throwable thr) {
        seen.add(thr);
        super.flop(thr);
    }

    @Override
    public void clearAsyncErrors() { // every verification's @BeforeMethod calls it
        seen.clear();
        super.clearAsyncErrors();
    }

    void clearSeen() {
        seen.clear();
    }

    /**
     * What this test recorded that {@code failure} does not already say, one entry per error,
     * at most three: "bridge saw: ..." for a diagnosis thrown by the bridge's own code, {@code
     * onError(class: message)} for another error a TCK subscriber received, "the TCK also
     * recorded: ..." for one of the TCK's assertions.
     */
    List<String> causes(Throwable failure) {
        String said = failure == null ? "" : describe(failure);
        List<String> causes = new ArrayList<>();
        for (Throwable t : seen) {
            String message = t.getMessage() == null ? "" : t.getMessage();
            if (t == failure || (!message.isEmpty() && said.contains(message))) {
                continue;
            }
            String line = label(t, message);
            if (!causes.contains(line) && causes.size() < MAX_CAUSES) {
                causes.add(line);
            }
        }
        return causes;
    }

    private static String describe(Throwable t) {
        StringBuilder out = new StringBuilder();
        for (Throwable c = t; c != null && out.length() < 100_000; c = c.getCause()) {
            out.append(c.getMessage()).append('\n');
        }
        return out.toString();
    }

    private static String label(Throwable t, String message) {
        if (t instanceof AssertionError) {
            return "the TCK also recorded: " + message;
        }
        if (fromBridge(t)) {
            return "bridge saw: " + message;
        }
        return "onError(" + t.getClass().getName() + (message.isEmpty() ? "" : ": " + message) + ")";
    }

    /** Thrown by the bridge's own checks, not a Python error carried across. */
    private static boolean fromBridge(Throwable t) {
        StackTraceElement[] stack = t.getStackTrace();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c.getClass().getName().startsWith("io.github.rspy.bridge.")) {
                return false; // a PythonException, or an exception made from one
            }
        }
        return stack.length > 0 && stack[0].getClassName().startsWith("io.github.rspy.bridge.");
    }
}
