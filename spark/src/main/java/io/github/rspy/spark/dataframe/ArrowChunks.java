package io.github.rspy.spark.dataframe;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowConverters$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.StorageLevel;
import org.apache.spark.storage.StorageStatus;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;

/**
 * The rows of {@code dataframe_from_publisher}, as Arrow record batches from Python (IPC
 * messages), kept in Spark's block manager until
 * they become a DataFrame: never in the driver's heap all at once, never inside tasks.
 *
 * <p>Batches are gathered into blocks of about {@link #PARTITION_BYTES}, each put in the
 * driver's block manager at {@code MEMORY_AND_DISK} as a cached RDD's partition (memory while
 * storage memory lasts, disk beyond; {@link StoredBatches}); the driver holds no more than one
 * block being gathered. The DataFrame reads them with Spark's own Arrow conversion, executors
 * fetching them from the driver as they fetch any block. The blocks go when the DataFrame is
 * unreachable, or at once if the publisher fails ({@link #discard}).
 */
public final class ArrowChunks {
    /** About how many bytes of Arrow data one partition (one block) holds. */
    public static final long PARTITION_BYTES = 32L << 20;
    private static final ClassTag<byte[]> BYTES = ClassTag.apply(byte[].class);
    private static final int AHEAD = 16; // batches a collect() asks the bridge for ahead

    private final StoredBatches stored;
    private final List<byte[]> gathering = new ArrayList<>(); // the block being filled
    private long gatheringBytes;
    private int blocks;
    private long bytes;
    private long batches;
    private boolean sealed; // no more batches: made a DataFrame, or discarded
    private boolean made; // a DataFrame reads the blocks

    public ArrowChunks() {
        stored = new StoredBatches(SparkContext.getOrCreate());
        stored.persist(StorageLevel.MEMORY_AND_DISK()); // Spark reads the blocks, and cleans them up
    }

    /** One Arrow record batch as an IPC message (what {@code RecordBatch.serialize()} gives). */
    public synchronized void add(byte[] batch) {
        if (batch == null || batch.length == 0) {
            throw new IllegalArgumentException("an empty Arrow batch");
        }
        if (sealed) {
            throw new IllegalStateException("the batches were already made a DataFrame");
        }
        gathering.add(batch);
        gatheringBytes += batch.length;
        bytes += batch.length;
        batches++;
        if (gatheringBytes >= PARTITION_BYTES) {
            store();
        }
    }

    /**
     * Takes every IPC message {@code publisher} (the bridge's {@code to_jvm} of Python's record
     * batches, serialized) emits, {@value #AHEAD} ahead of what is stored (§1.1: the bridge holds
     * no more); returns once it completes, or throws its error (the blocks are then removed).
     */
    public void collect(Publisher<?> publisher) throws InterruptedException {
        CompletableFuture<Void> done = new CompletableFuture<>();
        publisher.subscribe(new Subscriber<Object>() {
            private Subscription subscription;

            @Override
            public void onSubscribe(Subscription s) {
                subscription = s;
                s.request(AHEAD);
            }

            @Override
            public void onNext(Object item) {
                try {
                    if (!(item instanceof byte[] message)) {
                        throw new IllegalArgumentException("dataframe_from_publisher takes Arrow IPC record batch "
                                + "messages (byte[]), got " + item.getClass().getName());
                    }
                    add(message);
                } catch (RuntimeException | Error e) { // an OOM too: collect() must not wait for ever
                    subscription.cancel(); // §2.13: this side cannot take it
                    done.completeExceptionally(e);
                    return;
                }
                subscription.request(1);
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onComplete() {
                done.complete(null);
            }
        });
        try {
            done.get();
        } catch (ExecutionException e) {
            discard();
            Throwable cause = e.getCause();
            throw cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
        } catch (InterruptedException e) {
            discard(); // and a late onNext is refused (sealed): the bridge cancels then (§2.13)
            throw e;
        }
    }

    private void store() {
        RDDBlockId id = new RDDBlockId(stored.id(), blocks);
        boolean put = SparkEnv.get().blockManager().putIterator(id, CollectionConverters.asScala(gathering.iterator()),
                StorageLevel.MEMORY_AND_DISK(), true, BYTES);
        if (!put) {
            discard();
            throw new IllegalStateException("the block manager refused block " + id + " of dataframe_from_publisher ("
                    + gatheringBytes + " bytes of Arrow data)");
        }
        blocks++;
        gathering.clear();
        gatheringBytes = 0;
    }

    public synchronized int size() {
        return (int) batches;
    }

    public synchronized long bytes() {
        return bytes;
    }

    /** The blocks stored so far (partitions of the DataFrame to be). */
    public synchronized int blocks() {
        return blocks;
    }

    /** The id of the RDD whose blocks these are. */
    public int rddId() {
        return stored.id();
    }

    /**
     * What Spark's block manager holds of RDD {@code rddId} (the {@link #rddId} of one of these),
     * across the driver and executors: {blocks, bytes in memory, bytes on disk}. For tests and
     * diagnostics (Spark's own storage status lists an RDD only once a stage has run on it).
     */
    public static long[] storedBlocks(int rddId) {
        long[] stats = new long[3];
        for (StorageStatus status : SparkEnv.get().blockManager().master().getStorageStatus()) {
            for (var block : CollectionConverters.asJava(status.rddBlocks()).entrySet()) {
                if (block.getKey() instanceof RDDBlockId id && id.rddId() == rddId) {
                    stats[0]++;
                    stats[1] += block.getValue().memSize();
                    stats[2] += block.getValue().diskSize();
                }
            }
        }
        return stats;
    }

    /**
     * Removes the blocks stored so far (the publisher failed, or the DataFrame will not be made);
     * nothing once a DataFrame reads them (they go when it is unreachable).
     */
    public synchronized void discard() {
        if (made) {
            return;
        }
        sealed = true;
        gathering.clear();
        stored.unpersist(false);
    }

    /** A DataFrame of the batches, for a schema given as Spark's JSON; none: no rows. */
    public synchronized Dataset<Row> toDataFrame(String schemaJson, SparkSession session) {
        if (!(session instanceof org.apache.spark.sql.classic.SparkSession classic)) {
            throw new IllegalArgumentException("a classic (non-Connect) SparkSession is needed");
        }
        if (sealed) {
            throw new IllegalStateException("the batches were already made a DataFrame, or discarded");
        }
        if (!gathering.isEmpty()) {
            store();
        }
        StructType schema = (StructType) DataType.fromJson(schemaJson); // a bad schema: discard() still can
        String timeZone = session.conf().get("spark.sql.session.timeZone");
        sealed = true;
        stored.seal(blocks);
        JavaRDD<InternalRow> rows = stored.toJavaRDD().mapPartitions(new ToRows(schema, timeZone));
        Dataset<Row> frame = classic.internalCreateDataFrame(rows.rdd(), schema, false);
        made = true;
        return frame;
    }

    /** A partition's batches as rows, by Spark's own Arrow conversion. */
    private record ToRows(StructType schema, String timeZone) implements FlatMapFunction<java.util.Iterator<byte[]>,
            InternalRow> {
        @Override
        public java.util.Iterator<InternalRow> call(java.util.Iterator<byte[]> batches) {
            return CollectionConverters.asJava(ArrowConverters$.MODULE$.fromBatchIterator(
                    CollectionConverters.asScala(batches), schema, timeZone, true, false, TaskContext.get()));
        }
    }
}
