package io.github.rspy.tck;

import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;

/** The TCK's blackbox subscriber verification of a Python subscriber. */
public class PythonBlackboxVerification extends SubscriberBlackboxVerification<Object> {
    private final TckRun run = TckRun.get();

    public PythonBlackboxVerification() {
        super(TckRun.get().environment());
    }

    @Override
    public Subscriber<Object> createSubscriber() {
        return TckRun.subscriber(run.factory.createBlackboxSubscriber());
    }

    @Override
    public void triggerRequest(Subscriber<? super Object> subscriber) {
        run.factory.triggerRequest(subscriber);
    }

    @Override
    public Object createElement(int element) {
        return run.factory.createElement(element);
    }
}
