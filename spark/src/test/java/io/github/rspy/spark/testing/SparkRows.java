package io.github.rspy.spark.testing;

import java.math.BigDecimal;
import java.sql.Date;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/** Spark rows for the Python tests of rows crossing the bridge as Arrow (lists: Flux.fromIterable). */
public final class SparkRows {
    private static final StructType PLAIN = new StructType()
            .add("id", DataTypes.LongType, false)
            .add("name", DataTypes.StringType)
            .add("score", DataTypes.DoubleType);
    private static final StructType DATED = new StructType()
            .add("id", DataTypes.LongType, false)
            .add("day", DataTypes.DateType)
            .add("at", DataTypes.TimestampType)
            .add("amount", DataTypes.createDecimalType(10, 2));

    private SparkRows() {}

    /** {@code count} rows {@code (id=i, name="n" + i, score=i / 2.0)} with a schema. */
    public static List<Row> withSchema(int count) {
        List<Row> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            rows.add(new GenericRowWithSchema(new Object[] {(long) i, "n" + i, i / 2.0}, PLAIN));
        }
        return rows;
    }

    /** {@code count} rows {@code (i, "n" + i)} without a schema ({@code RowFactory.create}). */
    public static List<Row> withoutSchema(int count) {
        List<Row> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            rows.add(RowFactory.create((long) i, "n" + i));
        }
        return rows;
    }

    /** {@code count} rows with a date, a timestamp and a decimal, with a schema. */
    public static List<Row> dated(int count) {
        List<Row> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            rows.add(new GenericRowWithSchema(new Object[] {(long) i, Date.valueOf("2024-01-01"),
                Timestamp.from(java.time.Instant.parse("2024-01-01T00:00:00Z").plusSeconds(i)),
                BigDecimal.valueOf(i, 2)}, DATED));
        }
        return rows;
    }

    /** {@code count} internal rows {@code (i, UTF8String "n" + i, null)}. */
    public static List<InternalRow> internal(int count) {
        List<InternalRow> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            rows.add(new GenericInternalRow(new Object[] {(long) i, UTF8String.fromString("n" + i), null}));
        }
        return rows;
    }
}
