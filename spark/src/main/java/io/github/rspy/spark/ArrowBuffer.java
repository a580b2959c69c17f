package io.github.rspy.spark;

import io.github.rspy.bridge.arrow.ArrowBatches;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * The Arrow batches a {@link PublisherSource} holds, each an IPC stream of its own on the heap
 * (what crosses to the executors, and nothing to close), numbered by row: a batch of {@code n}
 * rows takes offsets [first, first + n). A micro-batch ends at a batch's end ({@link #cut}), so
 * batches cross whole; a slice that starts or ends inside one (a restart at an offset of another
 * run) cuts it.
 */
final class ArrowBuffer implements SourceBuffer {
    private final ArrayDeque<Batch> batches = new ArrayDeque<>();
    private long base;
    private long end;

    private record Batch(long first, int rows, byte[] stream) {
        long last() {
            return first + rows;
        }
    }

    ArrowBuffer(long base) {
        this.base = base;
        this.end = base;
    }

    @Override
    public long base() {
        return base;
    }

    @Override
    public long end() {
        return end;
    }

    /** Appends a batch of {@code rows} rows (at least one), as an IPC stream. */
    void append(byte[] stream, int rows) {
        batches.addLast(new Batch(end, rows, stream));
        end += rows;
    }

    @Override
    public long release(long upTo) {
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

    /** Rows [from, from + count) of a one-batch IPC stream, as a stream of their own. */
    private static byte[] cutStream(byte[] stream, int from, int count) {
        try (BufferAllocator allocator = ArrowUtils.rootAllocator().newChildAllocator("reactive-streams source cut",
                0, Long.MAX_VALUE);
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
