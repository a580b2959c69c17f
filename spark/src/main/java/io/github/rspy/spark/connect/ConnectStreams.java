package io.github.rspy.spark.connect;

import io.github.rspy.spark.connect.wire.Status;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * The open streams of every Connect session, by scope and then by the client's stream id, and
 * the counters of the streams that ended (the last {@value #MAX_ENDED} per scope and of all
 * scopes). A stream is looked up in its caller's scope only; each lookup renews its lease.
 */
final class ConnectStreams {
    static final int MAX_ENDED = 1000;

    private final ConcurrentHashMap<Scope, ConcurrentHashMap<String, ConnectStream>> open = new ConcurrentHashMap<>();
    private final Map<Scope, LinkedHashMap<String, StreamCounters>> ended = new LinkedHashMap<>(); // guarded by this
    private final LinkedHashMap<String, StreamCounters> allEnded = new LinkedHashMap<>(); // guarded by this

    /** Opens {@code stream} in its scope; a duplicate id there is an error. */
    void add(ConnectStream stream) {
        // compute, not computeIfAbsent: atomic with openStreams dropping a scope's empty map
        open.compute(stream.scope, (scope, streams) -> {
            ConcurrentHashMap<String, ConnectStream> in = streams == null ? new ConcurrentHashMap<>() : streams;
            if (in.putIfAbsent(stream.id, stream) != null) {
                throw new IllegalStateException("a stream with id '" + stream.id + "' is already open in this session");
            }
            return in;
        });
    }

    /** The stream {@code id} open in {@code scope}, its lease renewed; null if there is none. */
    ConnectStream find(Scope scope, String id) {
        ConcurrentHashMap<String, ConnectStream> streams = open.get(scope);
        ConnectStream stream = streams == null || id == null ? null : streams.get(id);
        if (stream != null) {
            stream.touch();
        }
        return stream;
    }

    /** Whether stream {@code id} of {@code scope} ended lately (it is among the last ended ones). */
    synchronized boolean ended(Scope scope, String id) {
        LinkedHashMap<String, StreamCounters> last = ended.get(scope);
        return last != null && last.containsKey(id);
    }

    /** Takes an ended stream out of its scope, keeping its counters. */
    void remove(ConnectStream stream) {
        ConcurrentHashMap<String, ConnectStream> streams = open.get(stream.scope);
        if (streams == null || streams.get(stream.id) != stream) {
            return;
        }
        synchronized (this) { // among the ended before it leaves the open: stats always find it
            keep(ended.computeIfAbsent(stream.scope, s -> new LinkedHashMap<>()), stream.id, stream.counters);
            keep(allEnded, stream.scope.key() + "\u0000" + stream.id, stream.counters);
        }
        streams.remove(stream.id, stream);
    }

    private static void keep(LinkedHashMap<String, StreamCounters> last, String key, StreamCounters counters) {
        last.remove(key);
        last.put(key, counters);
        if (last.size() > MAX_ENDED) {
            Iterator<String> oldest = last.keySet().iterator();
            oldest.next();
            oldest.remove();
        }
    }

    /** Cancels the open streams of the scopes {@code which} selects. */
    void cancelWhere(Predicate<Scope> which, String reason) {
        for (ConnectStream stream : openStreams()) {
            if (which.test(stream.scope)) {
                stream.cancel(reason, false);
            }
        }
    }

    /** Forgets the ended streams of a closed session (its scopes can ask no more). */
    synchronized void forgetEnded(Predicate<Scope> which) {
        ended.keySet().removeIf(which);
    }

    /** Cancels the streams whose lease ran out ({@code idleNanos} without an op naming them). */
    void reap(long idleNanos) {
        for (ConnectStream stream : openStreams()) {
            if (stream.idleLongerThan(idleNanos)) {
                stream.cancel("idle timeout", false);
            }
        }
    }

    private List<ConnectStream> openStreams() {
        List<ConnectStream> all = new ArrayList<>();
        for (Scope scope : open.keySet()) {
            ConcurrentHashMap<String, ConnectStream> streams = open.computeIfPresent(scope,
                    (key, in) -> in.isEmpty() ? null : in); // an ended session's scope goes
            if (streams != null) {
                all.addAll(streams.values());
            }
        }
        return all;
    }

    /**
     * The {@code stats} reply for {@code scope}: its open and ended streams; with {@code
     * diagnostics}, also {@code all}: every scope's open streams and the last ended ones.
     */
    Status.Stats stats(Scope scope, boolean diagnostics) {
        Status.Stats.Builder reply = Status.Stats.newBuilder();
        ConcurrentHashMap<String, ConnectStream> mine = open.get(scope);
        if (mine != null) {
            mine.forEach((id, stream) -> reply.putStreams(id, stream.counters.toMessage(false)));
        }
        synchronized (this) {
            ended.getOrDefault(scope, new LinkedHashMap<>()).forEach((id, c) -> reply.putEnded(id, c.toMessage(false)));
        }
        if (diagnostics) {
            Status.Diagnostics.Builder all = Status.Diagnostics.newBuilder();
            open.values().forEach(streams -> streams.forEach((id, stream) ->
                    all.putStreams(id, stream.counters.toMessage(true))));
            synchronized (this) {
                allEnded.forEach((key, counters) -> all.putEnded(key.substring(key.lastIndexOf('\u0000') + 1),
                        counters.toMessage(true))); // keyed by stream id, as the scope's own lists are
            }
            reply.setAll(all.addAllRegistered(io.github.rspy.spark.StreamRegistry.scopedNames())
                    .setArrowAllocated(ElementReplies.Memory.ARROW.getAllocatedMemory()));
        }
        return reply.build();
    }
}
