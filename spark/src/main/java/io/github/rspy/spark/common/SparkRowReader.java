package io.github.rspy.spark.common;

import io.github.rspy.bridge.arrow.RowReader;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BaseGenericInternalRow;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark's rows for the bridge (a {@link RowReader}, found by {@link java.util.ServiceLoader}
 * through {@code META-INF/services}, so the bridge's own jar needs no Spark):
 *
 * <ul>
 *   <li>an {@code org.apache.spark.sql.Row} with a schema ({@code GenericRowWithSchema}, what a
 *       Dataset's {@code collectAsList} and the streaming sink give) becomes a {@code
 *       pyspark.sql.Row} with its field names; one without a schema a tuple (a {@code
 *       pyspark.sql.Row} with the names of a schema the subscriber gave);
 *   <li>an {@code InternalRow} whose values are objects ({@code GenericInternalRow}, {@code
 *       SpecificInternalRow}) becomes a tuple, its {@code UTF8String}s strings and its {@code
 *       Decimal}s BigDecimals. An {@code UnsafeRow} cannot be read without its types: it
 *       crosses as a reference.
 * </ul>
 *
 * Values cross as the bridge carries them: without a schema, rows with a date, a timestamp, a
 * decimal or a nested value cross as references, as before; with one, dates, timestamps and
 * decimals fill columns of those types.
 */
public final class SparkRowReader implements RowReader {
    @Override
    public Layout layoutOf(Object row) {
        if (row instanceof Row) {
            Row r = (Row) row;
            StructType schema = r.schema();
            return schema == null ? new Positional(r.length()) : new Named(schema);
        }
        if (row instanceof InternalRow && row instanceof BaseGenericInternalRow) {
            return new Internal(((InternalRow) row).numFields());
        }
        return null;
    }

    /** {@code Row}s with one schema: a pyspark.sql.Row each. */
    private static final class Named implements Layout {
        private final StructType schema;
        private final List<String> names;

        Named(StructType schema) {
            this.schema = schema;
            this.names = Collections.unmodifiableList(Arrays.asList(schema.fieldNames()));
        }

        @Override
        public List<String> names() {
            return names;
        }

        @Override
        public int width() {
            return names.size();
        }

        @Override
        public Shape shape() {
            return Shape.NAMED_TUPLE;
        }

        @Override
        public boolean fits(Object row) {
            if (!(row instanceof Row)) {
                return false;
            }
            StructType s = ((Row) row).schema();
            return s == schema || schema.equals(s); // a Dataset's rows share one schema object
        }

        @Override
        public Object value(Object row, int column) {
            return ((Row) row).get(column);
        }
    }

    /** Rows of one width with no names: what the layouts without a schema share. */
    private abstract static class Unnamed implements Layout {
        final int width;
        private final Shape shape;

        Unnamed(int width, Shape shape) {
            this.width = width;
            this.shape = shape;
        }

        @Override
        public List<String> names() {
            return null;
        }

        @Override
        public int width() {
            return width;
        }

        @Override
        public Shape shape() {
            return shape;
        }
    }

    /** {@code Row}s without a schema, of one width. */
    private static final class Positional extends Unnamed {
        Positional(int width) {
            super(width, Shape.NAMED_TUPLE);
        }

        @Override
        public boolean fits(Object row) {
            return row instanceof Row && ((Row) row).schema() == null && ((Row) row).length() == width;
        }

        @Override
        public Object value(Object row, int column) {
            return ((Row) row).get(column);
        }
    }

    /** {@code InternalRow}s holding objects, of one width: a tuple each. */
    private static final class Internal extends Unnamed {
        Internal(int width) {
            super(width, Shape.TUPLE);
        }

        @Override
        public boolean fits(Object row) {
            return row instanceof BaseGenericInternalRow && row instanceof InternalRow
                    && ((InternalRow) row).numFields() == width;
        }

        @Override
        public Object value(Object row, int column) {
            Object value = ((BaseGenericInternalRow) row).genericGet(column);
            if (value instanceof UTF8String) {
                return value.toString();
            }
            if (value instanceof Decimal) {
                return ((Decimal) value).toJavaBigDecimal();
            }
            return value;
        }
    }
}
