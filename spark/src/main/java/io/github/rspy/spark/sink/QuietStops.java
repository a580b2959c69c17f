package io.github.rspy.spark.sink;

import io.github.rspy.spark.common.Format;
import java.lang.ref.WeakReference;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Marker;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.filter.AbstractFilter;
import org.apache.logging.log4j.message.Message;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.StreamingQueryManager;

/**
 * Keeps an ordinary {@code stop()} of a query writing to the {@code reactive-streams} sink (or
 * to a sink of Python's {@code register_sink}, {@link PartitionedSinkStops}) out of the driver's
 * ERROR log. Stopping a query interrupts a commit that waits for the
 * subscriber's demand, or cancels the batch's write job, and Spark logs any exception out of a
 * V2 write as ERROR ({@code WriteToDataSourceV2Exec: Data source write support
 * MicroBatchWrite[epoch: N, writer: reactive-streams[...]] is aborting.} / {@code aborted.}; for
 * a killed write task also {@code Utils: Aborting task} and {@code DataWritingSparkTask: Aborting
 * commit ...}), although the query then ends as stopped, without an error.
 *
 * <p>A log4j2 filter on the driver's logging configuration drops exactly those ERROR events:
 * <ul>
 *   <li>the two {@code WriteToDataSourceV2Exec} lines naming this sink's writer, logged on the
 *       query's thread, while that query (the thread's {@code sql.streaming.queryId}) has been
 *       stopped: {@code StreamingQuery.isActive()} is false from the start of {@code stop()},
 *       while a failing query is still active when Spark logs its failure, so real failures
 *       are logged as before;
 *   <li>{@code Utils: Aborting task} and the {@code DataWritingSparkTask} lines of a write task
 *       that was killed (not failed) and belongs to such a query, or to one of the last {@link
 *       #STOPPED_RUNS} runs that ended by a stop (killed tasks may log after the query ended).
 * </ul>
 * Everything else passes untouched. Without log4j2 as the logging backend, or when the query's
 * session is not known, nothing is filtered. Executors of a cluster log their own killed tasks.
 */
final class QuietStops extends AbstractFilter {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");
    private static final String QUERY_ID = Format.QUERY_ID;
    private static final String JOB_GROUP = "spark.jobGroup.id"; // a query's job group is its run id
    private static final String WRITE_EXEC = "org.apache.spark.sql.execution.datasources.v2.WriteToDataSourceV2Exec";
    private static final String WRITING_TASK = "org.apache.spark.sql.execution.datasources.v2.DataWritingSparkTask";
    private static final String UTILS = "org.apache.spark.util.Utils";
    /** Our StreamingWrite's {@code toString} starts so ({@link SubscriberSink#toString}). */
    static final String WRITER_PREFIX = "writer: " + Format.SHORT_NAME + "[subscriber=";
    /** A Python data source's StreamingWrite has no {@code toString} of its own: its class name and hash. */
    static final String PYTHON_WRITER_PREFIX =
            "writer: org.apache.spark.sql.execution.datasources.v2.python.PythonStreamingWrite@";

