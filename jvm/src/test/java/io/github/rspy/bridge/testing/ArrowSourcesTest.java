package io.github.rspy.bridge.testing;

import static org.testng.Assert.assertEquals;

import io.github.rspy.bridge.arrow.ArrowBatches;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.testng.annotations.Test;

public class ArrowSourcesTest {
    /**
     * A cancel from another thread while the subscriber reads the root in {@code onNext} closes
     * it only once {@code onNext} returns. (Built on {@code handle}, the sources closed it at
     * once: the emission had ended before the subscriber was called, and copying the closed root
     * allocated an empty string column's 4 offset bytes for good, the suite's rare leak.)
     */
    private static void readWhileCancelledElsewhere(Publisher<VectorSchemaRoot> source) throws Exception {
        long before = ArrowSources.allocatedBytes();
        AtomicReference<Subscription> subscription = new AtomicReference<>();
        CompletableFuture<Integer> read = new CompletableFuture<>();
        source.subscribe(new Subscriber<VectorSchemaRoot>() {
            @Override
            public void onSubscribe(Subscription s) {
                subscription.set(s);
                s.request(1);
            }

            @Override
            public void onNext(VectorSchemaRoot root) {
                try {
                    Thread canceller = new Thread(() -> subscription.get().cancel());
                    canceller.start();
                    canceller.join();
                    read.complete(ArrowBatches.ipcStream(root).length); // as the bridge copies it
                } catch (Throwable t) {
                    read.completeExceptionally(t);
                }
            }

            @Override
            public void onError(Throwable t) {
                read.completeExceptionally(t);
            }

            @Override
            public void onComplete() {}
        });
        read.get(10, TimeUnit.SECONDS);
        assertEquals(ArrowSources.allocatedBytes(), before, ArrowSources.held());
    }

    @Test
    public void aReusedRootIsNotClosedUnderTheSubscriberReadingIt() throws Exception {
        readWhileCancelledElsewhere(ArrowSources.reusedRoot(3, 10));
    }

    @Test
    public void aSameRootIsNotClosedUnderTheSubscriberReadingIt() throws Exception {
        readWhileCancelledElsewhere(ArrowSources.sameRoot(3, 10));
    }

    @Test
    public void aBatchRangeRootIsNotClosedUnderTheSubscriberReadingIt() throws Exception {
        readWhileCancelledElsewhere(ArrowSources.batchRange(3, 10));
    }
}
