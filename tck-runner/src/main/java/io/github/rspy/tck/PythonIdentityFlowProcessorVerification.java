package io.github.rspy.tck;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.flow.IdentityFlowProcessorVerification;

/** The TCK's identity Flow processor verification of a Python processor. */
public class PythonIdentityFlowProcessorVerification extends IdentityFlowProcessorVerification<Object> {
    private final TckRun run = TckRun.get();
    private final ExecutorService executor = run.newExecutor();

    public PythonIdentityFlowProcessorVerification() {
        super(TckRun.get().environment(), TckRun.get().gcTimeoutMillis, TckRun.get().processorBufferSize);
    }

    @Override
    protected Flow.Processor<Object, Object> createIdentityFlowProcessor(int bufferSize) {
        return TckRun.flowProcessor(run.factory.createIdentityProcessor(bufferSize));
    }

    @Override
    protected Flow.Publisher<Object> createFailedFlowPublisher() {
        return TckRun.flowPublisher(run.factory.createFailedPublisher());
    }

    @Override
    public ExecutorService publisherExecutorService() {
        return executor;
    }

    @Override
    public Object createElement(int element) {
        return run.factory.createElement(element);
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

    @Override
    public long maxSupportedSubscribers() {
        return run.maxSupportedSubscribers;
    }

    @Override
    public boolean doesCoordinatedEmission() {
        return run.coordinatedEmission;
    }
}
