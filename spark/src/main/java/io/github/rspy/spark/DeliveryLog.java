package io.github.rspy.spark;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How far the {@code reactive-streams} sink got, per streaming query id: the last epoch (batch
 * id) it delivered from and how many of that epoch's rows its subscriber received. Spark re-runs
 * an epoch whose {@code commits/N} entry is missing (a stop or a failure during the batch, or a
 * crash) with the same offsets, so the same rows in the same order, and the same epoch id; the
 * sink then skips what was delivered, so that each (query id, epoch) is delivered at most once.
 *
 * <p>Driver memory only, bounded: the {@link #MAX_QUERIES} most recently committing query ids
 * (a query id is the persistent id in the checkpoint's {@code metadata}). A new driver starts
 * with no record, so after a driver restart the epoch Spark re-runs is delivered in full again.
 */
final class DeliveryLog {
    static final int MAX_QUERIES = 1024;

    private static final Map<String, Record> RECORDS = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Record> eldest) {
            return size() > MAX_QUERIES;
        }
    };

    private DeliveryLog() {}

    /** One epoch's delivery. */
    static final class Record {
        final long epoch;
        /** An earlier epoch than one already recorded: nothing of it is delivered again. */
        final boolean stale;
        private long delivered; // guarded by this
        private boolean sealed; // guarded by this: delivered is final for this run
        private boolean complete; // guarded by this

        Record(long epoch, boolean stale) {
            this.epoch = epoch;
            this.stale = stale;
        }

        /** Rows of the epoch the subscriber (of this run or an earlier one) received, in order. */
        synchronized long delivered() {
            return delivered;
        }

        /** Whether nothing of the epoch is left to deliver. */
        synchronized boolean done() {
            return stale || complete;
        }

        /** A run starts delivering the epoch (again). */
        synchronized void open() {
            sealed = false;
        }

        /** The delivery loop handed over row number {@code rows} (counting from the epoch's first). */
        synchronized void advance(long rows) {
            if (!sealed) {
                delivered = rows;
            }
        }

        /** The run's delivery ended having delivered {@code rows}: later advances are ignored. */
        synchronized void seal(long rows) {
            delivered = rows;
            sealed = true;
        }

        /** Every row was delivered, or dropped after the subscriber cancelled. */
        synchronized void complete() {
            complete = true;
            sealed = true;
        }
    }

    /** The record for delivering {@code epoch} of {@code queryId}: a fresh one, or the earlier run's. */
    static synchronized Record begin(String queryId, long epoch) {
        Record last = RECORDS.get(queryId);
        if (last != null && epoch == last.epoch) {
            return last;
        }
        if (last != null && epoch < last.epoch) {
            return new Record(epoch, true);
        }
        Record record = new Record(epoch, false);
        RECORDS.put(queryId, record);
        return record;
    }

    /** The latest record of {@code queryId}, or null (for tests and diagnostics). */
    static synchronized Record last(String queryId) {
        return RECORDS.get(queryId);
    }
}
