package io.github.rspy.bridge.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Wraps a publisher and records what its subscribers ask of it: each {@code request(n)}, the
 * cancels, and the elements emitted. For the Python tests of exact demand across the bridge.
 */
public final class RecordingPublisher implements Publisher<Object> {
    private final Publisher<?> inner;
    private final List<Long> requests = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger cancels = new AtomicInteger();
    private final AtomicLong emitted = new AtomicLong();
    private final AtomicLong maxOutstanding = new AtomicLong();
    private final AtomicLong outstanding = new AtomicLong();

    public RecordingPublisher(Publisher<?> inner) {
        this.inner = inner;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void subscribe(Subscriber<? super Object> subscriber) {
        ((Publisher<Object>) inner).subscribe(new Subscriber<Object>() {
            @Override
            public void onSubscribe(Subscription s) {
                subscriber.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {
                        requests.add(n);
                        long now = n > 0 ? outstanding.addAndGet(n) : outstanding.get();
                        maxOutstanding.accumulateAndGet(now, Math::max);
                        s.request(n);
                    }

                    @Override
                    public void cancel() {
                        cancels.incrementAndGet();
                        s.cancel();
                    }
                });
            }

            @Override
            public void onNext(Object item) {
                emitted.incrementAndGet();
                outstanding.decrementAndGet();
                subscriber.onNext(item);
            }

            @Override
            public void onError(Throwable t) {
                subscriber.onError(t);
            }

            @Override
            public void onComplete() {
                subscriber.onComplete();
            }
        });
    }

    public List<Long> requests() {
        synchronized (requests) {
            return new ArrayList<>(requests);
        }
    }

    public long requested() {
        long sum = 0;
        for (long n : requests()) {
            sum = n > 0 && sum + n > 0 ? sum + n : (n > 0 ? Long.MAX_VALUE : sum);
        }
        return sum;
    }

    public int cancels() {
        return cancels.get();
    }

    public long emitted() {
        return emitted.get();
    }

    /** The most elements ever requested and not yet emitted. */
    public long maxOutstanding() {
        return maxOutstanding.get();
    }
}
