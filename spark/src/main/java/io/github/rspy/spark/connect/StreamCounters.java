package io.github.rspy.spark.connect;

import io.github.rspy.bridge.Demand;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * What one stream did, for the {@code stats} op: kept after the stream ends (a fetch worker may
 * still count its job's end), so tests can check that demand bounded every buffer and that a
 * cancel reached the upstream publisher or Spark job.
 */
final class StreamCounters {
    /** The most {@code request(n)} values kept per stream. */
    static final int MAX_REQUESTS = 10_000;

    private final String kind;
    private final String name;
    private final Scope scope;
    private final List<Long> requests = new ArrayList<>(); // guarded by this
    private long requested; // guarded by this
    private long sent; // guarded by this
    private long maxBuffered; // guarded by this
    private long batches; // guarded by this
    private long arrowReplies; // guarded by this
    private long jobsStarted; // guarded by this
    private long jobsCancelled; // guarded by this
    private String state = "open"; // guarded by this
    private String reason; // guarded by this
    private volatile LongSupplier jobsRunning = () -> 0;

    StreamCounters(String kind, String name, Scope scope) {
        this.kind = kind;
        this.name = name;
        this.scope = scope;
    }

    synchronized void request(long n) {
        if (requests.size() < MAX_REQUESTS) {
            requests.add(n);
        }
        if (n > 0) {
            requested = Demand.addCap(requested, n); // §3.17
        }
    }

    synchronized void sent(long elements) {
        sent += elements;
        batches++;
    }

    /** A reply of rows as Arrow ({@link ElementReplies}). */
    synchronized void arrowReply() {
        arrowReplies++;
    }

    synchronized void buffered(long now) {
        maxBuffered = Math.max(maxBuffered, now);
    }

    synchronized void jobStarted() {
        jobsStarted++;
    }

    /** Where the stream's running jobs are counted (a DataFrame's, by its job tag). */
    void jobsRunningFrom(LongSupplier running) {
        jobsRunning = running;
    }

    synchronized void jobCancelled() {
        jobsCancelled++;
    }

    /** Records how the stream ended: the first end counts. */
    synchronized void end(String endState, String endReason) {
        if (state.equals("open")) {
            state = endState;
            reason = endReason;
        }
    }

    synchronized String state() {
        return state;
    }

    Scope scope() {
        return scope;
    }

    /** The counters as the wire's message; with {@code withScope}, the user and session too. */
    io.github.rspy.spark.connect.wire.StreamCounters toMessage(boolean withScope) {
        long running = jobsRunning.getAsLong(); // Spark's status store: asked outside this lock
        synchronized (this) {
            return toMessage(withScope, running);
        }
    }

    private io.github.rspy.spark.connect.wire.StreamCounters toMessage(boolean withScope, long running) {
        var message = io.github.rspy.spark.connect.wire.StreamCounters.newBuilder()
                .setKind(kind)
                .setName(name == null ? "" : name)
                .addAllRequests(requests)
                .setRequested(requested)
                .setSent(sent)
                .setBatches(batches)
                .setArrowReplies(arrowReplies)
                .setMaxBuffered(maxBuffered)
                .setJobsStarted(jobsStarted)
                .setJobsCancelled(jobsCancelled)
                .setJobsRunning(running)
                .setState(state);
        if (reason != null) {
            message.setReason(reason);
        }
        if (withScope) {
            message.setUser(String.valueOf(scope.userId())).setSession(String.valueOf(scope.sessionId()));
        }
        return message.build();
    }
}
