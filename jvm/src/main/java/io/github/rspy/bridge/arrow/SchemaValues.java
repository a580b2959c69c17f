package io.github.rspy.bridge.arrow;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * The Java values of rows that Python sent against a schema ({@code bridge.to_jvm(publisher,
 * schema=...)}): each column's own type, not the pickle's. {@code int8} → Byte, {@code int16} →
 * Short, {@code int32} → Integer, {@code int64} → Long, {@code float32} → Float, {@code float64} →
 * Double, {@code bool} → Boolean, strings → String, binaries → {@code byte[]}, {@code date32} →
 * LocalDate, {@code timestamp} with a time zone → Instant and without one → LocalDateTime (its
 * UTC wall time), {@code decimal128} → BigDecimal; null as null.
 */
final class SchemaValues {
    private SchemaValues() {}

    static Object valueAt(FieldVector vector, int r) {
        if (vector.isNull(r)) {
            return null;
        }
        if (vector instanceof VarCharVector) {
            return new String(((VarCharVector) vector).get(r), StandardCharsets.UTF_8);
        }
        if (vector instanceof LargeVarCharVector) {
            return new String(((LargeVarCharVector) vector).get(r), StandardCharsets.UTF_8);
        }
        if (vector instanceof DateDayVector) {
            return LocalDate.ofEpochDay(((DateDayVector) vector).get(r));
        }
        if (vector instanceof TimeStampVector) {
            ArrowType.Timestamp type = (ArrowType.Timestamp) vector.getField().getType();
            long v = ((TimeStampVector) vector).get(r);
            long perSecond;
            switch (type.getUnit()) {
                case SECOND:
                    perSecond = 1L;
                    break;
                case MILLISECOND:
                    perSecond = 1_000L;
                    break;
                case MICROSECOND:
                    perSecond = 1_000_000L;
                    break;
                default:
                    perSecond = 1_000_000_000L;
            }
            long seconds = Math.floorDiv(v, perSecond);
            int nanos = (int) (Math.floorMod(v, perSecond) * (1_000_000_000L / perSecond));
            if (type.getTimezone() != null) {
                return Instant.ofEpochSecond(seconds, nanos);
            }
            return LocalDateTime.ofEpochSecond(seconds, nanos, ZoneOffset.UTC);
        }
        return vector.getObject(r); // Byte, Short, Integer, Long, Float, Double, Boolean, byte[], BigDecimal
    }
}
