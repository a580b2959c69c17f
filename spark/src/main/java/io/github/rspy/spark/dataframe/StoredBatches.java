package io.github.rspy.spark.dataframe;

import java.io.Serializable;
import org.apache.spark.Partition;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkException;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.storage.RDDBlockId;
import scala.collection.Iterator;
import scala.reflect.ClassTag;

/**
 * The Arrow batches (IPC messages) of one {@code dataframe_from_publisher} call, as an RDD whose
 * partitions are blocks that {@link ArrowChunks} put in the driver's block manager, as a cached
 * RDD's are: persisted at {@code MEMORY_AND_DISK}, so that Spark reads each partition from its
 * block (on the driver, or fetched from it by an executor) and never computes it, and removes
 * the blocks once the RDD is unreachable (Spark's {@code ContextCleaner}), or at {@code
 * unpersist}. A partition whose block is gone cannot be made again: computing it fails, naming it.
 */
final class StoredBatches extends RDD<byte[]> {
    private static final long serialVersionUID = 1L;
    private static final ClassTag<byte[]> BYTES = ClassTag.apply(byte[].class);

    private volatile int count; // partitions: set once every block is stored

    @SuppressWarnings("unchecked")
    StoredBatches(SparkContext context) {
        super(context, (scala.collection.immutable.Seq) scala.collection.immutable.Nil$.MODULE$, BYTES);
    }

    /** Every block is stored: the RDD has {@code partitions} of them. */
    void seal(int partitions) {
        count = partitions;
    }

    @Override
    public Iterator<byte[]> compute(Partition split, TaskContext context) {
        throw new IllegalStateException(new SparkException("the rows of dataframe_from_publisher in block "
                + new RDDBlockId(id(), split.index()) + " are gone (removed, or lost with the driver's disk): "
                + "they cannot be read again from their publisher"));
    }

    @Override
    public Partition[] getPartitions() {
        Partition[] partitions = new Partition[count];
        for (int i = 0; i < partitions.length; i++) {
            partitions[i] = new Block(i);
        }
        return partitions;
    }

    /** A partition: the index of its block. */
    private record Block(int index) implements Partition, Serializable {}
}
