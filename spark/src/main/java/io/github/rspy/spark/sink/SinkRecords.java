package io.github.rspy.spark.sink;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.StreamingQueryManager;

/**
 * The sink's delivery record, kept in the streaming query's checkpoint so that it outlives the
 * driver: {@code <checkpoint>/reactive-streams-sink/<epoch>}, a small text file per epoch
 * (its rows delivered, and whether all of them were), written whole and atomically through
 * Spark's own {@code CheckpointFileManager} before the commit returns, as Spark's file sink
 * keeps its {@code _spark_metadata} log. Only the latest epoch's file is kept.
 *
 * <p>A new driver on the same checkpoint reads it back ({@link DeliveryLog#begin}): the epoch
 * Spark re-runs because its {@code commits/N} entry is missing is then not delivered again,
 * or, if a stop interrupted it, only its remaining rows are.
 */
final class SinkRecords {
    static final String DIRECTORY = "reactive-streams-sink";
    private static final String FORMAT = "v1";
    private static final String FILE_MANAGER_CONF = "spark.sql.streaming.checkpointFileManagerClass";
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");

    private final Path directory;
    private final CheckpointFileManager files;
    private long written = -1; // the epoch of the file this driver wrote last, guarded by this

    /** What one file says. */
    record Saved(long epoch, long rows, boolean complete) {}

    SinkRecords(Path directory, CheckpointFileManager files) {
        this.directory = directory;
        this.files = files;
    }

    /**
     * The records of the running query {@code queryId}, in its checkpoint: the root Spark
     * resolved for it, else the {@code checkpointLocation} option; null, with a warning, if
     * neither can be found (the record is then kept in the driver's memory only).
     */
    static SinkRecords forQuery(StreamingQueryManager queries, String queryId, Map<String, String> options) {
        String root = checkpointRoot(queries, queryId);
        if (root == null) {
            root = options.get("checkpointLocation");
        }
        if (root == null) {
            LOG.warning("the streaming query " + queryId + " has no checkpoint location the reactive-streams sink "
                    + "can find: its delivery record is kept in the driver's memory only");
            return null;
        }
        Path directory = new Path(root, DIRECTORY);
        Configuration conf = hadoopConf();
        CheckpointFileManager files = CheckpointFileManager.create(directory, conf);
        return new SinkRecords(directory, files);
    }

    /**
     * The Hadoop configuration Spark's own checkpoint logs of this query use: the session's
     * (its SQL settings, a file system's keys set on the session, the checkpoint file manager).
     */
    private static Configuration hadoopConf() {
        SparkSession session = SparkSession.active();
        if (session instanceof org.apache.spark.sql.classic.SparkSession classic) {
            return classic.sessionState().newHadoopConf();
        }
        Configuration conf = new Configuration(SparkContext.getOrCreate().hadoopConfiguration());
        String manager = session.conf().get(FILE_MANAGER_CONF, null);
        if (manager != null) {
            conf.set(FILE_MANAGER_CONF, manager);
        }
        return conf;
    }

    /** The checkpoint root Spark resolved for the active query {@code queryId}, or null. */
    private static String checkpointRoot(StreamingQueryManager queries, String queryId) {
        if (queries == null) {
            return null;
        }
        try {
            Object execution = execution(queries, queryId);
            Object root = execution == null ? null : call(execution, "resolvedCheckpointRoot");
            return root == null ? null : root.toString();
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(Level.FINE, "no resolved checkpoint root for the streaming query " + queryId, e);
            return null;
        }
    }

    /** Spark's execution of the active query {@code queryId} (behind its StreamingQueryWrapper), or null. */
    static Object execution(StreamingQueryManager queries, String queryId) throws ReflectiveOperationException {
        StreamingQuery query = queries.get(UUID.fromString(queryId));
        return query == null ? null : call(query, "streamingQuery");
    }

    static Object call(Object target, String method) throws ReflectiveOperationException {
        Method m = target.getClass().getMethod(method);
        return m.invoke(target);
    }

