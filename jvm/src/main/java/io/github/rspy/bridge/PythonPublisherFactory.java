package io.github.rspy.bridge;

/** Implemented in Python: subscribes to a Python {@code Publisher} on behalf of a Java subscriber. */
public interface PythonPublisherFactory {
    /**
     * Subscribes a new Python-side subscriber that pushes what it receives to {@code handle}.
     *
     * @return the Python side of the subscription, or null if subscribing failed (Python has
     *     then pushed the error to {@code handle})
     */
    PythonSource subscribe(FromPythonPublisher.Handle handle);
}
