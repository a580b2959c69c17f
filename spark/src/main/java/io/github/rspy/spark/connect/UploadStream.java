package io.github.rspy.spark.connect;

import io.github.rspy.spark.dataframe.ArrowChunks;
import io.github.rspy.spark.dataframe.DatasetPartitions;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A DataFrame a Connect client uploads chunk by chunk ({@code upload_append}, one Arrow IPC
 * record batch each) and then names ({@code upload_finish}): the rows are held in Spark's block
 * manager ({@link ArrowChunks}: memory, then disk), never inside tasks, until the DataFrame is
 * unreachable; an upload cancelled before its finish removes them.
 */
final class UploadStream extends ConnectStream {
    private final ArrowChunks chunks = new ArrowChunks();
    private final ConnectStreams streams;

    UploadStream(String id, Scope scope, ConnectStreams streams) {
        super(id, scope, "upload", null);
        this.streams = streams;
    }

    void append(byte[] batch) {
        chunks.add(batch);
        counters.sent(DatasetPartitions.rowCount(batch));
    }

    /** The uploaded rows as a DataFrame of {@code schemaJson} (Spark's JSON); ends the stream. */
    Dataset<Row> finish(String schemaJson, SparkSession session) {
        Dataset<Row> rows = toDataFrame(chunks, schemaJson, session);
        counters.end("complete", null);
        streams.remove(this);
        return rows;
    }

    /** {@code chunks} as a DataFrame; none make an empty DataFrame of the schema. */
    static Dataset<Row> toDataFrame(ArrowChunks chunks, String schemaJson, SparkSession session) {
        return chunks.toDataFrame(schemaJson, session);
    }

    @Override
    void cancel(String reason, boolean quietly) {
        counters.end(quietly ? "complete" : "cancelled", reason);
        streams.remove(this);
        chunks.discard(); // the blocks stored so far
    }
}
