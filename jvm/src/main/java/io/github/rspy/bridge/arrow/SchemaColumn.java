package io.github.rspy.bridge.arrow;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * One column of a schema a subscriber gave (see {@link SchemaRows}), and the Java values it
 * takes:
 *
 * <ul>
 *   <li>{@code bool}: Boolean;
 *   <li>{@code int8}, {@code int16}, {@code int32}, {@code int64}: Byte, Short, Integer, Long or
 *       BigInteger within the column's range;
 *   <li>{@code float32}, {@code float64}: any of Byte, Short, Integer, Long, Float, Double;
 *   <li>{@code string}, {@code large_string}: String (one UTF-8 can hold);
 *       {@code binary}, {@code large_binary}: {@code byte[]};
 *   <li>{@code date32}: LocalDate, {@code java.sql.Date};
 *   <li>{@code timestamp} (any unit, with or without a time zone): Instant, {@code
 *       java.sql.Timestamp}, {@code java.util.Date}, OffsetDateTime, ZonedDateTime (their
 *       instant; without a time zone, its UTC wall time), LocalDateTime (as UTC); finer than the
 *       unit is truncated;
 *   <li>{@code decimal128(p, s)}: BigDecimal, BigInteger, Long, Integer, Short, Byte, rescaled to
 *       {@code s} without rounding, within {@code p} digits;
 * </ul>
 *
 * and null when the column is nullable.
 */
final class SchemaColumn {
    static final String SUPPORTED = "bool, int8, int16, int32, int64, float32, float64, string, large_string, "
            + "binary, large_binary, date32, timestamp (any unit, any or no time zone), decimal128";

    /** Why a value (or a row) does not fit; no stack trace: it becomes the stream's error. */
    static final class Unfit extends Exception {
        private static final long serialVersionUID = 1L;

        Unfit(String message) {
            super(message, null, false, false);
        }
    }

    private enum Kind { BOOL, INT, FLOAT32, FLOAT64, UTF8, LARGE_UTF8, BINARY, LARGE_BINARY, DATE, TIMESTAMP, DECIMAL }

    private final Kind kind;
    private final String name;
    private final String type;
    private final boolean nullable;
    private final int bits; // INT
    private final long perSecond; // TIMESTAMP: units in a second
    private final int precision; // DECIMAL
    private final int scale; // DECIMAL

    private SchemaColumn(Field field, Kind kind, String type, int bits, long perSecond, int precision, int scale) {
        this.kind = kind;
        this.name = field.getName();
        this.type = type;
        this.nullable = field.isNullable();
        this.bits = bits;
        this.perSecond = perSecond;
        this.precision = precision;
        this.scale = scale;
    }

