package io.github.rspy.spark.dataframe;

import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.channels.Channels;
import java.util.List;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageMetadataResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * A Dataset's rows as Arrow record batches, one partition at a time, each computed by its own
 * Spark job only when Python asks for it (as {@code toLocalIterator} does, but on demand).
 * Spark's own Arrow conversion ({@code toArrowBatchRdd}, which {@code toPandas} uses) makes the
 * batches; a partition crosses to Python as one byte array: each batch as an 8-byte big-endian
 * length, the batch's Arrow IPC message, and zero padding to a multiple of 8 bytes (so that
 * Arrow reads the buffers in place, aligned), ending with a zero length.
 */
public final class DatasetPartitions {
    private final JavaRDD<byte[]> batches;
    private final int partitions;
    private final byte[] schema;

    /**
     * @param maxRecordsPerBatch the most rows in one Arrow batch (Spark's
     *     {@code spark.sql.execution.arrow.maxRecordsPerBatch} by default)
     */
    public DatasetPartitions(Dataset<Row> dataset, int maxRecordsPerBatch) {
        if (!(dataset instanceof org.apache.spark.sql.classic.Dataset)) {
            throw new IllegalArgumentException("a classic (non-Connect) Dataset is needed, got "
                    + dataset.getClass().getName());
        }
        org.apache.spark.sql.classic.Dataset<Row> classic = (org.apache.spark.sql.classic.Dataset<Row>) dataset;
        SQLConf conf = classic.sparkSession().sessionState().conf();
        int perBatch = maxRecordsPerBatch > 0 ? maxRecordsPerBatch : conf.arrowMaxRecordsPerBatch();
        String timeZone = conf.sessionLocalTimeZone();
        this.batches = classic.toArrowBatchRdd(perBatch, timeZone, true, false).toJavaRDD();
        this.partitions = batches.getNumPartitions();
        this.schema = serialize(ArrowUtils.toArrowSchema(classic.schema(), timeZone, true, false,
                ArrowUtils.toArrowSchema$default$5()));
    }

    /** The batches' Arrow schema, as an IPC schema message. */
    public byte[] schema() {
        return schema.clone();
    }

    private static byte[] serialize(Schema arrowSchema) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            MessageSerializer.serialize(new WriteChannel(Channels.newChannel(bytes)), arrowSchema);
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int numPartitions() {
        return partitions;
    }

    /** Computes one partition (one Spark job) and returns its batches, framed. */
    public byte[] fetch(int partition) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        write(partition, bytes);
        return bytes.toByteArray();
    }

    /**
     * Computes one partition and writes its framed batches to a file, for the driver's Python
     * process to read: Spark itself hands Arrow data to Python through local files, which is far
     * faster than a Py4J byte array (sent as base64 text).
     *
     * @return the number of bytes written
     */
    public long fetchToFile(int partition, String path) {
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(Paths.get(path)), 1 << 20)) {
            return write(partition, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Computes one partition (one Spark job, run by the calling thread, so that its job tags
     * apply) and returns its batches, each one Arrow IPC record batch message as Spark made it.
     */
    public List<byte[]> batches(int partition) {
        if (partition < 0 || partition >= partitions) {
            throw new IndexOutOfBoundsException("partition " + partition + " of " + partitions);
        }
        return batches.collectPartitions(new int[] {partition})[0];
    }

    /** The number of rows of an Arrow IPC record batch message, read from its metadata alone. */
    public static long rowCount(byte[] batchMessage) {
        try {
            MessageMetadataResult message = MessageSerializer.readMessage(
                    new ReadChannel(Channels.newChannel(new ByteArrayInputStream(batchMessage))));
            if (message == null || message.getMessage().headerType() != MessageHeader.RecordBatch) {
                throw new IllegalArgumentException("not an Arrow IPC record batch message");
            }
            return ((RecordBatch) message.getMessage().header(new RecordBatch())).length();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private long write(int partition, OutputStream destination) {
        List<byte[]> result = batches(partition);
        try {
            DataOutputStream out = new DataOutputStream(destination);
            byte[] padding = new byte[8];
            for (byte[] batch : result) {
                out.writeLong(batch.length);
                out.write(batch);
                out.write(padding, 0, (8 - batch.length % 8) % 8);
            }
            out.writeLong(0);
            out.flush();
            return out.size();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
