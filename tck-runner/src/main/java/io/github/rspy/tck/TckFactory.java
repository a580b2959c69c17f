package io.github.rspy.tck;

/**
 * Implemented in Python: the factory methods of one Python verification class. Publishers,
 * subscribers and processors are returned as Java objects (the bridge's adapters), either
 * org.reactivestreams or java.util.concurrent.Flow ones.
 */
public interface TckFactory {
    Object createPublisher(long elements);

    /** Null when the class has no failed publisher (the TCK then skips the tests that need one). */
    Object createFailedPublisher();

    Object createWhiteboxSubscriber(WhiteboxProbe probe);

    Object createBlackboxSubscriber();

    /** The blackbox hook: nudge a subscriber that waits for something before it requests. */
    void triggerRequest(Object subscriber);

    Object createIdentityProcessor(int bufferSize);

    Object createElement(int element);
}
