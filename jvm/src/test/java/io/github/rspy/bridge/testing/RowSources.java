package io.github.rspy.bridge.testing;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/** JVM rows of the kinds that cross as Arrow (records, JavaBeans, typed values), and bad ones. */
public final class RowSources {
    private RowSources() {}

    /** A record of every kind of value that crosses without a schema. */
    public record Point(long id, String name, double score, boolean even, byte[] tag, Integer maybe) {}

    /** A record that is not public: read through its accessors all the same. */
    record Hidden(int id, String name) {}

    /** A record with a list component, which rows do not carry: it crosses as a reference. */
    public record Tagged(long id, List<String> tags) {}

    /** A record of values only a schema carries: a date, an instant, a decimal. */
    public record Event(long id, LocalDate day, Instant at, BigDecimal amount) {}

    /** A JavaBean: rows only for a subscriber that gave a schema. */
    public static final class Person {
        private final long id;
        private final String name;

        public Person(long id, String name) {
            this.id = id;
            this.name = name;
        }

        public long getId() {
            return id;
        }

        public String getName() {
            return name;
        }

        public boolean isActive() {
            return id % 2 == 0;
        }

        public String getBroken() {
            throw new IllegalStateException("no broken value for " + id);
        }

        @Override
        public String toString() {
            return "Person(" + id + ", " + name + ")";
        }
    }

    /** {@code count} Points: {@code (i, "p" + i, i / 4.0, i even, {i}, null or i)}. */
    public static Flux<Point> points(int count) {
        return Flux.range(0, count).map(i -> new Point(i, "p" + i, i / 4.0, i % 2 == 0,
                new byte[] {(byte) (int) i}, i % 3 == 0 ? null : i));
    }

    /**
     * Points 0, 1, ... count - 1, re-subscribable, for any count up to Long.MAX_VALUE (the TCK's);
     * no {@code byte[]}, so that their maps in Java are equal by value.
     */
    public static Flux<Point> pointRange(long count) {
        return Flux.fromIterable(() -> java.util.stream.LongStream.range(0, count)
                .mapToObj(i -> new Point(i, "p" + i, i / 4.0, i % 2 == 0, null, null)).iterator());
    }

    /** {@code count} Hidden records {@code (i, "h" + i)}. */
    public static Flux<Object> hidden(int count) {
        return Flux.range(0, count).map(i -> new Hidden(i, "h" + i));
    }

    /** {@code count} Tagged records {@code (i, ["t" + i])}. */
    public static Flux<Tagged> tagged(int count) {
        return Flux.range(0, count).map(i -> new Tagged(i, List.of("t" + i)));
    }

    /** {@code count} Events: day i after 2024-01-01, i seconds after 2024-01-01T00:00Z, i / 100. */
    public static Flux<Event> events(int count) {
        return Flux.range(0, count).map(i -> new Event(i, LocalDate.of(2024, 1, 1).plusDays(i),
                Instant.parse("2024-01-01T00:00:00Z").plusSeconds(i).plusNanos(1000L * i),
                BigDecimal.valueOf(i, 2)));
    }

    /** {@code count} Persons {@code (i, "n" + i)}. */
    public static Flux<Person> people(int count) {
        return Flux.range(0, count).map(i -> new Person(i, "n" + i));
    }

    /**
     * {@code count} rows {@code Object[]{(long) i, "name " + i}}, but row {@code bad} is of the
     * kind named: "wide" (three values), "null" (a null id), "type" (a String id), "range" (an id
     * beyond int32), "value" (a Long, not a row), "map" (a Map of other keys), "surrogate" (a
     * name UTF-8 cannot hold).
     */
    public static Flux<Object> withBadRow(int count, int bad, String kind) {
        return Flux.range(0, count).map(i -> i == bad ? badRow(i, kind) : new Object[] {(long) i, "name " + i});
    }

    private static Object badRow(int i, String kind) {
        switch (kind) {
            case "wide":
                return new Object[] {(long) i, "name " + i, "extra"};
            case "null":
                return new Object[] {null, "name " + i};
            case "type":
                return new Object[] {"seven", "name " + i};
            case "range":
                return new Object[] {1L << 40, "name " + i};
            case "value":
                return (long) i;
            case "map": {
                Map<String, Object> row = new HashMap<>();
                row.put("id", (long) i);
                row.put("nom", "name " + i);
                return row;
            }
            case "surrogate":
                return new Object[] {(long) i, "\ud800"};
            default:
                throw new IllegalArgumentException("no bad row of kind " + kind);
        }
    }

    /** {@code count} rows of a record, an Object[] and a Map in turn, all {@code (id, name)}. */
    public static Flux<Object> mixedRows(int count) {
        return Flux.range(0, count).map(i -> {
            switch (i % 3) {
                case 0:
                    return new Object[] {(long) i, "name " + i};
                case 1: {
                    Map<String, Object> row = new HashMap<>();
                    row.put("id", (long) i);
                    row.put("name", "name " + i);
                    return row;
                }
                default:
                    return new Hidden(i, "name " + i);
            }
        });
    }
}
