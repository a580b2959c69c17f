package io.github.rspy.bridge;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;

/**
 * What benchmarks/bridge_throughput.py measures the data channel against: a plain loopback
 * socket, Py4J's own {@code byte[]}, and the channel's frames alone.
 */
public final class ChannelBench {
    private ChannelBench() {}

    /**
     * A loopback socket on which one connection gets {@code frames} frames of {@code frameBytes}
     * bytes, written by a thread of its own: the raw channel's ceiling. Returns the port.
     */
    public static int rawSocket(int frameBytes, int frames) throws IOException {
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getByAddress(new byte[] {127, 0, 0, 1}));
        Thread writer = new Thread(() -> {
            try (ServerSocket s = server; Socket python = s.accept(); OutputStream out = python.getOutputStream()) {
                byte[] frame = new byte[frameBytes];
                Arrays.fill(frame, (byte) 7);
                for (int i = 0; i < frames; i++) {
                    out.write(frame);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, "channel-bench-raw");
        writer.setDaemon(true);
        writer.start();
        return server.getLocalPort();
    }

    /** A byte array for Py4J to carry back as its return value. */
    public static byte[] bytes(int size) {
        byte[] data = new byte[size];
        Arrays.fill(data, (byte) 7);
        return data;
    }

    /**
     * Writes {@code frames} NEXT frames of {@code frameBytes} on the runtime's data channel, for
     * stream {@code firstId}, from a thread of its own.
     */
    public static void pump(BridgeRuntime runtime, long firstId, int frameBytes, int frames) {
        DataChannel channel = runtime.dataChannel();
        if (channel == null) {
            throw new IllegalStateException("this runtime has no data channel");
        }
        byte[] frame = new byte[frameBytes];
        Arrays.fill(frame, (byte) 7);
        Thread writer = new Thread(() -> {
            for (int i = 0; i < frames; i++) {
                channel.send(firstId, DataChannel.NEXT, frame);
            }
        }, "channel-bench-pump");
        writer.setDaemon(true);
        writer.start();
    }

    /**
     * A Unix domain socket at {@code path} (the data channel's transport) on which one
     * connection's every {@code requestBytes}-byte message gets a {@code replyBytes}-byte reply,
     * from a thread of its own: the round trip a stream pays each time its subscriber waits for
     * what it requested, with no work on either side.
     */
    public static void echo(String path, int requestBytes, int replyBytes) throws IOException {
        java.nio.channels.ServerSocketChannel server =
                java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX);
        server.bind(java.net.UnixDomainSocketAddress.of(path), 1);
        Thread replier = new Thread(() -> {
            try (java.nio.channels.ServerSocketChannel s = server; java.nio.channels.SocketChannel python = s.accept()) {
                java.nio.ByteBuffer request = java.nio.ByteBuffer.allocate(requestBytes);
                java.nio.ByteBuffer reply = java.nio.ByteBuffer.allocate(replyBytes);
                while (true) {
                    request.clear();
                    while (request.hasRemaining()) {
                        if (python.read(request) < 0) {
                            return;
                        }
                    }
                    reply.clear();
                    while (reply.hasRemaining()) {
                        python.write(reply);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, "channel-bench-echo");
        replier.setDaemon(true);
        replier.start();
    }
}
