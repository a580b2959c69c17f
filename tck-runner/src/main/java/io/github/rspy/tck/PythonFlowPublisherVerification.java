package io.github.rspy.tck;

import java.util.concurrent.Flow;
import org.reactivestreams.tck.flow.FlowPublisherVerification;

/** The TCK's Flow publisher verification of a Python publisher. */
public class PythonFlowPublisherVerification extends FlowPublisherVerification<Object> {
    private final TckRun run = TckRun.get();

    public PythonFlowPublisherVerification() {
        super(TckRun.get().environment(), TckRun.get().gcTimeoutMillis);
    }

    @Override
    public Flow.Publisher<Object> createFlowPublisher(long elements) {
        return run.flowPublished(run.factory.createPublisher(elements));
    }

    @Override
    public Flow.Publisher<Object> createFailedFlowPublisher() {
        return run.flowPublished(run.factory.createFailedPublisher());
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
