package io.github.rspy.bridge.arrow;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.c.ArrowArray;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Arrow record batches through the Arrow C Data Interface, for the in-process backend (JPype):
 * pyarrow and Arrow Java share the buffers, with no copy and no bytes between them. Loaded only
 * when {@link #probe} succeeded (arrow-c-data and its JNI library are there).
 *
 * <p>To Python: a root its publisher emitted is copied into one of the runtime's own when it is
 * emitted (the publisher may refill it once onNext returns), then exported: pyarrow imports it,
 * and gives the buffers back through the release callback when its batch is collected. From
 * Python: pyarrow exports a batch into C structs Python allocated, and each is imported into a
 * root that its Java subscriber owns, whose buffers stay pyarrow's until the root is closed.
 * A struct that was not imported is released here, so pyarrow gets its memory back either way.
 */
public final class ArrowCData {
    private ArrowCData() {}

    /** Whether the C Data Interface works in this JVM: a one-column batch exported and released. */
    public static boolean probe(BufferAllocator allocator) {
        try (BigIntVector vector = new BigIntVector("probe", allocator);
                ArrowArray array = ArrowArray.allocateNew(allocator);
                ArrowSchema schema = ArrowSchema.allocateNew(allocator)) {
            vector.allocateNew(1);
            vector.setValueCount(1);
            try (VectorSchemaRoot root = VectorSchemaRoot.of(vector)) {
                Data.exportVectorSchemaRoot(allocator, root, null, array, schema);
            }
            array.release();
            schema.release();
            return true;
        }
    }

    /** A copy of {@code root}'s rows in buffers of {@code allocator}'s (a memory copy per buffer). */
    static VectorSchemaRoot copy(VectorSchemaRoot root, BufferAllocator allocator) {
        VectorSchemaRoot own = VectorSchemaRoot.create(root.getSchema(), allocator);
        try (ArrowRecordBatch source = new VectorUnloader(root).getRecordBatch()) {
            List<ArrowBuf> copies = new ArrayList<>(source.getBuffers().size());
            try {
                for (ArrowBuf buffer : source.getBuffers()) {
                    long size = buffer.readableBytes();
                    ArrowBuf copy = allocator.buffer(Math.max(size, 1));
                    copy.setBytes(0, buffer, 0, size);
                    copy.writerIndex(size);
                    copies.add(copy);
                }
                try (ArrowRecordBatch copied = new ArrowRecordBatch(
                        source.getLength(), source.getNodes(), copies, source.getBodyCompression(), true, true)) {
                    new VectorLoader(own).load(copied);
                }
            } finally {
                for (ArrowBuf copy : copies) {
                    copy.close(); // the loaded vectors hold their own references now
                }
            }
            return own;
        } catch (RuntimeException e) {
            own.close();
            throw e;
        }
    }

    /**
     * Exports {@code batch[from, from + count)} (roots the runtime owns, closed here once
     * exported: their buffers live on in the export) into new C structs: the array's and the
     * schema's address of each, in turn. Python imports them; {@link #freeStructs} frees them.
     */
    public static long[] export(BufferAllocator allocator, Object[] batch, int from, int count, List<AutoCloseable> structs) {
        long[] addresses = new long[2 * count];
        for (int i = 0; i < count; i++) {
            try (VectorSchemaRoot root = (VectorSchemaRoot) batch[from + i]) {
                batch[from + i] = null;
                ArrowArray array = ArrowArray.allocateNew(allocator);
                structs.add(array);
                ArrowSchema schema = ArrowSchema.allocateNew(allocator);
                structs.add(schema);
                Data.exportVectorSchemaRoot(allocator, root, null, array, schema);
                addresses[2 * i] = array.memoryAddress();
                addresses[2 * i + 1] = schema.memoryAddress();
            }
        }
        return addresses;
    }

    /**
     * Frees structs that Python has imported (moved out, so released there) or not: one that is
     * still live is released first, so its buffers come back.
     */
    public static void freeStructs(List<AutoCloseable> structs) {
        for (AutoCloseable struct : structs) {
            if (struct instanceof ArrowArray) {
                ArrowArray array = (ArrowArray) struct;
                if (array.snapshot().release != 0) {
                    array.release();
                }
                array.close();
            } else {
                ArrowSchema schema = (ArrowSchema) struct;
                if (schema.snapshot().release != 0) {
                    schema.release();
                }
                schema.close();
            }
        }
    }

    /**
     * Imports the batches Python exported into structs at {@code addresses} (array, schema, in
     * turn; Python's memory, which it frees after this call): each a root its subscriber owns.
     * Structs left unimported by a failure are released, so pyarrow gets its buffers back.
     */
    public static List<Object> importBatches(BufferAllocator allocator, long[] addresses) {
        OwnedElements roots = new OwnedElements(addresses.length / 2);
        int next = 0;
        try {
            for (; next + 1 < addresses.length; next += 2) {
                ArrowArray array = ArrowArray.wrap(addresses[next]);
                ArrowSchema schema = ArrowSchema.wrap(addresses[next + 1]);
                roots.add(Data.importVectorSchemaRoot(allocator, array, schema, null));
            }
            return roots;
        } catch (RuntimeException e) {
            roots.closeUndelivered();
            for (int i = next; i + 1 < addresses.length; i += 2) {
                releaseIfLive(ArrowArray.wrap(addresses[i]));
                releaseIfLive(ArrowSchema.wrap(addresses[i + 1]));
            }
            throw new IllegalArgumentException("cannot import Arrow batches from Python: " + e, e);
        }
    }

    private static void releaseIfLive(ArrowArray array) {
        if (array.snapshot().release != 0) {
            array.release();
        }
    }

    private static void releaseIfLive(ArrowSchema schema) {
        if (schema.snapshot().release != 0) {
            schema.release();
        }
    }
}
