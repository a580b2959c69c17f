package io.github.rspy.bridge;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * An unbounded single-producer single-consumer queue of linked array chunks, for the hot path
 * JVM → Python. The producer is the upstream's {@code onNext}, serial by §1.3 (which also gives
 * the happens-before between successive producer threads); the consumer is the drain loop.
 * Elements are published with release writes ({@code lazySet}) and read with acquire reads.
 */
final class SpscQueue {
    private static final int CHUNK = 1024;

    private AtomicReferenceArray<Object> producerChunk = new AtomicReferenceArray<>(CHUNK + 1);
    private int producerIndex;
    private AtomicReferenceArray<Object> consumerChunk = producerChunk;
    private int consumerIndex;

    /** Producer side only. */
    void offer(Object item) {
        if (producerIndex == CHUNK) {
            AtomicReferenceArray<Object> next = new AtomicReferenceArray<>(CHUNK + 1);
            next.lazySet(0, item);
            producerChunk.lazySet(CHUNK, next); // the link slot: published after the element
            producerChunk = next;
            producerIndex = 1;
        } else {
            producerChunk.lazySet(producerIndex++, item);
        }
    }

    /** Consumer side only; null when empty. */
    Object poll() {
        if (consumerIndex == CHUNK) {
            @SuppressWarnings("unchecked")
            AtomicReferenceArray<Object> next = (AtomicReferenceArray<Object>) consumerChunk.get(CHUNK);
            if (next == null) {
                return null;
            }
            consumerChunk = next;
            consumerIndex = 0;
        }
        Object item = consumerChunk.get(consumerIndex);
        if (item != null) {
            consumerChunk.lazySet(consumerIndex++, null); // let the element be collected
        }
        return item;
    }

    /** Consumer side only. */
    boolean isEmpty() {
        if (consumerIndex == CHUNK) {
            return consumerChunk.get(CHUNK) == null;
        }
        return consumerChunk.get(consumerIndex) == null;
    }

    /** Consumer side only. */
    void clear() {
        while (poll() != null) {
            // drop
        }
    }
}
