package io.github.rspy.bridge.arrow;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One stream's rows, JVM → Python, against a schema its subscriber gave ({@code
 * bridge.from_jvm(publisher, schema=...)}): every element must be a row of it, and every batch,
 * however small, crosses as Arrow with exactly those column names and types.
 *
 * <p>Rows: an {@code Object[]} or a {@code List} by position (as many values as columns), a
 * {@code Map} by key (its keys exactly the column names), a record, a JavaBean or a reader's row
 * ({@link RowReader}) by name (it may have more than the schema's columns), or positionally if
 * its reader has no names.
 * What each column takes is {@link SchemaColumn}'s. A row that does not fit, a null in a column
 * that is not nullable, or a value its column cannot hold is an {@link IllegalArgumentException}
 * naming the row (counted from 0 in the stream) and the column; the rows before it are encoded,
 * so that they are delivered before the stream fails.
 *
 * <p>Not thread-safe: one per stream, used by its drain only (it counts the stream's rows).
 */
public final class SchemaRows {
    /** The runs of rows encoded (each a tagged Arrow IPC stream) and the bad row, if one stopped them. */
    public static final class Encoded {
        public final List<byte[]> runs;
        public final IllegalArgumentException error;

        Encoded(List<byte[]> runs, IllegalArgumentException error) {
            this.runs = runs;
            this.error = error;
        }
    }

    private final List<Field> fields;
    private final List<String> names;
    private final SchemaColumn[] columns;
    private final Predicate<Object> plainValue; // the caller's: elements it sends by value, never rows
    private long seen; // rows of the stream before this batch
    private RowReader.Layout lastLayout; // the rows of a batch mostly share one
    private int[] lastColumns; // the schema's columns in lastLayout
    private byte lastShape;

    private SchemaRows(List<Field> fields, Predicate<Object> plainValue) {
        this.fields = fields;
        this.plainValue = plainValue;
        this.names = new ArrayList<>(fields.size());
        this.columns = new SchemaColumn[fields.size()];
        Set<String> unique = new HashSet<>();
        for (int c = 0; c < columns.length; c++) {
            Field field = fields.get(c);
            if (!unique.add(field.getName())) {
                throw new IllegalArgumentException("the schema has two columns named '" + field.getName() + "'");
            }
            names.add(field.getName());
            columns[c] = SchemaColumn.of(field);
        }
        if (columns.length == 0) {
            throw new IllegalArgumentException("the schema has no columns");
        }
    }

    /**
     * A schema in Arrow's IPC format (pyarrow's {@code Schema.serialize()}). {@code plainValue}
     * tells the elements that cross as plain values without a schema (numbers, strings, ...): such
     * an element is refused as not a row, rather than read as a JavaBean.
     */
    public static SchemaRows parse(byte[] ipcSchema, Predicate<Object> plainValue) {
        Schema schema;
        try {
            schema = MessageSerializer.deserializeSchema(
                    new ReadChannel(Channels.newChannel(new ByteArrayInputStream(ipcSchema))));
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("not an Arrow schema in IPC format: " + e, e);
        }
        if (schema == null) {
            throw new IllegalArgumentException("not an Arrow schema in IPC format: no message");
        }
        return new SchemaRows(schema.getFields(), plainValue);
    }

    /** The first {@code n} rows of {@code batch}, up to the first bad one. */
    public Encoded encode(BufferAllocator allocator, Object[] batch, int n) {
        int width = columns.length;
        Object[][] values = new Object[width][n];
        byte[] shapes = new byte[n];
        Object[] row = new Object[width];
        IllegalArgumentException error = null;
        int good = 0;
        for (; good < n; good++) {
            int c = -1;
            try {
                shapes[good] = read(batch[good], row);
                for (c = 0; c < width; c++) {
                    values[c][good] = columns[c].convert(row[c]);
                }
            } catch (SchemaColumn.Unfit e) {
                String where = c < 0 ? "row " + (seen + good) : "row " + (seen + good) + ", " + columns[c].describe();
                error = new IllegalArgumentException(where + ": " + e.getMessage());
                break;
            }
        }
        seen += good;
        List<byte[]> runs = new ArrayList<>();
        for (int from = 0; from < good; ) { // runs of one shape: tuples, dicts, Rows
            int to = from + 1;
            while (to < good && shapes[to] == shapes[from]) {
                to++;
            }
            runs.add(write(allocator, values, from, to, shapes[from]));
            from = to;
        }
        return new Encoded(runs, error);
    }

    private byte[] write(BufferAllocator allocator, Object[][] values, int from, int to, byte shape) {
        List<FieldVector> vectors = new ArrayList<>(columns.length);
        try {
            for (int c = 0; c < columns.length; c++) {
                FieldVector vector = fields.get(c).createVector(allocator);
                vectors.add(vector);
                columns[c].fill(vector, values[c], from, to);
            }
            return ArrowRows.write(vectors, to - from, shape); // it closes them
        } catch (RuntimeException e) {
            for (FieldVector vector : vectors) {
                vector.close();
            }
            throw e;
        }
    }

    /** {@code element}'s values in the schema's column order into {@code row}; its shape's tag. */
    private byte read(Object element, Object[] row) throws SchemaColumn.Unfit {
        int width = columns.length;
        if (element instanceof Object[]) {
            Object[] values = (Object[]) element;
            if (values.length != width) {
                throw new SchemaColumn.Unfit("an Object[] of " + values.length + " values, but the schema has "
                        + width + " columns " + names);
            }
            System.arraycopy(values, 0, row, 0, width);
            return ArrowRows.TUPLES;
        }
        if (element instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) element;
            for (int c = 0; c < width; c++) {
                Object value = map.get(names.get(c));
                if (value == null && !map.containsKey(names.get(c))) {
                    throw new SchemaColumn.Unfit(SchemaColumn.a(element) + " without the key '"
                            + names.get(c) + "' (its keys: " + map.keySet() + "; the schema's: " + names + ")");
                }
                row[c] = value;
            }
            if (map.size() != width) {
                throw new SchemaColumn.Unfit(SchemaColumn.a(element) + " with keys " + map.keySet()
                        + ", more than the schema's columns " + names);
            }
            return ArrowRows.DICTS;
        }
        if (element instanceof List) {
            List<?> values = (List<?>) element;
            if (values.size() != width) {
                throw new SchemaColumn.Unfit(SchemaColumn.a(element) + " of " + values.size()
                        + " values, but the schema has " + width + " columns " + names);
            }
            for (int c = 0; c < width; c++) {
                row[c] = values.get(c);
            }
            return ArrowRows.TUPLES;
        }
        if (ArrowBatches.isTaken(element)) {
            throw new SchemaColumn.Unfit("an Arrow record batch, not a row (an Object[], List, Map, record, "
                    + "JavaBean or Spark Row)");
        }
        if (plainValue.test(element) || element.getClass().isArray()) {
            throw new SchemaColumn.Unfit(SchemaColumn.a(element) + ", not a row (an Object[], List, "
                    + "Map, record, JavaBean or Spark Row)");
        }
        RowReader.Layout layout = lastLayout;
        if (layout == null || !layout.fits(element)) {
            layout = RowReaders.withBeans(element);
            if (layout.width() == 0) { // a JavaBean without properties
                throw new SchemaColumn.Unfit(SchemaColumn.a(element) + ", not a row (an Object[], List, Map, record, "
                        + "JavaBean or Spark Row)");
            }
            lastColumns = columnsIn(layout, element);
            lastLayout = layout;
            lastShape = layout.shape() == RowReader.Shape.TUPLE ? ArrowRows.TUPLES
                    : layout.shape() == RowReader.Shape.DICT ? ArrowRows.DICTS : ArrowRows.ROWS;
        }
        int[] at = lastColumns;
        for (int c = 0; c < width; c++) {
            try {
                row[c] = layout.value(element, at[c]);
            } catch (RuntimeException e) {
                throw new SchemaColumn.Unfit("column '" + names.get(c) + "' of " + SchemaColumn.a(element)
                        + " cannot be read: " + e.getMessage());
            }
        }
        return lastShape;
    }

    /** Where each of the schema's columns is in {@code layout}'s rows. */
    private int[] columnsIn(RowReader.Layout layout, Object element) throws SchemaColumn.Unfit {
        int width = columns.length;
        int[] at = new int[width];
        List<String> has = layout.names();
        if (has == null) {
            if (layout.width() != width) {
                throw new SchemaColumn.Unfit(SchemaColumn.a(element) + " of " + layout.width()
                        + " values, but the schema has " + width + " columns " + names);
            }
            for (int c = 0; c < width; c++) {
                at[c] = c;
            }
            return at;
        }
        for (int c = 0; c < width; c++) {
            at[c] = has.indexOf(names.get(c));
            if (at[c] < 0) {
                throw new SchemaColumn.Unfit(SchemaColumn.a(element) + " has no column '"
                        + names.get(c) + "' (its columns: " + has + ")");
            }
        }
        return at;
    }
}
