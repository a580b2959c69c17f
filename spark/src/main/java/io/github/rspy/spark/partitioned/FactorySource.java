package io.github.rspy.spark.partitioned;

import io.github.rspy.bridge.Demand;
import io.github.rspy.spark.common.ElementRows;
import io.github.rspy.spark.common.Format;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadAllAvailable;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code reactive-streams} source with {@code option("factory", CLASS)}: a {@link
 * PartitionedPublishers} read in the executors, like a Kafka topic. The driver only decides
 * offsets; each partition of a micro-batch is a task that subscribes to {@code
 * publisher(partition, start)} and requests exactly the batch's elements ({@link
 * FactoryReader}). The read limit ({@code maxRecordsPerTrigger}) is split fairly across the
 * partitions, never giving one more than it has; offsets live in Spark's checkpoint.
 *
 * <p>Internal to the connectors: the format's provider makes it.
 */
public final class FactorySource implements MicroBatchStream, SupportsTriggerAvailableNow {
    /** The option that names the {@link PartitionedPublishers} class, and chooses this source. */
    public static final String FACTORY = "factory";
    static final String MAX_RECORDS_PER_TRIGGER = "maxRecordsPerTrigger";
    static final String PREFETCH = "prefetch";
    /** Elements a micro-batch admits per partition of an unbounded source without a limit. */
    static final long DEFAULT_RECORDS_PER_PARTITION = 10_000;
    static final int DEFAULT_PREFETCH = 1_024;
    static final Set<String> OPTIONS = Set.of(FACTORY, MAX_RECORDS_PER_TRIGGER, PREFETCH);

    private final String factoryClass;
    private final PartitionedPublishers factory;
    private final int partitions;
    private final StructType schema;
    private final long maxRecords; // 0: none given
    private final int prefetch;
    private final String name;
    private long[] target; // Trigger.AvailableNow's end, or null

    /** Checks {@code options} and makes the factory they name, or throws naming what is wrong. */
    public FactorySource(CaseInsensitiveStringMap options, StructType schema) {
        Format.checkKnown(options.asCaseSensitiveMap(), OPTIONS, "source");
        this.factoryClass = options.get(FACTORY);
        this.name = "partition source '" + factoryClass + "'";
        this.factory = load(factoryClass);
        this.partitions = factory.partitions();
        if (partitions < 1) {
            throw new IllegalArgumentException(name + ": partitions() must be >= 1, got " + partitions);
        }
        new ElementRows(schema, name); // its columns are checked now, at load()
        this.schema = schema;
        String max = options.get(MAX_RECORDS_PER_TRIGGER);
        this.maxRecords = max == null ? 0 : Format.integer(max, MAX_RECORDS_PER_TRIGGER, 1,
                Long.MAX_VALUE);
        String ahead = options.get(PREFETCH);
        this.prefetch = ahead == null ? DEFAULT_PREFETCH : (int) Format.integer(ahead, PREFETCH, 1, 1 << 20);
    }

    /**
     * Makes the factory {@code className} names: refused, by name, unless it implements {@link
     * PartitionedPublishers}, before its static initializer or any constructor runs (a Connect
     * client must not be able to make the server build arbitrary classes).
     */
    static PartitionedPublishers load(String className) {
        if (className == null || className.isBlank()) {
            throw new IllegalArgumentException("the reactive-streams source needs option(\"factory\", class): a class "
                    + "implementing " + PartitionedPublishers.class.getName());
        }
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        Class<?> type;
        try {
            type = Class.forName(className.trim(), false, loader == null ? FactorySource.class.getClassLoader() : loader);
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalArgumentException("option factory names " + className + ", which is not on the classpath: "
                    + "add its jar to spark.jars (reactive_streams.spark.configure(builder, extra_jars=...))", e);
        }
        if (!PartitionedPublishers.class.isAssignableFrom(type)) {
            throw new IllegalArgumentException("option factory names " + className + ", which does not implement "
                    + PartitionedPublishers.class.getName() + ": refused before it was initialized or constructed");
        }
        try {
            return (PartitionedPublishers) type.getConstructor().newInstance();
        } catch (NoSuchMethodException e) {
            throw new IllegalArgumentException("option factory names " + className + ", which has no public "
                    + "no-argument constructor", e);
        } catch (ReflectiveOperationException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IllegalArgumentException("option factory names " + className + ", whose constructor failed: "
                    + cause, cause);
        }
    }

    @Override
    public Offset initialOffset() {
        return new PartitionOffsets(new long[partitions]);
    }

    @Override
    public Offset deserializeOffset(String json) {
        return PartitionOffsets.parse(json);
    }

