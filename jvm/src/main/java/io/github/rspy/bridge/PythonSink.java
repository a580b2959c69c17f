package io.github.rspy.bridge;

/**
 * The Python {@code Subscriber} behind a {@link ToPythonSubscriber}: implemented in Python on the
 * in-process backend (JPype), and by {@link ChannelSink}, which writes each call as a frame, on
 * the Py4J backends.
 *
 * <p>Each method is one crossing of the boundary. The ones that may run the subscriber's code
 * return the demand it requested meanwhile (a {@link Number}: Python's ints cross as Integer or
 * Long), so that a {@code request} made inside {@code on_next} costs no crossing of its own; a
 * negative value means the subscriber made a request with n &lt;= 0 (§3.9).
 */
public interface PythonSink {
    /** Calls the Python subscriber's {@code on_subscribe}. */
    Number onSubscribe();

    /** Delivers a batch pickled as a Python list, one {@code on_next} per element. */
    Number onNextBatch(byte[] pickledList);

    /**
     * Delivers Arrow record batches through the C Data Interface (in process only): the
     * addresses of each one's exported array and schema, in turn; one {@code on_next} each.
     */
    Number onNextArrowC(long[] addresses);

    /** Delivers a batch of elements that cross as references, one {@code on_next} each. */
    Number onNextObjects(Object[] items);

    /**
     * Delivers a batch pickled as a Python list (as {@link #onNextBatch} takes it) whose
     * persistent ids are indexes in {@code references}: the JVM objects the batch holds that have
     * no Python equivalent, which cross as references where they are. One {@code on_next} each.
     */
    Number onNextValues(byte[] pickledList, Object[] references);

    /** Delivers the terminal error, with its class, message and stack already as strings. */
    void onError(String javaClass, String message, String stack, Throwable error);

    /** Delivers completion. */
    void onComplete();
}
