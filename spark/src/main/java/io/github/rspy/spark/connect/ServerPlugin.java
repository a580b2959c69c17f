package io.github.rspy.spark.connect;

import java.io.IOException;
import java.io.InputStream;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * The Spark plugin ({@code spark.plugins}) of a Connect server that serves this library's
 * clients, which {@code rss.connect_confs()} names. When the driver starts, it:
 *
 * <ul>
 *   <li><b>quiets</b> Spark Connect's per-call INFO loggers ({@link #PER_CALL}): each logs a
 *       line for every call, so for every {@code request(n)} of every stream. They are set to
 *       WARN unless the log4j2 configuration names them itself (a level the user chose stays),
 *       or {@code spark.rspy.connect.quiet=false};
 *   <li><b>watches its owner</b> if {@code spark.rspy.connect.owner=stdin}, as {@code
 *       ConnectServer} starts servers: the Python process that started it holds the other end
 *       of the server's stdin, which the system closes when that process ends, however it ends
 *       (SIGKILL included). At that end of input the server exits as on SIGTERM (Spark's
 *       shutdown hooks stop its context), and is halted if that takes more than {@link
 *       #EXIT_GRACE_SECONDS} seconds.
 * </ul>
 */
public final class ServerPlugin implements SparkPlugin {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.spark.connect");
    /** The loggers that write an INFO line per Connect call (ExecutePlan, GetStatus, ...). */
    static final List<String> PER_CALL = List.of(
            "org.apache.spark.sql.connect.service.SessionHolder",
            "org.apache.spark.sql.connect.service.SparkConnectExecutionManager",
            "org.apache.spark.sql.connect.execution.ExecuteGrpcResponseSender",
            "org.apache.spark.sql.connect.execution.ExecuteResponseObserver",
            "org.apache.spark.sql.connect.execution.ExecuteThreadRunner",
            "org.apache.spark.sql.connect.service.ExecuteHolder");
    static final String QUIET_CONF = "spark.rspy.connect.quiet";
    static final String OWNER_CONF = "spark.rspy.connect.owner";
    /** How long the exit may take (Spark's shutdown hooks) before the JVM is halted. */
    static final long EXIT_GRACE_SECONDS = 4;

    @Override
    public DriverPlugin driverPlugin() {
        return new DriverPlugin() {
            @Override
            public Map<String, String> init(SparkContext context, PluginContext pluginContext) {
                if (context.conf().getBoolean(QUIET_CONF, true)) {
                    quiet();
                }
                String owner = context.conf().get(OWNER_CONF, "");
                if (owner.equals("stdin")) {
                    watchOwner(System.in);
                } else if (!owner.isEmpty()) {
                    throw new IllegalArgumentException(OWNER_CONF + " must be 'stdin' or unset, got '" + owner + "'");
                }
                return Collections.emptyMap();
            }
        };
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return null;
    }

    /** Sets the per-call loggers that the configuration does not name to WARN. */
    static void quiet() {
        try {
            LoggerContext logging = (LoggerContext) LogManager.getContext(false);
            Map<String, ?> named = logging.getConfiguration().getLoggers();
            for (String name : PER_CALL) {
                if (!named.containsKey(name)) {
                    Configurator.setLevel(name, org.apache.logging.log4j.Level.WARN);
                }
            }
        } catch (RuntimeException | LinkageError e) { // another logging backend: leave it as it is
            LOG.log(Level.FINE, "could not quiet Spark Connect's per-call loggers", e);
        }
    }

    /** Exits the JVM when {@code input} ends: the process holding its other end is gone. */
    static void watchOwner(InputStream input) {
        Thread watch = new Thread(() -> {
            byte[] ignored = new byte[256];
            try {
                while (input.read(ignored) >= 0) {
                    // The owner writes nothing: only the end of input matters.
                }
            } catch (IOException e) {
                LOG.log(Level.FINE, "the owner's pipe failed", e);
            }
            LOG.warning("the process that started this Spark Connect server has ended: the server stops");
            Thread halt = new Thread(() -> {
                try {
                    TimeUnit.SECONDS.sleep(EXIT_GRACE_SECONDS);
                } catch (InterruptedException e) {
                    return;
                }
                Runtime.getRuntime().halt(1); // the shutdown hooks hang: end anyway
            }, "rspy-owner-halt");
            halt.setDaemon(true);
            halt.start();
            System.exit(0);
        }, "rspy-owner-watch");
        watch.setDaemon(true);
        watch.start();
    }
}
