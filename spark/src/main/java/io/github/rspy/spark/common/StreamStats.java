package io.github.rspy.spark.common;

import io.github.rspy.bridge.Demand;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of one registered name, kept by the streaming source or sink that uses it, so that
 * tests and users can check that demand bounded every buffer.
 *
 * <ul>
 *   <li>{@code requested}: for a publisher, the demand the source signalled to it; for a
 *       subscriber, the demand it signalled to the sink (capped at {@code Long.MAX_VALUE}, §3.17).
 *   <li>{@code elements}: elements the source received, or rows the sink delivered.
 *   <li>{@code buffered}, {@code maxBuffered}: elements held now and at most: by the source,
 *       received and not yet released by a finished micro-batch (never above {@code
 *       maxRecordsPerTrigger}); by the sink, handed to the delivery loop and not yet delivered
 *       (never above the subscriber's outstanding demand).
 *   <li>{@code dropped}: rows the sink did not deliver because the subscriber had cancelled or
 *       the stream had ended.
 * </ul>
 */
public final class StreamStats {
    private final AtomicLong requested = new AtomicLong();
    private final LongAdder elements = new LongAdder(); // counted per element: cheap to add
    private final AtomicLong buffered = new AtomicLong();
    private final AtomicLong maxBuffered = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final LongAdder arrowRows = new LongAdder(); // rows that crossed as Arrow columns

    /** Internal to the connectors: counted by the source or sink. */
    public void addRequested(long n) {
        Demand.add(requested, n); // §3.17
    }

    /** Internal to the connectors: counted by the source or sink. */
    public void addElements(long n) {
        elements.add(n);
    }

    /** Internal to the connectors: counted by the source or sink. */
    public void addBuffered(long delta) {
        long now = buffered.addAndGet(delta);
        maxBuffered.accumulateAndGet(now, Math::max);
    }

    /** For a source, which counts what it holds itself: held now, and the most ever held. */
    /** Internal to the connectors: counted by the source or sink. */
    public void setBuffered(long now, long max) {
        buffered.set(now);
        if (max > maxBuffered.get()) {
            maxBuffered.accumulateAndGet(max, Math::max);
        }
    }

    /** Internal to the connectors: counted by the source or sink. */
    public void addArrowRows(long n) {
        arrowRows.add(n);
    }

    /** Internal to the connectors: counted by the source or sink. */
    public void addDropped(long n) {
        dropped.addAndGet(n);
    }

    public long requested() {
        return requested.get();
    }

    public long elements() {
        return elements.sum();
    }

    public long buffered() {
        return buffered.get();
    }

    public long maxBuffered() {
        return maxBuffered.get();
    }

    public long dropped() {
        return dropped.get();
    }

    /**
     * Rows that crossed as Arrow columns: a source's rows kept in the Arrow batch they came in
     * (a publisher's batches, or Python's rows whose columns are the source's), or a sink's rows
     * made into Arrow columns for its subscriber.
     */
    public long arrowRows() {
        return arrowRows.sum();
    }

    /** The counters by name ({@code max_buffered} spelled as in Python), for the Python API. */
    public Map<String, Long> toMap() {
        Map<String, Long> map = new LinkedHashMap<>();
        map.put("requested", requested());
        map.put("elements", elements());
        map.put("buffered", buffered());
        map.put("max_buffered", maxBuffered());
        map.put("dropped", dropped());
        map.put("arrow_rows", arrowRows());
        return map;
    }

    @Override
    public String toString() {
        return "StreamStats" + toMap();
    }
}
