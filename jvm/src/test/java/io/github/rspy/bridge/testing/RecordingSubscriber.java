package io.github.rspy.bridge.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A Java subscriber for the Python tests: records every signal, checks that signals are serial
 * and within demand, and requests {@code initial} elements, then {@code each} more every time
 * {@code each} have arrived (0: never), and what {@link #alsoRequestOnNext} says inside every
 * {@code onNext}.
 */
public final class RecordingSubscriber implements Subscriber<Object> {
    private final long initial;
    private final long each;
    private final List<Object> items = Collections.synchronizedList(new ArrayList<>());
    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch done = new CountDownLatch(1);
    private final CountDownLatch subscribed = new CountDownLatch(1);
    private final AtomicInteger active = new AtomicInteger();
    private volatile Subscription subscription;
    private volatile Throwable error;
    private volatile boolean complete;
    private long requested;
    private long sinceRequest;
    private volatile long failOn; // throw in this onNext (1-based); 0: never
    private volatile long onNextRequest; // requested onNextRequests times inside every onNext
    private volatile int onNextRequests;

    public RecordingSubscriber(long initial, long each) {
        this.initial = initial;
        this.each = each;
    }

    @Override
    public void onSubscribe(Subscription s) {
        enter("onSubscribe");
        subscription = s;
        subscribed.countDown();
        if (initial > 0) {
            request(initial);
        }
        exit();
    }

    @Override
    public void onNext(Object item) {
        enter("onNext");
        items.add(item);
        if (items.size() == failOn) {
            exit();
            throw new IllegalStateException("boom from RecordingSubscriber.onNext #" + failOn);
        }
        if (items.size() > requested) {
            violations.add("§1.1: onNext #" + items.size() + " with " + requested + " requested");
        }
        if (each > 0 && ++sinceRequest == each) {
            sinceRequest = 0;
            request(each);
        }
        for (int i = 0; i < onNextRequests; i++) {
            request(onNextRequest);
        }
        exit();
    }

    @Override
    public void onError(Throwable t) {
        enter("onError");
        error = t;
        done.countDown();
        exit();
    }

    @Override
    public void onComplete() {
        enter("onComplete");
        complete = true;
        done.countDown();
        exit();
    }

    public synchronized void request(long n) {
        requested = requested + n < 0 ? Long.MAX_VALUE : requested + n;
        subscription.request(n);
    }

    public void cancel() {
        subscription.cancel();
    }

    /** Requests {@code n}, {@code times} times over, inside every {@code onNext}. */
    public RecordingSubscriber alsoRequestOnNext(long n, int times) {
        onNextRequest = n;
        onNextRequests = times;
        return this;
    }

    /** Throws from the {@code n}th {@code onNext} (counting from 1). */
    public RecordingSubscriber failOn(long n) {
        failOn = n;
        return this;
    }

    public boolean awaitDone(long millis) throws InterruptedException {
        return done.await(millis, TimeUnit.MILLISECONDS);
    }

    public boolean awaitSubscribed(long millis) throws InterruptedException {
        return subscribed.await(millis, TimeUnit.MILLISECONDS);
    }

    /** Waits until at least {@code count} elements arrived or the stream ended. */
    public boolean awaitItems(int count, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (items.size() < count && done.getCount() > 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(1);
        }
        return items.size() >= count;
    }

    public List<Object> items() {
        synchronized (items) {
            return new ArrayList<>(items);
        }
    }

    public int count() {
        return items.size();
    }

    public boolean isComplete() {
        return complete;
    }

    public Throwable error() {
        return error;
    }

    public String errorClass() {
        return error == null ? null : error.getClass().getName();
    }

    public String errorMessage() {
        return error == null ? null : error.getMessage();
    }

    public List<String> violations() {
        synchronized (violations) {
            return new ArrayList<>(violations);
        }
    }

    private void enter(String signal) {
        if (active.incrementAndGet() > 1) {
            violations.add("§1.3: " + signal + " overlapped another signal");
        }
        if (done.getCount() == 0) {
            violations.add("§1.7: " + signal + " after a terminal signal");
        }
    }

    private void exit() {
        active.decrementAndGet();
    }
}
