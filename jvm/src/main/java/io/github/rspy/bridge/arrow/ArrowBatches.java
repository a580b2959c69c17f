package io.github.rspy.bridge.arrow;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;

/**
 * Arrow record batches as elements: a JVM {@code VectorSchemaRoot} on its way to Python (copied
 * when it is emitted, since its publisher may refill it), and {@code pyarrow.RecordBatch}es
 * arriving from Python as roots their subscriber owns. Tagged {@code 'B'}, then each batch's IPC
 * stream led by its length (int32, little-endian).
 *
 * <p>Loaded only when {@link ArrowSupport} found Arrow on the classpath.
 */
public final class ArrowBatches {
    public static final byte TAG = 'B';

    private ArrowBatches() {}

    /**
     * A JVM Arrow batch copied as an IPC stream when it is emitted: the publisher keeps its
     * root, and may refill or close it as soon as onNext returns.
     */
    static final class BatchBytes {
        final byte[] stream;

        BatchBytes(byte[] stream) {
            this.stream = stream;
        }
    }

    /**
     * {@code item} taken for Python if it is a VectorSchemaRoot: for the C Data Interface if
     * {@code cData}, else as an IPC stream; any other element as it is. A root its publisher
     * keeps (it may refill or close it once onNext returns) is copied. A root of the runtime's own
     * {@code allocator} is one the bridge made (a Python batch, on its way back to Python): the
     * bridge owns it, so it is sent as it is, or closed once its bytes are taken.
     */
    public static Object take(Object item, BufferAllocator allocator, boolean cData) {
        if (!(item instanceof VectorSchemaRoot)) {
            return item;
        }
        VectorSchemaRoot root = (VectorSchemaRoot) item;
        boolean ours = isOf(root, allocator);
        if (cData) {
            return ours ? root : ArrowCData.copy(root, allocator);
        }
        try {
            return new BatchBytes(ipcStream(root));
        } finally {
            if (ours) {
                root.close();
            }
        }
    }

    /** {@code root}'s batch as an Arrow IPC stream of its own (schema, batch, end), copied. */
    public static byte[] ipcStream(VectorSchemaRoot root) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
        try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
            writer.start();
            writer.writeBatch();
            writer.end();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** Whether {@code root}'s buffers are {@code allocator}'s: a root the bridge made. */
    private static boolean isOf(VectorSchemaRoot root, BufferAllocator allocator) {
        List<FieldVector> vectors = root.getFieldVectors();
        return !vectors.isEmpty() && vectors.get(0).getAllocator() == allocator;
    }

    /**
     * Arrow record batches from Python (after the tag: each an IPC stream of one batch, led by
     * its int32 length), each a new VectorSchemaRoot that its subscriber owns and must close.
     */
    public static List<Object> decodeBatches(BufferAllocator allocator, byte[] payload) {
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(payload, 1, payload.length - 1)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        OwnedElements roots = new OwnedElements(4);
        try {
            while (in.hasRemaining()) {
                int length = in.getInt();
                int at = in.position();
                in.position(at + length);
                java.io.ByteArrayInputStream stream = new java.io.ByteArrayInputStream(payload, at, length);
                try (ArrowStreamReader reader = new ArrowStreamReader(stream, allocator)) {
                    // Python writes one batch per stream: anything else is a stream cut or mixed up
                    if (!reader.loadNextBatch()) {
                        throw new IOException("an Arrow stream of " + length + " bytes held no batch");
                    }
                    roots.add(moveOut(reader.getVectorSchemaRoot(), allocator));
                    if (reader.loadNextBatch() || stream.available() > 0) {
                        throw new IOException("an Arrow stream of " + length + " bytes held more than one batch");
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            roots.closeUndelivered();
            throw new IllegalArgumentException("cannot read Arrow batches from Python: " + e, e);
        }
        return roots;
    }

    /** A root of its own holding {@code loaded}'s buffers (moved, not copied); {@code loaded} is left empty. */
    static VectorSchemaRoot moveOut(VectorSchemaRoot loaded, BufferAllocator allocator) {
        List<FieldVector> moved = new ArrayList<>(loaded.getFieldVectors().size());
        for (FieldVector vector : loaded.getFieldVectors()) {
            // With its field: a transfer by allocator alone drops the metadata (an extension type's name).
            org.apache.arrow.vector.util.TransferPair pair = vector.getTransferPair(vector.getField(), allocator);
            pair.transfer();
            moved.add((FieldVector) pair.getTo());
        }
        return new VectorSchemaRoot(loaded.getSchema().getFields(), moved, loaded.getRowCount());
    }

    /** Whether {@code item} is a batch {@link #take} took (IPC bytes, or a root of the runtime's). */
    public static boolean isTaken(Object item) {
        return item instanceof BatchBytes || item instanceof VectorSchemaRoot;
    }

    /** Most bytes of IPC streams in one crossing (at least one batch). */
    static final int RUN_BYTES = 4 << 20;

    /**
     * The number of leading elements of {@code batch[from, n)} that are (or are not) batches, up
     * to column rows ({@link ColumnRows}, which cross alone); a run of IPC streams ends before it
     * would pass {@link #RUN_BYTES}.
     */
    public static int runOfBatches(Object[] batch, int from, int n, boolean batches) {
        int end = from;
        long bytes = 0;
        while (end < n && isTaken(batch[end]) == batches && !(batch[end] instanceof ColumnRows)) {
            if (batch[end] instanceof BatchBytes) {
                bytes += ((BatchBytes) batch[end]).stream.length;
                if (bytes > RUN_BYTES && end > from) {
                    break;
                }
            }
            end++;
        }
        return end - from;
    }

    /** Closes the roots {@link #take} made among {@code batch[from, n)}: they will not be sent. */
    public static void closeTaken(Object[] batch, int from, int n) {
        for (int i = from; i < n; i++) {
            closeTaken(batch[i]);
            batch[i] = null;
        }
    }

    public static void closeTaken(Object item) {
        if (item instanceof VectorSchemaRoot) {
            ((VectorSchemaRoot) item).close();
        }
    }

    /** Tag 'B', then each batch's IPC stream led by its length (int32, little-endian). */
    public static byte[] encodeBatches(Object[] batch, int from, int count) {
        int size = 1;
        for (int i = from; i < from + count; i++) {
            size += 4 + ((BatchBytes) batch[i]).stream.length;
        }
        java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(size).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        out.put(TAG);
        for (int i = from; i < from + count; i++) {
            byte[] stream = ((BatchBytes) batch[i]).stream;
            out.putInt(stream.length).put(stream);
        }
        return out.array();
    }
}
