package io.github.rspy.bridge.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.FlowAdapters;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * Rows emitted one at a time from threads of their own, as database drivers, network clients and
 * Reactor's {@code publishOn} emit them (issue 34), beside the same rows emitted synchronously.
 * Every row is {@code Object[]{(long) i, i / 2.0, a 12-character string}}, the throughput
 * benchmark's rows, built before the stream starts so that only their delivery is measured.
 */
public final class ThreadedRows {
    private ThreadedRows() {}

    /** {@code count} rows {@code Object[]{(long) i, i / 2.0, Long.toString(100_000_000_000 + i)}}. */
    public static List<Object[]> rows(int count) {
        List<Object[]> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            rows.add(new Object[] {(long) i, i / 2.0, Long.toString(100_000_000_000L + i)});
        }
        return rows;
    }

    /** {@code Flux.fromIterable(rows)}: emitted on the thread that requests them. */
    public static Flux<Object[]> sync(List<Object[]> rows) {
        return Flux.fromIterable(rows);
    }

    /** {@code Flux.fromIterable(rows).publishOn(Schedulers.parallel(), prefetch)}: emitted on Reactor's workers. */
    public static Flux<Object[]> publishOn(List<Object[]> rows, int prefetch) {
        return Flux.fromIterable(rows).publishOn(Schedulers.parallel(), prefetch);
    }

    /**
     * {@code count} of {@link #rows} emitted by a thread of its own, started by the first
     * request, one every {@code gapNanos} (a busy wait, as a driver decoding rows keeps its
     * thread), each as soon as it is made (Reactor buffers a row not yet demanded); then
     * completes, if {@code complete}, else stays open: a producer on its own thread at a pace set
     * by the test.
     */
    public static Flux<Object[]> paced(int count, long gapNanos, boolean complete) {
        List<Object[]> made = rows(count);
        return Flux.create(sink -> {
            Thread producer = new Thread(() -> {
                for (Object[] row : made) {
                    long until = System.nanoTime() + gapNanos;
                    while (System.nanoTime() < until && !sink.isCancelled()) {
                        Thread.onSpinWait();
                    }
                    sink.next(row);
                }
                if (complete) {
                    sink.complete();
                }
            }, "rspy-test-paced-producer");
            producer.setDaemon(true);
            java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
            sink.onRequest(n -> {
                if (started.compareAndSet(false, true)) {
                    producer.start();
                }
            });
        });
    }

    /**
     * A JDK {@link SubmissionPublisher} per subscriber, buffering at most {@code capacity} rows,
     * fed by a JVM thread of its own that submits each row (blocking while the buffer is full)
     * and then closes it; rows reach the subscriber on the common fork-join pool. The feeding
     * thread stops early once the subscriber has cancelled.
     */
    public static Flow.Publisher<Object[]> submission(List<Object[]> rows, int capacity) {
        return subscriber -> {
            SubmissionPublisher<Object[]> publisher = new SubmissionPublisher<>(
                    java.util.concurrent.ForkJoinPool.commonPool(), capacity);
            publisher.subscribe(subscriber);
            Thread feeder = new Thread(() -> feed(publisher, rows), "rspy-test-submission-feeder");
            feeder.setDaemon(true);
            feeder.start();
        };
    }

    private static void feed(SubmissionPublisher<Object[]> publisher, List<Object[]> rows) {
        try {
            for (Object[] row : rows) {
                if (!publisher.hasSubscribers()) {
                    return; // cancelled
                }
                publisher.submit(row);
            }
            publisher.close();
        } catch (RuntimeException e) {
            publisher.closeExceptionally(e);
        }
    }

    /**
     * The bound a source sets on a consumer that waits on each request, with no bridge and no
     * Python: rows per second of {@code publisher} (an org.reactivestreams or a Flow publisher of
     * {@code count} elements) handed to a Java thread of its own which, once all {@code batch}
     * rows it requested have arrived, works {@code nanosPerRow} on each (a busy wait, as a Python
     * subscriber's work on a batch keeps its thread) and then requests {@code batch} more (as
     * the benchmarks' counting subscriber does). The source's latency after each request adds to
     * every batch's time.
     */
    public static double stopAndWaitRate(Object publisher, int count, int batch, long nanosPerRow)
            throws InterruptedException {
        HandedOff consumer = new HandedOff(count, batch, nanosPerRow);
        long start = System.nanoTime();
        asPublisher(publisher).subscribe(consumer);
        consumer.thread.join(TimeUnit.MINUTES.toMillis(5));
        long elapsed = System.nanoTime() - start;
        if (consumer.thread.isAlive() || consumer.taken != count) {
            consumer.thread.interrupt();
            throw new IllegalStateException("took " + consumer.taken + " of " + count + " rows: " + consumer.error);
        }
        return count / (elapsed / 1e9);
    }

    @SuppressWarnings("unchecked")
    private static Publisher<Object> asPublisher(Object publisher) {
        if (publisher instanceof Publisher) {
            return (Publisher<Object>) publisher;
        }
        return FlowAdapters.toPublisher((Flow.Publisher<Object>) publisher);
    }

    /** Takes elements on its own thread: they are queued by onNext, as the bridge queues them for its drain. */
    private static final class HandedOff implements Subscriber<Object> {
        final int count;
        final int batch;
        final long nanosPerRow;
        final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
        final Thread thread = new Thread(this::consume, "rspy-test-stop-and-wait");
        volatile Subscription subscription;
        volatile boolean done;
        volatile Throwable error;
        int taken;

        HandedOff(int count, int batch, long nanosPerRow) {
            this.count = count;
            this.batch = batch;
            this.nanosPerRow = nanosPerRow;
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
            LockSupport.unpark(thread);
        }

        @Override
        public void onNext(Object item) {
            queue.offer(item);
            LockSupport.unpark(thread);
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            done = true;
            LockSupport.unpark(thread);
        }

        @Override
        public void onComplete() {
            done = true;
            LockSupport.unpark(thread);
        }

        /** The work on {@code rows} rows, once they have all arrived, as Python's on a batch it was handed. */
        private void work(int rows) {
            long end = System.nanoTime() + nanosPerRow * rows;
            while (System.nanoTime() < end) {
                Thread.onSpinWait();
            }
        }

        private void consume() {
            while (subscription == null && !Thread.currentThread().isInterrupted()) {
                LockSupport.park(this);
            }
            subscription.request(batch);
            int sinceRequest = 0;
            while (taken < count && !Thread.currentThread().isInterrupted()) {
                Object item = queue.poll();
                if (item == null) {
                    if (done && queue.isEmpty()) {
                        return;
                    }
                    LockSupport.park(this);
                    continue;
                }
                taken++;
                if (++sinceRequest == batch || taken == count) {
                    work(sinceRequest);
                    sinceRequest = 0;
                    subscription.request(batch);
                }
            }
        }
    }
}
