package io.github.rspy.spark.testing;

import io.github.rspy.spark.partitioned.PartitionedPublishers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A {@link PartitionedPublishers} for the Python tests: three partitions of 1,000 elements, each
 * element {@code Object[]{partition, offset, jvmPid}}; every subscription's total demand and
 * whether it was cancelled are recorded (in the JVM that ran it) as "partition start requested
 * emitted cancelled". Subclasses below break it in the ways a test wants.
 */
public class OffsetPartitions implements PartitionedPublishers {
    private static final Map<String, String> SUBSCRIPTIONS = new ConcurrentHashMap<>();

    @Override
    public int partitions() {
        return 3;
    }

    @Override
    public long latest(int partition) {
        return 1_000;
    }

    @Override
    public Publisher<?> publisher(int partition, long offset) {
        return subscriber -> subscriber.onSubscribe(new Emitting(subscriber, partition, offset, this));
    }

    /** The element at {@code offset} of {@code partition}; null or more than asked for in subclasses. */
    Object element(int partition, long offset) {
        return new Object[] {partition, offset, ProcessHandle.current().pid()};
    }

    /** How many elements to emit for {@code n} requested. */
    long emitted(long n) {
        return n;
    }

    /** The recorded subscriptions of this JVM, sorted. */
    public static List<String> subscriptions() {
        List<String> lines = new ArrayList<>(SUBSCRIPTIONS.values());
        lines.sort(null);
        return lines;
    }

    public static void clear() {
        SUBSCRIPTIONS.clear();
    }

    /** Emits on the requesting thread, serially (a request from inside onNext only adds). */
    private static final class Emitting implements Subscription {
        private final Subscriber<Object> subscriber;
        private final int partition;
        private final OffsetPartitions source;
        private final String key;
        private final long start;
        private final AtomicLong demand = new AtomicLong();
        private long next;
        private long requested;
        private volatile boolean cancelled;

        @SuppressWarnings("unchecked")
        Emitting(Subscriber<?> subscriber, int partition, long start, OffsetPartitions source) {
            this.subscriber = (Subscriber<Object>) subscriber;
            this.partition = partition;
            this.start = start;
            this.next = start;
            this.source = source;
            this.key = partition + "/" + start + "/" + System.nanoTime();
            record();
        }

        private void record() {
            SUBSCRIPTIONS.put(key, partition + " " + start + " " + requested + " " + (next - start) + " " + cancelled);
        }

        @Override
        public void request(long n) {
            requested += n;
            record();
            long owed = source.emitted(n);
            if (demand.getAndAdd(owed) > 0) {
                return; // the emitting loop below sends it
            }
            while (owed > 0) {
                for (long i = 0; i < owed && !cancelled; i++) {
                    subscriber.onNext(source.element(partition, next++));
                }
                record();
                owed = demand.addAndGet(-owed);
            }
        }

        @Override
        public void cancel() {
            cancelled = true;
            record();
        }
    }

    /** Emits five more than the first request. */
    public static final class PastDemand extends OffsetPartitions {
        private final AtomicLong calls = new AtomicLong();

        @Override
        long emitted(long n) {
            return calls.getAndIncrement() == 0 ? n + 5 : n;
        }
    }

    /** Emits null at offset 3. */
    public static final class Nulls extends OffsetPartitions {
        @Override
        Object element(int partition, long offset) {
            return offset == 3 ? null : super.element(partition, offset);
        }
    }

    /** Never ends: latest is UNBOUNDED. */
    public static final class Unbounded extends OffsetPartitions {
        @Override
        public long latest(int partition) {
            return UNBOUNDED;
        }
    }
}
