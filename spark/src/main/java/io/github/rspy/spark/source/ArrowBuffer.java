package io.github.rspy.spark.source;

import io.github.rspy.bridge.arrow.ArrowBatches;
import io.github.rspy.spark.common.ArrowSchemas;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;

/**
 * The Arrow batches a {@link PublisherSource} holds, each an IPC stream of its own on the heap
 * (what crosses to the executors, and nothing to close), numbered by row: a batch of {@code n}
 * rows takes offsets [first, first + n). Batches come whole ({@link #appendBatch}: a publisher's Arrow
 * batches, or rows from Python in the Arrow batch they crossed in, {@link #appendColumns}), or are
 * made of rows one at a time ({@link #appendRow}, with Spark's {@code ArrowWriter}) and sealed
 * into a batch before anything reads them. A micro-batch of Arrow batch elements ends at a
 * batch's end ({@link #cut}); one of rows may end inside a batch, which {@link #slice} then cuts.
 */
final class ArrowBuffer implements SourceBuffer {
    /** Rows written one at a time are sealed into a batch at this many. */
    static final int ROWS_PER_BATCH = 65_536;

    private final ArrayDeque<Batch> batches = new ArrayDeque<>();
    private final StructType schema;
    private final Schema arrowSchema;
    private long base;
    private long end; // including the rows being written
    // The batch rows are written into, or null; its allocator is its own.
    private BufferAllocator pendingMemory;
    private VectorSchemaRoot pendingRoot;
    private ArrowWriter pending;
    private int pendingRows;
    private boolean heldBatches; // a publisher's batches, not rows

    private record Batch(long first, int rows, byte[] stream) {
        long last() {
            return first + rows;
        }
    }

    ArrowBuffer(long base, StructType schema) {
        this.base = base;
        this.end = base;
        this.schema = schema;
        this.arrowSchema = ArrowSchemas.arrowSchema(schema); // the types df.toArrow() gives
    }

    /** Whether it holds a publisher's Arrow batches (batches made of rows are not). */
    boolean heldBatches() {
        return heldBatches;
    }

    @Override
    public long base() {
        return base;
    }

    @Override
    public long end() {
        return end;
    }

    /**
     * Appends a publisher's Arrow batch, copied as an IPC stream (nothing if it has no rows); its
     * rows. Its columns must be the source's, by name and Arrow type: else an {@code
     * IllegalArgumentException} that starts with {@code what} and names both schemas.
     */
    int appendBatch(VectorSchemaRoot root, String what) {
        List<Field> fields = root.getSchema().getFields();
        boolean fits = fields.size() == arrowSchema.getFields().size();
        for (int i = 0; fits && i < fields.size(); i++) {
            Field want = arrowSchema.getFields().get(i);
            fits = fields.get(i).getName().equals(want.getName()) && fields.get(i).getType().equals(want.getType());
        }
        if (!fits) {
            throw new IllegalArgumentException(what + " has the columns " + root.getSchema() + ", not the source's "
                    + arrowSchema + " (the schema " + schema.simpleString() + ")");
        }
        int rows = root.getRowCount();
        if (rows > 0) {
            heldBatches = true;
            append(ArrowBatches.ipcStream(root), rows);
        }
        return rows;
    }

    private void append(byte[] stream, int rows) {
        seal();
        batches.addLast(new Batch(end, rows, stream));
        end += rows;
    }

    /**
     * Appends rows from Python in the batch they crossed in, if its columns are the source's (by
     * position for tuples, by name for dicts; of the same Arrow types; no null in a column that
     * cannot hold one); false if not, and nothing is appended. The caller closes {@code rows}.
     */
    boolean appendColumns(io.github.rspy.bridge.arrow.ColumnRows rows) {
        VectorSchemaRoot root = rows.root();
        List<Field> want = arrowSchema.getFields();
        if (!rows.named() && root.getFieldVectors().size() != want.size()) {
            return false;
        }
        List<FieldVector> vectors = new ArrayList<>(want.size());
        for (int c = 0; c < want.size(); c++) {
            Field field = want.get(c);
            FieldVector vector = rows.named() ? root.getVector(field.getName()) : root.getVector(c);
            if (vector == null || !vector.getField().getType().equals(field.getType())
                    || (!schema.fields()[c].nullable() && vector.getNullCount() > 0)) {
                return false;
            }
            vectors.add(vector);
        }
        // The source's names on the batch's vectors (closed with rows, by the caller).
        VectorSchemaRoot named = new VectorSchemaRoot(want, vectors, root.getRowCount());
        append(ArrowBatches.ipcStream(named), root.getRowCount());
        return true;
    }

