package io.github.rspy.bridge;

import io.github.rspy.bridge.arrow.ColumnRows;
import io.github.rspy.bridge.arrow.OwnedElements;
import java.util.ArrayList;
import java.util.List;

/**
 * Arrow rows Python pushed, loaded (their row count known, for §1.1) but not yet made into
 * {@code Object[]}s or {@code Map}s: the pool makes them while Python encodes the next batch,
 * and the drain takes them made when their turn comes ({@link #rows}). The loaded batches are
 * closed once the rows are made, or by {@link #closeUndelivered} if they never are.
 */
final class RowsMadeAhead {
    private final OwnedElements loaded; // ColumnRows, closed by whoever makes the rows
    private final long count;
    private final WorkAhead<Made> made;
    private final Runnable madeAhead; // told when the pool makes them

    /** {@code loaded}: {@link ColumnRows} this then owns; {@code madeAhead} runs if the pool makes them. */
    RowsMadeAhead(OwnedElements loaded, Runnable madeAhead) {
        this.loaded = loaded;
        this.madeAhead = madeAhead;
        long rows = 0;
        for (Object batch : loaded) {
            rows += ((ColumnRows) batch).rows();
        }
        this.count = rows;
        this.made = WorkAhead.of(this::make);
    }

    /** How many rows, counted against the demand when pushed (§1.1). */
    long count() {
        return count;
    }

    /** Offers the making to {@code runOn} (the bridge's pool): it then overlaps what Python does. */
    void offerTo(java.util.function.Predicate<Runnable> runOn) {
        made.offerTo(runOn);
    }

    /** Whether the rows are made: taking them does not wait. */
    boolean isMade() {
        return made.isDone();
    }

    /** The rows, made here if the pool has not begun them; throws what making them threw. */
    List<Object> rows() {
        Made m = made.join();
        if (m == null) {
            throw new IllegalStateException("rows taken after they were closed undelivered");
        }
        if (m.error != null) {
            throw m.error;
        }
        return m.rows;
    }

    /**
     * Frees the loaded batches (a cancel, a failure): here if nobody began making the rows, else
     * by the thread making them, which this waits for (briefly: one batch), so that the memory
     * is back when a stream's end is signalled.
     */
    void closeUndelivered() {
        if (made.cancel()) {
            loaded.closeUndelivered();
        } else {
            made.join();
        }
    }

    private Made make() {
        if (made.wasDoneAhead()) {
            madeAhead.run();
        }
        try {
            List<Object> rows = new ArrayList<>((int) count);
            for (Object batch : loaded) {
                rows.addAll(((ColumnRows) batch).values());
            }
            return new Made(rows, null);
        } catch (RuntimeException e) {
            return new Made(null, e);
        } finally {
            loaded.closeUndelivered();
        }
    }

    /** The made rows, or what making them threw (WorkAhead's work returns failures). */
    private static final class Made {
        final List<Object> rows;
        final RuntimeException error;

        Made(List<Object> rows, RuntimeException error) {
            this.rows = rows;
            this.error = error;
        }
    }
}
