package io.github.rspy.bridge;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;

/**
 * The bridge's data channel on the Py4J backends: one loopback socket beside the gateway, on
 * which streams' signals and batches travel as bytes instead of as Py4J calls and base64 text
 * (about 20 MB/s, and a round trip of Py4J's per call).
 *
 * <p>Each frame is a stream id (int64), a length (int32), a kind (one byte), all little-endian,
 * and the payload. JVM to Python, a stream's every signal is a frame ({@link ChannelSink}): its
 * subscription ({@link #SUBSCRIBE}), its batches ({@link #NEXT}, as {@link Codec} encodes them;
 * {@link #OBJECTS} when it holds references, which Python then takes over Py4J: the whole batch,
 * or, with a pickle as the payload, the objects its persistent ids name), its
 * end ({@link #COMPLETE}, {@link #ERROR}). One socket keeps them in order (§1.3). Python to the
 * JVM: demand ({@link #REQUEST}, an int64) and {@link #CANCEL} for those streams, read here by a
 * thread of the channel's own and handed to the stream ({@link Receiver}) without waiting on it
 * (§3.4, §3.5); and the batches of Python publishers ({@link #PUSH}), each followed by a Py4J call
 * that takes it ({@link #takePushed}), which keeps them in order with the other Py4J signals.
 * Demand bounds every batch: no side holds more than was requested.
 *
 * <p>The socket is a Unix domain socket in a directory only its user may enter, where Python
 * has one, else bound to the loopback address; either way it accepts one connection: the first
 * whose first bytes are the bridge's secret, as PySpark's {@code SocketAuthServer} does. Connections
 * without it are closed unanswered; the listening socket closes once Python is in, or when
 * the wait for it ends.
 */
final class DataChannel implements AutoCloseable {
    static final int HEADER_BYTES = 13;
    static final byte ACCEPTED = 1;
    // JVM -> Python
    static final byte SUBSCRIBE = 'S';
    static final byte NEXT = 'N';
    static final byte OBJECTS = 'O';
    static final byte ERROR = 'E';
    static final byte COMPLETE = 'C';
    // Python -> JVM
    static final byte REQUEST = 'R';
    static final byte CANCEL = 'X';
    static final byte PUSH = 'P';
    private static final byte[] EMPTY = new byte[0];

    /** What the channel's reader hands Python's demand and cancels to: the runtime's streams. */
    interface Receiver {
        /** Python's {@code request(n)} for stream {@code id} (n &lt;= 0 for a §3.9 error). */
        void request(long id, long n);

        /** Python's {@code cancel()} for stream {@code id}. */
        void cancel(long id);

        /**
         * Reading failed while connected ({@code why}): no demand or cancel will come from Python
         * any more, so the streams that wait for one must end rather than hang.
         */
        default void failed(String why) {}
    }

    /** How long a connection may take to present the secret before it is dropped. */
    private static final int SECRET_TIMEOUT_MILLIS = 2000;
    private static final byte[] LOOPBACK = {127, 0, 0, 1}; // where Python connects, on any JVM setting

    private final byte[] secret;
    private final ServerSocketChannel listening;
    private final ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private volatile SocketChannel connected;
    private final java.util.Map<Long, byte[]> pushed = new java.util.HashMap<>(); // Python's batches, by stream
    private volatile String ended; // why no more frames come from Python
    private volatile java.nio.file.Path socketFile; // a Unix domain socket's, until Python is in

    private DataChannel(byte[] secret, ServerSocketChannel listening) {
        this.secret = secret.clone();
        this.listening = listening;
    }

    /** Listens on an ephemeral loopback port for the connection that presents {@code secret}. */
    static DataChannel listen(byte[] secret) {
        checkSecret(secret);
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

    /**
     * Listens on a Unix domain socket at {@code path} (a file in a directory only its user may
     * enter, which Python made) for the connection that presents {@code secret}: no network at
     * all, and a round trip about twice as fast as loopback TCP. The file goes once Python is
     * in, or when the wait ends.
     */
    static DataChannel listenAt(byte[] secret, String path) {
        checkSecret(secret);
        try {
            ServerSocketChannel server = ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX);
            try {
                server.bind(java.net.UnixDomainSocketAddress.of(path), 4);
            } catch (IOException | RuntimeException e) {
                server.close();
                throw e;
            }
            DataChannel channel = new DataChannel(secret, server);
            channel.socketFile = java.nio.file.Path.of(path);
            return channel;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the bridge's data channel at " + path, e);
        }
    }

    private static void checkSecret(byte[] secret) {
        if (secret == null || secret.length < 16) {
            throw new IllegalArgumentException("the data channel's secret must be at least 16 bytes");
        }
    }

    int port() {
        return ((InetSocketAddress) listening.socket().getLocalSocketAddress()).getPort();
    }

