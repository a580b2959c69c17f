package io.github.rspy.tck;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.testng.IConfigurationListener;
import org.testng.ITestListener;
import org.testng.ITestResult;
import org.testng.SkipException;
import org.testng.TestNG;
import org.testng.xml.XmlClass;
import org.testng.xml.XmlInclude;
import org.testng.xml.XmlSuite;
import org.testng.xml.XmlTest;

/**
 * Runs one verification class of the upstream TCK, in full or some of its tests, with TestNG,
 * against a Python factory, and returns every test's outcome as JSON: one object per test with
 * {@code name}, {@code outcome} (passed, failed, skipped, or config-failed: a configuration
 * method failed, which is not a TCK skip), {@code message}, {@code stack}, {@code millis} and
 * {@code cause}: what the test recorded before it ended that its message does not say (the
 * bridge's diagnosis, an {@code onError} the TCK's subscriber got), one per line, or empty.
 * One run at a time per JVM: TestNG builds the classes through no-argument constructors, which
 * read the run's settings from {@link TckRun}.
 */
public final class TckRunner {
    private static final Object LOCK = new Object();
    private static final long TEST_TIMEOUT_MILLIS = 120_000;

    private TckRunner() {}

    /** The verification class for a kind ("publisher", "whitebox", "blackbox", "processor"). */
    public static String verificationClass(String kind, boolean flow) {
        switch (kind) {
            case "publisher":
                return (flow ? PythonFlowPublisherVerification.class : PythonPublisherVerification.class).getName();
            case "whitebox":
                return (flow ? PythonFlowWhiteboxVerification.class : PythonWhiteboxVerification.class).getName();
            case "blackbox":
                return (flow ? PythonFlowBlackboxVerification.class : PythonBlackboxVerification.class).getName();
            case "processor":
                return (flow ? PythonIdentityFlowProcessorVerification.class
                        : PythonIdentityProcessorVerification.class).getName();
            default:
                throw new IllegalArgumentException("unknown verification kind: " + kind);
        }
    }

