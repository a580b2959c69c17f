package io.github.rspy.bridge.testing;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A publisher whose first {@code request(n)} returns only once the test opens its gate (or after
 * a minute, so that a failing test never hangs), emitting nothing: for the tests of what a cancel
 * does while the subscriber is inside a request. One subscriber.
 */
public final class GatedRequest implements Publisher<Object> {
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch gate = new CountDownLatch(1);

    @Override
    public void subscribe(Subscriber<? super Object> subscriber) {
        subscriber.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                if (entered.getCount() == 0) {
                    return; // only the first request waits
                }
                entered.countDown();
                try {
                    gate.await(1, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public void cancel() {}
        });
    }

    /** Waits up to {@code millis} for the first request to begin; true if it did. */
    public boolean awaitRequest(long millis) throws InterruptedException {
        return entered.await(millis, TimeUnit.MILLISECONDS);
    }

    /** Lets the request under way return. */
    public void open() {
        gate.countDown();
    }
}
