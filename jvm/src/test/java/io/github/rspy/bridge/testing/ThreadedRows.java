package io.github.rspy.bridge.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;
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
}
