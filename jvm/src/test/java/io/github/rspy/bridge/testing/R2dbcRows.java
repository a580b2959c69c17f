package io.github.rspy.bridge.testing;

import io.r2dbc.h2.H2ConnectionConfiguration;
import io.r2dbc.h2.H2ConnectionFactory;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A table in an in-memory H2 database, through R2DBC, a real reactive database driver: {@code
 * t(id BIGINT, amount DECIMAL(12, 3), due DATE, created TIMESTAMP, name VARCHAR, note VARCHAR)}, with
 * {@code count} rows, row {@code i}:
 *
 * <ul>
 *   <li>id: {@code i};
 *   <li>amount: {@code BigDecimal.valueOf(1234567 * i - 5000000, 3)}, null when {@code i % 7 == 3};
 *   <li>due: 2024-02-29 plus {@code i - 500} days, null when {@code i % 11 == 5};
 *   <li>created: 2024-01-01T00:00 plus {@code 61 * i} seconds and {@code i} microseconds;
 *   <li>name: {@code "name " + i}; note: {@code "note " + i}, null when {@code i % 3 == 0}.
 * </ul>
 *
 * The database lives until {@link #close}, which the tests call.
 */
public final class R2dbcRows implements AutoCloseable {
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private final H2ConnectionFactory factory;
    private final Connection keeper; // an in-memory database lives while a connection to it is open

    public R2dbcRows(int count) {
        factory = new H2ConnectionFactory(H2ConnectionConfiguration.builder()
                .inMemory("rspy-values-" + DATABASES.incrementAndGet()).build());
        keeper = Mono.from(factory.create()).block();
        Flux.from(keeper.createStatement("CREATE TABLE t (id BIGINT PRIMARY KEY, amount DECIMAL(12, 3), due DATE, "
                + "created TIMESTAMP, name VARCHAR(40) NOT NULL, note VARCHAR(40))").execute())
                .flatMap(Result::getRowsUpdated).blockLast();
        Statement insert = keeper.createStatement("INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6)");
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                insert.add(); // the bindings so far are one row; these, the next
            }
            insert.bind(0, (long) i);
            BigDecimal amount = BigDecimal.valueOf(1_234_567L * i - 5_000_000L, 3);
            bindOrNull(insert, 1, i % 7 == 3 ? null : amount, BigDecimal.class);
            bindOrNull(insert, 2, i % 11 == 5 ? null : LocalDate.of(2024, 2, 29).plusDays(i - 500L), LocalDate.class);
            insert.bind(3, LocalDateTime.of(2024, 1, 1, 0, 0).plusSeconds(61L * i).plusNanos(1000L * i));
            insert.bind(4, "name " + i);
            bindOrNull(insert, 5, i % 3 == 0 ? null : "note " + i, String.class);
        }
        if (count > 0) {
            Flux.from(insert.execute()).flatMap(Result::getRowsUpdated).blockLast();
        }
    }

    private static void bindOrNull(Statement statement, int index, Object value, Class<?> type) {
        if (value == null) {
            statement.bindNull(index, type);
        } else {
            statement.bind(index, value);
        }
    }

    /**
     * {@code SELECT id, amount, due, created, name, note FROM t ORDER BY id} on a connection of its
     * own, each row as the {@code Object[]} of {@code row.get(i)} for each column: the driver's
     * own Java types (Long, BigDecimal, LocalDate, LocalDateTime, String, and null).
     */
    public Publisher<Object[]> select() {
        return Flux.usingWhen(factory.create(),
                connection -> Flux.from(connection.createStatement(
                        "SELECT id, amount, due, created, name, note FROM t ORDER BY id").execute())
                        .flatMap(result -> result.map((row, metadata) -> {
                            Object[] values = new Object[6];
                            for (int c = 0; c < values.length; c++) {
                                values[c] = row.get(c);
                            }
                            return values;
                        })),
                Connection::close);
    }

    /**
     * {@link #select()}'s rows, all read before the first is emitted: they then cross in
     * batches as large as the demand (Arrow), however slowly the driver made them.
     */
    public Publisher<Object[]> selectedFirst() {
        return Flux.from(select()).collectList().flatMapIterable(rows -> rows);
    }

    /** Closes the last connection, and so the database. */
    @Override
    public void close() {
        Mono.from(keeper.close()).block();
    }
}
