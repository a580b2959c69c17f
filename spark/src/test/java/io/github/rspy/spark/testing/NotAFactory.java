package io.github.rspy.spark.testing;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Not a {@code PartitionedPublishers}: naming it as a source's factory must be refused before its
 * static initializer or constructor runs; both count in {@link Made}, kept in another class so
 * that reading it does not initialize this one.
 */
public final class NotAFactory {
    static {
        Made.COUNT.incrementAndGet();
    }

    public NotAFactory() {
        Made.COUNT.incrementAndGet();
    }

    /** Counts what NotAFactory ran. */
    public static final class Made {
        public static final AtomicInteger COUNT = new AtomicInteger();

        public static int count() {
            return COUNT.get();
        }
    }
}
