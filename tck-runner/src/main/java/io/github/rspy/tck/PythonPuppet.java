package io.github.rspy.tck;

/** Implemented in Python: how the TCK drives a whitebox subscriber (its SubscriberPuppet). */
public interface PythonPuppet {
    void triggerRequest(long elements);

    void signalCancel();
}
