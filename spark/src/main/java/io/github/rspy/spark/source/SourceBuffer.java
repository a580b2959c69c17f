package io.github.rspy.spark.source;

/**
 * What a {@link PublisherSource} holds, by offset: elements [{@link #base()}, {@link #end()}),
 * as rows ({@link RowBuffer}) or as Arrow batches ({@link ArrowBuffer}). Not thread-safe: its
 * source (or the registry, for a stopped query's) guards it.
 */
interface SourceBuffer {
    long base();

    long end();

    default long size() {
        return end() - base();
    }

    /** Drops what comes before {@code upTo} (its batch is over); how many offsets were dropped. */
    long release(long upTo);

    /** Drops everything and numbers the next offset {@code next}. */
    void restartAt(long next);
}
