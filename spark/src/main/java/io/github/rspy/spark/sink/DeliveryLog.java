package io.github.rspy.spark.sink;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How far the {@code reactive-streams} sink got, per streaming query id: the last epoch (batch
 * id) it delivered from and how many of that epoch's rows its subscriber received. Spark re-runs
 * an epoch whose {@code commits/N} entry is missing (a stop or a failure during the batch, or a
 * crash) with the same offsets, so the same rows in the same order, and the same epoch id; the
 * sink then skips what was delivered, so that each (query id, epoch) is delivered at most once.
 *
 * <p>In the driver's memory, for the {@link #MAX_QUERIES} most recently committing query ids (a
 * query id is the persistent id in the checkpoint's {@code metadata}), and in the query's
 * checkpoint ({@link SinkRecords}): a run's record is saved there when its delivery ends (all
 * of the epoch, or as far as a stop or a failing subscriber let it go), before the commit
 * returns, and a new driver starts from it. Only a driver that dies during a delivery leaves
 * the rows delivered since the last saved record to be delivered again.
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
        private final SinkRecords saved; // the checkpoint's copy, or null
        private long delivered; // guarded by this
        private boolean sealed; // guarded by this: delivered is final for this run
        private boolean complete; // guarded by this

        Record(long epoch, boolean stale, SinkRecords saved) {
            this.epoch = epoch;
            this.stale = stale;
            this.saved = saved;
        }

        /** The record a checkpoint kept for this epoch. */
        static Record restored(SinkRecords.Saved from, SinkRecords saved) {
            Record record = new Record(from.epoch(), false, saved);
            record.delivered = from.rows();
            record.sealed = true;
            record.complete = from.complete();
            return record;
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

        /**
         * The run's delivery ended having delivered {@code rows}: later advances are ignored.
         * Saved in the checkpoint; throws if it cannot be.
         */
        synchronized void seal(long rows) {
            delivered = rows;
            sealed = true;
            save();
        }

        /**
         * A stop interrupted the run's delivery: how far it got is saved in the checkpoint (a row
         * the drain hands over while this runs counts here, not there).
         */
        synchronized void interrupted() {
            save();
        }

        /** Every row was delivered, or dropped after the subscriber cancelled: saved in the checkpoint. */
        synchronized void complete() {
            complete = true;
            sealed = true;
            save();
        }

        private void save() {
            if (saved != null) {
                saved.save(epoch, delivered, complete);
            }
        }
    }

    /**
     * The record for delivering {@code epoch} of {@code queryId}: the earlier run's, from this
     * driver's memory or else from {@code saved} (the query's checkpoint, or null), or a fresh one.
     */
    static Record begin(String queryId, long epoch, SinkRecords saved) {
        Record last;
        synchronized (DeliveryLog.class) {
            last = RECORDS.get(queryId);
        }
        if (last == null && saved != null) {
            SinkRecords.Saved kept = saved.latest(); // a file read, outside the lock
            last = kept == null ? null : Record.restored(kept, saved);
        }
        synchronized (DeliveryLog.class) {
            if (last != null && epoch == last.epoch) {
                RECORDS.put(queryId, last);
                return last;
            }
            if (last != null && epoch < last.epoch) {
                return new Record(epoch, true, null);
            }
            Record record = new Record(epoch, false, saved);
            RECORDS.put(queryId, record);
            return record;
        }
    }

    /** The latest record of {@code queryId}, or null (for tests and diagnostics). */
    static synchronized Record last(String queryId) {
        return RECORDS.get(queryId);
    }
}
