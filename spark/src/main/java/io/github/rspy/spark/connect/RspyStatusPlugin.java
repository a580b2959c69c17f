package io.github.rspy.spark.connect;

import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.connect.plugin.GetStatusPlugin;
import org.apache.spark.sql.connect.service.SessionHolder;
import org.sparkproject.connect.protobuf.Any;

/**
 * The Spark Connect GetStatus plugin of reactive-streams
 * ({@code spark.connect.extensions.getStatus.classes=io.github.rspy.spark.connect.RspyStatusPlugin}):
 * serves the quick ops (docs/connect-wire.md, "Ops": demand, cancel, close, keepalive, stats, push, the
 * sink's reports, unregister, registry_stats) sent as GetStatus request
 * extensions, which cost no ExecutePlan operation (no thread, no operation id), so demand
 * reaches a subscription in about one round trip.
 */
public final class RspyStatusPlugin implements GetStatusPlugin {
    @Override
    public Optional<List<Any>> processRequestExtensions(SessionHolder session, List<Any> extensions) {
        return Optional.ofNullable(ConnectOps.status(session, extensions));
    }

    @Override
    public Optional<List<Any>> processOperationExtensions(String operationId, SessionHolder session,
            List<Any> extensions) {
        return Optional.empty(); // no per-operation ops
    }
}