    @Override
    public ReadLimit getDefaultReadLimit() {
        if (maxRecords > 0) {
            return ReadLimit.maxRows(maxRecords);
        }
        return bounded() ? ReadLimit.allAvailable() : ReadLimit.maxRows(Demand.multiplyCap(partitions, DEFAULT_RECORDS_PER_PARTITION));
    }

    private boolean bounded() {
        for (int p = 0; p < partitions; p++) {
            if (latest(p, 0) == PartitionedPublishers.UNBOUNDED) {
                return false;
            }
        }
        return true;
    }

    private long latest(int partition, long committed) {
        long end;
        try {
            end = factory.latest(partition);
        } catch (RuntimeException e) {
            throw new IllegalStateException("partition " + partition + " of " + name + ": latest(" + partition
                    + ") threw " + e, e);
        }
        if (end < committed) {
            throw new IllegalStateException("partition " + partition + " of " + name + ": latest(" + partition
                    + ") is " + end + ", before the committed offset " + committed + ": offsets never go back");
        }
        return end;
    }

    @Override
    public Offset latestOffset() {
        throw new UnsupportedOperationException("the partitioned reactive-streams source is read with "
                + "latestOffset(start, limit) (SupportsAdmissionControl)");
    }

    @Override
    public Offset latestOffset(Offset startOffset, ReadLimit limit) {
        PartitionOffsets start = starts(startOffset);
        long[] available = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            long end = latest(p, start.of(p));
            if (target != null) {
                end = Math.min(end, target[p]);
            }
            available[p] = end == PartitionedPublishers.UNBOUNDED ? Long.MAX_VALUE : Math.max(0, end - start.of(p));
        }
        long budget = limit instanceof ReadMaxRows ? ((ReadMaxRows) limit).maxRows()
                : limit instanceof ReadAllAvailable && bounded() ? Long.MAX_VALUE
                : Demand.multiplyCap(partitions, DEFAULT_RECORDS_PER_PARTITION);
        long[] shares = split(budget, available);
        long[] next = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            next[p] = start.of(p) + shares[p];
        }
        return new PartitionOffsets(next);
    }

    /**
     * {@code budget} elements shared across partitions that have {@code available} each: as
     * evenly as possible, none given more than it has, what one cannot take going to the others;
     * the lower partitions get the remainder of an uneven split.
     */
    static long[] split(long budget, long[] available) {
        long[] shares = new long[available.length];
        List<Integer> open = new ArrayList<>();
        for (int p = 0; p < available.length; p++) {
            if (available[p] > 0) {
                open.add(p);
            }
        }
        long remaining = budget;
        while (!open.isEmpty() && remaining > 0) {
            long each = remaining / open.size();
            List<Integer> full = new ArrayList<>();
            for (int p : open) {
                if (available[p] - shares[p] <= each) {
                    full.add(p);
                }
            }
            if (!full.isEmpty()) {
                for (int p : full) {
                    remaining -= available[p] - shares[p];
                    shares[p] = available[p];
                }
                open.removeAll(full);
                continue;
            }
            long extra = remaining - each * open.size();
            for (int rank = 0; rank < open.size(); rank++) {
                shares[open.get(rank)] += each + (rank < extra ? 1 : 0);
            }
            break;
        }
        return shares;
    }

    private PartitionOffsets starts(Offset offset) {
        PartitionOffsets start = PartitionOffsets.of(offset);
        if (start.size() > partitions) {
            throw new IllegalStateException(name + ": the checkpoint holds offsets of " + start.size()
                    + " partitions, the factory has " + partitions + ": partitions may be added, not removed");
        }
        return start;
    }

    @Override
    public void prepareForTriggerAvailableNow() {
        long[] ends = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            ends[p] = latest(p, 0);
            if (ends[p] == PartitionedPublishers.UNBOUNDED) {
                throw new IllegalStateException(name + " is unbounded (latest(" + p + ") is UNBOUNDED): "
                        + "Trigger.AvailableNow needs latest(partition) to say where each partition ends");
            }
        }
        target = ends;
    }

    @Override
    public InputPartition[] planInputPartitions(Offset start, Offset end) {
        PartitionOffsets from = starts(start);
        PartitionOffsets to = starts(end);
        List<InputPartition> planned = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            if (to.of(p) > from.of(p)) {
                planned.add(new FactoryReader.Partition(factoryClass, p, from.of(p), to.of(p), prefetch, schema));
            }
        }
        return planned.toArray(new InputPartition[0]);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new FactoryReader.Factory();
    }

    @Override
    public void commit(Offset end) {}

    @Override
    public void stop() {}

    @Override
    public String toString() {
        return name.toLowerCase(Locale.ROOT);
    }
}
