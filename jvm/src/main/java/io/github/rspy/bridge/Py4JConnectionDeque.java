package io.github.rspy.bridge;

import java.lang.reflect.Field;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.locks.Lock;
import java.util.logging.Level;
import py4j.CallbackClient;
import py4j.ClientServerConnection;
import py4j.Py4JClientConnection;

/**
 * The idle-connection deque of Py4J's {@code PythonClient}, made safe for re-entrant calls.
 *
 * <p>In pinned-thread mode a JVM thread takes its own connection out of the deque for a call into
 * Python and puts it back afterwards. When that call re-enters (Java calls Python, which calls
 * Java, which calls Python again on the same thread, as a TCK factory or a synchronous
 * {@code onSubscribe} does), the inner call puts the connection back while the outer call still
 * waits on it, and the outer call puts it back a second time. Py4J's idle cleanup
 * ({@code CallbackClient.periodicCleanup}, every 30 s where it is scheduled: Py4J 0.10.9.9's
 * {@code PythonClient} schedules none, so this guards a client or version that does)
 * shuts down whatever the deque holds (a {@code ClientServerConnection} is never marked used), so
 * a connection in use was closed under its caller ("Error while sending a command"), and a
 * duplicate kept it exposed for the rest of its thread's life. Connections that Python opened
 * went into the deque too, whenever their JVM thread called back, and the cleaner closed them
 * under the Python thread that owns them.
 *
 * <p>This deque counts how deep each connection is checked out and takes it back only when the
 * outermost call gives it back, once; a connection Python opened is never taken: its Python
 * thread closes it. The cleaner still closes idle connections of ended JVM threads. Every method
 * runs under the client's own lock, as Py4J calls them.
 */
final class Py4JConnectionDeque extends ArrayDeque<Py4JClientConnection> {
    private static final long serialVersionUID = 1L;

    /** Calls in progress per connection that is out of the deque; absent means idle or new. */
    private final transient Map<Py4JClientConnection, Integer> depth = new WeakHashMap<>();

    private Py4JConnectionDeque() {}

    /** Installs the deque in {@code client} (a {@code py4j.PythonClient}); idempotent. */
    static void install(Object client) {
        if (!(client instanceof CallbackClient)) {
            return;
        }
        try {
            Field connections = CallbackClient.class.getDeclaredField("connections");
            Field lockField = CallbackClient.class.getDeclaredField("lock");
            connections.setAccessible(true);
            lockField.setAccessible(true);
            Lock lock = (Lock) lockField.get(client);
            lock.lock();
            try {
                Object current = connections.get(client);
                if (current instanceof Py4JConnectionDeque) {
                    return;
                }
                Py4JConnectionDeque guarded = new Py4JConnectionDeque();
                for (Object connection : (Iterable<?>) current) {
                    guarded.addLast((Py4JClientConnection) connection);
                }
                connections.set(client, guarded);
            } finally {
                lock.unlock();
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            BridgeRuntime.LOG.log(Level.WARNING, "cannot guard Py4J's connection deque; a call that "
                    + "re-enters Python may fail when Py4J's idle cleaner runs", e);
        }
    }

    /** A checkout (PythonClient.getConnection) or a dead server connection's removal. */
    @Override
    public boolean remove(Object o) {
        boolean wasIdle = super.remove(o);
        if (o instanceof Py4JClientConnection && alive(o)) {
            Py4JClientConnection connection = (Py4JClientConnection) o;
            // Not in the deque yet alive: an outer call holds it (one that opened it, if unknown).
            depth.put(connection, wasIdle ? 1 : depth.getOrDefault(connection, 1) + 1);
        }
        return wasIdle;
    }

    /** A give-back (CallbackClient.giveBackConnection): only the outermost call's counts. */
    @Override
    public void addLast(Py4JClientConnection connection) {
        int remaining = depth.getOrDefault(connection, 1) - 1;
        if (remaining > 0) {
            depth.put(connection, remaining);
            return;
        }
        depth.remove(connection);
        if (openedByJvm(connection) && alive(connection) && !contains(connection)) {
            super.addLast(connection);
        }
    }

    @Override
    public boolean add(Py4JClientConnection connection) {
        addLast(connection);
        return true;
    }

    private static boolean openedByJvm(Py4JClientConnection connection) {
        return !(connection instanceof ClientServerConnection)
                || ((ClientServerConnection) connection).isInitiatedFromClient();
    }

    private static boolean alive(Object connection) {
        return !(connection instanceof ClientServerConnection)
                || ((ClientServerConnection) connection).getSocket() != null;
    }
}
