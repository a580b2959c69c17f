package io.github.rspy.bridge.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Wraps a publisher and records what its subscribers ask of it: each {@code request(n)}, the
 * cancels, and the elements emitted, and whether two threads were ever inside its subscription's
 * methods at once (§2.7 asks for serial calls; a call made inside another on the same thread, as
 * a request from onNext during a request, is serial). For the Python tests of exact demand across
 * the bridge.
 */
public final class RecordingPublisher implements Publisher<Object> {
    private final Publisher<?> inner;
    private final List<Long> requests = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger cancels = new AtomicInteger();
    private final AtomicLong emitted = new AtomicLong();
    private final AtomicLong maxOutstanding = new AtomicLong();
    private final AtomicLong outstanding = new AtomicLong();
    private final AtomicReference<Thread> calling = new AtomicReference<>();
    private final AtomicInteger concurrentCalls = new AtomicInteger();

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
                        boolean entered = enter();
                        try {
                            requests.add(n);
                            long now = n > 0 ? outstanding.addAndGet(n) : outstanding.get();
                            maxOutstanding.accumulateAndGet(now, Math::max);
                            s.request(n);
                        } finally {
                            leave(entered);
                        }
                    }

                    @Override
                    public void cancel() {
                        boolean entered = enter();
                        try {
                            cancels.incrementAndGet();
                            s.cancel();
                        } finally {
                            leave(entered);
                        }
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

    /** Marks this thread inside the subscription; true if it was not already (a nested call). */
    private boolean enter() {
        Thread me = Thread.currentThread();
        if (calling.compareAndSet(null, me)) {
            return true;
        }
        if (calling.get() != me) {
            concurrentCalls.incrementAndGet(); // §2.7 broken: another thread is inside
        }
        return false;
    }

    private void leave(boolean entered) {
        if (entered) {
            calling.set(null);
        }
    }

    /** Calls of request or cancel made while another thread was inside one (§2.7: 0). */
    public int concurrentCalls() {
        return concurrentCalls.get();
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
