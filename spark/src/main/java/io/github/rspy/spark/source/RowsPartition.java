package io.github.rspy.spark.source;

import java.util.Arrays;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.unsafe.Platform;

/**
 * A slice of a micro-batch: {@code UnsafeRow} bytes made on the driver, read in place on an
 * executor. It travels inside the task as two arrays, which serialize as fast as memory copies.
 */
final class RowsPartition implements InputPartition {
    private static final long serialVersionUID = 1L;

    private final byte[] data;
    private final int[] ends; // ends[i]: where row i ends in data

    private RowsPartition(byte[] data, int[] ends) {
        this.data = data;
        this.ends = ends;
    }

    int rows() {
        return ends.length;
    }

    int bytes() {
        return data.length;
    }

    /** Collects whole rows from segments until about {@code targetBytes}. */
    static final class Builder {
        private final int targetBytes;
        private byte[] data;
        private int[] ends = new int[256];
        private int count;
        private int used;

        Builder(int targetBytes) {
            this.targetBytes = targetBytes;
            this.data = new byte[Math.min(targetBytes, 64 * 1024)];
        }

        /** Takes rows [from, to) of a segment, as many as fit (at least one); how many. */
        int take(byte[] segment, int[] segmentEnds, int from, int to) {
            int start = from == 0 ? 0 : segmentEnds[from - 1];
            int last = from;
            while (last < to && (last == from || segmentEnds[last] - start + used <= targetBytes)) {
                last++;
            }
            int length = segmentEnds[last - 1] - start;
            if (used + length > data.length) {
                data = Arrays.copyOf(data, Math.max(used + length, 2 * data.length));
            }
            if (count + (last - from) > ends.length) {
                ends = Arrays.copyOf(ends, Math.max(count + (last - from), 2 * ends.length));
            }
            System.arraycopy(segment, start, data, used, length);
            for (int i = from; i < last; i++) {
                ends[count++] = used + segmentEnds[i] - start;
            }
            used += length;
            return last - from;
        }

        boolean full() {
            return used >= targetBytes;
        }

        RowsPartition build() {
            return new RowsPartition(Arrays.copyOf(data, used), Arrays.copyOf(ends, count));
        }
    }

    /** Reads a partition's rows in place; one {@code UnsafeRow} re-pointed at each. */
    static final class ReaderFactory implements PartitionReaderFactory {
        private static final long serialVersionUID = 1L;

        private final int width;

        ReaderFactory(int width) {
            this.width = width;
        }

        /** A micro-batch of Arrow batches is read as columns (they all are, or none). */
        @Override
        public boolean supportColumnarReads(InputPartition partition) {
            return partition instanceof ArrowPartition;
        }

        @Override
        public PartitionReader<org.apache.spark.sql.vectorized.ColumnarBatch> createColumnarReader(
                InputPartition partition) {
            return ((ArrowPartition) partition).reader();
        }

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            RowsPartition rows = (RowsPartition) partition;
            UnsafeRow row = new UnsafeRow(width);
            return new PartitionReader<>() {
                private int next;

                @Override
                public boolean next() {
                    if (next == rows.ends.length) {
                        return false;
                    }
                    int start = next == 0 ? 0 : rows.ends[next - 1];
                    row.pointTo(rows.data, Platform.BYTE_ARRAY_OFFSET + start, rows.ends[next] - start);
                    next++;
                    return true;
                }

                @Override
                public InternalRow get() {
                    return row;
                }

                @Override
                public void close() {}
            };
        }
    }
}
