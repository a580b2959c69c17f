package io.github.rspy.bridge.testing;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A Java subscriber for the benchmarks: counts elements, requesting {@code batch} at a time
 * (again each time {@code batch} have arrived), and keeps no element.
 */
public final class CountingSubscriber implements Subscriber<Object> {
    private final long batch;
    private final CountDownLatch done = new CountDownLatch(1);
    private Subscription subscription;
    private long sinceRequest;
    private volatile long count;
    private volatile Throwable error;
    private volatile boolean complete;

    public CountingSubscriber(long batch) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be >= 1, got " + batch);
        }
        this.batch = batch;
    }

    @Override
    public void onSubscribe(Subscription s) {
        subscription = s;
        s.request(batch);
    }

    @Override
    public void onNext(Object item) {
        count++; // signals are serial (§1.3): one writer
        if (++sinceRequest == batch) {
            sinceRequest = 0;
            subscription.request(batch);
        }
    }

    @Override
    public void onError(Throwable t) {
        error = t;
        done.countDown();
    }

    @Override
    public void onComplete() {
        complete = true;
        done.countDown();
    }

    public boolean awaitDone(long millis) throws InterruptedException {
        return done.await(millis, TimeUnit.MILLISECONDS);
    }

    public boolean isDone() {
        return done.getCount() == 0;
    }

    public long count() {
        return count;
    }

    public boolean isComplete() {
        return complete;
    }

    public Throwable error() {
        return error;
    }
}
