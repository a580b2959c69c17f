package io.github.rspy.bridge;

import py4j.ClientServerConnection;
import py4j.PythonClient;

/**
 * The Py4J connections of the drain threads. In Py4J's pinned-thread mode each JVM thread that
 * calls Python gets its own connection, served by its own Python thread. Two things are done to
 * them: they get TCP_NODELAY, as a batch is written in more than one segment (Py4J's writer
 * buffers 8 KiB) and Nagle's algorithm against Python's delayed ACK would stall each batch for
 * ~40 ms; and they are closed when the thread ends, or they would linger until Py4J's idle
 * cleaner runs. Loaded only on the Py4J backends (JPype's JVM has no Py4J).
 */
final class Py4JConnections {
    private static final ThreadLocal<ClientServerConnection> TUNED = new ThreadLocal<>();

    private Py4JConnections() {}

    /**
     * Gives the calling thread's connection TCP_NODELAY, once. Its connection may be one Py4J has
     * shut down since it was made (a call on it failed, or Python closed its end): its socket is
     * then null, and the thread's next call opens a new one. Tuning never fails the caller: a
     * drain that threw here ended its stream.
     */
    static void tuneCurrentThread(Object client) {
        if (client instanceof PythonClient) {
            ClientServerConnection connection = ((PythonClient) client).getPerThreadConnection();
            if (connection != null && TUNED.get() != connection) {
                java.net.Socket socket = connection.getSocket();
                if (socket == null) {
                    return; // shut down: nothing to tune, and the next call replaces it
                }
                TUNED.set(connection);
                try {
                    socket.setTcpNoDelay(true);
                } catch (java.net.SocketException e) {
                    BridgeRuntime.LOG.fine("cannot set TCP_NODELAY: " + e);
                }
            }
        }
    }

    static void releaseCurrentThread(Object client) {
        if (client instanceof PythonClient) {
            ClientServerConnection connection = ((PythonClient) client).getPerThreadConnection();
            if (connection != null) {
                connection.shutdown();
            }
            TUNED.remove();
        }
    }
}
