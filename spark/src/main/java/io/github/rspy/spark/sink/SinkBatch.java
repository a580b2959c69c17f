package io.github.rspy.spark.sink;

import io.github.rspy.spark.common.ArrowSchemas;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;

/**
 * One micro-batch's rows on the driver, as the executors sent them ({@code UnsafeRow} bytes, in
 * partition order), read forward once: {@link #next()} makes the next row's value for the
 * subscriber only when the subscriber's demand reaches it. So the driver holds the batch as bytes,
 * plus at most the values handed over and not yet delivered.
 *
 * <p>For a subscriber of Arrow batches, {@link #nextBatch} writes the next rows into a new
 * {@code VectorSchemaRoot} with Spark's own {@code ArrowWriter} (the types are {@code
 * df.toArrow()}'s), from an allocator of the sink's own, so that what it holds can be measured.
 */
final class SinkBatch {
    /** The sink's Arrow memory, of its own. */
    private static final BufferAllocator ALLOCATOR =
            (BufferAllocator) io.github.rspy.bridge.arrow.ArrowSupport.Allocators.newChild("reactive-streams sink");

    private final List<RowBytesWriter.Chunk> chunks = new ArrayList<>();
    private final RowValues values;
    private final StructType schema;
    private Schema arrowSchema; // made at the first Arrow batch
    private final UnsafeRow row;
    private final long size;
    private long bytes;
    private long position;
    private int chunk;
    private int inChunk;

    SinkBatch(WriterCommitMessage[] messages, RowValues values, StructType schema) {
        List<RowBytesWriter.Message> parts = new ArrayList<>();
        for (WriterCommitMessage message : messages) {
            if (message instanceof RowBytesWriter.Message) {
                parts.add((RowBytesWriter.Message) message);
            }
        }
        parts.sort(Comparator.comparingInt(m -> m.partitionId));
        long rows = 0;
        for (RowBytesWriter.Message part : parts) {
            for (RowBytesWriter.Chunk c : part.takeChunks()) {
                if (c.count > 0) {
                    chunks.add(c);
                    rows += c.count;
                    bytes += c.used;
                }
            }
        }
        this.size = rows;
        this.values = values;
        this.schema = schema;
        this.row = new UnsafeRow(schema.fields().length);
    }

    /** The batch's Arrow schema (made once). */
    Schema arrowSchema() {
        if (arrowSchema == null) {
            arrowSchema = ArrowSchemas.arrowSchema(schema); // the source's Arrow types, df.toArrow()'s
        }
        return arrowSchema;
    }

    /** Rows not yet read. */
    long left() {
        return size - position;
    }

    /** Bytes the sink's Arrow batches hold now. */
    static long arrowAllocatedBytes() {
        return ALLOCATOR.getAllocatedMemory();
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

    /**
     * The next rows, at most {@code maxRows} of them (at least one: call only if {@link
     * #hasNext}), as a new root the caller closes.
     */
    VectorSchemaRoot nextBatch(int maxRows) {
        VectorSchemaRoot root = VectorSchemaRoot.create(arrowSchema(), ALLOCATOR);
        try {
            ArrowWriter writer = ArrowWriter.create(root);
            for (int n = 0; n < maxRows && position < size; n++) {
                RowBytesWriter.Chunk c = chunks.get(chunk);
                c.point(row, inChunk);
                writer.write(row);
                position++;
                if (++inChunk == c.count) {
                    chunk++;
                    inChunk = 0;
                }
            }
            writer.finish();
            return root;
        } catch (RuntimeException | Error e) {
            root.close();
            throw e;
        }
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
