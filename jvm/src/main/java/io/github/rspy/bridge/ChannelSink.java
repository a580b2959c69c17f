package io.github.rspy.bridge;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A Python subscriber's signals as frames on the bridge's {@link DataChannel} (the Py4J
 * backends): what {@link ToPythonSubscriber} calls instead of a Py4J proxy, so that no signal
 * waits for a Py4J round trip. Each call writes one frame and returns at once, with no demand:
 * Python's requests come back as frames of their own, read by the channel's reader (§3.3: never
 * on this stack). Batches that cross as references, and an error's Throwable, wait here until
 * Python takes them over Py4J, when their frame reaches it; frames keep their order (§1.3).
 */
final class ChannelSink implements PythonSink {
    private static final Long NONE = 0L;

    private final DataChannel channel;
    private final long id;
    private final ConcurrentLinkedQueue<Object[]> objects = new ConcurrentLinkedQueue<>();
    private volatile Throwable error;

    ChannelSink(DataChannel channel, long id) {
        this.channel = channel;
        this.id = id;
    }

    @Override
    public Number onSubscribe() {
        channel.send(id, DataChannel.SUBSCRIBE);
        return NONE;
    }

    @Override
    public Number onNextBatch(byte[] encoded) {
        channel.send(id, DataChannel.NEXT, encoded);
        return NONE;
    }

    @Override
    public Number onNextArrowC(long[] addresses) {
        throw new UnsupportedOperationException("the C Data Interface is for the in-process backend");
    }

    @Override
    public Number onNextObjects(Object[] items) {
        objects.add(items); // before the frame: Python takes it when the frame arrives
        channel.send(id, DataChannel.OBJECTS);
        return NONE;
    }

    @Override
    public Number onNextValues(byte[] pickled, Object[] references) {
        objects.add(references); // before the frame, as onNextObjects does
        channel.send(id, DataChannel.OBJECTS, pickled);
        return NONE;
    }

    @Override
    public void onError(String javaClass, String message, String stack, Throwable t) {
        error = t;
        byte[][] texts = {utf8(javaClass), utf8(message), utf8(stack)};
        int size = 0;
        for (byte[] text : texts) {
            size += 4 + (text == null ? 0 : text.length);
        }
        java.nio.ByteBuffer payload = java.nio.ByteBuffer.allocate(size).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (byte[] text : texts) { // each as its length (-1: null) and its UTF-8
            payload.putInt(text == null ? -1 : text.length);
            if (text != null) {
                payload.put(text);
            }
        }
        channel.send(id, DataChannel.ERROR, payload.array());
    }

    @Override
    public void onComplete() {
        channel.send(id, DataChannel.COMPLETE);
    }

    private static byte[] utf8(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    /** The oldest batch of references not yet taken: Python calls this for each OBJECTS frame. */
    Object[] takeObjects() {
        Object[] items = objects.poll();
        if (items == null) {
            throw new IllegalStateException("no batch of references is waiting for stream " + id);
        }
        return items;
    }

    /** The Throwable of the ERROR frame: Python calls this when the frame reaches it. */
    Throwable takeError() {
        Throwable t = error;
        error = null;
        return t;
    }
}
