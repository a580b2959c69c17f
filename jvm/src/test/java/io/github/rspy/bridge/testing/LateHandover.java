package io.github.rspy.bridge.testing;

import io.github.rspy.bridge.arrow.ArrowHandover;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A publisher that hands its subscriber the Arrow batches it emits (an {@link ArrowHandover}, as
 * the bridge's Python publishers and the Connect plugin's are), and delivers one more batch as
 * its subscription is cancelled: the batch that was on its way when the cancel came, as the
 * bridge's drain delivers one it had taken just before it saw the cancel (§3.12 lets a cancel
 * take effect late). Batches of {@code rows} rows (id long, value double, name string) come from
 * an allocator of the bridge's ({@code BridgeRuntime.jvmArrowAllocatedBytes()} counts it): the
 * subscriber owns each one and must close it, the late one too.
 */
public final class LateHandover implements Publisher<Object> {
    private final int rows;
    private final AtomicLong emitted = new AtomicLong();
    private final AtomicInteger late = new AtomicInteger();

    public LateHandover(int rows) {
        this.rows = rows;
    }

    /** Batches delivered after a cancel. */
    public int lateBatches() {
        return late.get();
    }

    /** Batches delivered in all. */
    public long emitted() {
        return emitted.get();
    }

    @Override
    public void subscribe(Subscriber<? super Object> subscriber) {
        subscriber.onSubscribe(new Feed(subscriber));
    }

    private VectorSchemaRoot batch() {
        emitted.incrementAndGet();
        return ArrowSources.filled(HANDED, rows); // closing the root gives its bytes back
    }

    private static final BufferAllocator HANDED =
            (BufferAllocator) io.github.rspy.bridge.arrow.ArrowSupport.Allocators.newChild("LateHandover");

    private final class Feed implements Subscription, ArrowHandover {
        private final Subscriber<? super Object> subscriber;
        private final AtomicLong requested = new AtomicLong();
        private final AtomicInteger wip = new AtomicInteger();
        private volatile boolean cancelled;

        Feed(Subscriber<? super Object> subscriber) {
            this.subscriber = subscriber;
        }

        @Override
        public void takeColumnRows() {} // it emits batches, not rows

        @Override
        public void request(long n) {
            if (n <= 0) {
                cancelled = true;
                subscriber.onError(new IllegalArgumentException("§3.9: request(" + n + ")"));
                return;
            }
            requested.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
            drain();
        }

        @Override
        public void cancel() {
            if (!cancelled) {
                cancelled = true;
                late.incrementAndGet();
                subscriber.onNext(batch()); // the batch on its way
            }
        }

        private void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                while (!cancelled && requested.get() > 0) {
                    requested.decrementAndGet();
                    subscriber.onNext(batch());
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }
}