    /** Appends a row of the source's schema (Spark's {@code UnsafeRow}, written by {@code ElementRows}). */
    void appendRow(InternalRow row) {
        if (pending == null) {
            pendingMemory = allocator("reactive-streams source rows");
            pendingRoot = VectorSchemaRoot.create(arrowSchema, pendingMemory);
            pending = ArrowWriter.create(pendingRoot);
        }
        pending.write(row);
        pendingRows++;
        end++;
        if (pendingRows == ROWS_PER_BATCH) {
            seal();
        }
    }

    /** Makes the rows being written a batch of the buffer. */
    void seal() {
        if (pending == null) {
            return;
        }
        try {
            pending.finish();
            long first = end - pendingRows;
            batches.addLast(new Batch(first, pendingRows, ArrowBatches.ipcStream(pendingRoot)));
        } finally {
            dropPending();
        }
    }

    private void dropPending() {
        if (pending != null) {
            pendingRoot.close();
            pendingMemory.close();
            pending = null;
            pendingRoot = null;
            pendingMemory = null;
            pendingRows = 0;
        }
    }

    @Override
    public long release(long upTo) {
        seal();
        long drop = Math.min(upTo, end) - base;
        if (drop <= 0) {
            return 0;
        }
        base += drop;
        while (!batches.isEmpty() && batches.peekFirst().last() <= base) {
            batches.removeFirst();
        }
        return drop;
    }

    @Override
    public void restartAt(long next) {
        dropPending();
        batches.clear();
        base = next;
        end = next;
    }

    /**
     * The end of a micro-batch from {@code start} that ends by {@code most} if it can: the last
     * batch end in ({@code start}, {@code most}], or, if the first batch after {@code start} is
     * larger than that, its end (a batch is never cut to fit a limit).
     */
    long cut(long start, long most) {
        seal();
        long chosen = start;
        for (Batch b : batches) {
            if (b.last() <= start) {
                continue;
            }
            if (b.last() > most) {
                return chosen == start ? b.last() : chosen;
            }
            chosen = b.last();
        }
        return chosen;
    }

    /**
     * Offsets [from, to) as partitions of about {@code targetBytes} each, in order: each a list
     * of IPC streams of one batch (a batch cut at either end is a new stream).
     */
    List<byte[][]> slice(long from, long to, long targetBytes) {
        seal();
        List<byte[][]> partitions = new ArrayList<>();
        List<byte[]> current = new ArrayList<>();
        long bytes = 0;
        for (Batch b : batches) {
            if (b.last() <= from || b.first >= to) {
                continue;
            }
            long in = Math.max(from, b.first) - b.first;
            long out = Math.min(to, b.last()) - b.first;
            byte[] stream = in == 0 && out == b.rows ? b.stream : cutStream(b.stream, (int) in, (int) (out - in));
            if (!current.isEmpty() && bytes + stream.length > targetBytes) {
                partitions.add(current.toArray(new byte[0][]));
                current = new ArrayList<>();
                bytes = 0;
            }
            current.add(stream);
            bytes += stream.length;
        }
        if (!current.isEmpty()) {
            partitions.add(current.toArray(new byte[0][]));
        }
        return partitions;
    }

    /**
     * A new allocator of the source's, under the bridge's root (not Spark's): what it holds counts
     * in {@code BridgeRuntime.jvmArrowAllocatedBytes()}.
     */
    static BufferAllocator allocator(String name) {
        return (BufferAllocator) io.github.rspy.bridge.arrow.ArrowSupport.Allocators.newChild(name);
    }

    /** Rows [from, from + count) of a one-batch IPC stream, as a stream of their own. */
    private static byte[] cutStream(byte[] stream, int from, int count) {
        try (BufferAllocator allocator = allocator("reactive-streams source cut");
                ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(stream), allocator)) {
            reader.loadNextBatch();
            try (VectorSchemaRoot part = reader.getVectorSchemaRoot().slice(from, count)) {
                return ArrowBatches.ipcStream(part);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
