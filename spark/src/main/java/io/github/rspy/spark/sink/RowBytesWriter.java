package io.github.rspy.spark.sink;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.Platform;

/**
 * The executor side of the {@code reactive-streams} sink: a task copies its partition's rows,
 * as {@code UnsafeRow} bytes, into chunks of about {@link #CHUNK_BYTES}, and sends them to the
 * driver in its commit message. Byte arrays serialize as fast as memory copies, and the driver
 * turns a row into values only when the subscriber's demand reaches it ({@link SinkBatch}). A
 * task in the driver's own JVM (local mode) parks its chunks in {@link LocalHandover} instead,
 * and its message only names them.
 */
final class RowBytesWriter implements DataWriter<InternalRow> {
    static final int CHUNK_BYTES = 1 << 20;

    private final int partitionId;
    private final String write; // the micro-batch's write, in LocalHandover
    private final long taskId;
    private final UnsafeProjection toUnsafe;
    private final int width;
    private List<Chunk> chunks = new ArrayList<>();
    private Chunk tail;

    RowBytesWriter(int partitionId, long taskId, String write, StructType schema) {
        this.partitionId = partitionId;
        this.taskId = taskId;
        this.write = write;
        this.toUnsafe = UnsafeProjection.create(schema);
        this.width = schema.fields().length;
    }

    @Override
    public void write(InternalRow row) {
        UnsafeRow unsafe = row instanceof UnsafeRow && ((UnsafeRow) row).numFields() == width
                ? (UnsafeRow) row
                : toUnsafe.apply(row);
        int length = unsafe.getSizeInBytes();
        if (tail == null || !tail.fits(length)) {
            tail = new Chunk(Math.max(length, 64 * 1024));
            chunks.add(tail);
        }
        tail.add(unsafe, length);
    }

    @Override
    public WriterCommitMessage commit() {
        List<Chunk> done = chunks;
        chunks = new ArrayList<>();
        tail = null;
        if (LocalHandover.park(write, taskId, done)) { // the driver's JVM: no copy, no serialization
            return new Message(partitionId, null, write, taskId, rowsOf(done), bytesOf(done));
        }
        for (Chunk chunk : done) {
            chunk.trim(); // serialization sends the whole array
        }
        return new Message(partitionId, done, null, taskId, rowsOf(done), bytesOf(done));
    }

    static long rowsOf(List<Chunk> chunks) {
        long rows = 0;
        for (Chunk chunk : chunks) {
            rows += chunk.count;
        }
        return rows;
    }

    private static long bytesOf(List<Chunk> chunks) {
        long bytes = 0;
        for (Chunk chunk : chunks) {
            bytes += chunk.used;
        }
        return bytes;
    }

    @Override
    public void abort() {
        close();
    }

    @Override
    public void close() {
        chunks = new ArrayList<>();
        tail = null;
    }

    /** Made on the driver, sent to each task. */
    static final class Factory implements StreamingDataWriterFactory {
        private static final long serialVersionUID = 1L;

        private final StructType schema;
        private final String write;

        Factory(StructType schema, String write) {
            this.schema = schema;
            this.write = write;
        }

        @Override
        public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
            return new RowBytesWriter(partitionId, taskId, write, schema);
        }
    }

    /** One task's rows, in order: in the message, or parked in {@link LocalHandover}. */
    static final class Message implements WriterCommitMessage {
        private static final long serialVersionUID = 2L;

        final int partitionId;
        private final List<Chunk> chunks; // null: parked
        private final String parkedIn; // the write they are parked in, or null
        private final long taskId;
        private final long rows;
        private final long bytes;

        Message(int partitionId, List<Chunk> chunks, String parkedIn, long taskId, long rows, long bytes) {
            this.partitionId = partitionId;
            this.chunks = chunks;
            this.parkedIn = parkedIn;
            this.taskId = taskId;
            this.rows = rows;
            this.bytes = bytes;
        }

        /** The rows, on the driver: taken from where they are parked, so call it once. */
        List<Chunk> takeChunks() {
            return chunks != null ? chunks : LocalHandover.take(parkedIn, taskId);
        }

        @Override
        public String toString() {
            return "RowBytes[partition " + partitionId + ", " + rows + " rows, " + bytes + " bytes"
                    + (parkedIn != null ? ", handed over in memory" : "") + "]";
        }
    }

    /** Rows back to back in {@code data}; row i ends at {@code ends[i]}. */
    static final class Chunk implements java.io.Serializable {
        private static final long serialVersionUID = 1L;

        byte[] data;
        int[] ends = new int[256];
        int count;
        int used;

        Chunk(int capacity) {
            data = new byte[capacity];
        }

        boolean fits(int length) {
            return used + length <= CHUNK_BYTES || used == 0;
        }

        void add(UnsafeRow row, int length) {
            if (used + length > data.length) {
                data = Arrays.copyOf(data, Math.max(used + length, Math.min(2 * data.length, CHUNK_BYTES)));
            }
            if (count == ends.length) {
                ends = Arrays.copyOf(ends, 2 * count);
            }
            row.writeToMemory(data, Platform.BYTE_ARRAY_OFFSET + used);
            used += length;
            ends[count++] = used;
        }

        void trim() {
            if (data.length != used) {
                data = Arrays.copyOf(data, used);
            }
            if (ends.length != count) {
                ends = Arrays.copyOf(ends, count);
            }
        }

        /** Points {@code row} at row {@code i}. */
        void point(UnsafeRow row, int i) {
            int start = i == 0 ? 0 : ends[i - 1];
            row.pointTo(data, Platform.BYTE_ARRAY_OFFSET + start, ends[i] - start);
        }
    }
}
