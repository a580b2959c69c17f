package io.github.rspy.bridge;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

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

    /** Connects as Python does: the secret first, then the confirmation byte. */
    private static Socket connect(DataChannel channel, byte[] secret) throws IOException {
        Socket socket = new Socket("127.0.0.1", channel.port());
        socket.getOutputStream().write(secret);
        socket.getOutputStream().flush();
        return socket;
    }

    @Test
    public void framesAreTheStreamIdTheLengthAndTheBytesLittleEndian() throws Exception {
        DataChannel channel = DataChannel.listen(SECRET);
        try (Socket python = connect(channel, SECRET)) {
            assertTrue(channel.accept(10_000));
            DataInputStream in = new DataInputStream(python.getInputStream());
            assertEquals(in.readByte(), DataChannel.ACCEPTED);
            channel.send(7, new byte[] {'q', 1, 2, 3});
            channel.send(Long.MAX_VALUE, new byte[] {'P'});
            for (long id : new long[] {7, Long.MAX_VALUE}) {
                byte[] header = new byte[DataChannel.HEADER_BYTES];
                in.readFully(header);
                ByteBuffer fields = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                assertEquals(fields.getLong(), id);
                int length = fields.getInt();
                byte[] payload = new byte[length];
                in.readFully(payload);
                assertEquals(payload, id == 7 ? new byte[] {'q', 1, 2, 3} : new byte[] {'P'});
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
                        channel.send(id, payload);
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
        try (Socket intruder = connect(channel, "fedcba9876543210fedcba9876543210".getBytes())) {
            assertFalse(channel.accept(300));
            assertEquals(intruder.getInputStream().read(), -1);
            assertFalse(channel.isConnected());
            expectThrows(IllegalStateException.class, () -> channel.send(1, new byte[] {'q'}));
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
                channel.send(1, large);
            }
        });
        channel.close();
    }

    @Test
    public void aShortSecretIsRefused() {
        expectThrows(IllegalArgumentException.class, () -> DataChannel.listen(new byte[8]));
    }
}
