package io.github.rspy.tck;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * For publishers whose subscribers own what they receive (the bridge's Arrow roots, decoded from
 * Python's {@code pyarrow.RecordBatch}es): the TCK's subscribers keep their elements and never
 * close them, so each {@link AutoCloseable} element they receive is kept here and closed when the
 * test that received it is over (at the next test's start, or when the run ends), and at once if
 * it arrives after the run. The publisher's signals reach the TCK's subscriber unchanged.
 */
final class ClosingElements {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.tck");
    private final List<AutoCloseable> received = new ArrayList<>();
    private boolean ended;

    /** {@code publisher}, its subscribers' closeable elements closed for them. */
    <T> Publisher<T> wrap(Publisher<T> publisher) {
        return publisher == null ? null : new Owned<>(publisher, this);
    }

    /** Closes what the tests so far received; with {@code end}, anything arriving later too. */
    void closeReceived(boolean end) {
        List<AutoCloseable> toClose;
        synchronized (this) {
            ended |= end;
            toClose = new ArrayList<>(received);
            received.clear();
        }
        toClose.forEach(ClosingElements::close);
    }

    private void add(Object element) {
        if (!(element instanceof AutoCloseable)) {
            return;
        }
        synchronized (this) {
            if (!ended) {
                received.add((AutoCloseable) element);
                return;
            }
        }
        close((AutoCloseable) element);
    }

    private static void close(AutoCloseable element) {
        try {
            element.close();
        } catch (Exception e) {
            LOG.log(Level.WARNING, "closing an element a TCK subscriber received failed", e);
        }
    }

    private static final class Owned<T> implements Publisher<T> {
        private final Publisher<T> publisher;
        private final ClosingElements owner;

        Owned(Publisher<T> publisher, ClosingElements owner) {
            this.publisher = publisher;
            this.owner = owner;
        }

        @Override
        public void subscribe(Subscriber<? super T> s) {
            // §1.9: a null subscriber goes to the publisher as it is, which must throw
            publisher.subscribe(s == null ? null : new Receiving<T>(s, owner));
        }

        @Override
        public String toString() {
            return publisher.toString();
        }
    }

    private static final class Receiving<T> implements Subscriber<T> {
        private final Subscriber<? super T> subscriber;
        private final ClosingElements owner;

        Receiving(Subscriber<? super T> subscriber, ClosingElements owner) {
            this.subscriber = subscriber;
            this.owner = owner;
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscriber.onSubscribe(s);
        }

        @Override
        public void onNext(T element) {
            try {
                subscriber.onNext(element);
            } finally {
                owner.add(element);
            }
        }

        @Override
        public void onError(Throwable t) {
            subscriber.onError(t);
        }

        @Override
        public void onComplete() {
            subscriber.onComplete();
        }

        @Override
        public String toString() {
            return subscriber.toString();
        }
    }
}
