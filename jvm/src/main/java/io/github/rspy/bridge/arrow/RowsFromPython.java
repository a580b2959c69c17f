package io.github.rspy.bridge.arrow;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.ExtensionTypeVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Rows from Python as {@link ArrowRows} sends them the other way (the tag, the kind, an IPC
 * stream), read column by column into {@code Object[]}s or {@code HashMap}s.
 *
 * <p>Loaded only when {@link ArrowSupport} found Arrow on the classpath.
 */
public final class RowsFromPython {
    private RowsFromPython() {}

    /**
     * Rows from Python (after the tag: the kind, then an IPC stream of one or more batches) as
     * {@code Object[]}s or {@code HashMap}s of the values the pickled path gives: an int as
     * Integer when it fits in 32 bits, else Long; a {@code date} as LocalDate, a naive {@code
     * datetime} as LocalDateTime, an aware one as Instant, a {@code Decimal} as BigDecimal, a
     * {@code uuid.UUID} as UUID.
     */
    public static List<Object> decode(BufferAllocator allocator, byte[] payload) {
        byte tag = payload[1];
        checkTag(tag);
        List<Object> rows = new ArrayList<>();
        try (ArrowStreamReader reader = new ArrowStreamReader(
                new java.io.ByteArrayInputStream(payload, 2, payload.length - 2), allocator)) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            while (reader.loadNextBatch()) {
                addRows(rows, root, tag);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read Arrow rows from Python: " + e, e);
        }
        return rows;
    }

