package io.github.rspy.bridge.arrow;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * One column of rows without a schema ({@link ArrowRows}): the Arrow type its values share, and
 * its vector. Every non-null value of the column must be of one kind:
 *
 * <ul>
 *   <li>{@code int64}: Long, Integer, Short, Byte, BigInteger within 64 bits;
 *   <li>{@code float64}: Double; {@code float32}: Float; {@code bool}: Boolean;
 *   <li>{@code string}: String, Character (one UTF-8 can hold); {@code binary}: {@code byte[]};
 *   <li>{@code decimal128(p, s)}: BigDecimal, with {@code s} the column's largest scale and
 *       {@code p} its most integer digits plus {@code s}; {@code decimal256} past 38 digits; past
 *       76 the column has no type;
 *   <li>{@code date32}: LocalDate, {@code java.sql.Date};
 *   <li>{@code timestamp[us]}: LocalDateTime (a naive {@code datetime});
 *   <li>{@code timestamp[us, tz=+00:00]}: Instant, {@code java.util.Date} and {@code
 *       java.sql.Timestamp}, OffsetDateTime, ZonedDateTime (an aware {@code datetime} in UTC);
 *   <li>{@code fixed_size_binary(16)} marked as the canonical extension type {@code arrow.uuid}: UUID;
 * </ul>
 *
 * a column of nulls only is a {@code string} one. Dates and times need Python's range (see
 * {@link JavaValues}). A column mixing kinds (Long and Double, LocalDateTime and Instant) has no
 * type: its batch crosses pickled, each value as itself, so a naive and an aware time never
 * become one another.
 */
final class InferredColumn {
    private enum Kind { NULL, LONG, DOUBLE, FLOAT, BOOLEAN, STRING, BYTES, DECIMAL, DATE, TIMESTAMP, INSTANT, UUID }

    static final int MAX_DECIMAL128 = 38;
    static final int MAX_DECIMAL256 = 76;
    /** Field metadata of Arrow's canonical UUID type, which pyarrow (18 and newer) reads as such. */
    static final Map<String, String> UUID_METADATA = Map.of("ARROW:extension:name", "arrow.uuid",
            "ARROW:extension:metadata", "");

    private final Kind kind;
    private final int precision; // DECIMAL
    private final int scale; // DECIMAL
    private final long[] numbers; // DATE, TIMESTAMP, INSTANT: each value as days or microseconds

    private InferredColumn(Kind kind, int precision, int scale, long[] numbers) {
        this.kind = kind;
        this.precision = precision;
        this.scale = scale;
        this.numbers = numbers;
    }

    /** The type of the first {@code n} values of {@code column}, or null if they share none. */
    static InferredColumn of(Object[] column, int n) {
        Kind kind = Kind.NULL;
        int integerDigits = 0; // DECIMAL: the most digits before the point, and after it, of any value
        int scale = 0;
        long[] numbers = null;
        for (int r = 0; r < n; r++) {
            Object v = column[r];
            if (v == null) {
                continue;
            }
            Kind k = kindOf(v);
            if (k == null || (kind != Kind.NULL && k != kind)) {
                return null;
            }
            kind = k;
            switch (k) {
                case DECIMAL: {
                    BigDecimal d = (BigDecimal) v;
                    integerDigits = Math.max(integerDigits, d.precision() - d.scale());
                    scale = Math.max(scale, d.scale());
                    break;
                }
                case DATE:
                case TIMESTAMP:
                case INSTANT: {
                    long number = numberOf(k, v);
                    if (number == JavaValues.NONE) {
                        return null; // outside Python's years 1 to 9999
                    }
                    if (numbers == null) {
                        numbers = new long[n];
                    }
                    numbers[r] = number;
                    break;
                }
                default:
                    break;
            }
        }
        int precision = 0;
        if (kind == Kind.DECIMAL) {
            precision = Math.max(1, integerDigits + scale); // a scale < 0 (1E+3) counts as 0 here
            if (precision > MAX_DECIMAL256) {
                return null;
            }
        }
        return new InferredColumn(kind, precision, scale, numbers);
    }

