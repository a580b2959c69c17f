package io.github.rspy.bridge.testing;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import reactor.core.publisher.Flux;

/** JVM publishers of Arrow batches, for the Python tests and benchmarks. */
public final class ArrowSources {
    private ArrowSources() {}

    private static final Suspects SUSPECTS = new Suspects();
    private static final BufferAllocator ROOT = new RootAllocator(SUSPECTS, Long.MAX_VALUE);

    /**
     * For {@link #held()}: where the rare leak of a few bytes came from. It keeps the stacks of
     * the last allocations of exactly 4 bytes (an empty string column's offsets, which exporting
     * it allocates) and of each child allocator closed while it still held memory (Arrow then
     * leaves those bytes with the root, and no child names them).
     */
    private static final class Suspects implements org.apache.arrow.memory.AllocationListener {
        private final java.util.Deque<String> seen = new java.util.ArrayDeque<>();

        @Override
        public void onAllocation(long size) {
            if (size == 4) { // not the validity of the tests' small batches (1 or 2 bytes): too many
                note(size + " bytes allocated");
            }
        }

        @Override
        public void onChildRemoved(BufferAllocator parent, BufferAllocator child) {
            if (child.getAllocatedMemory() != 0) {
                note("child " + child.getName() + " closed holding " + child.getAllocatedMemory() + " bytes");
            }
        }

        private synchronized void note(String what) {
            StringBuilder entry = new StringBuilder(what).append(" on ").append(Thread.currentThread().getName());
            StackTraceElement[] stack = new Throwable().getStackTrace();
            for (int i = 2; i < Math.min(stack.length, 40); i++) {
                entry.append("\n      at ").append(stack[i]);
            }
            seen.addLast(entry.toString());
            while (seen.size() > 8) {
                seen.removeFirst();
            }
        }

        synchronized String describe() {
            return seen.isEmpty() ? "" : "\nthe last small allocations and leaking closes:\n  " + String.join("\n  ", seen);
        }
    }

    /**
     * {@code count} batches of {@code rows} rows (id long, value double, name string), all in one
     * VectorSchemaRoot refilled for each batch, as Arrow's readers do: a subscriber must copy
     * each batch before it asks for the next. The root is closed when the stream ends.
     */
    public static Flux<VectorSchemaRoot> reusedRoot(int count, int rows) {
        return Flux.defer(() -> {
            BufferAllocator allocator = ROOT.newChildAllocator("reusedRoot", 0, Long.MAX_VALUE);
            BigIntVector id = new BigIntVector("id", allocator);
            Float8Vector value = new Float8Vector("value", allocator);
            VarCharVector name = new VarCharVector("name", allocator);
            VectorSchemaRoot root = new VectorSchemaRoot(List.of(id, value, name));
            Closing closing = new Closing(root, allocator);
            return closing.flux(count, b -> {
                root.allocateNew();
                for (int r = 0; r < rows; r++) {
                    long i = b * rows + r;
                    id.setSafe(r, i);
                    value.setSafe(r, i / 2.0);
                    name.setSafe(r, ("name " + i).getBytes(StandardCharsets.UTF_8));
                }
                root.setRowCount(rows);
            });
        });
    }

    /**
     * A refilled root and its allocator, closed once, never while a refill or the emission of the
     * refilled root runs: a cancel may come from another thread meanwhile (Reactor runs the
     * requests a subscriber makes inside {@code onSubscribe} on the subscribing thread once it
     * returns, while the subscriber's own thread may cancel), and the subscriber reads the root in
     * its {@code onNext} (exporting an empty string column allocates its offsets then). A close
     * asked for during an emission is made when the emission returns; a refill after the close
     * emits nothing.
     */
    private static final class Closing {
        private final VectorSchemaRoot root;
        private final BufferAllocator allocator;
        private boolean closed;
        private boolean emitting;
        private boolean closeAsked;

        Closing(VectorSchemaRoot root, BufferAllocator allocator) {
            this.root = root;
            this.allocator = allocator;
        }

        /**
         * {@code count} emissions of the root, {@code fill} refilling it for each (given the
         * batch's index), closed when the stream ends. {@code generate} hands each to the
         * subscriber inside {@code next} (not after the handler returns, as {@code handle} does),
         * so an emission lasts until the subscriber's {@code onNext} has read the root; and
         * {@code hide} keeps any downstream from fusing, which would defer it again.
         */
        Flux<VectorSchemaRoot> flux(long count, java.util.function.LongConsumer fill) {
            return Flux.<VectorSchemaRoot, Long>generate(() -> 0L, (b, sink) -> {
                if (b >= count || !emit(sink, () -> fill.accept(b)) || b + 1 == count) {
                    sink.complete(); // the last emitted (as range does, without more demand), or closed
                }
                return b + 1;
            }).hide().doFinally(signal -> close());
        }

        /** Refills and emits the root; false, and nothing emitted, once it is closed. */
        private boolean emit(reactor.core.publisher.SynchronousSink<VectorSchemaRoot> sink, Runnable fill) {
            synchronized (this) {
                if (closed || closeAsked) {
                    return false;
                }
                fill.run();
                emitting = true;
            }
            try {
                sink.next(root);
            } finally {
                boolean close;
                synchronized (this) {
                    emitting = false;
                    close = closeAsked && !closed;
                    closed |= close;
                }
                if (close) {
                    closeNow();
                }
            }
            return true;
        }

