package io.github.rspy.spark.sink;

import io.github.rspy.spark.common.Format;
import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.streaming.StreamingQueryListener;
import org.apache.spark.sql.types.StructType;

/**
 * A Structured Streaming sink that delivers every micro-batch's rows to a registered {@code
 * Subscriber}, in order, waiting for its demand. Spark builds a new {@code StreamingWrite} for
 * every micro-batch, so what lasts lives in the registry's subscription, in {@link DeliveryLog}
 * and in {@link QuietStops}.
 *
 * <p><b>Rows.</b> Executors send their partition's rows as {@code UnsafeRow} bytes ({@link
 * RowBytesWriter}; in local mode, where the tasks run in the driver's JVM, they hand them over in
 * memory, {@link LocalHandover}); {@code commit} on the driver offers them to the subscription,
 * which makes each row the subscriber's value ({@code org.apache.spark.sql.Row} for a JVM
 * subscriber, a tuple of plain values for a Python one, see {@link RowValues}) only as it hands
 * it to {@code onNext}, in partition order; the commit returns once the last one was processed.
 *
 * <p><b>Bound.</b> The driver holds one micro-batch's rows as bytes (as the memory sink holds
 * its rows: bound them with the source's {@code maxRecordsPerTrigger}; on a cluster the commit
 * messages also count towards {@code spark.driver.maxResultSize}) and no row as a value beyond
 * the one being handed over, never more than the subscriber requested (§1.1); between the driver
 * and a Python subscriber the bridge queues at most its outstanding demand. A slow subscriber
 * slows the query instead of growing a buffer.
 *
 * <p><b>At most once per (query id, epoch).</b> The epoch is the batch id, which a re-run keeps
 * (after a stop or a failure during a batch, or a restart from the checkpoint), with the same
 * offsets. {@link DeliveryLog} remembers how many rows of the last epoch of each query id were
 * delivered, so a re-run delivers only the rest, to the subscriber of the new run, and an epoch
 * delivered in full is not delivered again. The record is in the driver's memory and, saved
 * before the commit returns, in the query's checkpoint ({@link SinkRecords}), so a new driver
 * on the same checkpoint goes on from it. The subscriber reads each row's epoch from its
 * subscription ({@link SinkEpochs}), to make its own writes idempotent.
 *
 * <p><b>Subscribers.</b> A subscriber is subscribed once, by the first query run writing to its
 * name (§2.5), and receives {@code onComplete} when that run ends ({@code onError} if it fails),
 * as the driver's listener bus reports it, shortly after. If the subscriber cancels, the rows of
 * that and every later batch are dropped and the query goes on. If it throws (§2.13), the query
 * fails with an error naming it and the exception. Stopping the query interrupts a commit that
 * waits for demand: the batch stays uncommitted, a restart delivers its other rows, and the
 * ERROR lines Spark logs for it are kept out of the log ({@link QuietStops}).
 */
final class SubscriberSink implements StreamingWrite {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");
    private final NamedSubscriber entry;
    private final SinkSubscription subscription;
    private final StructType schema;
    private final String queryId;
    private final SinkRecords saved; // the record in the query's checkpoint, or null
    private final RowValues values;
    private volatile String write; // the micro-batch's, in LocalHandover

    SubscriberSink(NamedSubscriber entry, SinkSubscription subscription, StructType schema, String queryId,
            SinkRecords saved) {
        this.entry = entry;
        this.subscription = subscription;
        this.schema = schema;
        this.queryId = queryId;
        this.saved = saved;
        this.values = entry.link != null ? RowValues.plain(schema) : RowValues.rows(schema);
    }

    @Override
    public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
        String opened = LocalHandover.open(subscription); // one a micro-batch; leftovers of earlier ones go
        write = opened;
        return new RowBytesWriter.Factory(schema, opened);
    }

    @Override
    public void commit(long epochId, WriterCommitMessage[] messages) {
        SinkBatch batch;
        DeliveryLog.Record record;
        try {
            record = DeliveryLog.begin(queryId, epochId, saved);
            if (record.done()) { // at most once per (query id, epoch)
                LOG.log(record.stale ? Level.WARNING : Level.FINE, "epoch " + epochId + " of the streaming query "
                        + queryId + " was already delivered" + (record.stale ? " (a later epoch was: was the "
                        + "checkpoint rolled back?)" : "") + ": the subscriber registered as '" + entry.name
                        + "' gets none of it again");
                return;
            }
            batch = new SinkBatch(messages, values, schema);
        } finally {
            LocalHandover.close(write); // the batch holds its rows now, or nobody needs them
        }
        subscription.deliver(batch, record);
    }

    @Override
    public void abort(long epochId, WriterCommitMessage[] messages) {
        // Rows are handed over in commit only, and DeliveryLog keeps how far it got for a re-run.
        LocalHandover.close(write);
    }

    @Override
    public String toString() {
        return Format.SHORT_NAME + "[subscriber=" + entry.name + "]";
    }

    /**
     * The run of the query being started: Spark builds the write on the query's own thread,
     * whose job group is the run id; else (never seen) the query id, the same for every run.
     */
    static String queryRun(String queryId) {
        String group = SparkContext.getOrCreate().getLocalProperty("spark.jobGroup.id");
        try {
            return UUID.fromString(group).toString();
        } catch (RuntimeException e) {
            return queryId;
        }
    }

    /** Ends the subscription when the query run {@code run} (or every run of a query id) ends. */
    static void watchQueryEnd(String run, SinkSubscription subscription) {
        SparkContext context = SparkContext.getOrCreate();
        context.addSparkListener(new QueryEndListener(context, run, subscription));
    }

    /** Tells the subscription when its query has terminated: onComplete, or onError if it failed. */
    static final class QueryEndListener extends SparkListener {
        private final SparkContext context;
        private final String run;
        private final SinkSubscription subscription;

        QueryEndListener(SparkContext context, String run, SinkSubscription subscription) {
            this.context = context;
            this.run = Objects.requireNonNull(run);
            this.subscription = subscription;
        }

        @Override
        public void onOtherEvent(SparkListenerEvent event) {
            if (!(event instanceof StreamingQueryListener.QueryTerminatedEvent)) {
                return;
            }
            StreamingQueryListener.QueryTerminatedEvent end = (StreamingQueryListener.QueryTerminatedEvent) event;
            if (!Arrays.asList(end.runId().toString(), end.id().toString()).contains(run)) {
                return;
            }
            context.removeSparkListener(this);
            QuietStops.ended(end.id().toString(), run, end.exception().isEmpty());
            subscription.end(end.exception().isDefined()
                    ? new IllegalStateException("the streaming query " + end.id() + " failed: " + end.exception().get())
                    : null);
        }
    }
}