    /**
     * Rows from Python (as {@link #decode} takes them) as {@link ColumnRows}, one per non-empty
     * batch of the stream, each holding its batch's root, which its receiver owns.
     */
    public static OwnedElements decodeColumns(BufferAllocator allocator, byte[] payload) {
        byte tag = payload[1];
        checkTag(tag);
        OwnedElements batches = new OwnedElements(2);
        try (ArrowStreamReader reader = new ArrowStreamReader(
                new java.io.ByteArrayInputStream(payload, 2, payload.length - 2), allocator)) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            while (reader.loadNextBatch()) {
                if (root.getRowCount() > 0) {
                    batches.add(ColumnRows.fromPython(ArrowBatches.moveOut(root, allocator), tag));
                }
            }
        } catch (IOException | RuntimeException e) {
            batches.closeUndelivered();
            throw new IllegalArgumentException("cannot read Arrow rows from Python: " + e, e);
        }
        return batches;
    }

    /**
     * Roots Python exported (each a batch of rows of kind {@code tag}, tuples or dicts) as
     * {@link ColumnRows}, which own them; an unknown kind closes them all and throws.
     */
    public static OwnedElements columnsOf(List<Object> roots, byte tag) {
        OwnedElements batches = new OwnedElements(roots.size());
        for (int i = 0; i < roots.size(); i++) {
            VectorSchemaRoot root = (VectorSchemaRoot) roots.get(i);
            roots.set(i, null);
            batches.add(ColumnRows.fromPython(root, tag));
        }
        try {
            checkTag(tag);
        } catch (IllegalArgumentException e) {
            batches.closeUndelivered();
            throw e;
        }
        return batches;
    }

    /** The rows of column rows from Python, as {@link #decode} gives them. */
    static List<Object> rowsOf(VectorSchemaRoot root, byte tag) {
        List<Object> rows = new ArrayList<>(root.getRowCount());
        addRows(rows, root, tag);
        return rows;
    }

    private static void checkTag(byte tag) {
        byte kind = kindOf(tag);
        if (kind != ArrowRows.TUPLES && kind != ArrowRows.DICTS) {
            throw new IllegalArgumentException("unknown kind of Arrow rows " + tag);
        }
    }

    /** Tuples or dicts, typed or not. */
    static byte kindOf(byte tag) {
        return tag == ArrowRows.TYPED_TUPLES ? ArrowRows.TUPLES : tag == ArrowRows.TYPED_DICTS ? ArrowRows.DICTS : tag;
    }

    /** The rows of {@code root} (a batch of kind {@code tag}) added to {@code rows}. */
    private static void addRows(List<Object> rows, VectorSchemaRoot root, byte tag) {
        // With a schema, values keep Arrow's own types.
        boolean typed = tag == ArrowRows.TYPED_TUPLES || tag == ArrowRows.TYPED_DICTS;
        byte kind = kindOf(tag);
        List<FieldVector> vectors = root.getFieldVectors();
        int width = vectors.size();
        String[] names = new String[width];
        for (int c = 0; c < width; c++) {
            names[c] = vectors.get(c).getName();
        }
        int n = root.getRowCount();
        Object[][] columns = new Object[width][]; // column by column: one type test per column
        for (int c = 0; c < width; c++) {
            columns[c] = typed ? typedColumn(vectors.get(c), n) : column(vectors.get(c), n);
        }
        for (int r = 0; r < n; r++) {
            if (kind == ArrowRows.TUPLES) {
                Object[] row = new Object[width];
                for (int c = 0; c < width; c++) {
                    row[c] = columns[c][r];
                }
                rows.add(row);
            } else {
                Map<String, Object> row = new java.util.HashMap<>();
                for (int c = 0; c < width; c++) {
                    row.put(names[c], columns[c][r]);
                }
                rows.add(row);
            }
        }
    }

    /** The values of a column from Python, as the pickled path gives them. */
    private static Object[] column(FieldVector vector, int n) {
        Object[] values = new Object[n];
        if (vector instanceof BigIntVector) {
            BigIntVector v = (BigIntVector) vector;
            for (int r = 0; r < n; r++) {
                if (!v.isNull(r)) {
                    long x = v.get(r);
                    values[r] = x == (int) x ? (Object) (int) x : (Object) x;
                }
            }
        } else if (vector instanceof Float8Vector) {
            Float8Vector v = (Float8Vector) vector;
            for (int r = 0; r < n; r++) {
                if (!v.isNull(r)) {
                    values[r] = v.get(r);
                }
            }
        } else if (vector instanceof VarCharVector && n > 0) {
            // The column's bytes copied once, each string decoded from its slice: no array per row.
            VarCharVector v = (VarCharVector) vector;
            ArrowBuf offsets = v.getOffsetBuffer();
            int first = offsets.getInt(0);
            byte[] bytes = new byte[offsets.getInt((long) n * BaseVariableWidthVector.OFFSET_WIDTH) - first];
            v.getDataBuffer().getBytes(first, bytes, 0, bytes.length);
            for (int r = 0; r < n; r++) {
                if (!v.isNull(r)) {
                    int start = offsets.getInt((long) r * BaseVariableWidthVector.OFFSET_WIDTH);
                    int end = offsets.getInt((long) (r + 1) * BaseVariableWidthVector.OFFSET_WIDTH);
                    values[r] = new String(bytes, start - first, end - start, StandardCharsets.UTF_8);
                }
            }
        } else {
            for (int r = 0; r < n; r++) {
                values[r] = valueAt(vector, r);
            }
        }
        return values;
    }

    /** The values of a column from Python against a schema: Arrow's own types. */
    private static Object[] typedColumn(FieldVector vector, int n) {
        Object[] values = new Object[n];
        for (int r = 0; r < n; r++) {
            values[r] = SchemaValues.valueAt(vector, r);
        }
        return values;
    }

    private static Object valueAt(FieldVector vector, int r) {
        if (vector.isNull(r)) {
            return null;
        }
        if (vector instanceof BigIntVector) {
            long v = ((BigIntVector) vector).get(r);
            return v == (int) v ? (Object) (int) v : (Object) v;
        }
        if (vector instanceof Float8Vector) {
            return ((Float8Vector) vector).get(r);
        }
        if (vector instanceof VarCharVector) {
            return new String(((VarCharVector) vector).get(r), StandardCharsets.UTF_8);
        }
        if (vector instanceof BitVector) {
            return ((BitVector) vector).get(r) != 0;
        }
        if (vector instanceof VarBinaryVector) {
            return ((VarBinaryVector) vector).get(r);
        }
        if (vector instanceof Float4Vector) {
            return (double) ((Float4Vector) vector).get(r);
        }
        if (vector instanceof DateDayVector || vector instanceof TimeStampVector) {
            return SchemaValues.valueAt(vector, r); // LocalDate; LocalDateTime, or Instant with a time zone
        }
        if (isUuid(vector.getField())) {
            return uuidAt(vector, r);
        }
        ValueVector plain = vector;
        return plain.getObject(r); // any other Arrow type (decimals: BigDecimal), as Arrow Java gives it
    }

    /** Whether {@code field} is Arrow's canonical UUID type, which pyarrow writes for a column of {@code uuid.UUID}. */
    static boolean isUuid(Field field) {
        if (field.getType() instanceof ArrowType.ExtensionType) { // if the UUID type is registered here
            return "arrow.uuid".equals(((ArrowType.ExtensionType) field.getType()).extensionName());
        }
        Map<String, String> metadata = field.getMetadata();
        return metadata != null && "arrow.uuid".equals(metadata.get("ARROW:extension:name"))
                && field.getType() instanceof ArrowType.FixedSizeBinary;
    }

    private static UUID uuidAt(FieldVector vector, int r) {
        FieldVector storage = vector instanceof ExtensionTypeVector
                ? ((ExtensionTypeVector<?>) vector).getUnderlyingVector() : vector;
        ByteBuffer bytes = ByteBuffer.wrap(((FixedSizeBinaryVector) storage).get(r));
        return new UUID(bytes.getLong(), bytes.getLong());
    }
}
