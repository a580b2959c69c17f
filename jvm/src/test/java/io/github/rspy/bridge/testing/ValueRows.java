package io.github.rspy.bridge.testing;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import reactor.core.publisher.Flux;

/**
 * JVM rows of the values that cross by value without a schema (dates, times, decimals, UUIDs,
 * Java's smaller numbers), and rows holding an object that has no Python equivalent. The Python
 * tests compute the same values with the formulas written here.
 */
public final class ValueRows {
    private ValueRows() {}

    /**
     * Row {@code i}'s value of {@code kind}:
     *
     * <ul>
     *   <li>"decimal": {@code BigDecimal.valueOf(7919 * i - 500, i % 4)} (scales 0 to 3);
     *   <li>"date": {@code LocalDate.ofEpochDay(37 * i - 20000)};
     *   <li>"sqlDate": {@code java.sql.Date.valueOf(LocalDate.ofEpochDay(11000 + i))};
     *   <li>"localDateTime": 1969-12-31T23:59:59 plus {@code 3601 * i} s and {@code 1001 * i} ns;
     *   <li>"instant": {@code Instant.ofEpochSecond(86401 * i - 1000000, 1001 * i)};
     *   <li>"timestamp": {@code java.sql.Timestamp} of {@code Instant.ofEpochSecond(1700000000 + i, 1001 * i)};
     *   <li>"offsetDateTime": 2024-01-01T12:00+02:00 plus {@code i} minutes and {@code 1000 * i} ns;
     *   <li>"zonedDateTime": 2024-06-01T12:00 in Europe/Paris plus {@code i} hours;
     *   <li>"utilDate": {@code new java.util.Date(1700000000000 + 1001 * i)} (milliseconds);
     *   <li>"bigInteger": {@code -(i << 40)}; "short": {@code (short) (i - 300)}; "byte": {@code (byte) i};
     *   <li>"character": {@code (char) ('a' + i % 26)}; "uuid": {@code new UUID(i, -i)};
     *   <li>"long": {@code (long) i}; "double": {@code i / 4.0}; "string": {@code "s" + i};
     *   <li>"thread": the current thread; "farDate": {@code LocalDate.of(10000 + i, 1, 1)} (no
     *       Python equivalent: a date past Python's year 9999).
     * </ul>
     */
    public static Object value(String kind, int i) {
        switch (kind) {
            case "decimal":
                return BigDecimal.valueOf(7919L * i - 500, i % 4);
            case "date":
                return LocalDate.ofEpochDay(37L * i - 20000);
            case "sqlDate":
                return java.sql.Date.valueOf(LocalDate.ofEpochDay(11000L + i));
            case "localDateTime":
                return LocalDateTime.of(1969, 12, 31, 23, 59, 59).plusSeconds(3601L * i).plusNanos(1001L * i);
            case "instant":
                return Instant.ofEpochSecond(86401L * i - 1_000_000L, 1001L * i);
            case "timestamp":
                return java.sql.Timestamp.from(Instant.ofEpochSecond(1_700_000_000L + i, 1001L * i));
            case "offsetDateTime":
                return OffsetDateTime.of(2024, 1, 1, 12, 0, 0, 0, ZoneOffset.ofHours(2))
                        .plusMinutes(i).plusNanos(1000L * i);
            case "zonedDateTime":
                return ZonedDateTime.of(2024, 6, 1, 12, 0, 0, 0, ZoneId.of("Europe/Paris")).plusHours(i);
            case "utilDate":
                return new java.util.Date(1_700_000_000_000L + 1001L * i);
            case "bigInteger":
                return BigInteger.valueOf(i).shiftLeft(40).negate();
            case "short":
                return (short) (i - 300);
            case "byte":
                return (byte) i;
            case "character":
                return (char) ('a' + i % 26);
            case "uuid":
                return new UUID(i, -i);
            case "long":
                return (long) i;
            case "double":
                return i / 4.0;
            case "string":
                return "s" + i;
            case "thread":
                return Thread.currentThread();
            case "farDate":
                return LocalDate.of(10_000 + i, 1, 1);
            default:
                throw new IllegalArgumentException("no value of kind " + kind);
        }
    }

