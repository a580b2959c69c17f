package io.github.rspy.spark.sink;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
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

/**
 * What a sink row becomes for its subscriber, made from the row's {@code UnsafeRow} bytes on the
 * driver when demand reaches it: a Spark {@code Row} for a JVM subscriber; for a Python one an
 * {@code Object[]} of plain values, which crosses the bridge as a tuple (numbers, strings, byte
 * arrays and booleans as they are, nested structs as maps of field name to value, arrays as
 * lists, maps as maps, dates and timestamps as ISO-8601 strings, anything else as its string).
 */
abstract class RowValues {
    abstract Object of(InternalRow row);

    /** {@code org.apache.spark.sql.Row}s, as Spark's own conversion makes them. */
    static RowValues rows(StructType schema) {
        scala.Function1<Object, Object> toRow = CatalystTypeConverters.createToScalaConverter(schema);
        return new RowValues() {
            @Override
            Object of(InternalRow row) {
                return toRow.apply(row);
            }
        };
    }

    /** {@code Object[]}s of plain values, for Python. */
    static RowValues plain(StructType schema) {
        StructField[] fields = schema.fields();
        Field[] getters = new Field[fields.length];
        for (int i = 0; i < fields.length; i++) {
            getters[i] = field(i, fields[i].dataType());
        }
        return new RowValues() {
            @Override
            Object of(InternalRow row) {
                Object[] values = new Object[getters.length];
                for (int i = 0; i < getters.length; i++) {
                    values[i] = row.isNullAt(i) ? null : getters[i].get(row);
                }
                return values;
            }
        };
    }

    private interface Field {
        Object get(InternalRow row);
    }

    private static Field field(int i, DataType type) {
        if (type instanceof LongType) {
            return row -> row.getLong(i);
        }
        if (type instanceof IntegerType) {
            return row -> row.getInt(i);
        }
        if (type instanceof DoubleType) {
            return row -> row.getDouble(i);
        }
        if (type instanceof StringType) {
            return row -> row.getUTF8String(i).toString();
        }
        if (type instanceof BooleanType) {
            return row -> row.getBoolean(i);
        }
        if (type instanceof ShortType) {
            return row -> row.getShort(i);
        }
        if (type instanceof ByteType) {
            return row -> row.getByte(i);
        }
        if (type instanceof FloatType) {
            return row -> row.getFloat(i);
        }
        if (type instanceof BinaryType) {
            return row -> row.getBinary(i);
        }
        scala.Function1<Object, Object> toScala = CatalystTypeConverters.createToScalaConverter(type);
        return row -> plain(toScala.apply(row.get(i, type)));
    }

    /** A Spark external value as a plain one (see the class comment). */
    static Object plain(Object value) {
        if (value == null || value instanceof String || value instanceof Number || value instanceof Boolean
                || value instanceof byte[]) {
            return value;
        }
        if (value instanceof Row) {
            Row row = (Row) value;
            Map<String, Object> map = new LinkedHashMap<>();
            StructType rowSchema = row.schema();
            for (int i = 0; i < row.size(); i++) {
                map.put(rowSchema != null ? rowSchema.fields()[i].name() : "_" + (i + 1), plain(row.get(i)));
            }
            return map;
        }
        if (value instanceof scala.collection.Map) {
            Map<Object, Object> map = new LinkedHashMap<>();
            scala.collection.Iterator<?> it = ((scala.collection.Map<?, ?>) value).iterator();
            while (it.hasNext()) {
                scala.Tuple2<?, ?> pair = (scala.Tuple2<?, ?>) it.next();
                map.put(plain(pair._1()), plain(pair._2()));
            }
            return map;
        }
        if (value instanceof scala.collection.Iterable) {
            List<Object> list = new ArrayList<>();
            scala.collection.Iterator<?> it = ((scala.collection.Iterable<?>) value).iterator();
            while (it.hasNext()) {
                list.add(plain(it.next()));
            }
            return list;
        }
        if (value instanceof java.sql.Timestamp) {
            return ((java.sql.Timestamp) value).toInstant().toString();
        }
        if (value instanceof java.sql.Date) {
            return ((java.sql.Date) value).toLocalDate().toString();
        }
        return value.toString(); // java.time values (ISO-8601), intervals, ...
    }
}
