package io.github.rspy.spark.source;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;

/**
 * The rows a {@link PublisherSource} holds: elements [{@link #base()}, {@link #end()}) already
 * converted to {@code UnsafeRow} bytes, in segments, so that a micro-batch's partitions are
 * copies of byte ranges. Not thread-safe: its source guards it.
 */
final class RowBuffer implements SourceBuffer {
    /** A segment closes at this many bytes (or rows), so releasing frees memory in steps. */
    static final int SEGMENT_BYTES = 256 * 1024;
    static final int SEGMENT_ROWS = 8192;

    private final ArrayDeque<Segment> segments = new ArrayDeque<>();
    private long base;
    private long end;

    RowBuffer(long base) {
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

    @Override
    public long size() {
        return end - base;
    }

    /** Appends the row just written by {@code writer}, as element {@link #end()}. */
    void append(UnsafeRowWriter writer) {
        Segment tail = segments.peekLast();
        int length = writer.totalSize();
        if (tail == null || !tail.fits(length)) {
            tail = new Segment(end, Math.max(length, 4096));
            segments.addLast(tail);
        }
        tail.add(writer.getBuffer(), length);
        end++;
    }

    /** Drops the rows before {@code upTo} (their batch is over); how many were dropped. */
    @Override
    public long release(long upTo) {
        long drop = Math.min(upTo, end) - base;
        if (drop <= 0) {
            return 0;
        }
        base += drop;
        while (!segments.isEmpty() && segments.peekFirst().first + segments.peekFirst().count <= base) {
            segments.removeFirst();
        }
        return drop;
    }

    /** Drops everything and numbers the next element {@code next}. */
    @Override
    public void restartAt(long next) {
        segments.clear();
        base = next;
        end = next;
    }

    /**
     * Rows [from, to) (within the buffer) as partitions of about {@code targetBytes} each, in
     * order; the bytes are copied, so the partitions outlive a later release.
     */
    List<RowsPartition> slice(long from, long to, int targetBytes) {
        List<RowsPartition> partitions = new ArrayList<>();
        RowsPartition.Builder current = null;
        long at = Math.max(from, base);
        Iterator<Segment> it = segments.iterator();
        while (at < to && it.hasNext()) {
            Segment segment = it.next();
            if (segment.first + segment.count <= at) {
                continue;
            }
            int row = (int) (at - segment.first);
            int last = (int) Math.min(segment.count, to - segment.first);
            while (row < last) {
                if (current == null) {
                    current = new RowsPartition.Builder(targetBytes);
                }
                int taken = current.take(segment.data, segment.ends, row, last);
                row += taken;
                at += taken;
                if (current.full()) {
                    partitions.add(current.build());
                    current = null;
                }
            }
        }
        if (current != null) {
            partitions.add(current.build());
        }
        return partitions;
    }

    /** Rows [first, first + count): their bytes back to back, {@code ends[i]} after row i. */
    private static final class Segment {
        final long first;
        byte[] data;
        int[] ends = new int[64];
        int count;
        int used;

        Segment(long first, int capacity) {
            this.first = first;
            this.data = new byte[capacity];
        }

        boolean fits(int length) {
            return count < SEGMENT_ROWS && (used + length <= SEGMENT_BYTES || used == 0);
        }

        void add(byte[] source, int length) {
            if (used + length > data.length) {
                data = Arrays.copyOf(data, Math.max(used + length, Math.min(2 * data.length, SEGMENT_BYTES)));
            }
            if (count == ends.length) {
                ends = Arrays.copyOf(ends, 2 * ends.length);
            }
            System.arraycopy(source, 0, data, used, length);
            used += length;
            ends[count++] = used;
        }
    }
}
