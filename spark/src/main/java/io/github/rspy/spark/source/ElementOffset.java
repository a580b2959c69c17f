package io.github.rspy.spark.source;

import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * A position in the stream of a publisher's elements: how many elements came before it, as
 * Spark's own {@code LongOffset} counts (JSON: the bare number).
 */
public final class ElementOffset extends Offset {
    private final long value;

    public ElementOffset(long value) {
        if (value < 0) {
            throw new IllegalArgumentException("an element offset is >= 0, got " + value);
        }
        this.value = value;
    }

    public long value() {
        return value;
    }

    @Override
    public String json() {
        return Long.toString(value);
    }

    /** Any offset of this source (ours, or one Spark read back from a checkpoint) as a count. */
    static long of(Offset offset) {
        if (offset instanceof ElementOffset) {
            return ((ElementOffset) offset).value;
        }
        return parse(offset.json()).value;
    }

    static ElementOffset parse(String json) {
        try {
            return new ElementOffset(Long.parseLong(json.trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a reactive-streams source offset (an element count): " + json, e);
        }
    }
}
