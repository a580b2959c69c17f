package io.github.rspy.bridge;

/**
 * Implemented in Python on the in-process (JPype) backend: a drain thread calls {@link #keep}
 * when it starts and {@link #drop} when it ends, so that it holds one Python thread state for
 * its whole life.
 *
 * <p>Why: a Java thread calling Python otherwise gets a new Python thread state for every call,
 * made and torn down around it. That costs each call a trip through the interpreter's thread
 * list, and on JPype 1.7 it leaks: every thread state gets its own allocator type for the Java
 * objects Python sees, and the type outlives the call (one per batch, so the process grew and
 * slowed as a stream ran). With the state kept, a thread pays that once.
 */
public interface PythonThreadStates {
    /** The calling thread keeps a Python thread state until {@link #drop}. */
    void keep();

    /** The calling thread lets go of the state {@link #keep} kept. */
    void drop();
}
