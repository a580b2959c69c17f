package io.github.rspy.spark.connect;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.rspy.spark.StreamRegistry;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.spark.connect.proto.Relation;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.service.ExecuteHolder;
import org.apache.spark.sql.connect.service.SessionHolder;
import org.reactivestreams.Publisher;
import org.sparkproject.connect.protobuf.Any;
import org.sparkproject.connect.protobuf.CodedInputStream;

/**
 * The ops of the wire contract (docs/connect-wire.md, "Ops"), for both plugins: every op as an
 * ExecutePlan command ({@link #execute}), the quick ones also in GetStatus ({@link #status}).
 * An op that fails replies a Status error and returns normally; only an undecodable Call throws.
 */
final class ConnectOps {
    private ConnectOps() {}

    /** Serves one ExecutePlan command; its replies go through the call's response observer. */
    static void execute(Any any, SparkConnectPlanner planner) {
        Wire.Call call = Wire.decode(any);
        scala.Option<ExecuteHolder> holder = planner.executeHolderOpt();
        if (holder.isEmpty()) {
            throw new IllegalStateException("an rspy " + call.op() + " call outside an ExecutePlan: nowhere to reply");
        }
        ExecuteReplies replies = new ExecuteReplies(holder.get().responseObserver());
        try {
            ConnectRuntime runtime = ConnectRuntime.of(planner.session());
            Scope scope = Scope.of(planner.sessionHolder());
            switch (call.op()) {
                case "mux" -> mux(call, scope, runtime, replies);
                case "open_dataframe" -> openDataFrame(call, scope, runtime, planner, replies);
                case "fetch" -> fetch(call, scope, runtime, replies);
                case "upload_append" -> uploadAppend(call, scope, runtime, replies);
                case "upload_finish" -> uploadFinish(call, scope, runtime, planner, replies);
                default -> replies.status(quick(call, scope, runtime, planner.session()));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the operation was interrupted: Spark ends the call
        } catch (Exception | LinkageError e) { // Scala's checked exceptions too (AnalysisException)
            replies.status(Wire.error(e));
        }
    }

    /** Serves the Calls among GetStatus extensions, one Status each, in order; null if none. */
    static List<Any> status(SessionHolder session, List<Any> extensions) {
        List<Any> statuses = new ArrayList<>();
        for (Any any : extensions) {
            if (!Wire.isCall(any)) {
                continue; // another plugin's
            }
            try { // one Status for each Call, in order, an undecodable one's an error too
                Wire.Call call = Wire.decode(any);
                statuses.add(Wire.status(quick(call, Scope.of(session), ConnectRuntime.of(session.session()),
                        session.session())));
            } catch (Exception | LinkageError e) {
                statuses.add(Wire.status(Wire.error(e)));
            }
        }
        return statuses.isEmpty() ? null : statuses;
    }

    /** The quick ops: each one Status, at once. Every op naming a stream renews its lease. */
    private static Map<String, Object> quick(Wire.Call call, Scope scope, ConnectRuntime runtime,
            SparkSession session) {
        ConnectStreams streams = runtime.streams;
        switch (call.op()) {
            case "subscribe":
                subscribe(call, scope, runtime, session);
                return Wire.event("ok");
            case "register_publisher":
            case "register_subscriber":
                register(call, scope, runtime, session);
                return Wire.event("ok");
            case "demand": {
                ConnectStream stream = streams.find(scope, call.text("stream"));
                if (stream == null) {
                    return Wire.unknown(call.text("stream"));
                }
                if (!(stream instanceof PublisherStream publisher)) {
                    throw new IllegalArgumentException("demand on stream " + stream.id
                            + ", which is not a subscription");
                }
                publisher.demand(call.integer("n", 0)); // as is: the client keeps §3.9
                return Wire.event("ok");
            }
            case "cancel":
            case "close": {
                ConnectStream stream = streams.find(scope, call.text("stream"));
                if (stream == null) {
                    return Wire.unknown(call.text("stream"));
                }
                boolean close = call.op().equals("close");
                stream.cancel(close ? ConnectStream.CLOSED : ConnectStream.CANCELLED_BY_CLIENT, close);
                return Wire.event("ok");
            }
            case "keepalive": { // renews each stream named; says which ended and which it does not know
                List<String> ended = new ArrayList<>();
                List<String> unknown = new ArrayList<>();
                for (JsonNode id : call.header().path("streams")) {
                    if (streams.find(scope, id.asText()) == null) {
                        (streams.ended(scope, id.asText()) ? ended : unknown).add(id.asText());
                    }
                }
                return Wire.event("ok", "ended", ended, "unknown", unknown);
            }
            case "stats":
                return streams.stats(scope, runtime.diagnostics);
            case "push": {
                ClientPublisher publisher = served(streams, scope, call, ClientPublisher.class);
                if (publisher == null) {
                    return Wire.unknown(call.text("stream"));
                }
                return publisher.push(call.integer("sub", 0), call.body(), call.optionalText("end"),
                        call.optionalText("error"));
            }
            case "sink_epoch": {
                SubscriberRelay relay = served(streams, scope, call, SubscriberRelay.class);
                if (relay == null) {
                    return Wire.unknown(call.text("stream"));
                }
                return Wire.event("ok", "epoch", relay.link.epoch(), "query", relay.link.queryId());
            }
            case "sink_processed":
            case "sink_raised": {
                SubscriberRelay relay = served(streams, scope, call, SubscriberRelay.class);
                if (relay == null) {
                    return Wire.unknown(call.text("stream"));
                }
                if (call.op().equals("sink_processed")) {
                    relay.link.processed(call.integer("rows", 0));
                } else {
                    relay.link.raised(call.integer("rows", 0), call.text("error"));
                }
                return Wire.event("ok");
            }
            case "unregister": {
                Object value = StreamRegistry.unregisterScopedValue(scope.serverSessionId(), call.text("name"));
                if (value instanceof Registered registered) {
                    registered.unregistered();
                }
                return Wire.event("ok", "registered", value != null);
            }
            case "registry_stats": {
                String name = call.text("name");
                if (!StreamRegistry.isRegistered(scope.serverSessionId(), name)) {
                    return Wire.event("stats", "registered", false);
                }
                return Wire.event("stats", "registered", true, "counters",
                        StreamRegistry.statsMap(scope.serverSessionId(), name));
            }
            case "mux":
            case "open_dataframe":
            case "fetch":
            case "upload_append":
            case "upload_finish":
                throw new IllegalArgumentException("the " + call.op() + " op runs as an ExecutePlan command, "
                        + "not in GetStatus");
            default:
                throw new IllegalArgumentException("unknown rspy Connect op '" + call.op() + "'");
        }
    }

    /**
     * The {@code subscribe} op: a subscription to the JVM publisher registered as the call's
     * {@code name}, whose replies go on the client's reply path (the call's {@code mux}).
     */
    private static void subscribe(Wire.Call call, Scope scope, ConnectRuntime runtime, SparkSession session) {
        String name = call.text("name");
        int maxBatch = maxBatch(call, 0); // required
        Mux mux = muxOf(call, scope, runtime);
        Registrars.run(runtime.registrars, session); // again if one failed before, naming it
        Publisher<?> publisher = StreamRegistry.publisher(name, call.optionalText("arg"));
        PublisherStream stream = new PublisherStream(call.text("stream"), scope, name, maxBatch, runtime.streams);
        open(stream, publisher, mux, runtime);
    }

    /** The reply path the call names ({@code mux}), open in the caller's session. */
    private static Mux muxOf(Wire.Call call, Scope scope, ConnectRuntime runtime) {
        String id = call.text("mux");
        if (!(runtime.streams.find(scope, id) instanceof Mux mux)) {
            throw new IllegalArgumentException("the " + call.op() + " call names reply path '" + id
                    + "', which is not open in this session");
        }
        return mux;
    }

    /** Opens {@code stream} in its scope and starts it on {@code mux}; it leaves the scope if that fails. */
    private static void open(PublisherStream stream, Publisher<?> publisher, Mux mux, ConnectRuntime runtime) {
        runtime.streams.add(stream);
        try {
            stream.start(publisher, mux);
        } catch (RuntimeException e) {
            runtime.streams.remove(stream);
            throw e;
        }
    }

    /** The {@code mux} op: the client's reply path, served on this call's thread until it ends. */
    private static void mux(Wire.Call call, Scope scope, ConnectRuntime runtime, ExecuteReplies replies)
            throws InterruptedException {
        Mux mux = new Mux(call.text("stream"), scope, runtime.streams);
        runtime.streams.add(mux);
        mux.run(replies);
    }

    /**
     * The call's {@code max_batch}, {@code absent} if it has none: every op that takes one
     * refuses a value outside 1 .. 2³¹−1, naming it (absent and 0: required).
     */
    private static int maxBatch(Wire.Call call, long absent) {
        long maxBatch = call.integer("max_batch", absent);
        if (maxBatch < 1 || maxBatch > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(call.op() + " needs max_batch from 1 to " + Integer.MAX_VALUE
                    + ", got " + call.header().get("max_batch"));
        }
        return (int) maxBatch;
    }

    /** The registration a stream of {@code scope} serves, as a {@code type}; null if no such stream. */
    private static <T> T served(ConnectStreams streams, Scope scope, Wire.Call call, Class<T> type) {
        ConnectStream stream = streams.find(scope, call.text("stream"));
        if (stream == null) {
            return null;
        }
        Object served = stream instanceof PublisherStream publisher ? publisher.registration() : null;
        if (!type.isInstance(served)) {
            throw new IllegalArgumentException(call.op() + " on stream " + stream.id + ", which is not a "
                    + (type == ClientPublisher.class ? "registered publisher" : "registered subscriber"));
        }
        return type.cast(served);
    }

    /**
     * The {@code register_publisher} and {@code register_subscriber} ops: the name, in the
     * caller's session only, for the {@code reactive-streams} source or sink; its stream, on
     * the client's reply path, carries the registration's notices and rows until the name is
     * freed and no query holds it, or the client is gone (then the queries fail or stop:
     * ClientLostException).
     */
    private static void register(Wire.Call call, Scope scope, ConnectRuntime runtime, SparkSession session) {
        String id = call.text("stream");
        String name = call.text("name");
        int maxBatch = maxBatch(call, 1);
        Mux mux = muxOf(call, scope, runtime);
        String scopeId = scope.serverSessionId();
        boolean publisher = call.op().equals("register_publisher");
        PublisherStream stream = new PublisherStream(id, scope, name, maxBatch, runtime.streams);
        Publisher<?> served;
        if (publisher) {
            ClientPublisher client = new ClientPublisher(scopeId, name, stream);
            StreamRegistry.registerScopedPublisher(scopeId, name, client); // throws if the name is taken
            stream.onEnd((state, reason) -> {
                client.unregister();
                if (PublisherStream.clientLost(state, reason)) {
                    client.lost(reason);
                }
            });
            served = NOTHING; // the stream sends only notices
            stream.serves(client);
        } else {
            long batchRows = call.integer("arrow_batch_rows", -1); // absent: rows
            if (batchRows < -1 || batchRows > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("the register_subscriber call needs 'arrow_batch_rows' >= 0 "
                        + "(0: Spark's default), got " + batchRows);
            }
            SubscriberRelay relay = new SubscriberRelay(stream, scopeId, name,
                    batchRows < 0 ? null : Integer.valueOf((int) batchRows));
            StreamRegistry.registerScopedSubscriber(scopeId, name, relay, relay.link);
            stream.onEnd((state, reason) -> {
                if (PublisherStream.clientLost(state, reason)) {
                    relay.lost(reason);
                } // after the sink's end the name stays, with its counters, until freed or the session ends
            });
            served = relay;
            stream.serves(relay);
        }
        session.conf().set(StreamRegistry.SCOPE_CONF, scopeId); // the format looks here first
        runtime.registered(scope);
        try {
            open(stream, served, mux, runtime);
        } catch (RuntimeException e) {
            StreamRegistry.unregisterScopedValue(scopeId, name); // nothing serves the name
            throw e;
        }
    }

    /** A publisher that subscribes and never signals: a registered publisher's stream has no elements. */
    private static final Publisher<Object> NOTHING = subscriber -> subscriber.onSubscribe(new org.reactivestreams.Subscription() {
        @Override
        public void request(long n) {}

        @Override
        public void cancel() {}
    });

    private static void openDataFrame(Wire.Call call, Scope scope, ConnectRuntime runtime,
            SparkConnectPlanner planner, ExecuteReplies replies) throws Exception {
        String id = call.text("stream");
        CodedInputStream body = CodedInputStream.newInstance(call.body());
        body.setRecursionLimit(runtime.recursionLimit);
        LogicalPlan plan = planner.transformRelation(Relation.parseFrom(body));
        Dataset<Row> dataset = org.apache.spark.sql.classic.Dataset.ofRows(planner.session(), plan);
        long max = call.integer("max_records_per_batch", 0); // 0: Spark's arrow.maxRecordsPerBatch
        DataFrameStream stream = new DataFrameStream(id, scope, dataset, (int) Math.min(max, Integer.MAX_VALUE),
                runtime.streams);
        runtime.streams.add(stream);
        replies.status(Wire.event("opened", "partitions", stream.numPartitions(),
                "schema", Base64.getEncoder().encodeToString(stream.schema())));
    }

    private static void fetch(Wire.Call call, Scope scope, ConnectRuntime runtime, ExecuteReplies replies)
            throws Exception {
        String id = call.text("stream");
        ConnectStream stream = runtime.streams.find(scope, id);
        if (stream == null) {
            replies.status(Wire.unknown(id));
            return;
        }
        if (!(stream instanceof DataFrameStream dataframe)) {
            throw new IllegalArgumentException("fetch on stream " + id + ", which is not a DataFrame");
        }
        long k = call.integer("partition", -1);
        dataframe.fetch((int) Math.max(-1, Math.min(k, Integer.MAX_VALUE)), replies);
    }

    private static void uploadAppend(Wire.Call call, Scope scope, ConnectRuntime runtime, ExecuteReplies replies) {
        String id = call.text("stream");
        ConnectStream stream = runtime.streams.find(scope, id);
        if (stream == null) { // the first chunk opens the upload
            stream = new UploadStream(id, scope, runtime.streams);
            runtime.streams.add(stream);
        }
        if (!(stream instanceof UploadStream upload)) {
            throw new IllegalArgumentException("upload_append on stream " + id + ", which is not an upload");
        }
        upload.append(call.body());
        replies.status(Wire.event("ok"));
    }

    private static void uploadFinish(Wire.Call call, Scope scope, ConnectRuntime runtime, SparkConnectPlanner planner,
            ExecuteReplies replies) {
        String id = call.text("stream");
        String schema = call.text("schema");
        String dataFrameId = call.text("df_id");
        ConnectStream stream = runtime.streams.find(scope, id);
        if (stream != null && !(stream instanceof UploadStream)) {
            throw new IllegalArgumentException("upload_finish on stream " + id + ", which is not an upload");
        }
        Dataset<Row> rows = stream == null // no chunk was appended: no rows
                ? UploadStream.toDataFrame(new io.github.rspy.spark.ArrowChunks(), schema, planner.session())
                : ((UploadStream) stream).finish(schema, planner.session());
        planner.sessionHolder().cacheDataFrameById(dataFrameId, rows);
        replies.status(Wire.event("done"));
    }
}
