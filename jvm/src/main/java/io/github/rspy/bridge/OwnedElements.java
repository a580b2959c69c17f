package io.github.rspy.bridge;

import java.util.ArrayList;
import java.util.logging.Level;

/**
 * A batch of elements the bridge made and owns until each is delivered (Arrow roots decoded
 * from Python): a subscriber owns what it receives, and whatever a cancel or a failure leaves
 * undelivered is closed here, so the allocator gets its memory back.
 */
final class OwnedElements extends ArrayList<Object> {
    private static final long serialVersionUID = 1L;

    OwnedElements(int capacity) {
        super(capacity);
    }

    /** Closes every element still held (delivered ones were set to null). */
    void closeUndelivered() {
        for (int i = 0; i < size(); i++) {
            Object element = get(i);
            set(i, null);
            if (element instanceof AutoCloseable) {
                try {
                    ((AutoCloseable) element).close();
                } catch (Exception e) {
                    BridgeRuntime.LOG.log(Level.WARNING, "closing an undelivered element failed", e);
                }
            }
        }
    }
}
