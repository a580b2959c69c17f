package io.github.rspy.bridge;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import py4j.ClientServer;

/**
 * The standalone Py4J gateway that {@code Bridge.py4j()} starts: a pinned-thread
 * {@link ClientServer}, as PySpark's. It reads the auth secret from the first line of stdin,
 * prints the port it listens on, and exits when stdin closes (its Python process is gone).
 */
public final class GatewayMain {
    private GatewayMain() {}

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String secret = in.readLine();
        if (secret == null || secret.isEmpty()) {
            System.err.println("expected the auth secret on the first line of stdin");
            System.exit(2);
        }
        ClientServer server = new ClientServer.ClientServerBuilder()
                .javaPort(0)
                .pythonPort(0)
                .authToken(secret)
                .build();
        server.startServer(true);
        System.out.println("port " + server.getJavaServer().getListeningPort());
        System.out.flush();
        while (in.read() != -1) {
            // wait for Python to go away
        }
        Runtime.getRuntime().halt(0);
    }
}
