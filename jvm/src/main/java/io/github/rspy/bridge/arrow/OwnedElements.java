package io.github.rspy.bridge.arrow;

import java.util.ArrayList;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A batch of elements the bridge made and owns until each is delivered (Arrow roots decoded
 * from Python): a subscriber owns what it receives, and whatever a cancel or a failure leaves
 * undelivered is closed here, so the allocator gets its memory back.
 */
public final class OwnedElements extends ArrayList<Object> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = Logger.getLogger("io.github.rspy.bridge.arrow");

    OwnedElements(int capacity) {
        super(capacity);
    }

    /** Closes every element still held (delivered ones were set to null). */
    public void closeUndelivered() {
        for (int i = 0; i < size(); i++) {
            Object element = get(i);
            set(i, null);
            if (element instanceof AutoCloseable) {
                try {
                    ((AutoCloseable) element).close();
                } catch (Exception e) {
                    LOG.log(Level.WARNING, "closing an undelivered element failed", e);
                }
            }
        }
    }
}
