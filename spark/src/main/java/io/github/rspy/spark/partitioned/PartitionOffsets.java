package io.github.rspy.spark.partitioned;

import java.util.Arrays;
import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * Where each partition of a partitioned source is: its next element's offset. JSON {@code
 * {"0":n0,"1":n1,...}}, as the Python partitioned source writes it.
 */
final class PartitionOffsets extends Offset {
    private final long[] next;

    PartitionOffsets(long[] next) {
        this.next = next.clone();
    }

    long of(int partition) {
        return partition < next.length ? next[partition] : 0;
    }

    int size() {
        return next.length;
    }

    @Override
    public String json() {
        StringBuilder json = new StringBuilder("{");
        for (int p = 0; p < next.length; p++) {
            json.append(p == 0 ? "" : ",").append('"').append(p).append("\":").append(next[p]);
        }
        return json.append('}').toString();
    }

    static PartitionOffsets of(Offset offset) {
        return offset instanceof PartitionOffsets ? (PartitionOffsets) offset : parse(offset.json());
    }

    /** Reads back {@link #json()}: partitions in any order, none missing below the highest. */
    static PartitionOffsets parse(String json) {
        String body = json.trim();
        if (!body.startsWith("{") || !body.endsWith("}")) {
            throw notOffsets(json);
        }
        body = body.substring(1, body.length() - 1).trim();
        if (body.isEmpty()) {
            return new PartitionOffsets(new long[0]);
        }
        String[] entries = body.split(",");
        long[] next = new long[entries.length];
        Arrays.fill(next, -1);
        for (String entry : entries) {
            String[] pair = entry.split(":");
            try {
                int partition = Integer.parseInt(pair[0].trim().replace("\"", ""));
                next[partition] = Long.parseLong(pair[1].trim());
            } catch (RuntimeException e) {
                throw notOffsets(json);
            }
        }
        for (long value : next) {
            if (value < 0) {
                throw notOffsets(json);
            }
        }
        return new PartitionOffsets(next);
    }

    private static IllegalArgumentException notOffsets(String json) {
        return new IllegalArgumentException("not the offsets of a partitioned reactive-streams source "
                + "({\"0\":n,\"1\":n,...}): " + json);
    }
}