    private static Kind kindOf(Object v) {
        // The plain values first: rows of them must not pay for the others' tests.
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return Kind.LONG;
        }
        if (v instanceof Double) {
            return Kind.DOUBLE;
        }
        if (v instanceof String) {
            return ArrowRows.hasLoneSurrogate((String) v) ? null : Kind.STRING; // UTF-8 could not hold it
        }
        if (v instanceof Boolean) {
            return Kind.BOOLEAN;
        }
        if (v instanceof Float) {
            return Kind.FLOAT;
        }
        if (v instanceof byte[]) {
            return Kind.BYTES;
        }
        if (v instanceof BigDecimal) {
            return Kind.DECIMAL;
        }
        if (v instanceof LocalDateTime) {
            return Kind.TIMESTAMP;
        }
        if (v instanceof BigInteger) {
            return ((BigInteger) v).bitLength() < 64 ? Kind.LONG : null;
        }
        if (v instanceof Character) {
            return Character.isSurrogate((Character) v) ? null : Kind.STRING;
        }
        if (v instanceof UUID) {
            return Kind.UUID;
        }
        if (JavaValues.instantOf(v) != null) {
            return Kind.INSTANT;
        }
        return v instanceof java.time.LocalDate || v instanceof java.sql.Date ? Kind.DATE : null;
    }

    private static long numberOf(Kind kind, Object v) {
        if (kind == Kind.DATE) {
            return JavaValues.epochDay(v);
        }
        if (kind == Kind.TIMESTAMP) {
            return JavaValues.localMicros((LocalDateTime) v);
        }
        Instant instant = JavaValues.instantOf(v);
        return JavaValues.micros(instant);
    }

    /** The column's first {@code n} values in a new vector named {@code name}. */
    FieldVector fill(BufferAllocator allocator, String name, Object[] column, int n) {
        switch (kind) {
            case LONG: {
                BigIntVector v = new BigIntVector(name, allocator);
                v.allocateNew(n);
                for (int r = 0; r < n; r++) {
                    if (column[r] != null) {
                        v.set(r, ((Number) column[r]).longValue());
                    }
                }
                v.setValueCount(n);
                return v;
            }
            case DOUBLE: {
                Float8Vector v = new Float8Vector(name, allocator);
                v.allocateNew(n);
                for (int r = 0; r < n; r++) {
                    if (column[r] != null) {
                        v.set(r, (Double) column[r]);
                    }
                }
                v.setValueCount(n);
                return v;
            }
            case FLOAT: {
                Float4Vector v = new Float4Vector(name, allocator);
                v.allocateNew(n);
                for (int r = 0; r < n; r++) {
                    if (column[r] != null) {
                        v.set(r, (Float) column[r]);
                    }
                }
                v.setValueCount(n);
                return v;
            }
            case BOOLEAN: {
                BitVector v = new BitVector(name, allocator);
                v.allocateNew(n);
                for (int r = 0; r < n; r++) {
                    if (column[r] != null) {
                        v.set(r, (Boolean) column[r] ? 1 : 0);
                    }
                }
                v.setValueCount(n);
                return v;
            }
            case BYTES: {
                VarBinaryVector v = new VarBinaryVector(name, allocator);
                v.allocateNew(n);
                for (int r = 0; r < n; r++) {
                    if (column[r] != null) {
                        v.setSafe(r, (byte[]) column[r]);
                    }
                }
                v.setValueCount(n);
                return v;
            }
            case DECIMAL:
                return decimals(allocator, name, column, n);
            case DATE: {
                DateDayVector v = new DateDayVector(name, allocator);
                v.allocateNew(n);
                for (int r = 0; r < n; r++) {
                    if (column[r] != null) {
                        v.set(r, (int) numbers[r]);
                    }
                }
                v.setValueCount(n);
                return v;
            }
            case TIMESTAMP:
            case INSTANT: {
                // "+00:00", not "UTC": pyarrow gives the first datetime.timezone.utc, as the pickles do.
                org.apache.arrow.vector.TimeStampVector v = kind == Kind.TIMESTAMP
                        ? new TimeStampMicroVector(name, allocator)
                        : new TimeStampMicroTZVector(name, allocator, "+00:00");
                v.allocateNew(n);
                for (int r = 0; r < n; r++) {
                    if (column[r] != null) {
                        v.set(r, numbers[r]);
                    }
                }
                v.setValueCount(n);
                return v;
            }
            case UUID: {
                FixedSizeBinaryVector v = new FixedSizeBinaryVector(new Field(name,
                        new FieldType(true, new ArrowType.FixedSizeBinary(16), null, UUID_METADATA), null), allocator);
                v.allocateNew(n);
                ByteBuffer bytes = ByteBuffer.allocate(16);
                for (int r = 0; r < n; r++) {
                    if (column[r] != null) {
                        UUID u = (UUID) column[r];
                        bytes.putLong(0, u.getMostSignificantBits()).putLong(8, u.getLeastSignificantBits());
                        v.set(r, bytes.array());
                    }
                }
                v.setValueCount(n);
                return v;
            }
            default: { // STRING, and NULL: a column of nulls only
                VarCharVector v = new VarCharVector(name, allocator);
                v.allocateNew(n);
                for (int r = 0; r < n; r++) {
                    Object value = column[r];
                    if (value != null) {
                        String s = value instanceof String ? (String) value : value.toString(); // a Character
                        v.setSafe(r, s.getBytes(StandardCharsets.UTF_8));
                    }
                }
                v.setValueCount(n);
                return v;
            }
        }
    }

    /** Every value at the column's scale (more digits after the point, never fewer: no rounding). */
    private FieldVector decimals(BufferAllocator allocator, String name, Object[] column, int n) {
        if (precision > MAX_DECIMAL128) {
            Decimal256Vector v = new Decimal256Vector(name, allocator, precision, scale);
            v.allocateNew(n);
            for (int r = 0; r < n; r++) {
                if (column[r] != null) {
                    v.set(r, ((BigDecimal) column[r]).setScale(scale));
                }
            }
            v.setValueCount(n);
            return v;
        }
        DecimalVector v = new DecimalVector(name, allocator, precision, scale);
        v.allocateNew(n);
        for (int r = 0; r < n; r++) {
            if (column[r] != null) {
                BigInteger unscaled = ((BigDecimal) column[r]).setScale(scale).unscaledValue();
                if (unscaled.bitLength() < 64) {
                    v.set(r, unscaled.longValue()); // the common case, without a byte[] per value
                } else {
                    v.set(r, ((BigDecimal) column[r]).setScale(scale));
                }
            }
        }
        v.setValueCount(n);
        return v;
    }
}
