package io.github.rspy.bridge;

import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.testng.annotations.Test;
import py4j.ClientServer;
import py4j.ClientServerConnection;
import py4j.Gateway;
import py4j.PythonClient;

public class Py4JConnectionsTest {
    /**
     * A drain thread's Py4J connection that Py4J shut down before it was tuned (a call on it
     * failed, or Python closed its end; the thread's weak reference still finds it): tuning it
     * threw a NullPointerException, which ended the stream the drain was delivering (the suite's
     * rare rule-1.1 stall). It is left alone now.
     */
    @Test
    public void aConnectionShutDownBeforeItWasTunedIsLeftAlone() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (ServerSocket python = new ServerSocket(0, 1, loopback)) { // where Python would listen
            ClientServer server = new ClientServer.ClientServerBuilder()
                    .javaPort(0).javaAddress(loopback).pythonPort(python.getLocalPort()).pythonAddress(loopback)
                    .build();
            PythonClient client = (PythonClient) server.getPythonClient();
            try (Socket socket = new Socket(loopback, python.getLocalPort()); Socket accepted = python.accept()) {
                ClientServerConnection connection = new ClientServerConnection(
                        new Gateway(null), socket, null, client, server.getJavaServer(), 0);
                client.setPerThreadConnection(connection); // as Py4J does for a thread's first call
                connection.shutdown(); // as Py4J does when a call on it fails
                assertNull(connection.getSocket(), "Py4J's shut-down connection has no socket");
                Py4JConnections.tuneCurrentThread(client); // threw NullPointerException
                assertTrue(socket.isClosed() && !accepted.isClosed(), "only the shut-down end closed");
            } finally {
                server.shutdown();
            }
        }
    }
}
