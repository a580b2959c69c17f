package io.github.rspy.spark.source;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A slice of a micro-batch of Arrow batches: their IPC streams reach the executor through the
 * block manager (a broadcast variable, which the source destroys once the micro-batch is
 * committed, and leaves to Spark's {@code ContextCleaner} when the query stops), not inside the task, and Spark reads them as {@code
 * ColumnarBatch}es of {@code ArrowColumnVector}s: no row is made on the way.
 */
final class ArrowPartition implements InputPartition {
    private static final long serialVersionUID = 1L;

    private final Broadcast<byte[][]> streams;

    ArrowPartition(Broadcast<byte[][]> streams) {
        this.streams = streams;
    }

    /** Reads the batches one by one, each loaded when Spark asks for it, released at the next. */
    PartitionReader<ColumnarBatch> reader() {
        byte[][] batches = streams.value();
        BufferAllocator allocator = ArrowBuffer.allocator("reactive-streams source partition");
        return new PartitionReader<>() {
            private int next;
            private ArrowStreamReader reader;
            private ColumnarBatch batch;

            @Override
            public boolean next() throws IOException {
                closeReader();
                if (next == batches.length) {
                    return false;
                }
                reader = new ArrowStreamReader(new ByteArrayInputStream(batches[next++]), allocator);
                if (!reader.loadNextBatch()) {
                    throw new IOException("an Arrow batch of the reactive-streams source was empty");
                }
                VectorSchemaRoot root = reader.getVectorSchemaRoot();
                List<FieldVector> vectors = root.getFieldVectors();
                ColumnVector[] columns = new ColumnVector[vectors.size()];
                for (int i = 0; i < columns.length; i++) {
                    columns[i] = new ArrowColumnVector(vectors.get(i));
                }
                batch = new ColumnarBatch(columns, root.getRowCount());
                return true;
            }

            @Override
            public ColumnarBatch get() {
                return batch;
            }

            @Override
            public void close() {
                closeReader();
                allocator.close();
            }

            private void closeReader() {
                batch = null;
                if (reader != null) {
                    try {
                        reader.close(); // its root's buffers
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    reader = null;
                }
            }
        };
    }
}
