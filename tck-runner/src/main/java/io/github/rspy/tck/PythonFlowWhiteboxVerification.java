package io.github.rspy.tck;

import java.util.concurrent.Flow;
import org.reactivestreams.tck.SubscriberWhiteboxVerification.WhiteboxSubscriberProbe;
import org.reactivestreams.tck.flow.FlowSubscriberWhiteboxVerification;

/** The TCK's Flow whitebox subscriber verification of a Python subscriber. */
public class PythonFlowWhiteboxVerification extends FlowSubscriberWhiteboxVerification<Object> {
    private final TckRun run = TckRun.get();

    public PythonFlowWhiteboxVerification() {
        super(TckRun.get().environment());
    }

    @Override
    protected Flow.Subscriber<Object> createFlowSubscriber(WhiteboxSubscriberProbe<Object> probe) {
        return TckRun.flowSubscriber(run.factory.createWhiteboxSubscriber(new WhiteboxProbe(probe)));
    }

    @Override
    public Object createElement(int element) {
        return run.factory.createElement(element);
    }
}
