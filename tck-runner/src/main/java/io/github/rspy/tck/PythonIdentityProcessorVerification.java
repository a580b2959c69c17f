package io.github.rspy.tck;

import java.util.concurrent.ExecutorService;
import org.reactivestreams.Processor;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.IdentityProcessorVerification;

/** The TCK's identity processor verification of a Python processor. */
public class PythonIdentityProcessorVerification extends IdentityProcessorVerification<Object> {
    private final TckRun run = TckRun.get();
    private final ExecutorService executor = run.newExecutor();

    public PythonIdentityProcessorVerification() {
        super(TckRun.get().environment(), TckRun.get().gcTimeoutMillis, TckRun.get().processorBufferSize);
    }

    @Override
    public Processor<Object, Object> createIdentityProcessor(int bufferSize) {
        return TckRun.processor(run.factory.createIdentityProcessor(bufferSize));
    }

    @Override
    public Publisher<Object> createFailedPublisher() {
        return TckRun.publisher(run.factory.createFailedPublisher());
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