    private static final QuietStops INSTANCE = new QuietStops();
    /** Queries writing to the sink, by query id: the run, and the manager that knows whether it is active. */
    private static final Map<String, Watched> QUERIES = new ConcurrentHashMap<>();
    static final int STOPPED_RUNS = 256;
    private static final Map<String, Boolean> STOPPED = new java.util.LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > STOPPED_RUNS;
        }
    };
    private static volatile WeakReference<Configuration> installedOn = new WeakReference<>(null);
    private static volatile SparkContext context;

    private QuietStops() {
        super(Filter.Result.DENY, Filter.Result.NEUTRAL);
    }

    private record Watched(String run, StreamingQueryManager manager) {}

    /**
     * Watches the run {@code run} of the query {@code queryId}, started in {@code manager}'s
     * session (null if unknown: then nothing is filtered for it); installs the filter.
     */
    static void watch(String queryId, String run, StreamingQueryManager manager, SparkContext sparkContext) {
        context = sparkContext;
        if (manager != null) {
            QUERIES.put(queryId, new Watched(run, manager));
        }
        install();
    }

    /**
     * The run {@code run} of the query ended, {@code stopped} or failed. Its killed write tasks
     * may still log after that: a stopped run's are dropped for a while (the last {@link
     * #STOPPED_RUNS} stopped runs).
     */
    static void ended(String queryId, String run, boolean stopped) {
        if (stopped) {
            synchronized (STOPPED) {
                STOPPED.put(run, Boolean.TRUE);
            }
        }
        QUERIES.computeIfPresent(queryId, (id, watched) -> watched.run().equals(run) ? null : watched);
    }

    private static synchronized void install() {
        try {
            LoggerContext logging = (LoggerContext) LogManager.getContext(false);
            Configuration config = logging.getConfiguration();
            if (installedOn.get() == config) {
                return;
            }
            INSTANCE.start();
            config.addFilter(INSTANCE);
            logging.updateLoggers();
            installedOn = new WeakReference<>(config);
        } catch (ClassCastException | LinkageError e) {
            LOG.fine("log4j2 is not the logging backend: stopping a query may log Spark's abort errors");
        }
    }

    /** Whether an event is one of the stop's ERROR lines for a stopped query on this sink. */
    private static boolean isStopNoise(String logger, Level level, Object message) {
        if (level == null || !level.equals(Level.ERROR) || logger == null) {
            return false;
        }
        String text = message == null ? "" : message.toString();
        if (logger.equals(WRITE_EXEC)) {
            // Only watched queries count: those of this sink, or a Python one's (PartitionedSinkStops).
            return (text.contains(WRITER_PREFIX) || text.contains(PYTHON_WRITER_PREFIX))
                    && isStopped(queryOfThread());
        }
        if (logger.equals(WRITING_TASK) || (logger.equals(UTILS) && text.startsWith("Aborting task"))) {
            TaskContext task = TaskContext.get(); // a write task of the query, killed (not failed)
            return task != null && task.isInterrupted() && (isStopped(task.getLocalProperty(QUERY_ID))
                    || wasStopped(task.getLocalProperty(JOB_GROUP)));
        }
        return false;
    }

    private static boolean wasStopped(String run) {
        if (run == null) {
            return false;
        }
        synchronized (STOPPED) {
            return STOPPED.containsKey(run);
        }
    }

    private static String queryOfThread() {
        TaskContext task = TaskContext.get();
        if (task != null) {
            return task.getLocalProperty(QUERY_ID);
        }
        SparkContext sc = context;
        return sc == null ? null : sc.getLocalProperty(QUERY_ID);
    }

    private static boolean isStopped(String queryId) {
        Watched watched = queryId == null ? null : QUERIES.get(queryId);
        if (watched == null) {
            return false;
        }
        try {
            // The manager knows active queries only: one it no longer knows has ended, and the
            // listener that records its run as stopped (ended) may not have heard of it yet.
            StreamingQuery query = watched.manager().get(queryId);
            return query == null || !query.isActive();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private Filter.Result decide(String logger, Level level, Object message) {
        return isStopNoise(logger, level, message) ? onMatch : onMismatch;
    }

    @Override
    public Filter.Result filter(LogEvent event) {
        return decide(event.getLoggerName(), event.getLevel(),
                event.getMessage() == null ? null : event.getMessage().getFormattedMessage());
    }

    @Override
    public Filter.Result filter(org.apache.logging.log4j.core.Logger logger, Level level, Marker marker, Message msg,
            Throwable t) {
        return decide(logger.getName(), level, msg == null ? null : msg.getFormattedMessage());
    }

    @Override
    public Filter.Result filter(org.apache.logging.log4j.core.Logger logger, Level level, Marker marker, Object msg,
            Throwable t) {
        return decide(logger.getName(), level, msg);
    }

    @Override
    public Filter.Result filter(org.apache.logging.log4j.core.Logger logger, Level level, Marker marker, String msg,
            Object... params) {
        return decide(logger.getName(), level, msg);
    }

    @Override
    public String toString() {
        return "reactive-streams sink: quiet stops";
    }
}
