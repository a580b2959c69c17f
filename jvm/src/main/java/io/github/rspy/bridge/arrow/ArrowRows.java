package io.github.rspy.bridge.arrow;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;

/**
 * A batch of rows as one Arrow record batch, in Arrow's IPC stream format: the bridge's fast
 * path for records. Rows are {@code Object[]} (Python gets tuples), {@code Map}s with String
 * keys (Python gets dicts), Java records (dicts keyed by component name) and the rows a
 * {@link RowReader} reads (Spark's {@code Row}: {@code pyspark.sql.Row}s). The schema is inferred
 * from the batch: each column's values must share one of the types {@link InferredColumn} lists
 * (numbers, strings, bytes, decimals, dates, times, UUIDs). A batch that does not fit one (rows of
 * other kinds, a column mixing integers and floats, a value of another type, rows of different
 * shapes) is not encoded here: it crosses pickled, each value as itself and only a value with no
 * Python equivalent as a reference, so Python sees the values it would see from this path. Rows
 * against a schema the subscriber gave are {@link SchemaRows}', and rows from Python
 * {@link RowsFromPython}'.
 *
 * <p>Loaded only when {@link ArrowSupport} found Arrow on the classpath.
 */
public final class ArrowRows {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.bridge.arrow");
    public static final byte TAG = 'A';
    static final byte TUPLES = 't';
    static final byte DICTS = 'd';
    /** To Python: {@code pyspark.sql.Row}s with the column names (tuples without PySpark). */
    static final byte ROWS = 'r';
    /** From Python, against a schema its publisher's subscriber gave: values keep Arrow's types. */
    static final byte TYPED_TUPLES = 'T';
    static final byte TYPED_DICTS = 'D';

    private ArrowRows() {}

    /**
     * A tagged Arrow IPC stream of the batch's rows, or null if they do not fit a schema:
     * {@code Object[]} or {@code Map} rows if there are at least {@code minRows} (fewer cost less
     * pickled, which gives the same values), or rows a {@link RowReader} reads (records, Spark's),
     * however few: nothing else gives them by value.
     */
    public static byte[] encode(BufferAllocator allocator, Object[] batch, int n, int minRows) {
        Object first = batch[0];
        if (!(first instanceof Object[]) && !(first instanceof Map)) {
            RowReader.Layout layout = RowReaders.byDefault(first);
            return layout == null ? null : encodeRead(allocator, layout, batch, n);
        }
        if (n < minRows) {
            return null;
        }
        List<String> names;
        boolean dicts;
        if (first instanceof Object[]) {
            names = positional(((Object[]) first).length);
            dicts = false;
        } else {
            names = new ArrayList<>(((Map<?, ?>) first).size());
            for (Object key : ((Map<?, ?>) first).keySet()) {
                if (!(key instanceof String)) {
                    return null;
                }
                names.add((String) key);
            }
            dicts = true;
        }
        int width = names.size();
        if (width == 0) {
            return null;
        }
        Object[][] columns = new Object[width][n];
        for (int r = 0; r < n; r++) {
            if (!spread(batch[r], dicts, names, columns, r)) {
                return null;
            }
        }
        return encodeColumns(allocator, names, columns, n, dicts ? DICTS : TUPLES);
    }

    /** Rows of one reader's layout; null if a row has another, or a value does not fit. */
    private static byte[] encodeRead(BufferAllocator allocator, RowReader.Layout layout, Object[] batch, int n) {
        List<String> names = layout.names();
        int width = layout.width();
        if (width == 0) {
            return null;
        }
        Object[][] columns = new Object[width][n];
        try {
            for (int r = 0; r < n; r++) {
                Object row = batch[r];
                if (!layout.fits(row)) {
                    return null;
                }
                for (int c = 0; c < width; c++) {
                    columns[c][r] = layout.value(row, c);
                }
            }
        } catch (RuntimeException e) { // a getter that failed: the batch crosses as references
            LOG.log(Level.FINE, "a row could not be read", e);
            return null;
        }
        byte kind = names == null || layout.shape() == RowReader.Shape.TUPLE ? TUPLES
                : layout.shape() == RowReader.Shape.DICT ? DICTS : ROWS;
        return encodeColumns(allocator, names == null ? positional(width) : names, columns, n, kind);
    }

    private static List<String> positional(int width) {
        List<String> names = new ArrayList<>(width);
        for (int c = 0; c < width; c++) {
            names.add("_" + c);
        }
        return names;
    }

    /** Columns of values as one tagged stream, or null if a column's values share no type. */
    private static byte[] encodeColumns(BufferAllocator allocator, List<String> names, Object[][] columns, int n,
            byte kind) {
        int width = names.size();
        InferredColumn[] types = new InferredColumn[width];
        for (int c = 0; c < width; c++) {
            types[c] = InferredColumn.of(columns[c], n);
            if (types[c] == null) {
                return null;
            }
        }
        List<FieldVector> vectors = new ArrayList<>(width);
        try {
            for (int c = 0; c < width; c++) {
                vectors.add(types[c].fill(allocator, names.get(c), columns[c], n));
            }
        } catch (RuntimeException e) {
            for (FieldVector v : vectors) {
                v.close();
            }
            throw e;
        }
        return write(vectors, n, kind);
    }

    /** {@code n} rows of the vectors (which it closes) as {@code A}, the kind, and an IPC stream. */
    static byte[] write(List<FieldVector> vectors, int n, byte kind) {
        try (VectorSchemaRoot root = new VectorSchemaRoot(vectors)) {
            root.setRowCount(n);
            ByteArrayOutputStream out = new ByteArrayOutputStream(64 + n * vectors.size() * 12);
            out.write(TAG);
            out.write(kind);
            try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
                writer.start();
                writer.writeBatch();
                writer.end();
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
    }

    /** Row {@code r}'s values into the columns; false if its shape differs from the first row's. */
    private static boolean spread(Object row, boolean dicts, List<String> names, Object[][] columns, int r) {
        int width = names.size();
        if (dicts) {
            if (!(row instanceof Map) || ((Map<?, ?>) row).size() != width) {
                return false;
            }
            Map<?, ?> map = (Map<?, ?>) row;
            for (int c = 0; c < width; c++) {
                Object value = map.get(names.get(c));
                if (value == null && !map.containsKey(names.get(c))) {
                    return false;
                }
                columns[c][r] = value;
            }
            return true;
        }
        if (!(row instanceof Object[]) || ((Object[]) row).length != width) {
            return false;
        }
        Object[] values = (Object[]) row;
        for (int c = 0; c < width; c++) {
            columns[c][r] = values[c];
        }
        return true;
    }

    static boolean hasLoneSurrogate(String s) {
        for (int i = 0, len = s.length(); i < len; i++) {
            char ch = s.charAt(i);
            if (Character.isSurrogate(ch)) {
                if (Character.isHighSurrogate(ch) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    return true;
                }
            }
        }
        return false;
    }
}
