package io.github.rspy.bridge.testing;

import reactor.core.publisher.Flux;

/** Reactor sources that need a Java lambda, which Python cannot hand to Reactor directly. */
public final class Sources {
    private Sources() {}

    /** {@code Flux.range(0, count)} of longs: the bridge benchmark's JVM source. */
    public static Flux<Long> longs(int count) {
        return Flux.range(0, count).map(Integer::longValue);
    }
}
