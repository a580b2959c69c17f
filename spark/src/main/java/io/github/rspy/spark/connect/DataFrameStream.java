package io.github.rspy.spark.connect;

import io.github.rspy.spark.dataframe.DatasetPartitions;
import io.github.rspy.spark.connect.wire.Status;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.JobExecutionStatus;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * A DataFrame a Connect client reads partition by partition ({@code open_dataframe}, then one
 * {@code fetch} per partition): each fetch runs that partition's Spark job on a worker thread
 * tagged {@code rspy-connect-<stream>}, so that a cancel (the op, the lease, the session's end)
 * stops the stream's jobs with {@code cancelJobsWithTag}, while the call's thread sends
 * heartbeats and then the partition's Arrow batches.
 */
final class DataFrameStream extends ConnectStream {
    private static final long HEARTBEAT_MILLIS = 1000;

    private final DatasetPartitions partitions;
    private final byte[] schema;
    private final SparkContext context;
    private final String jobTag;
    private final ConnectStreams streams;
    private volatile String cancelReason; // cancelled (not closed): fetches in flight stop
    private boolean ended; // guarded by this

    DataFrameStream(String id, Scope scope, Dataset<Row> dataset, int maxRecordsPerBatch, ConnectStreams streams) {
        super(id, scope, "dataframe", null);
        this.partitions = new DatasetPartitions(dataset, maxRecordsPerBatch);
        this.schema = partitions.schema();
        this.context = dataset.sparkSession().sparkContext();
        this.jobTag = "rspy-connect-" + id;
        this.streams = streams;
        // Not `this`: the counters outlive the stream, and must not keep its Dataset alive.
        SparkContext sc = context;
        String tag = jobTag;
        counters.jobsRunningFrom(() -> jobsRunning(sc, tag));
    }

    /** The jobs tagged {@code tag} that Spark's status tracker lists as running (its listener bus saw them start). */
    private static long jobsRunning(SparkContext sc, String tag) {
        var tracker = sc.statusTracker();
        long running = 0;
        for (int job : tracker.getJobIdsForTag(tag)) {
            var info = tracker.getJobInfo(job);
            if (info.isDefined() && info.get().status() == JobExecutionStatus.RUNNING) {
                running++;
            }
        }
        return running;
    }

    int numPartitions() {
        return partitions.numPartitions();
    }

    byte[] schema() {
        return schema.clone();
    }

    /**
     * The {@code fetch} op: sends partition {@code k}'s batches, each one {@code arrow_batch}
     * reply, then {@code partition_done}; or {@code cancelled} if the stream is cancelled first.
     */
    void fetch(int k, ExecuteReplies replies) throws Exception {
        if (k < 0 || k >= partitions.numPartitions()) {
            throw new IndexOutOfBoundsException("partition " + k + " of " + partitions.numPartitions());
        }
        if (cancelReason != null) {
            replies.status(Wire.cancelled(cancelReason));
            return;
        }
        CompletableFuture<List<byte[]>> batches = startJob(k);
        List<byte[]> result;
        for (;;) {
            try {
                result = batches.get(HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS);
                break;
            } catch (TimeoutException e) {
                if (cancelReason != null) { // the job is being cancelled by tag; the worker counts its end
                    replies.status(Wire.cancelled(cancelReason));
                    return;
                }
                replies.status(Wire.heartbeat());
            } catch (ExecutionException e) {
                if (cancelReason != null) {
                    replies.status(Wire.cancelled(cancelReason));
                    return;
                }
                throw e.getCause() instanceof Exception cause ? cause : e; // as the job threw it
            } catch (InterruptedException e) { // the operation was interrupted: stop its job too
                context.cancelJobsWithTag(jobTag);
                throw e;
            }
        }
        long rows = 0;
        for (byte[] batch : result) {
            long count = DatasetPartitions.rowCount(batch);
            replies.arrowBatch(schema, batch, count);
            rows += count;
        }
        counters.sent(rows);
        replies.status(Status.newBuilder().setPartitionDone(Status.PartitionDone.newBuilder().setPartition(k)
                .setBatches(result.size())).build());
    }

    /** Runs partition {@code k}'s job on a daemon thread, tagged, so that a cancel can stop it. */
    private CompletableFuture<List<byte[]>> startJob(int k) {
        CompletableFuture<List<byte[]>> done = new CompletableFuture<>();
        counters.jobStarted();
        Thread worker = new Thread(() -> {
            context.addJobTag(jobTag); // a thread-local property: it tags this thread's jobs only
            try {
                done.complete(partitions.batches(k));
            } catch (Throwable t) { // all of it goes to the call's thread, which reports it
                if (cancelReason != null) {
                    counters.jobCancelled();
                }
                done.completeExceptionally(t);
            } finally {
                context.removeJobTag(jobTag);
            }
        }, "rspy-connect-fetch-" + id + "-" + k);
        worker.setDaemon(true);
        worker.start();
        return done;
    }

    /**
     * A cancel stops the stream's jobs, and fetches in flight reply {@code cancelled}; a close
     * ({@code quietly}) only ends the stream: no fetch starts after it, and those in flight
     * answer in full, as they would have without it.
     */
    @Override
    void cancel(String reason, boolean quietly) {
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
        }
        if (!quietly) {
            cancelReason = reason;
            context.cancelJobsWithTag(jobTag);
        }
        counters.end(quietly ? "complete" : "cancelled", reason);
        streams.remove(this);
    }
}
