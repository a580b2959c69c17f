package io.github.rspy.bridge.testing;

import java.util.stream.LongStream;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/** Reactor sources that need a Java lambda, which Python cannot hand to Reactor directly. */
public final class Sources {
    private Sources() {}

    /** 0, 1, ... count - 1 as longs, re-subscribable, for any count up to Long.MAX_VALUE. */
    public static Flux<Long> longRange(long count) {
        return Flux.fromIterable(() -> LongStream.range(0, count).boxed().iterator());
    }

    /** Rows {@code Object[]{i, "row " + i}}, re-subscribable, for any count up to Long.MAX_VALUE. */
    public static Flux<Object[]> rowRange(long count) {
        return Flux.fromIterable(() -> LongStream.range(0, count).mapToObj(i -> new Object[] {i, "row " + i}).iterator());
    }

    /** {@code HashMap} rows {@code {"id": i, "name": "row " + i}}, as {@link #rowRange}. */
    public static Flux<java.util.Map<String, Object>> mapRowRange(long count) {
        return Flux.fromIterable(() -> LongStream.range(0, count).mapToObj(Sources::mapRow).iterator());
    }

    /** The row {@code Object[]{i, "row " + i}}: an element the TCK's whitebox sends. */
    public static Object[] row(long i) {
        return new Object[] {i, "row " + i};
    }

    /** The row {@code {"id": i, "name": "row " + i}} as a {@code HashMap}. */
    public static java.util.Map<String, Object> mapRow(long i) {
        java.util.Map<String, Object> row = new java.util.HashMap<>();
        row.put("id", i);
        row.put("name", "row " + i);
        return row;
    }

    /**
     * {@code count} rows {@code Object[]{(long) i, "name " + i % 1000}}: the streaming
     * benchmark's rows, as a JVM publisher.
     */
    public static Flux<Object[]> rows(int count) {
        return Flux.range(0, count).map(i -> new Object[] {(long) i, "name " + i % 1000});
    }

    /** {@code Flux.range(0, count)} of longs: the bridge benchmark's JVM source. */
    public static Flux<Long> longs(int count) {
        return Flux.range(0, count).map(Integer::longValue);
    }

    /**
     * {@code Flux.range(0, count)} of longs, emitted on Reactor's parallel scheduler: the
     * concurrency benchmark's JVM source, asynchronous as most real JVM publishers are.
     */
    public static Flux<Long> parallelLongs(int count) {
        return Flux.range(0, count).map(Integer::longValue).publishOn(Schedulers.parallel());
    }

    /**
     * {@code count} rows of Java's smaller numbers, which Python has no literal for:
     * {@code Object[]{(short) i, (byte) i, (float) i / 2, (double) i, null}}.
     */
    public static Flux<Object[]> narrowRows(int count) {
        return Flux.range(0, count).map(i -> new Object[] {(short) (int) i, (byte) (int) i, i / 2f, (double) i, null});
    }

    /** {@code count} HashMap rows {@code {"id": (long) i, "name": "name " + i}}. */
    public static Flux<java.util.Map<String, Object>> mapRows(int count) {
        return Flux.range(0, count).map(i -> {
            java.util.Map<String, Object> row = new java.util.HashMap<>();
            row.put("id", (long) i);
            row.put("name", "name " + i);
            return row;
        });
    }

    /**
     * {@code count} rows {@code Object[]{(long) i, i / 2.0, a 12-character string}}: the
     * throughput benchmark's rows (issue 21).
     */
    public static Flux<Object[]> benchRows(int count) {
        return Flux.range(0, count).map(i -> new Object[] {(long) i, i / 2.0, Long.toString(100_000_000_000L + i)});
    }

    /**
     * The longs 0 to {@code count - 1}, then a list that throws when read, as an ORM's lazily
     * loaded collection does once its session has closed: an element the bridge fails to read.
     * Then nothing, and no end: only a cancel ends it.
     */
    public static Flux<Object> thenUnreadable(int count) {
        java.util.List<Object> unreadable = new java.util.AbstractList<Object>() {
            @Override
            public Object get(int index) {
                throw new IllegalStateException("failed to lazily initialize a collection: no session");
            }

            @Override
            public int size() {
                return 3;
            }
        };
        return Flux.concat(Flux.range(0, count).map(Integer::longValue), Flux.just(unreadable), Flux.never());
    }
}
