package io.github.rspy.bridge;

import org.reactivestreams.Processor;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** A Python processor seen from Java: its subscriber side and its publisher side (§4.1). */
final class PythonProcessor implements Processor<Object, Object> {
    private final ToPythonSubscriber input;
    private final FromPythonPublisher output;

    PythonProcessor(ToPythonSubscriber input, FromPythonPublisher output) {
        this.input = input;
        this.output = output;
    }

    @Override
    public void onSubscribe(Subscription s) {
        input.onSubscribe(s);
    }

    @Override
    public void onNext(Object item) {
        input.onNext(item);
    }

    @Override
    public void onError(Throwable t) {
        input.onError(t);
    }

    @Override
    public void onComplete() {
        input.onComplete();
    }

    @Override
    public void subscribe(Subscriber<? super Object> subscriber) {
        output.subscribe(subscriber);
    }
}