    static SchemaColumn of(Field field) {
        ArrowType t = field.getType();
        switch (t.getTypeID()) {
            case Bool:
                return new SchemaColumn(field, Kind.BOOL, "bool", 0, 0, 0, 0);
            case Int: {
                ArrowType.Int i = (ArrowType.Int) t;
                if (i.getIsSigned()) {
                    return new SchemaColumn(field, Kind.INT, "int" + i.getBitWidth(), i.getBitWidth(), 0, 0, 0);
                }
                break;
            }
            case FloatingPoint: {
                FloatingPointPrecision p = ((ArrowType.FloatingPoint) t).getPrecision();
                if (p == FloatingPointPrecision.SINGLE) {
                    return new SchemaColumn(field, Kind.FLOAT32, "float32", 0, 0, 0, 0);
                }
                if (p == FloatingPointPrecision.DOUBLE) {
                    return new SchemaColumn(field, Kind.FLOAT64, "float64", 0, 0, 0, 0);
                }
                break;
            }
            case Utf8:
                return new SchemaColumn(field, Kind.UTF8, "string", 0, 0, 0, 0);
            case LargeUtf8:
                return new SchemaColumn(field, Kind.LARGE_UTF8, "large_string", 0, 0, 0, 0);
            case Binary:
                return new SchemaColumn(field, Kind.BINARY, "binary", 0, 0, 0, 0);
            case LargeBinary:
                return new SchemaColumn(field, Kind.LARGE_BINARY, "large_binary", 0, 0, 0, 0);
            case Date:
                if (((ArrowType.Date) t).getUnit() == org.apache.arrow.vector.types.DateUnit.DAY) {
                    return new SchemaColumn(field, Kind.DATE, "date32", 0, 0, 0, 0);
                }
                break;
            case Timestamp: {
                ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
                long perSecond;
                String unit;
                switch (ts.getUnit()) {
                    case SECOND:
                        perSecond = 1L;
                        unit = "s";
                        break;
                    case MILLISECOND:
                        perSecond = 1_000L;
                        unit = "ms";
                        break;
                    case MICROSECOND:
                        perSecond = 1_000_000L;
                        unit = "us";
                        break;
                    default:
                        perSecond = 1_000_000_000L;
                        unit = "ns";
                }
                String zone = ts.getTimezone() == null ? "" : ", tz=" + ts.getTimezone();
                return new SchemaColumn(field, Kind.TIMESTAMP, "timestamp[" + unit + zone + "]", 0, perSecond, 0, 0);
            }
            case Decimal: {
                ArrowType.Decimal d = (ArrowType.Decimal) t;
                if (d.getBitWidth() == 128) {
                    return new SchemaColumn(field, Kind.DECIMAL, "decimal128(" + d.getPrecision() + ", "
                            + d.getScale() + ")", 0, 0, d.getPrecision(), d.getScale());
                }
                break;
            }
            default:
                break;
        }
        throw new IllegalArgumentException("column '" + field.getName() + "' has Arrow type " + t
                + ", which rows cannot carry (supported: " + SUPPORTED + ")");
    }

    /** The column as error messages name it: {@code column 'id' (int32, not null)}. */
    String describe() {
        return "column '" + name + "' (" + type + (nullable ? "" : ", not null") + ")";
    }

    /** {@code value} as {@link #fill} takes it. */
    Object convert(Object value) throws Unfit {
        if (value == null) {
            if (!nullable) {
                throw new Unfit("null, in a column that is not nullable");
            }
            return null;
        }
        try {
            Object converted = convertValue(value);
            if (converted != null) {
                return converted;
            }
        } catch (ArithmeticException e) {
            throw new Unfit(describe(value) + ", which does not fit: " + e.getMessage());
        }
        throw new Unfit(describe(value) + ", which the column cannot hold");
    }

