package io.github.rspy.tck;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.reactivestreams.FlowAdapters;
import org.reactivestreams.Processor;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The settings of the run in progress. TestNG instantiates verification classes through their
 * no-argument constructors, so they read their environment and their Python factory from here
 * ({@code super(TckRun.get().environment())}, {@code run = TckRun.get()}). {@link TckRunner}
 * allows one run at a time and sets {@link #current} for all of it, so every read gets the same run.
 */
final class TckRun {
    static volatile TckRun current;

    final TckFactory factory;
    final long timeoutMillis;
    final long noSignalsTimeoutMillis;
    final long pollTimeoutMillis;
    final long gcTimeoutMillis;
    final int processorBufferSize;
    final long maxElements;
    final long boundedDepth;
    final boolean skipStochastic;
    final long maxSupportedSubscribers;
    final boolean coordinatedEmission;
    /** Closes the closeable elements the TCK's subscribers receive (closeElements), or null. */
    private final ClosingElements closing;
    private final List<ExecutorService> executors = new ArrayList<>();
    private final List<RecordingEnvironment> environments = new ArrayList<>();

    TckRun(TckFactory factory, long[] numbers, boolean[] flags) {
        this.factory = factory;
        this.timeoutMillis = numbers[0];
        this.noSignalsTimeoutMillis = numbers[1];
        this.pollTimeoutMillis = numbers[2];
        this.gcTimeoutMillis = numbers[3];
        this.processorBufferSize = (int) numbers[4];
        this.maxElements = numbers[5];
        this.boundedDepth = numbers[6];
        this.maxSupportedSubscribers = numbers[7];
        this.skipStochastic = flags[0];
        this.coordinatedEmission = flags[1];
        this.closing = flags[2] ? new ClosingElements() : null;
    }

    static TckRun get() {
        TckRun run = current;
        if (run == null) {
            throw new IllegalStateException("no TCK run in progress: use TckRunner.run");
        }
        return run;
    }

    synchronized TestEnvironment environment() {
        RecordingEnvironment environment =
                new RecordingEnvironment(timeoutMillis, noSignalsTimeoutMillis, pollTimeoutMillis);
        environments.add(environment);
        return environment;
    }

    /** Forgets what the environments recorded, and closes the last test's elements: a new test starts. */
    synchronized void startTest() {
        for (RecordingEnvironment environment : environments) {
            environment.clearSeen();
        }
        if (closing != null) {
            closing.closeReceived(false);
        }
    }

    /** What the test that just ended recorded and its {@code failure} does not say. */
    synchronized List<String> causes(Throwable failure) {
        List<String> causes = new ArrayList<>();
        for (RecordingEnvironment environment : environments) {
            for (String cause : environment.causes(failure)) {
                if (!causes.contains(cause)) {
                    causes.add(cause);
                }
            }
        }
        return causes;
    }

    synchronized ExecutorService newExecutor() {
        AtomicInteger n = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "tck-publisher-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        executors.add(executor);
        return executor;
    }

    synchronized void close() {
        for (ExecutorService executor : executors) {
            executor.shutdownNow();
        }
        executors.clear();
        if (closing != null) {
            closing.closeReceived(true);
        }
    }

    /** The publisher a verification tests: the factory's, its elements closed for the TCK if asked. */
    Publisher<Object> published(Object o) {
        Publisher<Object> publisher = publisher(o);
        return closing == null ? publisher : closing.wrap(publisher);
    }

    /** As {@link #published}, as a Flow publisher. */
    Flow.Publisher<Object> flowPublished(Object o) {
        if (closing == null || o == null) {
            return flowPublisher(o);
        }
        return FlowAdapters.toFlowPublisher(closing.wrap(FlowAdapters.toPublisher(flowPublisher(o))));
    }

    // What the Python factory returned, as the API a verification wants: org.reactivestreams and
    // Flow objects both cross the bridge. (Unchecked: the FlowAdapters get a raw Publisher, etc.)
    @SuppressWarnings("unchecked")
    static Publisher<Object> publisher(Object o) {
        return o == null ? null : adapt(o, Publisher.class, Flow.Publisher.class, FlowAdapters::toPublisher);
    }

    @SuppressWarnings("unchecked")
    static Flow.Publisher<Object> flowPublisher(Object o) {
        return o == null ? null : adapt(o, Flow.Publisher.class, Publisher.class, FlowAdapters::toFlowPublisher);
    }

    @SuppressWarnings("unchecked")
    static Subscriber<Object> subscriber(Object o) {
        return adapt(o, Subscriber.class, Flow.Subscriber.class, FlowAdapters::toSubscriber);
    }

    @SuppressWarnings("unchecked")
    static Flow.Subscriber<Object> flowSubscriber(Object o) {
        return adapt(o, Flow.Subscriber.class, Subscriber.class, FlowAdapters::toFlowSubscriber);
    }

    @SuppressWarnings("unchecked")
    static Processor<Object, Object> processor(Object o) {
        return adapt(o, Processor.class, Flow.Processor.class, FlowAdapters::toProcessor);
    }

    @SuppressWarnings("unchecked")
    static Flow.Processor<Object, Object> flowProcessor(Object o) {
        return adapt(o, Flow.Processor.class, Processor.class, FlowAdapters::toFlowProcessor);
    }

    /** {@code o} as a {@code type}: as it is, or through {@code adapter} when it is an {@code other}. */
    @SuppressWarnings("unchecked")
    private static <T, O> T adapt(Object o, Class<?> type, Class<O> other, Function<O, ?> adapter) {
        if (type.isInstance(o)) {
            return (T) o;
        }
        if (other.isInstance(o)) {
            return (T) adapter.apply(other.cast(o));
        }
        throw new IllegalArgumentException(
                "the Python factory returned " + o + ", not a " + type.getSimpleName());
    }
}
