package io.github.rspy.spark.connect;

import io.github.rspy.bridge.Demand;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

    synchronized Map<String, Object> toMap(boolean withScope) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("kind", kind);
        map.put("name", name);
        map.put("requests", new ArrayList<>(requests));
        map.put("requested", requested);
        map.put("sent", sent);
        map.put("batches", batches);
        map.put("arrow_replies", arrowReplies);
        map.put("max_buffered", maxBuffered);
        map.put("jobs_started", jobsStarted);
        map.put("jobs_cancelled", jobsCancelled);
        map.put("state", state);
        map.put("reason", reason);
        if (withScope) {
            map.put("user", scope.userId());
            map.put("session", scope.sessionId());
        }
        return map;
    }
}
