package io.github.rspy.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.streaming.StreamingQueryListener;
import org.apache.spark.sql.types.StructType;

/**
 * A Structured Streaming sink that delivers every micro-batch's rows to a registered {@code
 * Subscriber}, in order, waiting for its demand.
 *
 * <p>Executors convert their partition's rows to {@code Row}s and send them back to the driver
 * in their commit messages (so a micro-batch's rows are on the driver at commit, as with the
 * memory sink: bound them with the source's {@code maxRecordsPerTrigger}). {@code commit} on the
 * driver hands them to the subscriber in partition order, only as fast as it requests them, and
 * returns once the last one is handed over: a slow subscriber slows the query, and no more rows
 * are queued than the subscriber has requested.
 *
 * <p>The subscriber is subscribed once, by the first query writing to its name (§2.5), and
 * receives {@code onComplete} when that query stops ({@code onError} if it fails), as the
 * driver's listener bus reports it, shortly after. If the subscriber cancels, the rows of that
 * and every later batch are dropped and the query goes on. Rows arrive as {@code Row}s, or as
 * {@code LinkedHashMap}s of column name to plain value for a subscriber registered with {@link
 * StreamRegistry#registerMapSubscriber} (Python's). A re-run of a batch after a restart is not
 * deduplicated: a restarted query needs a new subscriber anyway.
 */
final class SubscriberSink implements StreamingWrite {
    private final StreamRegistry.Entry entry;
    private final SinkSubscription subscription;
    private final StructType schema;

    SubscriberSink(StreamRegistry.Entry entry, SinkSubscription subscription, StructType schema) {
        this.entry = entry;
        this.subscription = subscription;
        this.schema = schema;
    }

    @Override
    public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
        return new WriterFactory(schema);
    }

    @Override
    public void commit(long epochId, WriterCommitMessage[] messages) {
        List<RowsMessage> parts = new ArrayList<>();
        for (WriterCommitMessage message : messages) {
            if (message instanceof RowsMessage) {
                parts.add((RowsMessage) message);
            }
        }
        parts.sort(Comparator.comparingInt(m -> m.partitionId));
        List<Object> items = new ArrayList<>();
        for (RowsMessage part : parts) {
            for (Row row : part.rows) {
                items.add(entry.rowsAsMaps ? toMap(row) : row);
            }
        }
        subscription.deliver(items);
    }

    @Override
    public void abort(long epochId, WriterCommitMessage[] messages) {
        // Nothing was delivered: rows are handed over in commit only.
    }

    @Override
    public String toString() {
        return "reactive-streams[subscriber=" + entry.name + "]";
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

    // Rows as plain values, for Python.

    static Map<String, Object> toMap(Row row) {
        Map<String, Object> map = new LinkedHashMap<>();
        StructType rowSchema = row.schema();
        for (int i = 0; i < row.size(); i++) {
            String name = rowSchema != null ? rowSchema.fields()[i].name() : "_" + (i + 1);
            map.put(name, plain(row.get(i)));
        }
        return map;
    }

    private static Object plain(Object value) {
        if (value == null || value instanceof String || value instanceof Number || value instanceof Boolean
                || value instanceof byte[]) {
            return value;
        }
        if (value instanceof Row) {
            return toMap((Row) value);
        }
        if (value instanceof scala.collection.Map) {
            Map<Object, Object> map = new LinkedHashMap<>();
            scala.collection.Iterator<?> it = ((scala.collection.Map<?, ?>) value).iterator();
            while (it.hasNext()) {
                scala.Tuple2<?, ?> pair = (scala.Tuple2<?, ?>) it.next();
                map.put(plain(pair._1()), plain(pair._2()));
            }
            return map;
        }
        if (value instanceof scala.collection.Iterable) {
            List<Object> list = new ArrayList<>();
            scala.collection.Iterator<?> it = ((scala.collection.Iterable<?>) value).iterator();
            while (it.hasNext()) {
                list.add(plain(it.next()));
            }
            return list;
        }
        if (value instanceof java.sql.Timestamp) {
            return ((java.sql.Timestamp) value).toInstant().toString();
        }
        if (value instanceof java.sql.Date) {
            return ((java.sql.Date) value).toLocalDate().toString();
        }
        return value.toString(); // java.time values (ISO-8601), intervals, ...
    }

    // Executors.

    static final class WriterFactory implements StreamingDataWriterFactory {
        private static final long serialVersionUID = 1L;

        private final StructType schema;

        WriterFactory(StructType schema) {
            this.schema = schema;
        }

        @Override
        public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
            return new RowsWriter(partitionId, CatalystTypeConverters.createToScalaConverter(schema));
        }
    }

    /** Collects a partition's rows, converted to {@code Row}s, for its commit message. */
    static final class RowsWriter implements DataWriter<InternalRow> {
        private final int partitionId;
        private final scala.Function1<Object, Object> toRow;
        private ArrayList<Row> rows = new ArrayList<>();

        RowsWriter(int partitionId, scala.Function1<Object, Object> toRow) {
            this.partitionId = partitionId;
            this.toRow = toRow;
        }

        @Override
        public void write(InternalRow row) {
            rows.add((Row) toRow.apply(row));
        }

        @Override
        public WriterCommitMessage commit() {
            RowsMessage message = new RowsMessage(partitionId, rows);
            rows = new ArrayList<>();
            return message;
        }

        @Override
        public void abort() {
            rows = new ArrayList<>();
        }

        @Override
        public void close() {
            rows = new ArrayList<>();
        }
    }

    static final class RowsMessage implements WriterCommitMessage {
        private static final long serialVersionUID = 1L;

        private final int partitionId;
        private final ArrayList<Row> rows;

        RowsMessage(int partitionId, ArrayList<Row> rows) {
            this.partitionId = partitionId;
            this.rows = rows;
        }

        @Override
        public String toString() {
            return "RowsMessage[partition " + partitionId + ", " + rows.size() + " rows]";
        }
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
            subscription.end(end.exception().isDefined()
                    ? new IllegalStateException("the streaming query " + end.id() + " failed: " + end.exception().get())
                    : null);
        }
    }
}
