package io.github.rspy.bridge;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;

/**
 * The bridge's data channel on the Py4J backends: one loopback socket beside the gateway, on
 * which batches for Python travel as bytes instead of as Py4J's base64 text (about 20 MB/s).
 *
 * <p>Each frame is a stream id (int64), a length (int32), both little-endian, and a batch as
 * {@link Codec} encodes it. A drain writes its frame, then tells Python over Py4J which stream's
 * frame to take ({@link PythonSink#onNextFrame}): the call keeps every signal in order and
 * carries the demand back as before (§1.3, §3.3), while the bytes go here. A drain waits for
 * its call to return, so each stream has at most one frame in flight.
 *
 * <p>The socket is bound to the loopback address and accepts one connection: the first whose
 * first bytes are the bridge's secret, as PySpark's {@code SocketAuthServer} does. Connections
 * without it are closed unanswered; the listening socket closes once Python is in, or when
 * the wait for it ends.
 */
final class DataChannel implements AutoCloseable {
    static final int HEADER_BYTES = 12;
    static final byte ACCEPTED = 1;
    /** How long a connection may take to present the secret before it is dropped. */
    private static final int SECRET_TIMEOUT_MILLIS = 2000;
    private static final byte[] LOOPBACK = {127, 0, 0, 1}; // where Python connects, on any JVM setting

    private final byte[] secret;
    private final ServerSocketChannel listening;
    private final ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private volatile SocketChannel connected;

    private DataChannel(byte[] secret, ServerSocketChannel listening) {
        this.secret = secret.clone();
        this.listening = listening;
    }

    /** Listens on an ephemeral loopback port for the connection that presents {@code secret}. */
    static DataChannel listen(byte[] secret) {
        if (secret == null || secret.length < 16) {
            throw new IllegalArgumentException("the data channel's secret must be at least 16 bytes");
        }
        try {
            ServerSocketChannel server = ServerSocketChannel.open();
            try {
                server.bind(new InetSocketAddress(InetAddress.getByAddress(LOOPBACK), 0), 4);
            } catch (IOException | RuntimeException e) {
                server.close();
                throw e;
            }
            return new DataChannel(secret, server);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the bridge's data channel", e);
        }
    }

    int port() {
        return ((InetSocketAddress) listening.socket().getLocalSocketAddress()).getPort();
    }

    String address() {
        return listening.socket().getInetAddress().getHostAddress();
    }

    /**
     * Takes the first connection that presents the secret within {@code timeoutMillis}, then
     * stops listening. False if none did (the channel is closed then).
     */
    boolean accept(long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        try {
            listening.configureBlocking(false);
            while (connected == null && listening.isOpen()) {
                SocketChannel candidate = listening.accept();
                if (candidate == null) {
                    if (System.nanoTime() - deadline > 0) {
                        break;
                    }
                    Thread.sleep(1);
                    continue;
                }
                if (presentsSecret(candidate)) {
                    candidate.write(ByteBuffer.wrap(new byte[] {ACCEPTED}));
                    connected = candidate;
                } else {
                    BridgeRuntime.LOG.warning("the data channel refused a connection without the bridge's secret");
                    candidate.close();
                }
            }
        } catch (IOException e) {
            BridgeRuntime.LOG.log(Level.WARNING, "the data channel's listening socket failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeQuietly(listening);
        }
        if (connected == null) {
            close();
            return false;
        }
        return true;
    }

    private boolean presentsSecret(SocketChannel candidate) throws IOException {
        candidate.configureBlocking(true);
        candidate.socket().setSoTimeout(SECRET_TIMEOUT_MILLIS);
        candidate.socket().setTcpNoDelay(true);
        byte[] presented = new byte[secret.length];
        try {
            // A blocking channel ignores SO_TIMEOUT; its socket's stream keeps it.
            java.io.InputStream in = candidate.socket().getInputStream();
            int n = 0;
            while (n < presented.length) {
                int r = in.read(presented, n, presented.length - n);
                if (r < 0) {
                    return false;
                }
                n += r;
            }
        } catch (SocketTimeoutException e) {
            return false;
        }
        return MessageDigest.isEqual(presented, secret); // constant time
    }

    /**
     * Writes one frame: {@code payload[0, length)} for stream {@code streamId}. Frames are
     * whole: writers take turns. Throws UncheckedIOException if Python is gone.
     */
    void send(long streamId, byte[] payload) {
        SocketChannel out = connected;
        if (out == null) {
            throw new IllegalStateException("the data channel is not connected");
        }
        synchronized (header) {
            header.clear();
            header.putLong(streamId).putInt(payload.length).flip();
            ByteBuffer[] frame = {header, ByteBuffer.wrap(payload)};
            try {
                while (frame[1].hasRemaining()) {
                    out.write(frame);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("the bridge's data channel failed", e);
            }
        }
    }

    boolean isConnected() {
        SocketChannel out = connected;
        return out != null && out.isOpen();
    }

    @Override
    public void close() {
        closeQuietly(listening);
        SocketChannel out = connected;
        if (out != null) {
            closeQuietly(out);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            BridgeRuntime.LOG.log(Level.FINE, "closing the data channel", e);
        }
    }
}
