package io.github.rspy.bridge.arrow;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;

/**
 * The Java values with a Python equivalent beyond the plain ones (numbers, strings, bytes), as
 * both of the bridge's ways of carrying values by value hold them, Arrow rows and pickles: a date
 * (LocalDate, {@code java.sql.Date}) as days since 1970-01-01; a LocalDateTime as microseconds
 * since 1970-01-01T00:00 of its wall time (a naive {@code datetime}); an instant (Instant, {@code
 * java.util.Date} and {@code java.sql.Timestamp}, OffsetDateTime, ZonedDateTime) as microseconds
 * since 1970-01-01T00:00Z (an aware {@code datetime} in UTC: the offset or zone is not kept).
 *
 * <p>Python's {@code datetime} holds microseconds and the years 1 to 9999: nanoseconds are
 * truncated toward the past, and a value outside those years has no Python equivalent
 * ({@link #NONE}), so it crosses as a reference. Names no Arrow type: the bridge's codec uses it
 * without Arrow.
 */
public final class JavaValues {
    /** No Python equivalent: not such a value, or outside the years 1 to 9999. */
    public static final long NONE = Long.MIN_VALUE;
    private static final long MIN_DAY = LocalDate.of(1, 1, 1).toEpochDay();
    private static final long MAX_DAY = LocalDate.of(9999, 12, 31).toEpochDay();
    private static final long SECONDS_PER_DAY = 86_400L;

    private JavaValues() {}

    /** Whether {@code v} is a date, a date-time or an instant Python can hold. */
    public static boolean isTime(Object v) {
        if (v instanceof LocalDateTime) {
            return localMicros((LocalDateTime) v) != NONE;
        }
        Instant instant = instantOf(v);
        return instant != null ? micros(instant) != NONE : epochDay(v) != NONE;
    }

    /** Days since 1970-01-01 of a LocalDate or {@code java.sql.Date}; {@link #NONE} for anything else. */
    public static long epochDay(Object v) {
        LocalDate date;
        if (v instanceof LocalDate) {
            date = (LocalDate) v;
        } else if (v instanceof java.sql.Date) {
            date = ((java.sql.Date) v).toLocalDate(); // its day in the JVM's time zone, as JDBC reads it
        } else {
            return NONE;
        }
        long day = date.toEpochDay();
        return day < MIN_DAY || day > MAX_DAY ? NONE : day;
    }

    /** The wall time of {@code t} as microseconds since 1970-01-01T00:00, or {@link #NONE}. */
    public static long localMicros(LocalDateTime t) {
        return micros(t.toEpochSecond(ZoneOffset.UTC), t.getNano());
    }

    /** {@code instant} as microseconds since 1970-01-01T00:00Z, or {@link #NONE}. */
    public static long micros(Instant instant) {
        return micros(instant.getEpochSecond(), instant.getNano());
    }

    private static long micros(long seconds, int nanos) {
        long day = Math.floorDiv(seconds, SECONDS_PER_DAY);
        if (day < MIN_DAY || day > MAX_DAY) {
            return NONE;
        }
        return seconds * 1_000_000L + nanos / 1_000; // nanos >= 0: truncated toward the past
    }

    /**
     * The instant of an Instant, a {@code java.util.Date} (a {@code java.sql.Timestamp} with its
     * nanoseconds), an OffsetDateTime or a ZonedDateTime; null for anything else, {@code
     * java.sql.Date} and {@code java.sql.Time} too (a day and a time of day, not instants).
     */
    public static Instant instantOf(Object v) {
        if (v instanceof Instant) {
            return (Instant) v;
        }
        if (v instanceof java.util.Date) {
            return v instanceof java.sql.Date || v instanceof java.sql.Time ? null : ((java.util.Date) v).toInstant();
        }
        if (v instanceof OffsetDateTime) {
            return ((OffsetDateTime) v).toInstant();
        }
        return v instanceof ZonedDateTime ? ((ZonedDateTime) v).toInstant() : null;
    }

    /** The LocalDate {@code day} days after 1970-01-01: a Python {@code date}. */
    public static LocalDate date(long day) {
        return LocalDate.ofEpochDay(day);
    }

    /** The LocalDateTime {@code micros} after 1970-01-01T00:00: a naive Python {@code datetime}. */
    public static LocalDateTime localDateTime(long micros) {
        return LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                (int) Math.floorMod(micros, 1_000_000L) * 1_000, ZoneOffset.UTC);
    }

    /** The Instant {@code micros} after 1970-01-01T00:00Z: an aware Python {@code datetime}. */
    public static Instant instant(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000);
    }
}
