package io.github.rspy.spark.connect;

import io.github.rspy.spark.StreamRegistry;
import io.github.rspy.spark.connect.wire.Call;
import io.github.rspy.spark.connect.wire.Status;
import io.github.rspy.spark.sink.SinkFigures;
import java.util.ArrayList;
import java.util.List;
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
        Call call = Wire.decode(any);
        scala.Option<ExecuteHolder> holder = planner.executeHolderOpt();
        if (holder.isEmpty()) {
            throw new IllegalStateException("an rspy " + Wire.op(call) + " call outside an ExecutePlan: nowhere to reply");
        }
        ExecuteReplies replies = new ExecuteReplies(holder.get().responseObserver());
        try {
            ConnectRuntime runtime = ConnectRuntime.of(planner.session());
            Scope scope = Scope.of(planner.sessionHolder());
            switch (call.getOpCase()) {
                case MUX -> mux(call, scope, runtime, replies);
                case OPEN_DATAFRAME -> openDataFrame(call, scope, runtime, planner, replies);
                case FETCH -> fetch(call, scope, runtime, replies);
                case UPLOAD_APPEND -> uploadAppend(call, scope, runtime, replies);
                case UPLOAD_FINISH -> uploadFinish(call, scope, runtime, planner, replies);
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
                Call call = Wire.decode(any);
                statuses.add(Wire.status(quick(call, Scope.of(session), ConnectRuntime.of(session.session()),
                        session.session())));
            } catch (Exception | LinkageError e) {
                statuses.add(Wire.status(Wire.error(e)));
            }
        }
        return statuses.isEmpty() ? null : statuses;
    }

    /** The quick ops: each one Status, at once. Every op naming a stream renews its lease. */
    private static Status quick(Call call, Scope scope, ConnectRuntime runtime, SparkSession session) {
        ConnectStreams streams = runtime.streams;
        switch (call.getOpCase()) {
            case SUBSCRIBE:
                subscribe(call, scope, runtime, session);
                return Wire.ok();
            case REGISTER_PUBLISHER:
            case REGISTER_SUBSCRIBER:
                register(call, scope, runtime, session);
                return Wire.ok();
            case DEMAND: {
                ConnectStream stream = streams.find(scope, Wire.stream(call));
                if (stream == null) {
                    return Wire.unknown(call.getStream());
                }
                if (!(stream instanceof PublisherStream publisher)) {
                    throw new IllegalArgumentException("demand on stream " + stream.id
                            + ", which is not a subscription");
                }
                publisher.demand(call.getDemand().getN()); // as is: the client keeps §3.9
                return Wire.ok();
            }
            case CANCEL:
            case CLOSE: {
                ConnectStream stream = streams.find(scope, Wire.stream(call));
                if (stream == null) {
                    return Wire.unknown(call.getStream());
                }
                boolean close = call.hasClose();
                stream.cancel(close ? ConnectStream.CLOSED : ConnectStream.CANCELLED_BY_CLIENT, close);
                return Wire.ok();
            }
            case KEEPALIVE: { // renews each stream named; says which ended and which it does not know
                Status.Ok.Builder ok = Status.Ok.newBuilder();
                for (String id : call.getKeepalive().getStreamsList()) {
                    if (streams.find(scope, id) == null) {
                        if (streams.ended(scope, id)) {
                            ok.addEnded(id);
                        } else {
                            ok.addUnknown(id);
                        }
                    }
                }
                return Status.newBuilder().setOk(ok).build();
            }
            case STATS:
                return Status.newBuilder().setStats(streams.stats(scope, runtime.diagnostics)).build();
            case PUSH: {
                ClientPublisher publisher = served(streams, scope, call, ClientPublisher.class);
                if (publisher == null) {
                    return Wire.unknown(call.getStream());
                }
                Call.Push push = call.getPush();
                return publisher.push(push.getSub(), call.getBody().toByteArray(),
                        push.hasEnd() ? push.getEnd() : null, push.getError());
            }
            case SINK_EPOCH: {
                SubscriberRelay relay = served(streams, scope, call, SubscriberRelay.class);
                if (relay == null) {
                    return Wire.unknown(call.getStream());
                }
                Status.Ok.Builder ok = Status.Ok.newBuilder().setEpoch(relay.link.epoch());
                String query = relay.link.queryId();
                if (query != null) {
                    ok.setQuery(query);
                }
                return Status.newBuilder().setOk(ok).build();
            }
            case SINK_PROCESSED:
            case SINK_RAISED: {
                SubscriberRelay relay = served(streams, scope, call, SubscriberRelay.class);
                if (relay == null) {
                    return Wire.unknown(call.getStream());
                }
                if (call.hasSinkProcessed()) {
                    relay.link.processed(call.getSinkProcessed().getRows());
                } else {
                    relay.link.raised(call.getSinkRaised().getRows(), call.getSinkRaised().getError());
                }
                return Wire.ok();
            }
            case UNREGISTER: {
                String name = Wire.required(call, "name", call.getUnregister().getName());
                Object value = StreamRegistry.unregisterScopedValue(scope.serverSessionId(), name);
                if (value instanceof Registered registered) {
                    registered.unregistered();
                }
                return Status.newBuilder().setOk(Status.Ok.newBuilder().setRegistered(value != null)).build();
            }
            case REGISTRY_STATS: {
                String name = Wire.required(call, "name", call.getRegistryStats().getName());
                Status.RegistryStats.Builder stats = Status.RegistryStats.newBuilder();
                if (StreamRegistry.isRegistered(scope.serverSessionId(), name)) {
                    stats.setRegistered(true).putAllCounters(StreamRegistry.statsMap(scope.serverSessionId(), name));
                }
                return Status.newBuilder().setRegistryStats(stats).build();
            }
            case SINK_PROGRESS: {
                String figures = SinkFigures.read(Wire.required(call, "query", call.getSinkProgress().getQuery()));
                return Status.newBuilder()
                        .setSinkProgress(Status.SinkProgress.newBuilder().setFigures(figures == null ? "" : figures))
                        .build();
            }
            default: // mux, open_dataframe, fetch, upload_append, upload_finish: Wire.decode refused no op
                throw new IllegalArgumentException("the " + Wire.op(call) + " op runs as an ExecutePlan command, "
                        + "not in GetStatus");
        }
    }

    /**
     * The {@code subscribe} op: a subscription to the JVM publisher registered as the call's
     * {@code name}, whose replies go on the client's reply path (the call's {@code mux}).
     */
    private static void subscribe(Call call, Scope scope, ConnectRuntime runtime, SparkSession session) {
        Call.Subscribe subscribe = call.getSubscribe();
        String id = Wire.stream(call);
        String name = Wire.required(call, "name", subscribe.getName());
        int maxBatch = maxBatch(call, subscribe.getMaxBatch()); // required: absent is 0
        Mux mux = muxOf(call, subscribe.getMux(), scope, runtime);
        Registrars.run(runtime.registrars, session); // again if one failed before, naming it
        Publisher<?> publisher = StreamRegistry.publisher(name, subscribe.hasArg() ? subscribe.getArg() : null);
        PublisherStream stream = new PublisherStream(id, scope, name, maxBatch, runtime.streams);
        open(stream, publisher, mux, runtime);
    }

    /** The reply path the call names ({@code mux}), open in the caller's session. */
    private static Mux muxOf(Call call, String id, Scope scope, ConnectRuntime runtime) {
        Wire.required(call, "mux", id);
        if (!(runtime.streams.find(scope, id) instanceof Mux mux)) {
            throw new IllegalArgumentException("the " + Wire.op(call) + " call names reply path '" + id
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
    private static void mux(Call call, Scope scope, ConnectRuntime runtime, ExecuteReplies replies)
            throws InterruptedException {
        Mux mux = new Mux(Wire.stream(call), scope, runtime.streams);
        runtime.streams.add(mux);
        mux.run(replies);
    }

    /**
     * The call's {@code max_batch}: every op that takes one refuses a value outside 1 .. 2³¹−1,
     * naming it.
     */
    private static int maxBatch(Call call, long maxBatch) {
        if (maxBatch < 1 || maxBatch > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(Wire.op(call) + " needs max_batch from 1 to " + Integer.MAX_VALUE
                    + ", got " + maxBatch);
        }
        return (int) maxBatch;
    }

    /** The registration a stream of {@code scope} serves, as a {@code type}; null if no such stream. */
    private static <T> T served(ConnectStreams streams, Scope scope, Call call, Class<T> type) {
        ConnectStream stream = streams.find(scope, Wire.stream(call));
        if (stream == null) {
            return null;
        }
        Object served = stream instanceof PublisherStream publisher ? publisher.registration() : null;
        if (!type.isInstance(served)) {
            throw new IllegalArgumentException(Wire.op(call) + " on stream " + stream.id + ", which is not a "
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
    private static void register(Call call, Scope scope, ConnectRuntime runtime, SparkSession session) {
        boolean publisher = call.hasRegisterPublisher();
        Call.RegisterPublisher asPublisher = call.getRegisterPublisher();
        Call.RegisterSubscriber asSubscriber = call.getRegisterSubscriber();
        String id = Wire.stream(call);
        String name = Wire.required(call, "name", publisher ? asPublisher.getName() : asSubscriber.getName());
        int maxBatch = publisher
                ? maxBatch(call, asPublisher.hasMaxBatch() ? asPublisher.getMaxBatch() : 1)
                : maxBatch(call, asSubscriber.hasMaxBatch() ? asSubscriber.getMaxBatch() : 1);
        Mux mux = muxOf(call, publisher ? asPublisher.getMux() : asSubscriber.getMux(), scope, runtime);
        String scopeId = scope.serverSessionId();
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
            Integer batchRows = null; // absent: rows
            if (asSubscriber.hasArrowBatchRows()) {
                long rows = asSubscriber.getArrowBatchRows();
                if (rows < 0 || rows > Integer.MAX_VALUE) {
                    throw new IllegalArgumentException("the register_subscriber call needs 'arrow_batch_rows' from 0 "
                            + "(Spark's default) to " + Integer.MAX_VALUE + ", got " + rows);
                }
                batchRows = (int) rows;
            }
            SubscriberRelay relay = new SubscriberRelay(stream, scopeId, name, batchRows);
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

    private static void openDataFrame(Call call, Scope scope, ConnectRuntime runtime,
            SparkConnectPlanner planner, ExecuteReplies replies) throws Exception {
        String id = Wire.stream(call);
        CodedInputStream body = call.getBody().newCodedInput();
        body.setRecursionLimit(runtime.recursionLimit);
        LogicalPlan plan = planner.transformRelation(Relation.parseFrom(body));
        Dataset<Row> dataset = org.apache.spark.sql.classic.Dataset.ofRows(planner.session(), plan);
        long max = call.getOpenDataframe().getMaxRecordsPerBatch(); // 0: Spark's arrow.maxRecordsPerBatch
        if (max < 0) {
            throw new IllegalArgumentException("open_dataframe needs max_records_per_batch >= 0, got " + max);
        }
        DataFrameStream stream = new DataFrameStream(id, scope, dataset, (int) Math.min(max, Integer.MAX_VALUE),
                runtime.streams);
        runtime.streams.add(stream);
        replies.status(Status.newBuilder().setOpened(Status.Opened.newBuilder()
                .setPartitions(stream.numPartitions())
                .setSchema(org.sparkproject.connect.protobuf.ByteString.copyFrom(stream.schema()))).build());
    }

    private static void fetch(Call call, Scope scope, ConnectRuntime runtime, ExecuteReplies replies)
            throws Exception {
        String id = Wire.stream(call);
        ConnectStream stream = runtime.streams.find(scope, id);
        if (stream == null) {
            replies.status(Wire.unknown(id));
            return;
        }
        if (!(stream instanceof DataFrameStream dataframe)) {
            throw new IllegalArgumentException("fetch on stream " + id + ", which is not a DataFrame");
        }
        long k = call.getFetch().hasPartition() ? call.getFetch().getPartition() : -1;
        dataframe.fetch((int) Math.max(-1, Math.min(k, Integer.MAX_VALUE)), replies);
    }

    private static void uploadAppend(Call call, Scope scope, ConnectRuntime runtime, ExecuteReplies replies) {
        String id = Wire.stream(call);
        ConnectStream stream = runtime.streams.find(scope, id);
        if (stream == null) { // the first chunk opens the upload
            stream = new UploadStream(id, scope, runtime.streams);
            runtime.streams.add(stream);
        }
        if (!(stream instanceof UploadStream upload)) {
            throw new IllegalArgumentException("upload_append on stream " + id + ", which is not an upload");
        }
        upload.append(call.getBody().toByteArray());
        replies.status(Wire.ok());
    }

    private static void uploadFinish(Call call, Scope scope, ConnectRuntime runtime, SparkConnectPlanner planner,
            ExecuteReplies replies) {
        String id = Wire.stream(call);
        String schema = Wire.required(call, "schema", call.getUploadFinish().getSchema());
        String dataFrameId = Wire.required(call, "df_id", call.getUploadFinish().getDfId());
        ConnectStream stream = runtime.streams.find(scope, id);
        if (stream != null && !(stream instanceof UploadStream)) {
            throw new IllegalArgumentException("upload_finish on stream " + id + ", which is not an upload");
        }
        Dataset<Row> rows = stream == null // no chunk was appended: no rows
                ? UploadStream.toDataFrame(new io.github.rspy.spark.dataframe.ArrowChunks(), schema, planner.session())
                : ((UploadStream) stream).finish(schema, planner.session());
        planner.sessionHolder().cacheDataFrameById(dataFrameId, rows);
        replies.status(Status.newBuilder().setDone(Status.Done.getDefaultInstance()).build());
    }
}
