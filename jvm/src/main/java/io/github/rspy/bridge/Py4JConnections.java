package io.github.rspy.bridge;

import py4j.ClientServerConnection;
import py4j.PythonClient;

/**
 * Closes the Py4J connection a drain thread opened to call Python, when the thread ends. In
 * Py4J's pinned-thread mode each JVM thread that calls Python gets its own connection, served
 * by its own Python thread; without this they would linger until Py4J's idle cleaner runs.
 * Loaded only on the Py4J backends (JPype's JVM has no Py4J).
 */
final class Py4JConnections {
    private Py4JConnections() {}

    static void releaseCurrentThread(Object client) {
        if (client instanceof PythonClient) {
            ClientServerConnection connection = ((PythonClient) client).getPerThreadConnection();
            if (connection != null) {
                connection.shutdown();
            }
        }
    }
}
