package io.github.rspy.bridge;

/**
 * Implemented in Python: one subscription to a Python {@code Publisher}, driven by a
 * {@link FromPythonPublisher}. Python answers by calling the handle's {@code push*} methods.
 */
public interface PythonSource {
    /** Forwards demand to the Python publisher (n &gt; 0, already validated). */
    void request(long n);

    /** Cancels the Python subscription. */
    void cancel();
}
