package io.github.rspy.bridge;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import io.github.rspy.bridge.testing.CapturedLog;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.testng.annotations.Test;

public class DataChannelTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes();
    private static final String REFUSED = "WARNING: the data channel refused a connection without the bridge's secret";

    /** The bridge's log, kept by the test instead of printed: the tests below make it warn on purpose. */
    private static CapturedLog bridgeLog() {
        return CapturedLog.of("io.github.rspy.bridge");
    }

    /** Connects as Python does: the secret first, then the confirmation byte. */
    private static Socket connect(DataChannel channel, byte[] secret) throws IOException {
        Socket socket = new Socket("127.0.0.1", channel.port());
        socket.getOutputStream().write(secret);
        socket.getOutputStream().flush();
        return socket;
    }

    @Test
    public void framesAreTheStreamIdTheLengthTheKindAndTheBytesLittleEndian() throws Exception {
        DataChannel channel = DataChannel.listen(SECRET);
        try (Socket python = connect(channel, SECRET)) {
            assertTrue(channel.accept(10_000));
            DataInputStream in = new DataInputStream(python.getInputStream());
            assertEquals(in.readByte(), DataChannel.ACCEPTED);
            channel.send(7, DataChannel.NEXT, new byte[] {'q', 1, 2, 3});
            channel.send(Long.MAX_VALUE, DataChannel.COMPLETE);
            for (long id : new long[] {7, Long.MAX_VALUE}) {
                byte[] header = new byte[DataChannel.HEADER_BYTES];
                in.readFully(header);
                ByteBuffer fields = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                assertEquals(fields.getLong(), id);
                int length = fields.getInt();
                assertEquals(fields.get(), id == 7 ? DataChannel.NEXT : DataChannel.COMPLETE);
                byte[] payload = new byte[length];
                in.readFully(payload);
                assertEquals(payload, id == 7 ? new byte[] {'q', 1, 2, 3} : new byte[0]);
            }
        } finally {
            channel.close();
        }
    }

    @Test
    public void frameWritersTakeTurnsSoEveryFrameArrivesWhole() throws Exception {
        DataChannel channel = DataChannel.listen(SECRET);
        int writers = 4;
        int frames = 200;
        try (Socket python = connect(channel, SECRET)) {
            assertTrue(channel.accept(10_000));
            DataInputStream in = new DataInputStream(python.getInputStream());
            in.readByte();
            CompletableFuture<?>[] running = new CompletableFuture<?>[writers];
            for (int w = 0; w < writers; w++) {
                long id = w;
                byte[] payload = new byte[70_000 + w]; // beyond one socket write
                Arrays.fill(payload, (byte) w);
                running[w] = CompletableFuture.runAsync(() -> {
                    for (int f = 0; f < frames; f++) {
                        channel.send(id, DataChannel.NEXT, payload);
                    }
                });
            }
            int[] seen = new int[writers];
            for (int f = 0; f < writers * frames; f++) {
                byte[] header = new byte[DataChannel.HEADER_BYTES];
                in.readFully(header);
                ByteBuffer fields = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                int id = (int) fields.getLong();
                byte[] payload = new byte[fields.getInt()];
                in.readFully(payload);
                assertEquals(payload.length, 70_000 + id);
                for (byte b : payload) {
                    assertEquals(b, (byte) id);
                }
                seen[id]++;
            }
            CompletableFuture.allOf(running).get(30, TimeUnit.SECONDS);
            assertEquals(seen, new int[] {frames, frames, frames, frames});
        } finally {
            channel.close();
        }
    }

    @Test
    public void aWrongSecretIsClosedUnansweredAndTheChannelStaysUnconnected() throws Exception {
        DataChannel channel = DataChannel.listen(SECRET);
        try (CapturedLog log = bridgeLog();
                Socket intruder = connect(channel, "fedcba9876543210fedcba9876543210".getBytes())) {
            assertFalse(channel.accept(300));
            assertEquals(intruder.getInputStream().read(), -1);
            assertFalse(channel.isConnected());
            expectThrows(IllegalStateException.class, () -> channel.send(1, DataChannel.NEXT, new byte[] {'q'}));
            assertEquals(log.lines(), java.util.List.of(REFUSED));
        }
    }

    /** Wrong secrets a check of only part of it lets in (a wholly random one cannot tell). */
    private static byte[][] nearMisses() {
        byte[] lastByteWrong = SECRET.clone();
        lastByteWrong[lastByteWrong.length - 1] ^= 0x01;
        byte[] firstHalfThenGarbage = SECRET.clone();
        for (int i = SECRET.length / 2; i < SECRET.length; i++) {
            firstHalfThenGarbage[i] ^= 0x5A;
        }
        return new byte[][] {lastByteWrong, firstHalfThenGarbage};
    }

    @Test
    public void aSecretWrongOnlyInItsLastByteOrSecondHalfIsRefused() throws Exception {
        for (byte[] miss : nearMisses()) {
            DataChannel channel = DataChannel.listen(SECRET);
            try (CapturedLog log = bridgeLog(); Socket intruder = connect(channel, miss)) {
                assertFalse(channel.accept(300), Arrays.toString(miss));
                assertEquals(intruder.getInputStream().read(), -1);
                assertFalse(channel.isConnected());
                assertEquals(log.lines(), java.util.List.of(REFUSED));
            } finally {
                channel.close();
            }
        }
    }

    @Test
    public void sendingAfterPythonHasGoneFails() throws Exception {
        DataChannel channel = DataChannel.listen(SECRET);
        Socket python = connect(channel, SECRET);
        assertTrue(channel.accept(10_000));
        python.close();
        byte[] large = new byte[1 << 20];
        expectThrows(UncheckedIOException.class, () -> {
            for (int i = 0; i < 64; i++) { // the first writes may still fit in the socket's buffers
                channel.send(1, DataChannel.NEXT, large);
            }
        });
        channel.close();
    }

    /** A frame as Python writes it. */
    private static byte[] frame(long id, byte kind, byte[] payload) {
        return ByteBuffer.allocate(DataChannel.HEADER_BYTES + payload.length).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(id).putInt(payload.length).put(kind).put(payload).array();
    }

    @Test
    public void pythonsDemandCancelsAndPushesReachTheirStreamsInOrder() throws Exception {
        DataChannel channel = DataChannel.listen(SECRET);
        java.util.List<String> heard = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        try (Socket python = connect(channel, SECRET)) {
            assertTrue(channel.accept(10_000));
            python.getInputStream().read();
            channel.startReading(new DataChannel.Receiver() {
                @Override
                public void request(long id, long n) {
                    heard.add("request " + id + " " + n);
                }

                @Override
                public void cancel(long id) {
                    heard.add("cancel " + id);
                }
            }, "test-reader");
            java.io.OutputStream out = python.getOutputStream();
            byte[] n = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(Long.MAX_VALUE).array();
            out.write(frame(3, DataChannel.REQUEST, n));
            out.write(frame(9, DataChannel.PUSH, new byte[] {'q', 5}));
            out.write(frame(3, DataChannel.CANCEL, new byte[0]));
            out.flush();
            assertEquals(channel.takePushed(9), new byte[] {'q', 5});
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (heard.size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(heard, java.util.List.of("request 3 " + Long.MAX_VALUE, "cancel 3"));
            python.shutdownOutput(); // the reader ends, and a wait for a push that never comes with it
            expectThrows(IllegalStateException.class, () -> channel.takePushed(10));
        } finally {
            channel.close();
        }
    }

    @Test
    public void aFrameOfAnUnknownKindEndsTheReaderAndSaysSo() throws Exception {
        DataChannel channel = DataChannel.listen(SECRET);
        java.util.concurrent.CompletableFuture<String> failed = new java.util.concurrent.CompletableFuture<>();
        try (CapturedLog log = bridgeLog(); Socket python = connect(channel, SECRET)) {
            assertTrue(channel.accept(10_000));
            python.getInputStream().read();
            channel.startReading(new DataChannel.Receiver() {
                @Override
                public void request(long id, long n) {}

                @Override
                public void cancel(long id) {}

                @Override
                public void failed(String why) {
                    failed.complete(why);
                }
            }, "test-reader");
            python.getOutputStream().write(frame(1, (byte) 'Z', new byte[3]));
            expectThrows(IllegalStateException.class, () -> channel.takePushed(1));
            assertEquals(failed.get(10, java.util.concurrent.TimeUnit.SECONDS),
                    "java.io.IOException: a frame of kind 90 and 3 bytes from Python");
            assertEquals(log.lines(), java.util.List.of("WARNING: the data channel's reader failed "
                    + "(java.io.IOException: a frame of kind 90 and 3 bytes from Python)"));
        } finally {
            channel.close();
        }
    }

    @Test
    public void aShortSecretIsRefused() {
        expectThrows(IllegalArgumentException.class, () -> DataChannel.listen(new byte[8]));
    }
}
