package io.github.rspy.spark.common;

import java.util.Locale;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.StreamingQueryManager;

/**
 * The Spark Connect client that registered a publisher or subscriber went away (its process
 * was killed, its session closed, or it stopped renewing its lease). A query reading or writing
 * that name fails with it, or, with {@code option("onClientLoss", "stop")}, stops.
 */
public final class ClientLostException extends IllegalStateException {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");
    /** The source and sink option that chooses between failing (the default) and stopping. */
    public static final String OPTION = "onClientLoss";

    public ClientLostException(String message) {
        super(message);
    }

    /** Whether {@code value} (the option, or null) asks to stop rather than fail. Internal to the connectors. */
    public static boolean stops(String value) {
        if (value == null) {
            return false;
        }
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "fail":
                return false;
            case "stop":
                return true;
            default:
                throw new IllegalArgumentException("option " + OPTION + " of the reactive-streams format must be "
                        + "'fail' or 'stop', got '" + value + "'");
        }
    }

    /**
     * Stops the query {@code queryId} of {@code queries} on a thread of its own (a query's own
     * thread cannot wait for its stop), because {@code why}. Internal to the connectors.
     */
    public static void stopQuery(StreamingQueryManager queries, String queryId, String why) {
        if (queries == null || queryId == null) {
            LOG.warning("cannot stop the query (" + why + "): its session is not known");
            return;
        }
        Thread stopper = new Thread(() -> {
            try {
                StreamingQuery query = queries.get(UUID.fromString(queryId));
                if (query != null) {
                    LOG.info("stopping query " + queryId + ": " + why + " (option " + OPTION + "=stop)");
                    query.stop();
                }
            } catch (Exception e) { // TimeoutException from stop(), a query already gone
                LOG.log(Level.WARNING, "could not stop query " + queryId + " (" + why + ")", e);
            }
        }, "rspy-stop-query-" + queryId);
        stopper.setDaemon(true);
        stopper.start();
    }
}
