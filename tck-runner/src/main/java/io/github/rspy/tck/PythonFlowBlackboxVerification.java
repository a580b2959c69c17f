package io.github.rspy.tck;

import java.util.concurrent.Flow;
import org.reactivestreams.tck.flow.FlowSubscriberBlackboxVerification;

/** The TCK's Flow blackbox subscriber verification of a Python subscriber. */
public class PythonFlowBlackboxVerification extends FlowSubscriberBlackboxVerification<Object> {
    private final TckRun run = TckRun.get();

    public PythonFlowBlackboxVerification() {
        super(TckRun.get().environment());
    }

    @Override
    public Flow.Subscriber<Object> createFlowSubscriber() {
        return TckRun.flowSubscriber(run.factory.createBlackboxSubscriber());
    }

    @Override
    public void triggerFlowRequest(Flow.Subscriber<? super Object> subscriber) {
        run.factory.triggerRequest(subscriber);
    }

    @Override
    public Object createElement(int element) {
        return run.factory.createElement(element);
    }
}
