package io.github.rspy.spark.partitioned;

import org.reactivestreams.Publisher;

/**
 * The publishers of a partitioned source, for Java and Scala teams: Python reads them with
 * {@code spark.readStream.format("reactive-streams").option("factory", "<this class>")}, and
 * they run in the executors' JVMs, with no Python in the data path.
 *
 * <p>The class needs a public no-argument constructor; it is made by name in the driver (for
 * {@link #partitions()} and {@link #latest(int)}) and in each executor (for {@link
 * #publisher(int, long)}). A class that does not implement this interface is refused by name
 * before it is loaded or constructed.
 *
 * <p>Offsets count elements. Elements are an {@code Object[]}, a {@code List} or a {@code Row}
 * (by position), a {@code Map} (by column name), or, for a one-column schema, the value itself.
 */
public interface PartitionedPublishers {
    /** {@link #latest(int)} of a partition that never ends. */
    long UNBOUNDED = Long.MAX_VALUE;

    /** How many partitions there are, numbered from 0; asked in the driver. */
    int partitions();

    /**
     * Partition {@code partition}'s elements from offset {@code offset} on: the same elements
     * from the same offset every time (a task is retried, a query restarts from its checkpoint).
     * Asked in an executor; the publisher is requested exactly the micro-batch's elements, then
     * cancelled.
     */
    Publisher<?> publisher(int partition, long offset);

    /**
     * Where {@code partition} ends now (its next offset), or {@link #UNBOUNDED}; asked in the
     * driver before each micro-batch. A bounded value makes {@code Trigger.AvailableNow} possible.
     */
    default long latest(int partition) {
        return UNBOUNDED;
    }
}
