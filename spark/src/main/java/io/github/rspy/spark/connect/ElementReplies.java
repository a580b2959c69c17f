package io.github.rspy.spark.connect;

import io.github.rspy.bridge.WireValues;
import io.github.rspy.bridge.arrow.ArrowRows;
import io.github.rspy.bridge.arrow.ColumnRows;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A reply's elements as the bridge's tagged bytes, which the client decodes with the bridge's
 * decoder: runs of rows ({@code Object[]}, {@code Map}s, and records or Spark {@code Row}s) as
 * one Arrow record batch each ({@link ArrowRows}, tag {@code 'A'}), rows already in Arrow columns
 * ({@link ColumnRows}) as the frame they hold, everything else as {@link
 * WireValues}. Rows that do not fit a schema cross as values, so the client sees the types it
 * would without Arrow; only records and Spark rows, which are not values, need Arrow at all.
 */
final class ElementReplies {
    /** Fewer rows than this cost less pickled, and give the same values. */
    private static final int ARROW_MIN_ROWS = 16;

    private ElementReplies() {}

    /** What encodes replies (and decodes pushes): an allocator of the plugin's own. */
    static final class Memory {
        static final BufferAllocator ARROW = (BufferAllocator) io.github.rspy.bridge.arrow.ArrowSupport.Allocators
                .newChild("reactive-streams connect"); // counted by BridgeRuntime.jvmArrowAllocatedBytes()

        private Memory() {}
    }

    /**
     * The first {@code n} elements of {@code batch}, in order, as one or more tagged byte arrays;
     * null if an element can cross neither as a value nor as a row.
     */
    static List<byte[]> encode(Object[] batch, int n) {
        List<byte[]> replies = new ArrayList<>(1);
        for (int from = 0; from < n; ) {
            byte[] columns = ColumnRows.frameOf(batch[from]);
            if (columns != null) { // rows already as Arrow columns (the sink's): a reply of their own
                replies.add(columns);
                from++;
                continue;
            }
            int kind = kindOf(batch[from]);
            int to = from + 1;
            while (to < n && kindOf(batch[to]) == kind) {
                to++;
            }
            Object[] run = from == 0 && to == n ? batch : java.util.Arrays.copyOfRange(batch, from, to);
            byte[] encoded = kind == OTHER ? WireValues.encode(run, to - from) : null;
            if (encoded == null) { // rows, or elements that are not values (records, Spark rows)
                encoded = ArrowRows.encode(Memory.ARROW, run, to - from, ARROW_MIN_ROWS);
            }
            if (encoded == null && kind != OTHER) {
                encoded = WireValues.encode(run, to - from); // too few rows, or no schema fits them
            }
            if (encoded == null) {
                return null;
            }
            replies.add(encoded);
            from = to;
        }
        return replies;
    }

    private static final int OTHER = 0;

    /** Whether {@code element} is a row that is not a value: a Java record or a Spark Row. */
    static boolean isRow(Object element) {
        return element.getClass().isRecord() || element instanceof org.apache.spark.sql.Row;
    }

    /** Rows of a kind cross as one Arrow batch; a marked last row (a List) breaks a run, as it must. */
    private static int kindOf(Object element) {
        return element instanceof Object[] ? 1 : element instanceof Map ? 2 : element instanceof ColumnRows ? 3 : OTHER;
    }
}
