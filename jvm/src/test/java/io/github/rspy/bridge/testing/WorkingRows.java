package io.github.rspy.bridge.testing;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A producer that works for each row, as a database driver decodes one or a client parses a
 * message (issue 45), beside the same rows made beforehand. Row {@code i} is an {@code Object[]}
 * of five columns, the shape of the R2DBC query:
 *
 * <ol>
 *   <li>id, a Long: {@code i};
 *   <li>amount, a Double: {@code BigDecimal.valueOf(1_234_567 * i - 5_000_000, 3)} times 1.0725,
 *       rounded half-even to 2 places;
 *   <li>label, a String: {@code String.format(Locale.ROOT, "#%07d %,.2f", i, amount)}, e.g. {@code
 *       "#0000007 3,906.01"};
 *   <li>even, a Boolean: whether the label's {@code hashCode()} is even;
 *   <li>note, a String or null: null when {@code i % 3 == 0}, else {@code "note "} and that hash in
 *       hex.
 * </ol>
 *
 * Building a row (the decimal, the format, the hash, the allocations) takes about 1,400 ns once
 * warm: 1,370–1,420 ns a row for {@code made(500_000)}, 1,420–1,540 through {@code countAlone} of
 * {@code sync} or {@code publishOn} (JDK 17 with C2, on the 2-core machine of
 * benchmarks/RESULTS.md). That is 0.7 M rows/s, the pace at which the JVM alone streamed the issue's
 * R2DBC query, so that the JVM's pace and Python's are of one order.
 */
public final class WorkingRows {
    private static final BigDecimal RATE = new BigDecimal("1.0725");
    private static final LongAdder MAKING = new LongAdder(); // nanoseconds inside makeRow, in all

    private WorkingRows() {}

    /** Row {@code i}, built now: the same values for the same {@code i}, on any thread. */
    public static Object[] row(long i) {
        BigDecimal amount = BigDecimal.valueOf(1_234_567L * i - 5_000_000L, 3)
                .multiply(RATE)
                .setScale(2, RoundingMode.HALF_EVEN);
        String label = String.format(Locale.ROOT, "#%07d %,.2f", i, amount);
        int hash = label.hashCode();
        String note = i % 3 == 0 ? null : "note " + Integer.toHexString(hash);
        return new Object[] {i, amount.doubleValue(), label, (hash & 1) == 0, note};
    }

    /** Row {@code i}, built now, the time it took added to {@link #makingNanos}: what the producers emit. */
    private static Object[] makeRow(long i) {
        long start = System.nanoTime();
        Object[] row = row(i);
        MAKING.add(System.nanoTime() - start);
        return row;
    }

    /**
     * Nanoseconds {@link #sync} and {@link #publishOn} spent building rows, in all, on whatever
     * thread built them: the producer's own pace in a run, whatever the consumer did meanwhile.
     * A benchmark reads it before and after a run. It costs two reads of the clock a row, 31–32 ns
     * each here: 2–5% of a row of 1.4–4 µs.
     */
    public static long makingNanos() {
        return MAKING.sum();
    }

    /**
     * {@code count} rows, each built when it is requested and emitted synchronously inside {@code
     * request}, on the requesting thread (for the bridge, the stream's upstream drain, which then hands
     * each slice to the delivery drain: the producer's work and Python's taking overlap).
     */
    public static Flux<Object[]> sync(int count) {
        return Flux.range(0, count).map(i -> makeRow(i));
    }

    /**
     * The same rows built and emitted on Reactor's own worker ({@code publishOn(Schedulers.parallel(),
     * prefetch)}), which asks for {@code prefetch} rows ahead and 3/4 of that again each time as
     * many have gone downstream: the producer works on its own thread, up to {@code prefetch} rows
     * ahead of the consumer. The first {@code prefetch} are built on the subscribing thread, where
     * {@code publishOn} makes its first request.
     */
    public static Flux<Object[]> publishOn(int count, int prefetch) {
        return sync(count).publishOn(Schedulers.parallel(), prefetch);
    }

    /** The same {@code count} rows built now, for {@code Flux.fromIterable}: their delivery without their making. */
    public static List<Object[]> made(int count) {
        List<Object[]> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            rows.add(row(i));
        }
        return rows;
    }

    /** Column names of {@link #mapRow}, in the order of the row's columns. */
    public static final String[] NAMES = {"id", "amount", "label", "even", "note"};

    /**
     * Row {@code i} as a {@code HashMap} keyed by {@link #NAMES}, as a driver's map rows are: the
     * null note kept under its key.
     */
    public static Map<String, Object> mapRow(long i) {
        Object[] row = row(i);
        Map<String, Object> map = new HashMap<>();
        for (int c = 0; c < NAMES.length; c++) {
            map.put(NAMES[c], row[c]);
        }
        return map;
    }

    /** {@code count} map rows built now (see {@link #mapRow}). */
    public static List<Map<String, Object>> madeMaps(int count) {
        List<Map<String, Object>> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            rows.add(mapRow(i));
        }
        return rows;
    }

    /**
     * The JVM alone taking every row of {@code publisher} ({@code Flux.from(publisher).count()},
     * unbounded demand, on the calling thread for a synchronous publisher): the producer's own
     * pace, with no bridge and no Python, when timed around the call.
     */
    public static long countAlone(Publisher<Object[]> publisher) {
        return Flux.from(publisher).count().block();
    }
}
