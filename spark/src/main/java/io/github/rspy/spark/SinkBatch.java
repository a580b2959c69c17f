package io.github.rspy.spark;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * One micro-batch's rows on the driver, as the executors sent them ({@code UnsafeRow} bytes, in
 * partition order), read forward once: {@link #next()} makes the next row's value for the
 * subscriber only when the subscriber's demand reaches it. So the driver holds the batch as bytes,
 * plus at most the values handed over and not yet delivered.
 */
final class SinkBatch {
    private final List<RowBytesWriter.Chunk> chunks = new ArrayList<>();
    private final RowValues values;
    private final UnsafeRow row;
    private final long size;
    private long bytes;
    private long position;
    private int chunk;
    private int inChunk;

    SinkBatch(WriterCommitMessage[] messages, RowValues values, int width) {
        List<RowBytesWriter.Message> parts = new ArrayList<>();
        for (WriterCommitMessage message : messages) {
            if (message instanceof RowBytesWriter.Message) {
                parts.add((RowBytesWriter.Message) message);
            }
        }
        parts.sort(Comparator.comparingInt(m -> m.partitionId));
        long rows = 0;
        for (RowBytesWriter.Message part : parts) {
            for (RowBytesWriter.Chunk c : part.chunks) {
                if (c.count > 0) {
                    chunks.add(c);
                    rows += c.count;
                    bytes += c.used;
                }
            }
        }
        this.size = rows;
        this.values = values;
        this.row = new UnsafeRow(width);
    }

    /** Rows in the batch. */
    long size() {
        return size;
    }

    /** The batch's size as bytes (what the driver holds while delivering it). */
    long bytes() {
        return bytes;
    }

    /** Rows read so far (skipped or made). */
    long position() {
        return position;
    }

    /** Moves past {@code n} rows without making them (rows an earlier run delivered). */
    void skip(long n) {
        long left = Math.min(n, size - position);
        while (left > 0) {
            RowBytesWriter.Chunk c = chunks.get(chunk);
            int step = (int) Math.min(left, c.count - inChunk);
            inChunk += step;
            position += step;
            left -= step;
            if (inChunk == c.count) {
                chunk++;
                inChunk = 0;
            }
        }
    }

    boolean hasNext() {
        return position < size;
    }

    /** The next row, as its subscriber gets it. */
    Object next() {
        RowBytesWriter.Chunk c = chunks.get(chunk);
        c.point(row, inChunk);
        Object value = values.of(row);
        position++;
        if (++inChunk == c.count) {
            chunk++;
            inChunk = 0;
        }
        return value;
    }
}
