package io.github.rspy.spark.testing;

import io.github.rspy.spark.partitioned.PartitionedPublishers;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The benchmarks' JVM factory: four unbounded partitions of longs (the offset is the value), each
 * emitted on the requesting thread, as fast as a publisher goes.
 */
public final class LongPartitions implements PartitionedPublishers {
    @Override
    public int partitions() {
        return 4;
    }

    @Override
    public Publisher<?> publisher(int partition, long offset) {
        return subscriber -> subscriber.onSubscribe(new Longs(subscriber, offset));
    }

    private static final class Longs implements Subscription {
        private final Subscriber<? super Long> subscriber;
        private final AtomicLong demand = new AtomicLong();
        private long next;
        private volatile boolean cancelled;

        Longs(Subscriber<? super Long> subscriber, long offset) {
            this.subscriber = subscriber;
            this.next = offset;
        }

        @Override
        public void request(long n) {
            if (demand.getAndAdd(n) > 0) {
                return; // the loop below sends it
            }
            long owed = n;
            while (owed > 0) {
                for (long i = 0; i < owed && !cancelled; i++) {
                    subscriber.onNext(next++);
                }
                owed = demand.addAndGet(-owed);
            }
        }

        @Override
        public void cancel() {
            cancelled = true;
        }
    }
}
