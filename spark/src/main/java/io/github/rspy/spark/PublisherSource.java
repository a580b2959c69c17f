package io.github.rspy.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.CompositeReadLimit;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.SupportsAdmissionControl;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A Structured Streaming micro-batch source fed by a registered {@code Publisher}, asking it
 * only for what the query can take.
 *
 * <p><b>Demand.</b> When the query starts, the source subscribes and requests {@code
 * maxRecordsPerTrigger} elements. A micro-batch takes at most that many of the elements
 * received. When Spark asks for the batch after it ({@code latestOffset(end, ...)}, which it does
 * only once that batch is finished and written to the commit log) or commits its end offset,
 * the source drops the batch's elements and requests as many again. So received-but-unfinished
 * elements plus outstanding demand never exceed {@code maxRecordsPerTrigger} (§1.1 held end to
 * end); a publisher that emits more than requested fails the query (§1.1).
 *
 * <p><b>Offsets</b> count elements ({@link ElementOffset}). The rows of a micro-batch are made
 * on the driver, from the buffered elements, and travel to an executor inside the batch's one
 * {@link InputPartition}, in order.
 *
 * <p><b>Errors and completion.</b> The elements received before a publisher's {@code onError}
 * are processed; then the query fails with that very exception, thrown from {@code
 * latestOffset} (a Python publisher's error arrives as the bridge's {@code PythonException},
 * or {@code IllegalArgumentException} for a {@code ValueError}). After {@code onComplete} the
 * source simply has no more data: Structured Streaming has no way for a source to end a query,
 * so the query stays active, idle, until it is stopped.
 *
 * <p><b>Restarts.</b> A publisher is not replayable. A query restarted from its checkpoint gets
 * a new source, which subscribes again to the publisher registered under the name <em>at that
 * time</em> and numbers what that new subscription emits from the checkpoint's offset on. A cold
 * publisher ({@code rs.from_iterable}, {@code Flux.range}) therefore starts over from its first
 * element, a hot one continues from the present; nothing is replayed, and a batch that was
 * planned but not committed before the failure is re-run empty (its elements were only in the
 * old source's memory) with a warning. Register a re-creatable publisher if that matters.
 */
final class PublisherSource implements MicroBatchStream, SupportsAdmissionControl {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark");

    private final StreamRegistry.Entry entry;
    private final ElementRows rows;
    private final long maxRecords;

    // The elements received and not yet released: buffer.get(0) is at offset `base`.
    private final ArrayList<Object> buffer = new ArrayList<>(); // guarded by this
    private long base; // guarded by this
    private boolean started; // guarded by this
    private boolean stopped; // guarded by this
    private boolean completed; // guarded by this
    private Throwable error; // guarded by this

    // Signals to the publisher's subscription, sent by one loop at a time (§2.7).
    private final AtomicInteger upstreamWip = new AtomicInteger();
    private final AtomicLong pendingDemand = new AtomicLong();
    private volatile Subscription upstream;
    private volatile boolean cancelRequested;
    private volatile boolean upstreamDone;

    PublisherSource(StreamRegistry.Entry entry, ElementRows rows, long maxRecords) {
        this.entry = entry;
        this.rows = rows;
        this.maxRecords = maxRecords;
    }

    @Override
    public Offset initialOffset() {
        return new ElementOffset(0);
    }

    @Override
    public Offset deserializeOffset(String json) {
        return ElementOffset.parse(json);
    }

    @Override
    public ReadLimit getDefaultReadLimit() {
        return ReadLimit.maxRows(maxRecords);
    }

    @Override
    public Offset latestOffset() {
        throw new UnsupportedOperationException("the reactive-streams source admits rows through "
                + "latestOffset(start, limit) (SupportsAdmissionControl)");
    }

    /**
     * The end of the next micro-batch: up to {@code limit} (and {@code maxRecordsPerTrigger})
     * of the elements received after {@code startOffset}, or null if there are none. Spark calls
     * it once the batch ending at {@code startOffset} is finished, so those elements are
     * released here and as many more requested. With nothing left to take, a publisher's error
     * is thrown, as it came.
     */
    @Override
    public Offset latestOffset(Offset startOffset, ReadLimit limit) {
        long start = ElementOffset.of(startOffset);
        subscribe(start);
        long end;
        Throwable failure = null;
        synchronized (this) {
            release(start);
            long available = Math.max(0, base + buffer.size() - start);
            end = start + Math.min(available, Math.min(maxRows(limit), maxRecords));
            if (end == start && error != null) {
                failure = error;
            }
        }
        signalUpstream();
        if (failure != null) {
            throw unchecked(failure);
        }
        return end > start ? new ElementOffset(end) : null;
    }

    @Override
    public synchronized Offset reportLatestOffset() {
        return started ? new ElementOffset(base + buffer.size()) : null;
    }

    @Override
    public InputPartition[] planInputPartitions(Offset startOffset, Offset endOffset) {
        long start = ElementOffset.of(startOffset);
        long end = ElementOffset.of(endOffset);
        subscribe(end); // a restart re-runs the last planned batch before asking for a new one
        List<Object> slice;
        long from;
        synchronized (this) {
            from = Math.max(start, base);
            long to = Math.min(end, base + buffer.size());
            slice = from < to ? new ArrayList<>(buffer.subList((int) (from - base), (int) (to - base))) : List.of();
        }
        if (slice.size() < end - start) {
            LOG.warning(this + ": elements " + start + ".." + (end - 1) + " of a batch planned before a restart are "
                    + "gone (a publisher is not replayable); " + slice.size() + " remain");
        }
        InternalRow[] batch = new InternalRow[slice.size()];
        for (int i = 0; i < batch.length; i++) {
            batch[i] = rows.toRow(slice.get(i), from + i);
        }
        return batch.length == 0 ? new InputPartition[0] : new InputPartition[] {new RowsPartition(batch)};
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new RowsReaderFactory();
    }

    @Override
    public void commit(Offset end) {
        synchronized (this) {
            release(ElementOffset.of(end));
        }
        signalUpstream();
    }

    /** The query stopped: cancel the subscription and drop the buffer. */
    @Override
    public void stop() {
        synchronized (this) {
            stopped = true;
            entry.stats.addBuffered(-buffer.size());
            buffer.clear();
        }
        cancelRequested = true;
        signalUpstream();
    }

    @Override
    public String toString() {
        return "reactive-streams[publisher=" + entry.name + "]";
    }

    // Internals.

    /** Subscribes once, numbering elements from {@code from}, with {@code maxRecords} of demand. */
    @SuppressWarnings("unchecked")
    private void subscribe(long from) {
        synchronized (this) {
            if (started || stopped) {
                return;
            }
            started = true;
            base = from;
        }
        pendingDemand.addAndGet(maxRecords);
        ((Publisher<Object>) entry.publisher).subscribe(new Upstream());
    }

    /** Drops the elements before {@code upTo} (their batch is finished) and asks for as many. */
    private void release(long upTo) {
        long drop = Math.min(upTo - base, buffer.size());
        if (drop <= 0) {
            return;
        }
        buffer.subList(0, (int) drop).clear();
        base += drop;
        entry.stats.addBuffered(-drop);
        if (!completed && error == null && !stopped) {
            pendingDemand.addAndGet(drop);
        }
    }

    /** Sends pending demand, or the cancel, to the publisher: one caller at a time (§2.7). */
    private void signalUpstream() {
        if (upstreamWip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            Subscription s = upstream;
            if (s != null) {
                if (upstreamDone || cancelRequested) {
                    upstream = null; // §3.13: nothing more to say to it
                    if (!upstreamDone) {
                        s.cancel();
                    }
                } else {
                    long n = pendingDemand.getAndSet(0);
                    if (n > 0) {
                        entry.stats.addRequested(n);
                        try {
                            s.request(n); // may emit on this thread: onNext only buffers
                        } catch (RuntimeException e) {
                            fail(new IllegalStateException("§3.16: request() of the publisher registered as '"
                                    + entry.name + "' threw " + e, e));
                        }
                    }
                }
            }
            missed = upstreamWip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void fail(Throwable t) {
        synchronized (this) {
            if (error == null && !completed) {
                error = t;
            }
        }
        cancelRequested = true;
    }

    private static long maxRows(ReadLimit limit) {
        if (limit instanceof ReadMaxRows) {
            return ((ReadMaxRows) limit).maxRows();
        }
        long max = Long.MAX_VALUE;
        if (limit instanceof CompositeReadLimit) {
            for (ReadLimit part : ((CompositeReadLimit) limit).getReadLimits()) {
                max = Math.min(max, maxRows(part));
            }
        }
        return max; // ReadAllAvailable, or limits in files or bytes: all that is buffered
    }

    /** The publisher's own exception when it can be thrown as is. */
    private static RuntimeException unchecked(Throwable t) {
        if (t instanceof RuntimeException) {
            return (RuntimeException) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        if (t instanceof IOException) {
            return new UncheckedIOException((IOException) t);
        }
        return new IllegalStateException(t.toString(), t);
    }

    /** The source's subscriber: it only buffers, so it never blocks the publisher. */
    private final class Upstream implements Subscriber<Object> {
        @Override
        public void onSubscribe(Subscription s) {
            if (s == null) {
                throw new NullPointerException("§2.13: onSubscribe(null)");
            }
            boolean accept;
            synchronized (PublisherSource.this) {
                accept = upstream == null && !upstreamDone && !stopped;
                if (accept) {
                    upstream = s;
                }
            }
            if (!accept) {
                s.cancel(); // §2.5, or the query has already stopped
                return;
            }
            signalUpstream();
        }

        @Override
        public void onNext(Object item) {
            if (item == null) {
                throw new NullPointerException("§2.13: onNext(null)");
            }
            boolean overflow = false;
            synchronized (PublisherSource.this) {
                if (stopped || error != null) {
                    return;
                }
                if (buffer.size() >= maxRecords) {
                    error = new IllegalStateException("§1.1: the publisher registered as '" + entry.name
                            + "' emitted more elements than the " + maxRecords + " requested");
                    overflow = true;
                } else {
                    buffer.add(item);
                    entry.stats.addElements(1);
                    entry.stats.addBuffered(1);
                }
            }
            if (overflow) {
                cancelRequested = true;
                signalUpstream();
            }
        }

        @Override
        public void onError(Throwable t) {
            if (t == null) {
                throw new NullPointerException("§2.13: onError(null)");
            }
            synchronized (PublisherSource.this) {
                if (error == null && !completed) {
                    error = t;
                }
            }
            upstreamDone = true;
            signalUpstream();
        }

        @Override
        public void onComplete() {
            synchronized (PublisherSource.this) {
                completed = true;
            }
            upstreamDone = true;
            signalUpstream();
        }
    }

    /** One micro-batch's rows, made on the driver, read on an executor. */
    static final class RowsPartition implements InputPartition {
        private static final long serialVersionUID = 1L;

        private final InternalRow[] rows;

        RowsPartition(InternalRow[] rows) {
            this.rows = rows;
        }
    }

    static final class RowsReaderFactory implements PartitionReaderFactory {
        private static final long serialVersionUID = 1L;

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            InternalRow[] rows = ((RowsPartition) partition).rows;
            return new PartitionReader<>() {
                private int next;

                @Override
                public boolean next() {
                    return next++ < rows.length;
                }

                @Override
                public InternalRow get() {
                    return rows[next - 1];
                }

                @Override
                public void close() {}
            };
        }
    }
}