    /**
     * {@code count} rows, one column per kind of {@code kinds} (comma-separated; "a|b" takes
     * turns, row by row): column {@code c} of row {@code i} is null when {@code i % 5 == c % 5}.
     */
    public static Flux<Object[]> rows(String kinds, int count) {
        String[][] columns = columns(kinds);
        return Flux.range(0, count).map(i -> row(columns, i));
    }

    /** {@link #rows} as {@code LinkedHashMap}s keyed by kind ("a|b" included). */
    public static Flux<Map<String, Object>> maps(String kinds, int count) {
        String[][] columns = columns(kinds);
        String[] names = kinds.split(",");
        return Flux.range(0, count).map(i -> {
            Object[] values = row(columns, i);
            Map<String, Object> map = new LinkedHashMap<>();
            for (int c = 0; c < values.length; c++) {
                map.put(names[c], values[c]);
            }
            return map;
        });
    }

    /** {@link #rows} as {@code ArrayList}s. */
    public static Flux<List<Object>> lists(String kinds, int count) {
        String[][] columns = columns(kinds);
        return Flux.range(0, count).map(i -> new ArrayList<>(Arrays.asList(row(columns, i))));
    }

    /** {@link #rows}, but column {@code column} of row {@code row} is the current thread. */
    public static Flux<Object[]> withThread(String kinds, int count, int row, int column) {
        String[][] columns = columns(kinds);
        return Flux.range(0, count).map(i -> {
            Object[] values = row(columns, i);
            if (i == row) {
                values[column] = Thread.currentThread();
            }
            return values;
        });
    }

    /** {@link #maps}, but the value of key {@code kind} in row {@code row} is the current thread. */
    public static Flux<Map<String, Object>> mapsWithThread(String kinds, int count, int row, String kind) {
        return maps(kinds, count).index().map(indexed -> {
            if (indexed.getT1() == row) {
                indexed.getT2().put(kind, Thread.currentThread());
            }
            return indexed.getT2();
        });
    }

    /** Rows of one column: {@code new BigDecimal(text)} for each of the comma-separated {@code texts}. */
    public static Flux<Object[]> decimals(String texts) {
        return Flux.fromArray(texts.split(",")).map(text -> new Object[] {new BigDecimal(text)});
    }

    /**
     * {@code count} rows of the values benchmark, {@code Object[]{long, BigDecimal, LocalDate,
     * LocalDateTime}}: {@code (long) i},
     * {@code BigDecimal.valueOf(i * 1234567, 2)}, {@code LocalDate.ofEpochDay(19000 + i % 3650)},
     * 2024-01-01T00:00 plus {@code i} seconds and {@code 1000 * i % 10^9} ns.
     */
    public static Flux<Object[]> benchValues(int count) {
        LocalDateTime start = LocalDateTime.of(2024, 1, 1, 0, 0);
        return Flux.range(0, count).map(i -> new Object[] {(long) i, BigDecimal.valueOf(i * 1_234_567L, 2),
            LocalDate.ofEpochDay(19_000L + i % 3650), start.plusSeconds(i).plusNanos(1000L * i % 1_000_000_000L)});
    }

    private static String[][] columns(String kinds) {
        String[] names = kinds.split(",");
        String[][] columns = new String[names.length][];
        for (int c = 0; c < names.length; c++) {
            columns[c] = names[c].split("\\|");
        }
        return columns;
    }

    private static Object[] row(String[][] columns, int i) {
        Object[] row = new Object[columns.length];
        for (int c = 0; c < columns.length; c++) {
            row[c] = i % 5 == c % 5 ? null : value(columns[c][i % columns[c].length], i);
        }
        return row;
    }
}