        void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                if (emitting) {
                    closeAsked = true; // the emission closes it as it returns
                    return;
                }
                closed = true;
            }
            closeNow();
        }

        private void closeNow() {
            root.close();
            allocator.close();
        }
    }

    /**
     * The same batch of {@code rows} rows (id long, value double, a 12-character name), filled
     * once and emitted {@code count} times: a source that costs nothing per batch, for the
     * throughput benchmark. Closed when the stream ends.
     */
    public static Flux<VectorSchemaRoot> sameRoot(int count, int rows) {
        return Flux.defer(() -> {
            BufferAllocator allocator = ROOT.newChildAllocator("sameRoot", 0, Long.MAX_VALUE);
            Closing closing = new Closing(filled(allocator, rows), allocator);
            return closing.flux(count, b -> {});
        });
    }

    /** A root of {@code rows} benchmark rows (id, value, a 12-character name) in {@code allocator}. */
    public static VectorSchemaRoot filled(BufferAllocator allocator, int rows) {
        BigIntVector id = new BigIntVector("id", allocator);
        Float8Vector value = new Float8Vector("value", allocator);
        VarCharVector name = new VarCharVector("name", allocator);
        VectorSchemaRoot root = new VectorSchemaRoot(List.of(id, value, name));
        root.allocateNew();
        for (int r = 0; r < rows; r++) {
            id.setSafe(r, r);
            value.setSafe(r, r / 2.0);
            name.setSafe(r, Long.toString(100_000_000_000L + r).getBytes(StandardCharsets.UTF_8));
        }
        root.setRowCount(rows);
        return root;
    }

    /**
     * As {@link #reusedRoot}, of up to Long.MAX_VALUE batches (the TCK's endless publisher) of
     * {@code rows} rows each, re-subscribable.
     */
    public static Flux<VectorSchemaRoot> batchRange(long count, int rows) {
        return Flux.defer(() -> {
            BufferAllocator allocator = ROOT.newChildAllocator("batchRange", 0, Long.MAX_VALUE);
            VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator);
            Closing closing = new Closing(root, allocator);
            return closing.flux(count, b -> fill(root, b * rows, rows));
        });
    }

    /**
     * Subscribes to {@code publisher} of VectorSchemaRoots with unbounded demand, closes each
     * root as its owner must, and returns the rows they held, once it completes (or throws).
     */
    public static long countRowsAndClose(org.reactivestreams.Publisher<?> publisher) throws InterruptedException {
        java.util.concurrent.atomic.AtomicLong rows = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.CompletableFuture<Long> done = new java.util.concurrent.CompletableFuture<>();
        publisher.subscribe(new org.reactivestreams.Subscriber<Object>() {
            @Override
            public void onSubscribe(org.reactivestreams.Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(Object item) {
                try (VectorSchemaRoot root = (VectorSchemaRoot) item) {
                    rows.addAndGet(root.getRowCount());
                }
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onComplete() {
                done.complete(rows.get());
            }
        });
        try {
            return done.get();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /**
     * A new VectorSchemaRoot of {@code rows} rows (id long, name string: {@code first}, ...,
     * {@code "row " + id}) from the sources' allocator: its caller owns it and must close it.
     */
    public static VectorSchemaRoot batch(long first, int rows) {
        return fill(VectorSchemaRoot.create(SCHEMA, ROOT), first, rows);
    }

    private static final Schema SCHEMA = new Schema(List.of(
            Field.nullable("id", new ArrowType.Int(64, true)), Field.nullable("name", ArrowType.Utf8.INSTANCE)));

    private static VectorSchemaRoot fill(VectorSchemaRoot root, long first, int rows) {
        root.allocateNew();
        BigIntVector id = (BigIntVector) root.getVector(0);
        VarCharVector name = (VarCharVector) root.getVector(1);
        for (int r = 0; r < rows; r++) {
            id.setSafe(r, first + r);
            name.setSafe(r, ("row " + (first + r)).getBytes(StandardCharsets.UTF_8));
        }
        root.setRowCount(rows);
        return root;
    }

    /**
     * The rows of each VectorSchemaRoot (what a Java subscriber of Python RecordBatches gets),
     * summed, and the roots closed as their owner must; the first column of each as longs.
     */
    public static List<Long> firstColumnsAndClose(List<?> roots) {
        List<Long> values = new java.util.ArrayList<>();
        for (Object o : roots) {
            try (VectorSchemaRoot root = (VectorSchemaRoot) o) {
                BigIntVector first = (BigIntVector) root.getVector(0);
                for (int r = 0; r < root.getRowCount(); r++) {
                    values.add(first.get(r));
                }
            }
        }
        return values;
    }

    /**
     * Writes a batch as an Arrow IPC stream and reads it back, closing both: Arrow's first use in
     * a JVM loads its classes, most of a second, which a test may do before it starts timing.
     */
    public static void warmUp() throws java.io.IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try (VectorSchemaRoot root = batch(0, 16);
                org.apache.arrow.vector.ipc.ArrowStreamWriter writer =
                        new org.apache.arrow.vector.ipc.ArrowStreamWriter(root, null, out)) {
            writer.start();
            writer.writeBatch();
            writer.end();
        }
        try (org.apache.arrow.vector.ipc.ArrowStreamReader reader = new org.apache.arrow.vector.ipc.ArrowStreamReader(
                new java.io.ByteArrayInputStream(out.toByteArray()), ROOT)) {
            while (reader.loadNextBatch()) {
                reader.getVectorSchemaRoot().getRowCount();
            }
        }
    }

    /** Bytes the sources' allocators hold: 0 once their streams have ended. */
    public static long allocatedBytes() {
        return ROOT.getAllocatedMemory();
    }

    /**
     * What holds them: the sources' allocator and its children (one per stream, named after its
     * source: {@code reusedRoot}, {@code sameRoot}, {@code batchRange}), with their bytes.
     */
    public static String held() {
        return ROOT.toVerboseString() + SUSPECTS.describe();
    }
}
