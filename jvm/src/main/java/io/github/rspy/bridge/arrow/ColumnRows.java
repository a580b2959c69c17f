package io.github.rspy.bridge.arrow;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Rows as the Arrow columns they are held in, as one element that stands for {@link #rows()}
 * elements: the bridge counts each row against the subscriber's demand (§1.1).
 *
 * <p><b>To Python.</b> A JVM publisher's rows ({@link #of}): Python receives them as tuples, one
 * {@code on_next} each, exactly as it would the same rows as {@code Object[]}s of plain values
 * ({@link ArrowRows}). It spares a publisher whose rows are columns already (Spark's sink)
 * making an object of every value.
 *
 * <p><b>From Python.</b> A Python publisher's tuples or dicts, as the Arrow batch they crossed in
 * ({@link RowsFromPython#decodeColumns}), for a subscriber that asked for them ({@code
 * FromPythonPublisher.Handle.takeColumnRows}): it gets the batch's {@link #root()} (columns by
 * position for tuples, named by the keys for dicts, {@link #named()}), which it owns and closes
 * ({@link #close()}), or the rows themselves ({@link #values()}), as they would otherwise have come.
 *
 * <p>Only columns whose values Python sees the same either way {@link #fits}: integers, floats,
 * booleans, strings and binary, not nested. The root is copied into the element when it is made
 * ({@link #of}): its maker keeps it, and may refill or close it at once. A publisher must not
 * emit one of more rows than the outstanding demand, nor to a subscriber other than the bridge's
 * own, which alone knows it.
 */
public final class ColumnRows implements AutoCloseable {
    private final byte[] frame; // to Python: ArrowRows' tag, TUPLES, and the IPC stream
    private final VectorSchemaRoot root; // from Python: the batch, which the receiver owns
    private final byte tag; // from Python: its kind of rows
    private final int rows;

    private ColumnRows(byte[] frame, int rows) {
        this.frame = frame;
        this.root = null;
        this.tag = 0;
        this.rows = rows;
    }

    private ColumnRows(VectorSchemaRoot root, byte tag) {
        this.frame = null;
        this.root = root;
        this.tag = tag;
        this.rows = root.getRowCount();
    }

    static ColumnRows fromPython(VectorSchemaRoot root, byte tag) {
        return new ColumnRows(root, tag);
    }

    /** From Python: the batch (its receiver closes it, with {@link #close()}). */
    public VectorSchemaRoot root() {
        return root;
    }

    /** From Python: whether the columns are named by dict keys (else they are by position). */
    public boolean named() {
        return RowsFromPython.kindOf(tag) == ArrowRows.DICTS;
    }

    /** From Python: the rows, as {@code Object[]}s or {@code Map}s, as they come without columns. */
    public java.util.List<Object> values() {
        return RowsFromPython.rowsOf(root, tag);
    }

    /** Frees a batch from Python. */
    @Override
    public void close() {
        if (root != null) {
            root.close();
        }
    }

    /** Whether rows of {@code schema} can cross as column rows. */
    public static boolean fits(Schema schema) {
        if (schema.getFields().isEmpty()) {
            return false;
        }
        for (Field field : schema.getFields()) {
            if (!field.getChildren().isEmpty()) {
                return false;
            }
            ArrowType type = field.getType();
            boolean plain = switch (type.getTypeID()) {
                case Int -> ((ArrowType.Int) type).getIsSigned();
                case FloatingPoint -> ((ArrowType.FloatingPoint) type).getPrecision() != FloatingPointPrecision.HALF;
                case Bool, Utf8, Binary -> true;
                default -> false;
            };
            if (!plain) {
                return false;
            }
        }
        return true;
    }

    /** {@code root}'s rows (at least one), copied; its schema must {@link #fits}. */
    public static ColumnRows of(VectorSchemaRoot root) {
        int rows = root.getRowCount();
        if (rows < 1) {
            throw new IllegalArgumentException("column rows hold at least one row");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + rows * 16);
        out.write(ArrowRows.TAG);
        out.write(ArrowRows.TUPLES);
        try (ArrowStreamWriter writer = new ArrowStreamWriter(root, null, out)) {
            writer.start();
            writer.writeBatch();
            writer.end();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return new ColumnRows(out.toByteArray(), rows);
    }

    /** The rows it stands for. */
    public int rows() {
        return rows;
    }

    /** What crosses to Python. */
    byte[] frame() {
        return frame;
    }

    /** How many elements {@code item} stands for: its rows if it is column rows, else 1. */
    public static long weight(Object item) {
        return item instanceof ColumnRows ? ((ColumnRows) item).rows : 1;
    }

    /** The frame of {@code item}, or null if it is not column rows. */
    public static byte[] frameOf(Object item) {
        return item instanceof ColumnRows ? ((ColumnRows) item).frame : null;
    }
}