    /**
     * Runs the verification.
     *
     * @param methods the tests to run, comma-separated; empty for all
     * @param settings {@code key=value} pairs separated by {@code ;}: timeout, noSignalsTimeout,
     *     pollTimeout, gcTimeout (ms), bufferSize, maxElements, boundedDepth, maxSubscribers,
     *     skipStochastic, coordinatedEmission, closeElements (the TCK's subscribers close the
     *     AutoCloseable elements they receive once their test is over: see {@link ClosingElements})
     */
    public static String run(String kind, boolean flow, String methods, String settings, TckFactory factory) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String pair : settings.split(";")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                values.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
            }
        }
        long[] numbers = {
            number(values, "timeout", 500), number(values, "noSignalsTimeout", 100),
            number(values, "pollTimeout", number(values, "timeout", 500)), number(values, "gcTimeout", 300),
            number(values, "bufferSize", 16), number(values, "maxElements", Long.MAX_VALUE - 1),
            number(values, "boundedDepth", 1), number(values, "maxSubscribers", Long.MAX_VALUE),
        };
        boolean[] flags = {
            Boolean.parseBoolean(values.getOrDefault("skipStochastic", "false")),
            Boolean.parseBoolean(values.getOrDefault("coordinatedEmission", "false")),
            Boolean.parseBoolean(values.getOrDefault("closeElements", "false")),
        };
        List<String> names = new ArrayList<>();
        for (String method : methods.split(",")) {
            if (!method.trim().isEmpty()) {
                names.add(method.trim());
            }
        }
        synchronized (LOCK) {
            TckRun run = new TckRun(factory, numbers, flags);
            TckRun.current = run;
            try {
                return runTestNG(verificationClass(kind, flow), names, run);
            } finally {
                TckRun.current = null;
                run.close();
            }
        }
    }

    private static long number(Map<String, String> values, String key, long fallback) {
        String value = values.get(key);
        if (value == null) {
            return fallback;
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("TCK setting " + key + " is not a number: " + value, e);
        }
    }

    /** The names of the @Test methods of a verification class, comma-separated, sorted. */
    public static String testNames(String kind, boolean flow) throws ClassNotFoundException {
        List<String> names = new ArrayList<>();
        for (java.lang.reflect.Method m : Class.forName(verificationClass(kind, flow)).getMethods()) {
            if (m.isAnnotationPresent(org.testng.annotations.Test.class)) {
                names.add(m.getName());
            }
        }
        Collections.sort(names);
        return String.join(",", names);
    }

    private static String runTestNG(String className, List<String> methods, TckRun run) {
        XmlSuite suite = new XmlSuite();
        suite.setName("reactive-streams-tck");
        suite.setTimeOut(Long.toString(TEST_TIMEOUT_MILLIS)); // a guard against a hang, not a limit
        XmlTest test = new XmlTest(suite);
        test.setName(className);
        XmlClass xmlClass = new XmlClass(className);
        if (methods != null && !methods.isEmpty()) {
            List<XmlInclude> includes = new ArrayList<>();
            for (String method : methods) {
                includes.add(new XmlInclude(method));
            }
            xmlClass.setIncludedMethods(includes);
        }
        test.setXmlClasses(Collections.singletonList(xmlClass));
        Collector collector = new Collector(run);
        TestNG testng = new TestNG(false);
        testng.setVerbose(0);
        testng.setXmlSuites(Collections.singletonList(suite));
        testng.addListener(collector);
        testng.run();
        return collector.toJson();
    }

    /** Collects each test's outcome, and configuration failures. */
    static final class Collector implements ITestListener, IConfigurationListener {
        private final Map<String, String[]> results = Collections.synchronizedMap(new LinkedHashMap<>());
        private final List<String[]> configurationFailures = Collections.synchronizedList(new ArrayList<>());
        private final TckRun run;

        Collector(TckRun run) {
            this.run = run;
        }

        @Override
        public void onTestStart(ITestResult result) {
            run.startTest();
        }

        @Override
        public void onTestSuccess(ITestResult result) {
            record(result, "passed");
        }

        @Override
        public void onTestFailure(ITestResult result) {
            record(result, "failed");
        }

        @Override
        public void onTestFailedWithTimeout(ITestResult result) {
            record(result, "failed");
        }

        @Override
        public void onTestSkipped(ITestResult result) {
            boolean causedByConfiguration = !result.getSkipCausedBy().isEmpty()
                    || !(result.getThrowable() instanceof SkipException);
            record(result, causedByConfiguration ? "config-failed" : "skipped");
        }

        @Override
        public void onConfigurationFailure(ITestResult result) {
            configurationFailures.add(new String[] {result.getMethod().getMethodName(), message(result.getThrowable()),
                    stack(result.getThrowable())});
        }

        private void record(ITestResult result, String outcome) {
            Throwable t = result.getThrowable();
            String message = message(t);
            String stack = "failed".equals(outcome) || "config-failed".equals(outcome) ? stack(t) : "";
            if ("config-failed".equals(outcome) && !configurationFailures.isEmpty()) {
                String[] first = configurationFailures.get(0);
                message = "configuration method " + first[0] + " failed: " + first[1];
                stack = first[2];
            }
            String cause = "passed".equals(outcome) ? "" : String.join("\n", run.causes(t));
            results.put(result.getMethod().getMethodName(), new String[] {outcome, message, stack,
                    Long.toString(result.getEndMillis() - result.getStartMillis()), cause});
        }

        private static String message(Throwable t) {
            if (t == null) {
                return "";
            }
            String m = t.getMessage();
            return m == null ? t.getClass().getName() : m;
        }

        private static String stack(Throwable t) {
            if (t == null) {
                return "";
            }
            StringWriter out = new StringWriter();
            t.printStackTrace(new PrintWriter(out));
            return out.toString();
        }

        String toJson() {
            StringBuilder json = new StringBuilder("[");
            synchronized (results) {
                for (Map.Entry<String, String[]> e : results.entrySet()) {
                    if (json.length() > 1) {
                        json.append(',');
                    }
                    String[] r = e.getValue();
                    json.append("{\"name\":").append(quote(e.getKey()))
                            .append(",\"outcome\":").append(quote(r[0]))
                            .append(",\"message\":").append(quote(r[1]))
                            .append(",\"stack\":").append(quote(r[2]))
                            .append(",\"millis\":").append(r[3])
                            .append(",\"cause\":").append(quote(r[4])).append('}');
                }
            }
            return json.append(']').toString();
        }

        private static String quote(String s) {
            StringBuilder out = new StringBuilder("\"");
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"' || c == '\\') {
                    out.append('\\').append(c);
                } else if (c < 0x20) {
                    out.append(String.format("\\u%04x", (int) c));
                } else {
                    out.append(c);
                }
            }
            return out.append('"').toString();
        }
    }
}