    /** The latest record, or null if none was written; removes older ones a crash left. */
    synchronized Saved latest() {
        FileStatus[] found;
        try {
            if (!files.exists(directory)) {
                return null;
            }
            found = files.list(directory);
        } catch (Exception e) { // Scala's methods throw IOException undeclared
            throw new IllegalStateException("could not list the reactive-streams sink's records in " + directory
                    + ": " + e, e);
        }
        long latest = -1;
        for (FileStatus status : found) {
            latest = Math.max(latest, epochOf(status.getPath()));
        }
        if (latest < 0) {
            return null;
        }
        for (FileStatus status : found) {
            long epoch = epochOf(status.getPath());
            if (epoch >= 0 && epoch < latest) {
                delete(epoch);
            }
        }
        written = latest;
        return read(latest);
    }

    /** Whether {@code e} is, or was caused by, an interrupt (what a query's stop sends its thread). */
    private static boolean interrupted(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException || t instanceof java.io.InterruptedIOException
                    || t instanceof java.nio.channels.ClosedByInterruptException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Writes the record of {@code epoch} whole, atomically, then removes the one before it (Spark
     * builds a sink, and so these records, for every micro-batch: the epochs follow one another).
     */
    synchronized void save(long epoch, long rows, boolean complete) {
        Path path = new Path(directory, Long.toString(epoch));
        byte[] text = (FORMAT + "\nepoch=" + epoch + "\nrows=" + rows + "\ncomplete=" + complete + "\n")
                .getBytes(StandardCharsets.UTF_8);
        try {
            files.mkdirs(directory);
            try (OutputStream out = files.createAtomic(path, true)) {
                out.write(text);
            }
        } catch (InterruptedIOException e) {
            // The query is stopping (query.stop(), its session closing): Spark ends a query quietly
            // on an interruption it recognises, this one among them, and logs any other as an error.
            throw new UncheckedIOException("the reactive-streams sink's record of epoch " + epoch
                    + " was interrupted: the query stops", e);
        } catch (Exception e) {
            if (interrupted(e)) { // a stop of the query: Spark takes this for one, and logs nothing
                throw new java.io.UncheckedIOException(new java.io.InterruptedIOException(
                        "interrupted while recording the reactive-streams sink's delivery of epoch " + epoch));
            }
            throw new IllegalStateException("could not record the reactive-streams sink's delivery of epoch " + epoch
                    + " in the checkpoint (" + path + "): " + e, e);
        }
        if (written >= 0 && written != epoch) {
            delete(written);
        }
        if (epoch > 0 && written != epoch - 1) {
            delete(epoch - 1); // the one before, written by this query's sink of an earlier batch
        }
        written = epoch;
    }

    private Saved read(long epoch) {
        Path path = new Path(directory, Long.toString(epoch));
        String text;
        try (InputStream in = files.open(path)) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            in.transferTo(bytes);
            text = bytes.toString(StandardCharsets.UTF_8);
        } catch (Exception e) {
            throw new IllegalStateException("could not read the reactive-streams sink's record " + path + ": " + e, e);
        }
        String[] lines = text.split("\n");
        try {
            if (lines.length != 4 || !lines[0].equals(FORMAT)) {
                throw new IllegalArgumentException("not a record of format " + FORMAT);
            }
            long saved = Long.parseLong(field(lines[1], "epoch"));
            long rows = Long.parseLong(field(lines[2], "rows"));
            String complete = field(lines[3], "complete");
            if (saved != epoch || rows < 0 || !(complete.equals("true") || complete.equals("false"))) {
                throw new IllegalArgumentException("inconsistent values");
            }
            return new Saved(saved, rows, Boolean.parseBoolean(complete));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("the reactive-streams sink's record " + path + " is damaged (" + e.getMessage()
                    + "): " + text.strip().replace('\n', ' '), e);
        }
    }

    private static String field(String line, String name) {
        if (!line.startsWith(name + "=")) {
            throw new IllegalArgumentException("no " + name);
        }
        return line.substring(name.length() + 1);
    }

    /** The epoch a record file is named after, or -1 for any other file (a temporary one, say). */
    private static long epochOf(Path path) {
        String name = path.getName();
        if (name.isEmpty() || !name.chars().allMatch(Character::isDigit) || name.length() > 18) {
            return -1;
        }
        return Long.parseLong(name);
    }

    private void delete(long epoch) {
        try {
            files.delete(new Path(directory, Long.toString(epoch)));
        } catch (Exception e) { // Scala's methods throw IOException undeclared
            LOG.log(Level.FINE, "could not remove the sink's older record " + epoch + " in " + directory, e);
        }
    }
}
