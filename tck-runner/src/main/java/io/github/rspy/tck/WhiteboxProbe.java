package io.github.rspy.tck;

import org.reactivestreams.tck.SubscriberWhiteboxVerification.SubscriberPuppet;
import org.reactivestreams.tck.SubscriberWhiteboxVerification.WhiteboxSubscriberProbe;

/** The TCK's whitebox probe, as Python sees it. */
public final class WhiteboxProbe {
    private final WhiteboxSubscriberProbe<Object> probe;

    WhiteboxProbe(WhiteboxSubscriberProbe<Object> probe) {
        this.probe = probe;
    }

    public void registerOnSubscribe(final PythonPuppet puppet) {
        probe.registerOnSubscribe(new SubscriberPuppet() {
            @Override
            public void triggerRequest(long elements) {
                puppet.triggerRequest(elements);
            }

            @Override
            public void signalCancel() {
                puppet.signalCancel();
            }
        });
    }

    public void registerOnNext(Object element) {
        probe.registerOnNext(element);
    }

    public void registerOnError(Throwable error) {
        probe.registerOnError(error);
    }

    public void registerOnComplete() {
        probe.registerOnComplete();
    }
}
