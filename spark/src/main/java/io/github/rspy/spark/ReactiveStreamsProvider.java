package io.github.rspy.spark;

import io.github.rspy.spark.common.ClientLostException;
import io.github.rspy.spark.common.ElementRows;
import io.github.rspy.spark.common.Format;
import io.github.rspy.spark.partitioned.FactorySource;
import io.github.rspy.spark.source.PublisherSource;
import io.github.rspy.spark.source.ScanMetrics;
import io.github.rspy.spark.source.SourceOptions;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.streaming.ContinuousStream;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.ReportsSinkMetrics;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.streaming.StreamingQueryManager;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code reactive-streams} Structured Streaming format (DataSource V2), registered by its
 * short name through {@code META-INF/services}:
 *
 * <pre>
 * spark.readStream.format("reactive-streams")
 *     .option("publisher", NAME)                 // a StreamRegistry name
 *     .option("maxRecordsPerTrigger", 10000)     // optional, default 100000
 *     .option("prefetch", 1)                     // optional: batches requested ahead, default 1
 *     .option("onClientLoss", "stop")            // Spark Connect: stop, not fail (the default), on a lost client
 *     .schema("id LONG, name STRING").load()     // a schema is required
 *
 * spark.readStream.format("reactive-streams")    // partitions read in the executors
 *     .option("factory", CLASS)                  // a PartitionedPublishers, made by name
 *     .option("maxRecordsPerTrigger", 10000)     // optional: split across the partitions
 *     .schema("id LONG, name STRING").load()
 *
 * df.writeStream.format("reactive-streams")
 *     .option("subscriber", NAME)                // a StreamRegistry name
 *     .option("onClientLoss", "stop")            // Spark Connect: stop, not fail (the default), on a lost client
 *     .option("checkpointLocation", DIR).start() // Spark's own option (start(path) is refused)
 * </pre>
 *
 * See {@link SourceOptions}, {@link PublisherSource} (micro-batches bounded by demand),
 * {@link FactorySource} (partitions read in the executors) and the sink's {@code
 * SubscriberSink} (commits that wait for the subscriber's demand, at most once per query
 * id and epoch). Micro-batch triggers only (processing time, AvailableNow, Once): a continuous
 * query is refused with a message that says so, by the source ({@code toContinuousStream}) and
 * by the sink (its write is built in {@code start()}, not on a micro-batch query's thread). The
 * sink supports the append output mode.
 */
public final class ReactiveStreamsProvider implements TableProvider, DataSourceRegister {
    public static final String SHORT_NAME = Format.SHORT_NAME;
    public static final String SUBSCRIBER = "subscriber";
    static final String TRIGGERS = "the reactive-streams format runs micro-batch queries only: use the default "
            + "trigger, Trigger.ProcessingTime, Trigger.AvailableNow or Trigger.Once, not Trigger.Continuous";

    @Override
    public String shortName() {
        return SHORT_NAME;
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true; // the reader's schema(...), the writer's DataFrame schema
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        if (options.containsKey(SUBSCRIBER)) {
            return new StructType(); // a sink takes its DataFrame's schema
        }
        throw new IllegalArgumentException("the reactive-streams source needs a schema: "
                + "spark.readStream.format(\"reactive-streams\").option(\"publisher\", name).schema(\"value LONG\") "
                + "(or .option(\"factory\", className).schema(...))");
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        CaseInsensitiveStringMap options = new CaseInsensitiveStringMap(properties);
        SessionView session = activeSession();
        // Fail at load() or start(), naming the option or the unknown name (and the registered
        // ones), not later on the stream's thread, where Spark logs the query's stack trace.
        if (options.containsKey(SUBSCRIBER)) {
            Format.checkKnown(properties, SINK_OPTIONS, "sink");
            StreamRegistry.subscriberEntry(session.scope(), Format.required(options, SUBSCRIBER, "sink"));
        } else if (options.containsKey(FactorySource.FACTORY)) {
            new FactorySource(options, schema); // the class is checked by name before it is made
        } else {
            SourceOptions parsed = new SourceOptions(options);
            new ElementRows(schema, sourceName(parsed));
            StreamRegistry.publisherEntry(session.scope(), parsed.publisher);
        }
        return new ReactiveStreamsTable(schema, session);
    }

    /**
     * The session calling {@code load()} or {@code start()} (Spark gets the table on the
     * caller's thread): its streaming queries, so that the sink can tell a stopped query
     * (its {@code QuietStops}) and a lost Connect client can stop one, and its Connect scope ({@link
     * StreamRegistry#SCOPE_CONF}), where names are looked up first. Null if there is no active
     * or default session.
     */
    private static SessionView activeSession() {
        SparkSession session;
        try {
            session = SparkSession.active();
        } catch (RuntimeException e) {
            return new SessionView(null, null, SQLConf.get());
        }
        return new SessionView(session.streams(), session.conf().get(StreamRegistry.SCOPE_CONF, null),
                session.sessionState().conf());
    }

    /**
     * What the format keeps of the session that made a table; {@code conf} gives a sink's Arrow
     * batches their default size.
     */
    record SessionView(StreamingQueryManager queries, String scope, SQLConf conf) {}

    private static final Set<String> SINK_OPTIONS = Set.of(SUBSCRIBER, ClientLostException.OPTION);

    static String sourceName(SourceOptions options) {
        return "reactive-streams source (publisher '" + options.publisher + "')";
    }

    /** A source (micro-batch read) and a sink (streaming write) with one schema. */
    static final class ReactiveStreamsTable implements SupportsRead, SupportsWrite, ReportsSinkMetrics {
        private final StructType schema;
        private final SessionView session; // the session that made the table
        private volatile String subscriber; // the name a streaming write writes to, once one is built

        ReactiveStreamsTable(StructType schema, SessionView session) {
            this.schema = schema;
            this.session = session;
        }

        @Override
        public String name() {
            return SHORT_NAME;
        }

        @Override
        public Column[] columns() {
            Column[] columns = new Column[schema.fields().length];
            for (int i = 0; i < columns.length; i++) {
                StructField field = schema.fields()[i];
                columns[i] = Column.create(field.name(), field.dataType(), field.nullable());
            }
            return columns;
        }

        @Override
        public Set<TableCapability> capabilities() {
            // CONTINUOUS_READ only so that a continuous query reaches toContinuousStream, which
            // refuses it saying which triggers work (Spark's own refusal names none).
            return EnumSet.of(TableCapability.MICRO_BATCH_READ, TableCapability.CONTINUOUS_READ,
                    TableCapability.STREAMING_WRITE);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return () -> new PublisherScan(schema, options, session);
        }

        /** The sink's metrics in the query's progress: its subscriber's (see {@code NamedSubscriber#metrics}). */
        @Override
        public Map<String, String> metrics() {
            String name = subscriber;
            if (name == null) {
                return Collections.emptyMap();
            }
            try {
                return StreamRegistry.subscriberEntry(session.scope(), name).sink.metrics();
            } catch (IllegalArgumentException e) { // unregistered since: nothing to report
                return Collections.emptyMap();
            }
        }

        @Override
        public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
            subscriber = info.options().get(SUBSCRIBER);
            return new WriteBuilder() {
                @Override
                public Write build() {
                    return new Write() {
                        @Override
                        public StreamingWrite toStreaming() {
                            return newSink(info, session);
                        }

                        @Override
                        public String description() {
                            return SHORT_NAME + "[subscriber=" + info.options().get(SUBSCRIBER) + "]";
                        }
                    };
                }
            };
        }
    }

    /**
     * The sink of one micro-batch. A micro-batch query builds it on its own thread, whose {@code
     * sql.streaming.queryId} is the query's id; a continuous query builds it once, in {@code
     * start()}, on the caller's thread: refused there, naming the triggers that work, before the
     * subscriber is claimed.
     */
    static StreamingWrite newSink(LogicalWriteInfo info, SessionView session) {
        SparkContext context = SparkContext.getOrCreate();
        String queryId = info.queryId();
        if (!queryId.equals(context.getLocalProperty(Format.QUERY_ID))) {
            throw new UnsupportedOperationException(TRIGGERS);
        }
        String name = Format.required(info.options(), SUBSCRIBER, "sink");
        boolean stopOnClientLoss = ClientLostException.stops(info.options().get(ClientLostException.OPTION));
        StreamRegistry.Entry entry = StreamRegistry.subscriberEntry(session.scope(), name);
        SQLConf conf = session.conf();
        return entry.sink.write(info, stopOnClientLoss, session.queries(), context, conf.arrowMaxRecordsPerBatch());
    }

    static final class PublisherScan implements Scan {
        private final StructType schema;
        private final CaseInsensitiveStringMap options;
        private final SessionView session;
        private volatile PublisherSource stream; // the query's, once it started: its figures go to Spark's UI

        PublisherScan(StructType schema, CaseInsensitiveStringMap options, SessionView session) {
            this.schema = schema;
            this.options = options;
            this.session = session;
        }

        @Override
        public StructType readSchema() {
            return schema;
        }

        @Override
        public String description() {
            return options.containsKey(FactorySource.FACTORY)
                    ? SHORT_NAME + "[factory=" + options.get(FactorySource.FACTORY) + "]"
                    : SHORT_NAME + "[publisher=" + options.get(SourceOptions.PUBLISHER) + "]";
        }

        @Override
        public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
            if (options.containsKey(FactorySource.FACTORY)) {
                return new FactorySource(options, schema);
            }
            SourceOptions parsed = new SourceOptions(options);
            ElementRows rows = new ElementRows(schema, sourceName(parsed));
            StreamRegistry.Entry entry = StreamRegistry.publisherEntry(session.scope(), parsed.publisher);
            PublisherSource made = new PublisherSource(entry.source, rows, parsed, checkpointLocation,
                    session.queries());
            stream = made;
            return made;
        }

        @Override
        public CustomMetric[] supportedCustomMetrics() {
            return options.containsKey(FactorySource.FACTORY) ? new CustomMetric[0] : ScanMetrics.supported();
        }

        @Override
        public CustomTaskMetric[] reportDriverMetrics() {
            return ScanMetrics.reported(stream);
        }

        @Override
        public ContinuousStream toContinuousStream(String checkpointLocation) {
            throw new UnsupportedOperationException(TRIGGERS);
        }
    }
}
