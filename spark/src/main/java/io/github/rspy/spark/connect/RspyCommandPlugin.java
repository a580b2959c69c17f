package io.github.rspy.spark.connect;

import org.apache.spark.sql.connect.plugin.CommandPlugin;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.sparkproject.connect.protobuf.Any;
import org.sparkproject.connect.protobuf.InvalidProtocolBufferException;

/**
 * The Spark Connect command plugin of reactive-streams
 * ({@code spark.connect.extensions.command.classes=io.github.rspy.spark.connect.RspyCommandPlugin}):
 * serves every op of the wire contract sent as {@code Command.extension}. Commands of other
 * plugins (another type URL) are left to them.
 */
public final class RspyCommandPlugin implements CommandPlugin {
    @Override
    public boolean process(byte[] command, SparkConnectPlanner planner) {
        Any any;
        try {
            any = Any.parseFrom(command); // the plugin gets the whole serialized Any, type URL and all
        } catch (InvalidProtocolBufferException e) {
            return false; // not an Any we can read: not ours
        }
        if (!Wire.isCall(any)) {
            return false;
        }
        ConnectOps.execute(any, planner);
        return true;
    }
}
