package io.github.rspy.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.arrow.ArrowConverters;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Collects Arrow record batches (IPC messages) sent from Python, chunk by chunk, in the driver
 * JVM, and turns them into a DataFrame with Spark's own Arrow conversion. Python never holds
 * more than one chunk; the DataFrame's data lives here, as Spark's local relations do.
 */
public final class ArrowChunks {
    private final List<byte[]> batches = new ArrayList<>();
    private long bytes;

    public synchronized void add(byte[] batch) {
        if (batch == null || batch.length == 0) {
            throw new IllegalArgumentException("an empty Arrow batch");
        }
        batches.add(batch);
        bytes += batch.length;
    }

    public synchronized int size() {
        return batches.size();
    }

    public synchronized long bytes() {
        return bytes;
    }

    /** A DataFrame of the batches, for a schema given as Spark's JSON. */
    public synchronized Dataset<Row> toDataFrame(String schemaJson, SparkSession session) {
        if (!(session instanceof org.apache.spark.sql.classic.SparkSession)) {
            throw new IllegalArgumentException("a classic (non-Connect) SparkSession is needed");
        }
        return ArrowConverters.toDataFrame(CollectionConverters.asScala(batches.iterator()), schemaJson,
                (org.apache.spark.sql.classic.SparkSession) session);
    }
}
