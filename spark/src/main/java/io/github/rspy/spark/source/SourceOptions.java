package io.github.rspy.spark.source;

import io.github.rspy.bridge.Demand;
import io.github.rspy.spark.common.ClientLostException;
import io.github.rspy.spark.common.Format;
import java.util.Locale;
import java.util.Set;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The options of the {@code reactive-streams} source, checked when the DataFrame is loaded so
 * that a bad one fails {@code load()} itself, naming the option.
 *
 * <ul>
 *   <li>{@code publisher} (required): the registered name to read from.
 *   <li>{@code maxRecordsPerTrigger}: the most elements one micro-batch takes, in [1, 2^31-9];
 *       default {@link #DEFAULT_MAX_RECORDS_PER_TRIGGER}. (Without a limit a batch would take
 *       everything held, prefetched elements included, and nothing would be requested ahead.)
 *   <li>{@code prefetch}: micro-batches' worth of elements requested ahead of the one Spark is
 *       running, in [0, 16]; default 1. The source never holds more than {@link #bound()}
 *       elements: {@code maxRecordsPerTrigger × (1 + prefetch)}.
 *   <li>{@code failOnDataLoss}: whether a restart that finds elements of a planned micro-batch
 *       gone fails the query (true, the default) or goes on, counting them.
 * </ul>
 *
 * <p>Internal to the connectors (the format's provider parses them).
 */
public final class SourceOptions {
    /** The option that names the publisher. */
    public static final String PUBLISHER = "publisher";
    static final String MAX_RECORDS_PER_TRIGGER = "maxRecordsPerTrigger";
    static final String PREFETCH = "prefetch";
    static final String FAIL_ON_DATA_LOSS = "failOnDataLoss";
    static final Set<String> NAMES = Set.of(PUBLISHER, MAX_RECORDS_PER_TRIGGER, PREFETCH, FAIL_ON_DATA_LOSS,
            ClientLostException.OPTION);

    /** The most a micro-batch can hold: Spark counts a batch's rows in an int. */
    static final long MAX_MAX_RECORDS_PER_TRIGGER = Integer.MAX_VALUE - 8;
    static final long DEFAULT_MAX_RECORDS_PER_TRIGGER = 100_000;
    static final int DEFAULT_PREFETCH = 1;
    static final int MAX_PREFETCH = 16;

    /** The registered name to read from. */
    public final String publisher;
    /** The per-batch limit, and the unit of demand. */
    final long maxRecordsPerTrigger;
    final int prefetch;
    final boolean failOnDataLoss;
    /** Whether a lost Spark Connect client stops the query rather than failing it. */
    final boolean stopOnClientLoss;

    /** Parses and checks {@code options}, or throws naming the bad one. */
    public SourceOptions(CaseInsensitiveStringMap options) {
        Format.checkKnown(options.asCaseSensitiveMap(), NAMES, "source");
        publisher = Format.required(options, PUBLISHER, "source");
        String max = options.get(MAX_RECORDS_PER_TRIGGER);
        maxRecordsPerTrigger = max == null ? DEFAULT_MAX_RECORDS_PER_TRIGGER
                : Format.integer(max, MAX_RECORDS_PER_TRIGGER, 1, MAX_MAX_RECORDS_PER_TRIGGER);
        String ahead = options.get(PREFETCH);
        prefetch = ahead == null ? DEFAULT_PREFETCH : (int) Format.integer(ahead, PREFETCH, 0, MAX_PREFETCH);
        failOnDataLoss = bool(options.get(FAIL_ON_DATA_LOSS), FAIL_ON_DATA_LOSS, true);
        stopOnClientLoss = ClientLostException.stops(options.get(ClientLostException.OPTION));
    }

    /** The most elements the source holds, and the most it has asked for and not received. */
    long bound() {
        return Demand.multiplyCap(maxRecordsPerTrigger, 1 + prefetch);
    }

    static boolean bool(String text, String name, boolean absent) {
        if (text == null) {
            return absent;
        }
        switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new IllegalArgumentException("option " + name + " of the reactive-streams source must be "
                        + "true or false, got '" + text + "'");
        }
    }
}
