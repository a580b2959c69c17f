package io.github.rspy.spark.common;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Turns a publisher's elements into rows of the source's schema: an {@code Object[]}, a {@code
 * List} or a {@code Row} positionally (as many values as columns), a {@code Map} by column name
 * (a missing key is null, other keys are ignored), and anything else as the one column of a
 * one-column schema. Columns may be boolean, byte, short, int, long, float, double, string or
 * binary; integers must fit their column, and nulls need a nullable column. Anything else is an
 * {@link IllegalArgumentException} naming the element's offset, the column and the value.
 *
 * <p>Rows are written straight into Spark's compact {@code UnsafeRow} format, once, as elements
 * arrive: a micro-batch then ships bytes, not objects.
 *
 * <p>Internal to the connectors (the publisher source's and the partitioned source's rows).
 */
public final class ElementRows {
    private final StructType schema;
    private final StructField[] fields;
    private final String source;

    public ElementRows(StructType schema, String source) {
        this.schema = schema;
        this.fields = schema.fields();
        this.source = source;
        if (fields.length == 0) {
            throw new IllegalArgumentException(source + ": the schema has no columns");
        }
        for (StructField field : fields) {
            if (!supported(field.dataType())) {
                throw new IllegalArgumentException(source + ": column '" + field.name() + "' has type "
                        + field.dataType().simpleString() + ", which the reactive-streams source cannot fill "
                        + "(supported: boolean, tinyint, smallint, int, bigint, float, double, string, binary)");
            }
        }
    }

    public StructType schema() {
        return schema;
    }

    public int width() {
        return fields.length;
    }

    /** Writes {@code element} as a row into {@code writer} (reset first), or throws naming it. */
    public void write(UnsafeRowWriter writer, Object element, long offset) {
        writer.reset(); // the cursor back to the start (resetRowWriter() is for nested structs)
        writer.zeroOutNullBytes();
        if (element instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) element;
            for (int i = 0; i < fields.length; i++) {
                put(writer, i, map.get(fields[i].name()), offset);
            }
        } else if (element instanceof Object[] || element instanceof List || element instanceof Row) {
            List<?> list = element instanceof Object[] ? Arrays.asList((Object[]) element)
                    : element instanceof List ? (List<?>) element : rowValues((Row) element);
            if (list.size() != fields.length) {
                throw new IllegalArgumentException(where(offset) + "an element of " + list.size() + " values for "
                        + fields.length + " columns " + schema.simpleString() + ": " + describe(element));
            }
            for (int i = 0; i < fields.length; i++) {
                put(writer, i, list.get(i), offset);
            }
        } else if (fields.length == 1) {
            put(writer, 0, element, offset);
        } else {
            throw new IllegalArgumentException(where(offset) + describe(element) + " is a single value, but the schema "
                    + schema.simpleString() + " has " + fields.length + " columns: emit tuples/arrays, lists or maps");
        }
    }

    private void put(UnsafeRowWriter writer, int column, Object value, long offset) {
        StructField field = fields[column];
        DataType type = field.dataType();
        if (value == null) {
            if (!field.nullable()) {
                throw new IllegalArgumentException(where(offset) + "null for the non-nullable column '" + field.name() + "'");
            }
            writer.setNullAt(column);
            return;
        }
        if (type instanceof StringType) {
            if (value instanceof CharSequence || value instanceof Character) {
                writer.write(column, UTF8String.fromString(value.toString()));
                return;
            }
        } else if (type instanceof LongType) {
            if (value instanceof Long || value instanceof Integer) { // the common case, unboxed at once
                writer.write(column, ((Number) value).longValue());
                return;
            }
            Long v = integral(value, Long.MIN_VALUE, Long.MAX_VALUE);
            if (v != null) {
                writer.write(column, v.longValue());
                return;
            }
        } else if (type instanceof IntegerType) {
            Long v = integral(value, Integer.MIN_VALUE, Integer.MAX_VALUE);
            if (v != null) {
                writer.write(column, v.intValue());
                return;
            }
        } else if (type instanceof ShortType) {
            Long v = integral(value, Short.MIN_VALUE, Short.MAX_VALUE);
            if (v != null) {
                writer.write(column, v.shortValue());
                return;
            }
        } else if (type instanceof ByteType) {
            Long v = integral(value, Byte.MIN_VALUE, Byte.MAX_VALUE);
            if (v != null) {
                writer.write(column, v.byteValue());
                return;
            }
        } else if (type instanceof DoubleType) {
            if (value instanceof Number) {
                writer.write(column, ((Number) value).doubleValue());
                return;
            }
        } else if (type instanceof FloatType) {
            if (value instanceof Number) {
                writer.write(column, ((Number) value).floatValue());
                return;
            }
        } else if (type instanceof BooleanType) {
            if (value instanceof Boolean) {
                writer.write(column, ((Boolean) value).booleanValue());
                return;
            }
        } else if (type instanceof BinaryType) {
            if (value instanceof byte[]) {
                writer.write(column, (byte[]) value);
                return;
            }
        }
        throw new IllegalArgumentException(where(offset) + "column '" + field.name() + "' (" + type.simpleString()
                + ") cannot hold " + describe(value));
    }

    /** The value as a long within [min, max], or null if it is not an integer or out of range. */
    private static Long integral(Object value, long min, long max) {
        long v;
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            v = ((Number) value).longValue();
        } else if (value instanceof BigInteger && ((BigInteger) value).bitLength() < 64) {
            v = ((BigInteger) value).longValue();
        } else {
            return null;
        }
        return v >= min && v <= max ? v : null;
    }

    private static List<Object> rowValues(Row row) {
        List<Object> values = new ArrayList<>(row.size());
        for (int i = 0; i < row.size(); i++) {
            values.add(row.get(i));
        }
        return values;
    }

    private static boolean supported(DataType type) {
        return type instanceof StringType || type instanceof LongType || type instanceof IntegerType
                || type instanceof ShortType || type instanceof ByteType || type instanceof DoubleType
                || type instanceof FloatType || type instanceof BooleanType || type instanceof BinaryType;
    }

    private String where(long offset) {
        return source + ", element at offset " + offset + ": ";
    }

    private static String describe(Object value) {
        String text;
        if (value instanceof Object[]) {
            text = Arrays.deepToString((Object[]) value);
        } else if (value instanceof byte[]) {
            text = "byte[" + ((byte[]) value).length + "]";
        } else {
            text = String.valueOf(value);
        }
        if (text.length() > 200) {
            text = text.substring(0, 200) + "...";
        }
        return value == null ? "null" : value.getClass().getName() + " " + text;
    }
}
