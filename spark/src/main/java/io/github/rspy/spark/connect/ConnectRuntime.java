package io.github.rspy.spark.connect;

import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connect.service.SparkListenerConnectSessionClosed;

/**
 * What the plugins share in one driver, set up on their first use: the streams, the server's
 * confs, the reaper thread that cancels streams whose lease ran out, and a listener that
 * cancels a session's streams when it closes and every stream when the application ends.
 */
final class ConnectRuntime {
    static final String IDLE_TIMEOUT = "spark.rspy.connect.idleTimeout";
    static final String DIAGNOSTICS = "spark.rspy.connect.diagnostics";
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark.connect");
    private static ConnectRuntime current; // guarded by ConnectRuntime.class

    final ConnectStreams streams = new ConnectStreams();
    final long idleTimeoutNanos;
    final boolean diagnostics;
    final int recursionLimit;
    final String registrars;
    private final SparkContext context;
    private final Thread reaper;
    private volatile boolean stopped;

    private ConnectRuntime(SparkContext context) {
        this.context = context;
        SparkConf conf = context.getConf();
        this.idleTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(conf.getTimeAsMs(IDLE_TIMEOUT, "10s"));
        this.diagnostics = conf.getBoolean(DIAGNOSTICS, false);
        // the limit Spark Connect itself parses plans with, for the relations we parse
        this.recursionLimit = conf.getInt("spark.connect.grpc.marshallerRecursionLimit", 1024);
        this.registrars = conf.get(Registrars.CONF, "");
        this.reaper = new Thread(this::reap, "rspy-connect-reaper");
        reaper.setDaemon(true);
    }

    /** The runtime of {@code session}'s SparkContext, set up on first use. */
    static ConnectRuntime of(SparkSession session) {
        ConnectRuntime runtime;
        boolean started = false;
        synchronized (ConnectRuntime.class) {
            SparkContext context = session.sparkContext();
            if (current == null || current.context != context) {
                if (current != null) {
                    current.stop("the SparkContext was replaced");
                }
                current = new ConnectRuntime(context);
                context.addSparkListener(current.listener());
                current.reaper.start();
                started = true;
            }
            runtime = current;
        }
        if (started) {
            try {
                Registrars.run(runtime.registrars, session); // on first use; subscribe retries a failed one
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, e.getMessage(), e);
            }
        }
        return runtime;
    }

    /** The sessions that registered names: their names go when they close. */
    private final java.util.Set<Scope> registeredScopes = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** {@code scope} registered a name. */
    void registered(Scope scope) {
        registeredScopes.add(scope);
    }

    private SparkListener listener() {
        return new SparkListener() {
            @Override
            public void onOtherEvent(SparkListenerEvent event) {
                if (event instanceof SparkListenerConnectSessionClosed closed) {
                    streams.cancelWhere(scope -> scope.isSession(closed.userId(), closed.sessionId()),
                            "session closed");
                    streams.forgetEnded(scope -> scope.isSession(closed.userId(), closed.sessionId()));
                    registeredScopes.removeIf(scope -> {
                        boolean closing = scope.isSession(closed.userId(), closed.sessionId());
                        if (closing) {
                            io.github.rspy.spark.StreamRegistry.unregisterScope(scope.serverSessionId());
                        }
                        return closing;
                    });
                }
            }

            @Override
            public void onApplicationEnd(SparkListenerApplicationEnd end) {
                stop("application end");
            }
        };
    }

    private void stop(String reason) {
        stopped = true;
        reaper.interrupt();
        streams.cancelWhere(scope -> true, reason);
    }

    /** The reaper: once a second, cancels the streams idle longer than the idle timeout. */
    private void reap() {
        while (!stopped) {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return; // stopped
            }
            try {
                streams.reap(idleTimeoutNanos);
            } catch (RuntimeException e) { // a stream's cancel failed: the others still get theirs
                LOG.log(Level.WARNING, "the rspy Connect reaper: " + e, e);
            }
        }
    }
}
