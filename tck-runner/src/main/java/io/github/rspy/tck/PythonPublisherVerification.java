package io.github.rspy.tck;

import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;

/** The TCK's publisher verification of a Python publisher (through {@link TckRun}). */
public class PythonPublisherVerification extends PublisherVerification<Object> {
    private final TckRun run = TckRun.get();

    public PythonPublisherVerification() {
        super(TckRun.get().environment(), TckRun.get().gcTimeoutMillis);
    }

    @Override
    public Publisher<Object> createPublisher(long elements) {
        return run.published(run.factory.createPublisher(elements));
    }

    @Override
    public Publisher<Object> createFailedPublisher() {
        return run.published(run.factory.createFailedPublisher());
    }

    @Override
    public long maxElementsFromPublisher() {
        return run.maxElements;
    }

    @Override
    public long boundedDepthOfOnNextAndRequestRecursion() {
        return run.boundedDepth;
    }

    @Override
    public boolean skipStochasticTests() {
        return run.skipStochastic;
    }
}
