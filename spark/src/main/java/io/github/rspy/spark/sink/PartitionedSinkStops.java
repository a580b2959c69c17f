package io.github.rspy.spark.sink;

import java.lang.ref.WeakReference;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.streaming.StreamingQueryListener;
import org.apache.spark.sql.streaming.StreamingQueryManager;

/**
 * Keeps an ordinary {@code stop()} of a query writing to a sink of Python's {@code
 * register_sink} (a Python data source) out of the driver's ERROR log, as {@link QuietStops}
 * does for the {@code reactive-streams} sink. Spark builds such a query's write in Python
 * workers, where no hook of ours runs, so {@code register_sink} calls {@link #watch} on the
 * session's JVM: a listener on the session's queries then hands every query whose sink is
 * that data source (a table named so) to {@link QuietStops} as it starts (Spark calls {@code
 * onQueryStarted} on the query's thread, before its first batch), and tells it when the run
 * ended. Internal to the connectors.
 */
public final class PartitionedSinkStops extends StreamingQueryListener {
    private static final long serialVersionUID = 1L; // a listener of the driver only, never sent
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");
    private static final String PYTHON_TABLE = "org.apache.spark.sql.execution.datasources.v2.python.PythonTable";
    /** One listener a session's query manager. */
    private static final Map<StreamingQueryManager, PartitionedSinkStops> LISTENERS = new WeakHashMap<>();

    private final transient WeakReference<StreamingQueryManager> manager;
    private final transient SparkContext context;
    private final Set<String> names = ConcurrentHashMap.newKeySet(); // lower case, as Spark looks them up
    private final Set<String> runs = ConcurrentHashMap.newKeySet(); // the runs handed to QuietStops

    private PartitionedSinkStops(StreamingQueryManager manager, SparkContext context) {
        this.manager = new WeakReference<>(manager);
        this.context = context;
    }

    /** Watches the queries of {@code session} that write to the Python data source {@code name}. */
    public static void watch(SparkSession session, String name) {
        StreamingQueryManager queries = session.streams();
        PartitionedSinkStops listener;
        synchronized (LISTENERS) {
            listener = LISTENERS.get(queries);
            if (listener == null) {
                listener = new PartitionedSinkStops(queries, session.sparkContext());
                queries.addListener(listener);
                LISTENERS.put(queries, listener);
            }
        }
        listener.names.add(name.toLowerCase(Locale.ROOT));
    }

    @Override
    public void onQueryStarted(QueryStartedEvent event) {
        StreamingQueryManager queries = manager.get();
        if (queries == null || !names.contains(String.valueOf(sinkName(queries, event.id().toString())))) {
            return;
        }
        String run = event.runId().toString();
        runs.add(run);
        QuietStops.watch(event.id().toString(), run, queries, context);
    }

    @Override
    public void onQueryProgress(QueryProgressEvent event) {}

    @Override
    public void onQueryTerminated(QueryTerminatedEvent event) {
        String run = event.runId().toString();
        if (runs.remove(run)) {
            QuietStops.ended(event.id().toString(), run, event.exception().isEmpty());
        }
    }

    /** The name of the table the query writes to (lower case), or null if not known. */
    private static String sinkName(StreamingQueryManager queries, String queryId) {
        try {
            Object execution = SinkRecords.execution(queries, queryId);
            Object sink = execution == null ? null : SinkRecords.call(execution, "sink");
            return sink instanceof Table table && sink.getClass().getName().equals(PYTHON_TABLE)
                    ? table.name().toLowerCase(Locale.ROOT) : null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(Level.FINE, "no sink known for the streaming query " + queryId, e);
            return null;
        }
    }
}
