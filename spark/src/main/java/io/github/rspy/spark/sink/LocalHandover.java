package io.github.rspy.spark.sink;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sink's rows handed from a write task to the commit in memory, when the task runs in the
 * driver's own JVM (local mode): the task parks its chunks here and its commit message names
 * them, instead of carrying them. So a micro-batch's rows are not serialized into task results,
 * stored in the block manager and read back on the driver: the same bytes, copied once instead
 * of about five times. A task in another JVM (an executor of a cluster) finds no write of its
 * id open in its own JVM and sends its rows in its message, as before.
 *
 * <p>A write is opened for each micro-batch ({@link #open}), on the driver, and closed by the
 * commit or the abort that ends it ({@link #close}); opening one drops what an earlier write of
 * the same owner left (a batch whose commit never came), and so does the owner's end ({@link
 * #drop}), so at most one micro-batch's rows per sink can outlive their write.
 */
final class LocalHandover {
    private static final ConcurrentHashMap<String, Write> WRITES = new ConcurrentHashMap<>();
    private static final AtomicLong HANDED_ROWS = new AtomicLong(); // taken by commits, in all

    private LocalHandover() {
    }

    /** The parked rows of one micro-batch's write, by task attempt. */
    private static final class Write {
        final Object owner;
        final ConcurrentHashMap<Long, List<RowBytesWriter.Chunk>> tasks = new ConcurrentHashMap<>();

        Write(Object owner) {
            this.owner = owner;
        }
    }

    /** Opens a write for {@code owner} (dropping its earlier ones) and returns its id. */
    static String open(Object owner) {
        drop(owner);
        String id = UUID.randomUUID().toString();
        WRITES.put(id, new Write(owner));
        return id;
    }

    /**
     * Parks the rows of task attempt {@code task} of write {@code write}; false, parking
     * nothing, if that write is not open in this JVM (the task runs on an executor of its own).
     */
    static boolean park(String write, long task, List<RowBytesWriter.Chunk> chunks) {
        Write open = WRITES.get(write);
        if (open == null) {
            return false;
        }
        open.tasks.put(task, chunks);
        return true;
    }

    /** Takes the rows task attempt {@code task} parked; throws if they are not there. */
    static List<RowBytesWriter.Chunk> take(String write, long task) {
        Write open = WRITES.get(write);
        List<RowBytesWriter.Chunk> chunks = open == null ? null : open.tasks.remove(task);
        if (chunks == null) {
            throw new IllegalStateException("the rows task " + task + " of the sink's write " + write
                    + " handed over in memory are gone (was the write aborted?)");
        }
        HANDED_ROWS.addAndGet(RowBytesWriter.rowsOf(chunks));
        return chunks;
    }

    /** Ends write {@code write}: rows it still holds (of attempts whose results never came) go. */
    static void close(String write) {
        if (write != null) {
            WRITES.remove(write);
        }
    }

    /** Ends every write of {@code owner}. */
    static void drop(Object owner) {
        WRITES.values().removeIf(w -> w.owner == owner);
    }

    /** Rows parked now, of every write (for tests and diagnostics). */
    static long parkedRows() {
        long rows = 0;
        for (Write w : WRITES.values()) {
            for (List<RowBytesWriter.Chunk> chunks : w.tasks.values()) {
                rows += RowBytesWriter.rowsOf(chunks);
            }
        }
        return rows;
    }

    /** Rows commits took from here, since the JVM started (for tests and diagnostics). */
    static long handedRows() {
        return HANDED_ROWS.get();
    }

    /** Writes open now (for tests and diagnostics). */
    static int openWrites() {
        return WRITES.size();
    }
}