    /** Where it listens: the loopback address, or the Unix domain socket's path. */
    String address() {
        if (socketFile != null) {
            return socketFile.toString();
        }
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
            removeSocketFile();
        }
        if (connected == null) {
            close();
            return false;
        }
        return true;
    }

    /** Whether {@code candidate}'s first bytes, within the secret's time limit, are the secret. */
    private boolean presentsSecret(SocketChannel candidate) throws IOException {
        if (socketFile == null) {
            candidate.socket().setTcpNoDelay(true);
        }
        ByteBuffer presented = ByteBuffer.allocate(secret.length);
        candidate.configureBlocking(false);
        try (java.nio.channels.Selector selector = java.nio.channels.Selector.open()) {
            candidate.register(selector, java.nio.channels.SelectionKey.OP_READ);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SECRET_TIMEOUT_MILLIS);
            while (presented.hasRemaining()) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return false;
                }
                selector.select(left);
                selector.selectedKeys().clear();
                if (candidate.read(presented) < 0) {
                    return false;
                }
            }
        }
        candidate.configureBlocking(true); // its key went with the selector
        return MessageDigest.isEqual(presented.array(), secret); // constant time
    }

    private void removeSocketFile() {
        java.nio.file.Path file = socketFile;
        socketFile = null;
        if (file != null) {
            try {
                java.nio.file.Files.deleteIfExists(file);
            } catch (IOException e) {
                BridgeRuntime.LOG.log(Level.FINE, "removing the data channel's socket file", e);
            }
        }
    }

    /**
     * Writes one frame: {@code payload} for stream {@code streamId}, of {@code kind}. Frames are
     * whole: writers take turns. Throws UncheckedIOException if Python is gone.
     */
    void send(long streamId, byte kind, byte[] payload) {
        SocketChannel out = connected;
        if (out == null) {
            throw new IllegalStateException("the data channel is not connected");
        }
        synchronized (header) {
            header.clear();
            header.putLong(streamId).putInt(payload.length).put(kind).flip();
            ByteBuffer[] frame = {header, ByteBuffer.wrap(payload)};
            try {
                while (frame[1].hasRemaining() || frame[0].hasRemaining()) {
                    out.write(frame);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("the bridge's data channel failed", e);
            }
        }
    }

    void send(long streamId, byte kind) {
        send(streamId, kind, EMPTY);
    }

    /**
     * Reads Python's frames on a daemon thread of its own until the socket ends: demand and
     * cancels go to {@code receiver} at once, pushed batches wait for {@link #takePushed}.
     */
    void startReading(Receiver receiver, String name) {
        Thread reader = new Thread(() -> read(receiver), name);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(Receiver receiver) {
        SocketChannel in = connected;
        ByteBuffer head = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer number = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        String why = "Python closed it";
        boolean failed = false;
        try {
            while (fill(in, head.clear())) {
                head.flip();
                long id = head.getLong();
                int length = head.getInt();
                byte kind = head.get();
                if (kind == REQUEST && length == 8) {
                    if (!fill(in, number.clear())) {
                        break;
                    }
                    receiver.request(id, number.flip().getLong());
                } else if (kind == CANCEL && length == 0) {
                    receiver.cancel(id);
                } else if (kind == PUSH && length > 0) {
                    ByteBuffer payload = ByteBuffer.allocate(length);
                    if (!fill(in, payload)) {
                        break;
                    }
                    synchronized (pushed) {
                        pushed.put(id, payload.array()); // one at a time per stream: its push call takes it
                        pushed.notifyAll();
                    }
                } else {
                    throw new IOException("a frame of kind " + kind + " and " + length + " bytes from Python");
                }
            }
        } catch (IOException | RuntimeException | Error e) { // an Error too: a PUSH too large to hold
            if (isConnected()) {
                BridgeRuntime.LOG.log(Level.WARNING, "the data channel's reader failed", e);
                failed = true;
            }
            why = e.toString();
        } finally {
            synchronized (pushed) {
                ended = why;
                pushed.clear();
                pushed.notifyAll();
            }
        }
        if (failed) {
            receiver.failed(why);
        }
    }

    /** Whether it reads Python's frames still, and the pushed batches not yet taken: for diagnostics. */
    String describe() {
        String why = ended;
        int untaken;
        synchronized (pushed) {
            untaken = pushed.size();
        }
        return "data channel: " + (why == null ? "reading" : "reading ended: " + why) + ", "
                + untaken + " pushed batches untaken";
    }

    /** Fills {@code buffer} from {@code in}; false at the end of the stream. */
    private static boolean fill(SocketChannel in, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (in.read(buffer) < 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * The batch Python wrote for stream {@code id} before its call to take it: it is on its way,
     * if not here already. Throws IllegalStateException if the channel ends first.
     */
    byte[] takePushed(long id) {
        synchronized (pushed) {
            for (;;) {
                byte[] payload = pushed.remove(id);
                if (payload != null) {
                    return payload;
                }
                if (ended != null) {
                    throw new IllegalStateException("the bridge's data channel closed: " + ended);
                }
                try {
                    pushed.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted waiting for a batch from Python", e);
                }
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
        removeSocketFile();
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
