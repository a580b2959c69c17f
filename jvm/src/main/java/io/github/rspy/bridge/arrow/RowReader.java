package io.github.rspy.bridge.arrow;

import java.util.List;

/**
 * Reads JVM objects of one kind as rows, so that they cross to Python as Arrow record batches: a
 * service provider interface. The bridge reads {@code Object[]} and {@code Map} rows and Java
 * records itself (and JavaBeans, when the subscriber gave a schema); other kinds are read by the
 * implementations {@link java.util.ServiceLoader} finds, listed in
 * {@code META-INF/services/io.github.rspy.bridge.arrow.RowReader}. The Spark connectors' jar has
 * one for Spark's {@code Row} and {@code InternalRow}, so that the bridge's own jar needs no Spark.
 * A reader that cannot be loaded (a class it needs is absent) is skipped.
 *
 * <p>Readers are asked about the first row of each batch, on many streams' drain threads at once:
 * they and their layouts must be thread-safe (immutable is simplest).
 */
public interface RowReader {
    /** What a row becomes in Python. */
    enum Shape {
        /** A tuple. */
        TUPLE,
        /** A dict keyed by column name. */
        DICT,
        /**
         * A {@code pyspark.sql.Row} with the column names (a tuple if PySpark is not importable);
         * a tuple if the layout has no names and the subscriber gave no schema.
         */
        NAMED_TUPLE
    }

    /** The layout of {@code row}, or null if this reader does not read such objects. */
    Layout layoutOf(Object row);

    /** The columns of rows of one kind, and how to read them. */
    interface Layout {
        /** The column names in order, or null if the columns are only positional. */
        List<String> names();

        /** How many columns a row has. */
        int width();

        /** What a row becomes in Python. */
        Shape shape();

        /** Whether {@code row} has this very layout: the rows of one Arrow batch share one. */
        boolean fits(Object row);

        /**
         * Column {@code column} of {@code row} (which {@link #fits}). The values that cross
         * without a schema are those {@code InferredColumn} lists (numbers, strings, bytes,
         * decimals, dates, times, UUIDs, and null); any other makes its batch cross as it would
         * without this reader (as references). With a schema, each column takes the values its
         * type lists (see {@code SchemaRows}).
         *
         * @throws RuntimeException if the value cannot be read: without a schema the batch
         *     crosses without this reader, with one the stream fails naming the row and column
         */
        Object value(Object row, int column);
    }
}