    /** null: a value of a type the column does not take. */
    private Object convertValue(Object v) {
        switch (kind) {
            case BOOL:
                return v instanceof Boolean ? v : null;
            case INT: {
                long l;
                if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
                    l = ((Number) v).longValue();
                } else if (v instanceof BigInteger) {
                    l = ((BigInteger) v).longValueExact();
                } else {
                    return null;
                }
                if (bits < 64 && (l < -(1L << (bits - 1)) || l >= (1L << (bits - 1)))) {
                    throw new ArithmeticException("out of the range of int" + bits);
                }
                return l;
            }
            case FLOAT32:
            case FLOAT64:
                if (v instanceof Double || v instanceof Float || v instanceof Long || v instanceof Integer
                        || v instanceof Short || v instanceof Byte) {
                    return ((Number) v).doubleValue();
                }
                return null;
            case UTF8:
            case LARGE_UTF8:
                if (!(v instanceof String)) {
                    return null;
                }
                if (ArrowRows.hasLoneSurrogate((String) v)) {
                    throw new ArithmeticException("a lone surrogate, which UTF-8 cannot hold");
                }
                return ((String) v).getBytes(StandardCharsets.UTF_8);
            case BINARY:
            case LARGE_BINARY:
                return v instanceof byte[] ? v : null;
            case DATE:
                if (v instanceof LocalDate) {
                    return Math.toIntExact(((LocalDate) v).toEpochDay());
                }
                return v instanceof java.sql.Date ? Math.toIntExact(((java.sql.Date) v).toLocalDate().toEpochDay()) : null;
            case TIMESTAMP: {
                Instant instant = instantOf(v);
                if (instant == null) {
                    return null;
                }
                long nanosPerUnit = 1_000_000_000L / perSecond;
                return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), perSecond),
                        instant.getNano() / nanosPerUnit);
            }
            default: { // DECIMAL
                BigDecimal d;
                if (v instanceof BigDecimal) {
                    d = (BigDecimal) v;
                } else if (v instanceof BigInteger) {
                    d = new BigDecimal((BigInteger) v);
                } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
                    d = BigDecimal.valueOf(((Number) v).longValue());
                } else {
                    return null;
                }
                BigDecimal scaled;
                try {
                    scaled = d.setScale(scale, RoundingMode.UNNECESSARY);
                } catch (ArithmeticException e) {
                    throw new ArithmeticException("more than " + scale + " digits after the point");
                }
                if (scaled.precision() > precision) {
                    throw new ArithmeticException("more than " + precision + " digits");
                }
                return scaled;
            }
        }
    }

    private static Instant instantOf(Object v) {
        if (v instanceof LocalDateTime) {
            return ((LocalDateTime) v).toInstant(ZoneOffset.UTC);
        }
        return JavaValues.instantOf(v); // not a java.sql.Time, whose toInstant() throws
    }

    /** Rows {@code from} to {@code to} of {@code values} (as {@link #convert} made them) into a new vector. */
    void fill(FieldVector vector, Object[] values, int from, int to) {
        int n = to - from;
        vector.setInitialCapacity(n);
        vector.allocateNew();
        for (int r = 0; r < n; r++) {
            Object v = values[from + r];
            if (v == null) {
                continue;
            }
            switch (kind) {
                case BOOL:
                    ((BitVector) vector).set(r, (Boolean) v ? 1 : 0);
                    break;
                case INT:
                    setInt(vector, r, (Long) v);
                    break;
                case FLOAT32:
                    ((Float4Vector) vector).set(r, (float) (double) (Double) v);
                    break;
                case FLOAT64:
                    ((Float8Vector) vector).set(r, (Double) v);
                    break;
                case UTF8:
                    ((VarCharVector) vector).setSafe(r, (byte[]) v);
                    break;
                case LARGE_UTF8:
                    ((LargeVarCharVector) vector).setSafe(r, (byte[]) v);
                    break;
                case BINARY:
                    ((VarBinaryVector) vector).setSafe(r, (byte[]) v);
                    break;
                case LARGE_BINARY:
                    ((LargeVarBinaryVector) vector).setSafe(r, (byte[]) v);
                    break;
                case DATE:
                    ((DateDayVector) vector).set(r, (Integer) v);
                    break;
                case TIMESTAMP:
                    ((TimeStampVector) vector).set(r, (Long) v);
                    break;
                default:
                    ((DecimalVector) vector).set(r, (BigDecimal) v);
            }
        }
        vector.setValueCount(n);
    }

    private void setInt(FieldVector vector, int r, long v) {
        switch (bits) {
            case 8:
                ((TinyIntVector) vector).set(r, (byte) v);
                break;
            case 16:
                ((SmallIntVector) vector).set(r, (short) v);
                break;
            case 32:
                ((IntVector) vector).set(r, (int) v);
                break;
            default:
                ((BigIntVector) vector).set(r, v);
        }
    }

    /**
     * A value as error messages show it: its class, and itself when short, with surrogates and
     * control characters escaped (the message must cross to Python, in UTF-8).
     */
    static String describe(Object v) {
        String text;
        if (v instanceof byte[]) {
            text = ((byte[]) v).length + " bytes";
        } else {
            String s = String.valueOf(v);
            StringBuilder out = new StringBuilder();
            int i = 0;
            for (; i < s.length() && out.length() < 40; i++) {
                char ch = s.charAt(i);
                if (Character.isSurrogate(ch) || Character.isISOControl(ch)) {
                    out.append(String.format("\\u%04x", (int) ch));
                } else {
                    out.append(ch);
                }
            }
            text = i < s.length() ? out + "..." : out.toString();
            if (v instanceof CharSequence) {
                text = '"' + text + '"';
            }
        }
        return a(v) + " (" + text + ")";
    }

    /** "a java.lang.Long", "an io.example.Row": {@code v}'s class with its article. */
    static String a(Object v) {
        String name = v.getClass().getName();
        return ("aeiou".indexOf(name.charAt(0)) >= 0 ? "an " : "a ") + name;
    }
}
