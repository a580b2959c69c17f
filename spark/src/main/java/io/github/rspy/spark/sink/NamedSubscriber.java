package io.github.rspy.spark.sink;

import io.github.rspy.spark.common.StreamStats;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.streaming.StreamingQueryManager;
import org.apache.spark.sql.types.StructType;
import org.reactivestreams.Subscriber;

/**
 * A subscriber registered by name, as the sink writes to it: the subscriber, its counters, the
 * link of a Python subscriber (or of Spark Connect's relay), and the subscription the query
 * that claimed it gave it. The registry keeps one for each registered subscriber. Internal to
 * the connectors.
 */
public final class NamedSubscriber {
    final String name;
    final Subscriber<Object> subscriber;
    final SinkLink link; // a Python subscriber's: rows go as plain values, processing is reported
    final StreamStats stats;
    private SinkSubscription sink; // guarded by this

    /** The subscriber registered as {@code name} (with its {@code link}, or null), counted in {@code stats}. */
    public NamedSubscriber(String name, Subscriber<Object> subscriber, SinkLink link, StreamStats stats) {
        this.name = name;
        this.subscriber = subscriber;
        this.link = link;
        this.stats = stats;
    }

    /**
     * The sink of one micro-batch of the query {@code info.queryId()}, built on the query's own
     * thread: claims the subscriber for the query's run (see {@link #claim}), which a lost
     * Spark Connect client stops ({@code stopOnClientLoss}) or fails; {@code queries} is the
     * session's (null if not known), {@code sparkBatchRows} Spark's Arrow batch size.
     */
    public StreamingWrite write(LogicalWriteInfo info, boolean stopOnClientLoss, StreamingQueryManager queries,
            SparkContext context, int sparkBatchRows) {
        String queryId = info.queryId();
        String run = SubscriberSink.queryRun(queryId);
        QuietStops.watch(queryId, run, queries, context);
        SinkSubscription subscription = claim(run, info.schema(), sparkBatchRows);
        subscription.onClientLoss(stopOnClientLoss, queries, queryId);
        SinkRecords saved = SinkRecords.forQuery(queries, queryId, info.options());
        return new SubscriberSink(this, subscription, info.schema(), queryId, saved);
    }

    /**
     * The subscription of this name's subscriber for the query run {@code run}, writing rows
     * of {@code schema} (in Arrow batches of Spark's {@code sparkBatchRows}, if its link asks
     * for batches and names no size): made (and {@code onSubscribe} signalled) by the first query that
     * writes to the name. §2.5 allows a subscriber one subscription, so another query, or
     * another run of the same query (a restart), is refused.
     */
    /** The metrics of the subscription a query gave this subscriber ({@link SinkSubscription#metrics}); none before. */
    public synchronized java.util.Map<String, String> metrics() {
        return sink == null ? java.util.Collections.emptyMap() : sink.metrics();
    }

    synchronized SinkSubscription claim(String run, StructType schema, int sparkBatchRows) {
        if (sink == null) {
            int batchRows = link == null ? 0 : link.batchRows() < 0 ? Math.max(1, sparkBatchRows) : link.batchRows();
            // The bridge's own subscriber (Python's, classic) takes rows as Arrow columns, and
            // so does a link that asks for them (Connect's relay), in elements of its size.
            int columnRows = link == null ? 0 : link.columnRowsMost() > 0 ? link.columnRowsMost()
                    : subscriber instanceof io.github.rspy.bridge.ToPythonSubscriber ? SinkSubscription.COLUMN_ROWS_MAX : 0;
            sink = new SinkSubscription(name, subscriber, stats, run, link != null, batchRows, columnRows);
            if (link != null) {
                link.attach(schema.fieldNames(), sink); // before onSubscribe, which reads the names
            }
            SubscriberSink.watchQueryEnd(run, sink);
            sink.start();
            return sink;
        }
        if (sink.run().equals(run) && (!sink.isEnded() || sink.isClientLost())) { // a lost client: its failure
            return sink; // Spark built the write of the same run again
        }
        throw new IllegalStateException("the subscriber registered as '" + name + "' was already subscribed by "
                + "the streaming query run " + sink.run() + (sink.isEnded() ? ", which has ended" : "")
                + " (§2.5: a Subscriber is subscribed at most once): register a new subscriber for a new query "
                + "or a restart");
    }
}
