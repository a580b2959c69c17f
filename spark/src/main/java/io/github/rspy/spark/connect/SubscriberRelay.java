package io.github.rspy.spark.connect;

import io.github.rspy.bridge.arrow.ArrowBatches;
import io.github.rspy.spark.sink.SinkLink;
import io.github.rspy.spark.StreamRegistry;
import io.github.rspy.spark.connect.wire.Status;
import java.util.Arrays;
import java.util.Objects;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A Python subscriber in a Spark Connect client, registered for the {@code reactive-streams}
 * sink (the {@code register_subscriber} op). The sink subscribes this relay; the relay passes
 * every signal on to the registration's stream, which sends rows to the client within the
 * demand the client signals (its {@code demand} ops reach the sink's subscription as they are).
 * When a query claims it, the client hears {@code subscribed} with the column names, and calls
 * its subscriber's {@code on_subscribe} then. A subscriber of Arrow batches (the op's {@code
 * arrow_batch_rows}) gets each batch as an Arrow IPC stream; a subscriber of rows gets their plain
 * columns as the bridge's {@code ColumnRows} (the stream counts each of their rows against the
 * demand), which reach the client as tuples. What the client's subscriber processed or raised
 * comes back through the {@link SinkLink} ({@code sink_processed}, {@code sink_raised}).
 */
final class SubscriberRelay implements Subscriber<Object>, Publisher<Object>, Registered {
    final SinkLink link;
    private final PublisherStream stream;
    private volatile Subscriber<? super Object> downstream; // the stream
    private volatile boolean lost; // the client is gone: the sink's subscription stays for clientLost

    private final String scope;
    private final String name;

    /** {@code batchRows}: null for rows, else the rows per Arrow batch ({@link SinkLink#SinkLink(int)}). */
    SubscriberRelay(PublisherStream stream, String scope, String name, Integer batchRows) {
        this.link = batchRows == null ? new SinkLink() : new SinkLink(batchRows);
        if (batchRows == null) { // rows as Arrow columns, a reply's worth in each element
            link.takeColumnRows(stream.batchSize());
        }
        this.stream = stream;
        this.scope = scope;
        this.name = name;
    }

    @Override
    public void subscribe(Subscriber<? super Object> subscriber) {
        downstream = Objects.requireNonNull(subscriber, "§1.9: subscribe(null)"); // only the stream does
    }

    @Override
    public void onSubscribe(Subscription s) {
        Objects.requireNonNull(s, "§2.13: onSubscribe(null)");
        stream.notice(Status.newBuilder().setSubscribed(Status.Subscribed.newBuilder()
                .addAllFields(Arrays.asList(link.fieldNames()))).build());
        downstream.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                s.request(n);
            }

            @Override
            public void cancel() {
                if (!lost) { // a lost client fails or stops the query instead (SinkLink.clientLost)
                    s.cancel();
                }
            }
        });
    }

    /**
     * A row, rows as columns, or an Arrow batch: copied now as an IPC stream (the sink closes its
     * root when this returns), which reaches the client as bytes.
     */
    @Override
    public void onNext(Object element) {
        downstream.onNext(element instanceof VectorSchemaRoot
                ? ArrowBatches.ipcStream((VectorSchemaRoot) element)
                : element);
    }

    @Override
    public void onError(Throwable t) {
        downstream.onError(t);
    }

    @Override
    public void onComplete() {
        downstream.onComplete();
    }

    /**
     * The client is gone: the query that claimed this subscriber fails or stops, and the name
     * goes when it has (each micro-batch looks it up); at once if no query claimed it.
     */
    void lost(String reason) {
        lost = true;
        link.clientLost(reason, () -> StreamRegistry.unregisterScoped(scope, name, this));
    }

    @Override
    public void unregistered() {
        if (!link.isClaimed()) { // no query took it: nothing will come
            stream.cancel(ConnectStream.CLOSED, true);
        }
    }
}
