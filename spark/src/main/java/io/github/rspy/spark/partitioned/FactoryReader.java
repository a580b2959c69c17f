package io.github.rspy.spark.partitioned;

import io.github.rspy.spark.common.ElementRows;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * One partition of a micro-batch of a {@link FactorySource}, read in an executor: it makes the
 * factory (checked by name again), subscribes to {@code publisher(partition, start)}, requests
 * exactly {@code end - start} elements, at most {@code prefetch} ahead of the rows Spark has
 * taken (§1.1), and cancels when it has them or the task ends (§3.5). A publisher that emits
 * more than requested (§1.1), a null (§2.13), an error, or completes early fails the task with a
 * message naming the partition and its offsets.
 */
final class FactoryReader implements PartitionReader<InternalRow>, Subscriber<Object> {
    /** What a task needs: the factory's class name, the partition and its offsets. */
    record Partition(String factory, int partition, long start, long end, int prefetch, StructType schema)
            implements InputPartition {}

    static final class Factory implements PartitionReaderFactory {
        private static final long serialVersionUID = 1L;

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            return new FactoryReader((Partition) partition);
        }
    }

    private final Partition task;
    private final String where;
    private final ElementRows rows;
    private final UnsafeRowWriter writer;
    private final long count;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    private final ArrayDeque<Object> buffer = new ArrayDeque<>();
    private Subscription subscription;
    private long requested; // in all, never more than count
    private long received;
    private long taken;
    private long unreplenished; // taken since the last request
    private boolean completed;
    private Throwable failure;
    private boolean started;
    private boolean cancelled;

    FactoryReader(Partition task) {
        this.task = task;
        this.where = "partition " + task.partition() + " of partition source '" + task.factory() + "' (offsets "
                + task.start() + " to " + task.end() + ")";
        this.rows = new ElementRows(task.schema(), where);
        this.writer = new UnsafeRowWriter(rows.width());
        this.count = task.end() - task.start();
    }

    private void start() {
        started = true;
        PartitionedPublishers factory = FactorySource.load(task.factory());
        Publisher<?> publisher;
        try {
            publisher = factory.publisher(task.partition(), task.start());
        } catch (RuntimeException e) {
            throw new IllegalStateException(where + ": publisher(" + task.partition() + ", " + task.start()
                    + ") threw " + e, e);
        }
        if (publisher == null) {
            throw new IllegalStateException(where + ": publisher(" + task.partition() + ", " + task.start()
                    + ") returned null");
        }
        publisher.subscribe(this);
    }

    @Override
    public boolean next() throws java.io.IOException {
        if (!started) {
            start();
        }
        if (taken == count) {
            cancel();
            return false;
        }
        Object element;
        long ask = 0;
        lock.lock();
        try {
            while (buffer.isEmpty() && failure == null && !completed) {
                try {
                    arrived.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException(where + ": interrupted while waiting for elements");
                }
            }
            if (buffer.isEmpty()) {
                Throwable error = failure;
                if (error != null) {
                    String what = error instanceof RuleBroken ? error.getMessage() : "the publisher failed: " + error;
                    throw new IllegalStateException(where + ": " + what + " (after " + taken + " of " + count
                            + " elements)", error);
                }
                throw new IllegalStateException(where + ": the publisher completed after " + taken + " of the "
                        + count + " elements the offsets admitted; a partition's publisher must replay its elements "
                        + "from any offset, and a bounded one must say where it ends (latest)");
            }
            element = buffer.poll();
            taken++;
            unreplenished++;
            if (unreplenished >= Math.max(1, task.prefetch() / 2) && requested < count) {
                ask = Math.min(unreplenished, count - requested);
                requested += ask;
                unreplenished = 0;
            }
        } finally {
            lock.unlock();
        }
        if (ask > 0) {
            subscription.request(ask); // §3.4: outside the lock
        }
        rows.write(writer, element, task.start() + taken - 1);
        return true;
    }

    @Override
    public InternalRow get() {
        return writer.getRow();
    }

    @Override
    public void close() {
        cancel();
    }

    private void cancel() {
        Subscription current;
        lock.lock();
        try {
            current = cancelled ? null : subscription;
            cancelled = true;
            buffer.clear();
        } finally {
            lock.unlock();
        }
        if (current != null) {
            current.cancel(); // §3.5, §3.7: once
        }
    }

    @Override
    public void onSubscribe(Subscription s) {
        if (s == null) {
            throw new NullPointerException("§2.13: subscription must not be null");
        }
        long first;
        lock.lock();
        try {
            if (subscription != null) {
                first = -1;
            } else {
                subscription = s;
                first = Math.min(count, task.prefetch());
                requested = first;
            }
        } finally {
            lock.unlock();
        }
        if (first < 0) {
            s.cancel(); // §2.5
        } else {
            s.request(first);
        }
    }

    @Override
    public void onNext(Object element) {
        if (element == null) { // §2.13: refused by cancelling, not thrown into the publisher's loop
            fail(new RuleBroken("the publisher broke §2.13: it emitted null"));
            cancel();
            return;
        }
        boolean over;
        lock.lock();
        try {
            if (cancelled || failure != null) {
                return; // §2.8
            }
            received++;
            over = received > requested;
            if (!over) {
                buffer.add(element);
                arrived.signal();
            }
        } finally {
            lock.unlock();
        }
        if (over) {
            fail(new RuleBroken("the publisher broke §1.1: it emitted element " + received + " with " + requested
                    + " requested"));
            cancel();
        }
    }

    private void fail(Throwable error) {
        lock.lock();
        try {
            if (failure == null) {
                failure = error;
            }
            arrived.signal();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void onError(Throwable t) {
        fail(t == null ? new NullPointerException("§2.13: error must not be null") : t);
    }

    @Override
    public void onComplete() {
        lock.lock();
        try {
            completed = true;
            arrived.signal();
        } finally {
            lock.unlock();
        }
    }

    /** A rule the publisher broke, as the task's failure says it. */
    static final class RuleBroken extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        RuleBroken(String message) {
            super(message);
        }
    }
}
