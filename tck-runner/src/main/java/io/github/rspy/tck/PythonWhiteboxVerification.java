package io.github.rspy.tck;

import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;

/** The TCK's whitebox subscriber verification of a Python subscriber. */
public class PythonWhiteboxVerification extends SubscriberWhiteboxVerification<Object> {
    private final TckRun run = TckRun.get();

    public PythonWhiteboxVerification() {
        super(TckRun.get().environment());
    }

    @Override
    public Subscriber<Object> createSubscriber(WhiteboxSubscriberProbe<Object> probe) {
        return TckRun.subscriber(run.factory.createWhiteboxSubscriber(new WhiteboxProbe(probe)));
    }

    @Override
    public Object createElement(int element) {
        return run.factory.createElement(element);
    }
}
