package io.github.rspy.spark.common;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * What the {@code reactive-streams} format's source, sink and partitioned source share: the
 * format's short name, the local property that names a streaming query, and the checks of their
 * options, so that a bad option fails {@code load()} or {@code start()} naming it. Internal to
 * the connectors.
 */
public final class Format {
    /** The format's short name, {@code format("reactive-streams")}. */
    public static final String SHORT_NAME = "reactive-streams";
    /** The local property a streaming query's thread carries its id in (StreamExecution.QUERY_ID_KEY). */
    public static final String QUERY_ID = "sql.streaming.queryId";

    private Format() {}

    /** The value of the required option {@code key} of the {@code usage} ("source", "sink"), or throws naming it. */
    public static String required(CaseInsensitiveStringMap options, String key, String usage) {
        String value = options.get(key);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("the reactive-streams " + usage + " needs option(\"" + key
                    + "\", name): the name a " + key + " was registered under in StreamRegistry");
        }
        return value;
    }

    /** Refuses options this format does not know, naming them and the ones it does. */
    public static void checkKnown(Map<String, String> options, Set<String> known, String usage) {
        Set<String> lower = new TreeSet<>();
        for (String name : known) {
            lower.add(name.toLowerCase(Locale.ROOT));
        }
        for (String key : options.keySet()) {
            if (!lower.contains(key.toLowerCase(Locale.ROOT)) && !SparkOwned.isSparkOption(key)) {
                throw new IllegalArgumentException("the reactive-streams " + usage + " has no option '" + key
                        + "'; its options are " + new TreeSet<>(known));
            }
        }
    }

    /** The integer option {@code name} of a source, in [min, max], or throws naming it. */
    public static long integer(String text, String name, long min, long max) {
        long value;
        try {
            value = Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            value = min - 1;
        }
        if (value < min || value > max) {
            throw new IllegalArgumentException("option " + name + " of the reactive-streams source must be an "
                    + "integer in [" + min + ", " + max + "], got '" + text + "'");
        }
        return value;
    }

    /** Options Spark itself passes to every source and sink. */
    static final class SparkOwned {
        private static final Set<String> NAMES = Set.of("checkpointlocation", "queryname");

        static boolean isSparkOption(String key) {
            String lower = key.toLowerCase(Locale.ROOT);
            return NAMES.contains(lower) || lower.startsWith("__");
        }
    }
}
