package io.github.rspy.bridge;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import reactor.core.publisher.Flux;

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

    /** {@code count} byte arrays of {@code size} bytes: bulk bytes through a bridge's streams. */
    public static Flux<byte[]> byteArrays(int count, int size) {
        return Flux.range(0, count).map(i -> bytes(size));
    }

    /** Nanoseconds per {@link ArrowRows#encode} of {@code rows} benchmark rows (best of {@code times}). */
    public static long encodeRowsNanos(int rows, int times) {
        Object[] batch = benchRows(rows);
        try (org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator()) {
            long best = Long.MAX_VALUE;
            for (int i = 0; i < times; i++) {
                long start = System.nanoTime();
                ArrowRows.encode(allocator, batch, rows);
                best = Math.min(best, System.nanoTime() - start);
            }
            return best;
        }
    }

    /** Nanoseconds per {@link ArrowRows#decodeRows} of {@code rows} benchmark rows (best of {@code times}). */
    public static long decodeRowsNanos(int rows, int times) {
        try (org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator()) {
            byte[] encoded = ArrowRows.encode(allocator, benchRows(rows), rows);
            long best = Long.MAX_VALUE;
            for (int i = 0; i < times; i++) {
                long start = System.nanoTime();
                ArrowRows.decodeRows(allocator, encoded);
                best = Math.min(best, System.nanoTime() - start);
            }
            return best;
        }
    }

    /** Nanoseconds per Codec.encodeValues of the same rows, pickled (best of {@code times}). */
    public static long pickleRowsNanos(int rows, int times) {
        Object[] batch = benchRows(rows);
        long best = Long.MAX_VALUE;
        for (int i = 0; i < times; i++) {
            long start = System.nanoTime();
            Codec.encodeValues(batch, rows);
            best = Math.min(best, System.nanoTime() - start);
        }
        return best;
    }

    private static Object[] benchRows(int rows) {
        Object[] batch = new Object[rows];
        for (int i = 0; i < rows; i++) {
            batch[i] = new Object[] {(long) i, i / 2.0, Long.toString(100_000_000_000L + i)};
        }
        return batch;
    }

    /**
     * {@code times} rounds of what the C Data path does to one batch of {@code rows} rows, all in
     * the JVM: copy, export, release (what Python's import then release would do), free.
     */
    public static void exportLoop(int rows, int times, boolean copy) {
        try (org.apache.arrow.memory.BufferAllocator allocator = new org.apache.arrow.memory.RootAllocator();
                org.apache.arrow.vector.VectorSchemaRoot root = io.github.rspy.bridge.testing.ArrowSources.filled(allocator, rows)) {
            for (int i = 0; i < times; i++) {
                org.apache.arrow.vector.VectorSchemaRoot taken = copy ? ArrowCData.copy(root, allocator) : null;
                java.util.List<AutoCloseable> structs = new java.util.ArrayList<>();
                ArrowCData.export(allocator, new Object[] {copy ? taken : ArrowCData.copy(root, allocator)}, 0, 1, structs);
                ArrowCData.freeStructs(structs); // not imported: released here
            }
        }
    }

    private static final org.apache.arrow.memory.BufferAllocator EXPORTS = new org.apache.arrow.memory.RootAllocator();
    private static final java.util.List<AutoCloseable> EXPORTED = new java.util.ArrayList<>();

    /** A copy of a batch of {@code rows} rows exported for Python to import: {array, schema}. */
    public static synchronized long[] exportForPython(int rows) {
        try (org.apache.arrow.vector.VectorSchemaRoot root = io.github.rspy.bridge.testing.ArrowSources.filled(EXPORTS, rows)) {
            return ArrowCData.export(EXPORTS, new Object[] {ArrowCData.copy(root, EXPORTS)}, 0, 1, EXPORTED);
        }
    }

    /** Frees the structs {@link #exportForPython} made (Python has imported them). */
    public static synchronized long freeExported() {
        ArrowCData.freeStructs(EXPORTED);
        EXPORTED.clear();
        return EXPORTS.getAllocatedMemory();
    }
}
