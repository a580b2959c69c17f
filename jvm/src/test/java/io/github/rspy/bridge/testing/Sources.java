package io.github.rspy.bridge.testing;

import java.util.stream.LongStream;
import reactor.core.publisher.Flux;

/** Reactor sources that need a Java lambda, which Python cannot hand to Reactor directly. */
public final class Sources {
    private Sources() {}

    /** 0, 1, ... count - 1 as longs, re-subscribable, for any count up to Long.MAX_VALUE. */
    public static Flux<Long> longRange(long count) {
        return Flux.fromIterable(() -> LongStream.range(0, count).boxed().iterator());
    }

    /** {@code Flux.range(0, count)} of longs: the bridge benchmark's JVM source. */
    public static Flux<Long> longs(int count) {
        return Flux.range(0, count).map(Integer::longValue);
    }

    /**
     * {@code count} rows {@code Object[]{Long i, String "name " + i % 1000}}: the same rows the
     * Spark streaming benchmarks push through a query, as a JVM publisher (the bridge's baseline).
     */
    public static Flux<Object[]> rows(long count) {
        return Flux.fromIterable(() -> LongStream.range(0, count)
                .mapToObj(i -> new Object[] {i, "name " + i % 1000}).iterator());
    }
}
