package io.github.rspy.spark.source;

import io.github.rspy.spark.common.StreamStats;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.logging.Logger;
import org.apache.spark.sql.types.StructType;
import org.reactivestreams.Publisher;

/**
 * A publisher registered by name, as the source reads it: the publisher, its counters, and the
 * rows that stopped queries reading it received and Spark did not commit, kept for a restart of
 * each query (by its checkpoint). The registry keeps one for each registered publisher. Internal
 * to the connectors.
 */
public final class NamedPublisher {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");
    /** How many stopped queries of one publisher keep their rows for a restart. */
    static final int MAX_PARKED = 8;

    final String name;
    final Publisher<?> publisher;
    final StreamStats stats;
    // Rows a stopped source received and Spark did not commit, by the query's checkpoint,
    // oldest first; at most MAX_PARKED queries' worth.
    private final Map<String, Parked> parked = new LinkedHashMap<>(); // guarded by this

    /** The publisher registered as {@code name}, counted in {@code stats}. */
    public NamedPublisher(String name, Publisher<?> publisher, StreamStats stats) {
        this.name = name;
        this.publisher = publisher;
        this.stats = stats;
    }

    private record Parked(SourceBuffer rows, StructType schema) {}

    /**
     * Keeps the rows a source of the query checkpointed at {@code checkpoint} received and
     * did not see committed, for a restart of that query (at most the source's demand bound).
     */
    synchronized void park(String checkpoint, SourceBuffer rows, StructType schema) {
        parked.remove(checkpoint);
        if (rows.size() == 0) {
            return;
        }
        parked.put(checkpoint, new Parked(rows, schema));
        if (parked.size() > MAX_PARKED) {
            Map.Entry<String, Parked> oldest = parked.entrySet().iterator().next();
            parked.remove(oldest.getKey());
            LOG.warning(oldest.getValue().rows().size() + " elements that a stopped query (checkpoint "
                    + oldest.getKey() + ") left for publisher '" + name + "' are dropped: " + MAX_PARKED
                    + " later stopped queries of that publisher keep theirs");
        }
    }

    /**
     * The rows a stopped run of the query at {@code checkpoint} left, from offset {@code
     * from} on; null if there are none, or if they do not continue at {@code from} with the
     * same schema (then they are dropped, with a warning).
     */
    synchronized SourceBuffer unpark(String checkpoint, long from, StructType schema) {
        Parked left = parked.remove(checkpoint);
        if (left == null) {
            return null;
        }
        if (!left.schema().equals(schema) || from < left.rows().base() || from > left.rows().end()) {
            LOG.warning("the " + left.rows().size() + " elements (offsets " + left.rows().base() + ".."
                    + (left.rows().end() - 1) + ") that a stopped query left for publisher '" + name + "' do not "
                    + "continue its restart at offset " + from + (left.schema().equals(schema) ? "" : " with its schema")
                    + ": they are dropped");
            return null;
        }
        left.rows().release(from);
        return left.rows();
    }

    /** Elements parked for restarts (for stream_stats). */
    public synchronized long parkedElements() {
        long total = 0;
        for (Parked left : parked.values()) {
            total += left.rows().size();
        }
        return total;
    }
}
