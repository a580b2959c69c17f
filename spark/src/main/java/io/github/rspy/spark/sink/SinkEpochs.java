package io.github.rspy.spark.sink;

import org.reactivestreams.Subscription;

/**
 * The subscription the {@code reactive-streams} sink gives its subscriber: a {@code
 * Subscription} that also says which micro-batch the rows being delivered belong to, so that a
 * subscriber can make its own writes idempotent, as {@code foreachBatch} does with its {@code
 * batchId}. A re-run of a micro-batch (after a stop, a failure or a driver restart) keeps its
 * epoch.
 *
 * <pre>{@code
 * public void onSubscribe(Subscription s) { epochs = (SinkEpochs) s; s.request(1024); }
 * public void onNext(Object row) { store.put(epochs.epoch(), epochs.queryId(), row); ... }
 * }</pre>
 */
public interface SinkEpochs extends Subscription {
    /** The epoch (batch id) of the rows being delivered now; -1 before the first micro-batch. */
    long epoch();

    /** The id of the streaming query writing to the sink (kept in its checkpoint); null before it. */
    String queryId();
}
