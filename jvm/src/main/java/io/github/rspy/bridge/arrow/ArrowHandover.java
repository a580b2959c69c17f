package io.github.rspy.bridge.arrow;

/**
 * A subscription that hands its subscriber the Arrow elements it delivers: record batches as
 * {@code VectorSchemaRoot}s, and rows as {@link ColumnRows} once asked. The subscriber owns each
 * one and closes it (a JVM publisher's own roots, which are not handed over, stay its
 * publisher's). The bridge's {@code FromPythonPublisher} and the Spark Connect plugin's client
 * publishers are such subscriptions; nothing here names an Arrow type.
 */
public interface ArrowHandover {
    /**
     * Asked before the first request: rows that arrive as Arrow are then delivered as {@link
     * ColumnRows}, one element per batch, counted row by row against the demand (§1.1).
     */
    void takeColumnRows();
}
