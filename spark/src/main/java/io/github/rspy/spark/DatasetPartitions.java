package io.github.rspy.spark;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * A Dataset's rows as Arrow record batches, one partition at a time, each computed by its own
 * Spark job only when Python asks for it (as {@code toLocalIterator} does, but on demand).
 * Spark's own Arrow conversion ({@code toArrowBatchRdd}, which {@code toPandas} uses) makes the
 * batches; a partition crosses to Python as one byte array: each batch as a 4-byte big-endian
 * length and the batch's Arrow IPC message, ending with a zero length.
 */
public final class DatasetPartitions {
    private final JavaRDD<byte[]> batches;
    private final int partitions;

    public DatasetPartitions(Dataset<Row> dataset) {
        if (!(dataset instanceof org.apache.spark.sql.classic.Dataset)) {
            throw new IllegalArgumentException("a classic (non-Connect) Dataset is needed, got "
                    + dataset.getClass().getName());
        }
        this.batches = ((org.apache.spark.sql.classic.Dataset<Row>) dataset).toArrowBatchRdd().toJavaRDD();
        this.partitions = batches.getNumPartitions();
    }

    public int numPartitions() {
        return partitions;
    }

    /** Computes one partition (one Spark job) and returns its batches, framed. */
    public byte[] fetch(int partition) {
        if (partition < 0 || partition >= partitions) {
            throw new IndexOutOfBoundsException("partition " + partition + " of " + partitions);
        }
        List<byte[]>[] result = batches.collectPartitions(new int[] {partition});
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            for (byte[] batch : result[0]) {
                out.writeInt(batch.length);
                out.write(batch);
            }
            out.writeInt(0);
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
