package io.github.rspy.bridge;

/** A Python exception that crossed into the JVM: its type name, message and traceback. */
public final class PythonException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String pythonType;
    private final String pythonTraceback;

    public PythonException(String pythonType, String message, String pythonTraceback) {
        super(pythonType + ": " + message);
        this.pythonType = pythonType;
        this.pythonTraceback = pythonTraceback;
    }

    /** The exception's qualified Python type name, e.g. {@code builtins.ValueError}. */
    public String getPythonType() {
        return pythonType;
    }

    /** The Python traceback as Python prints it. */
    public String getPythonTraceback() {
        return pythonTraceback;
    }

    /**
     * The Java exception a Python one becomes: {@code ValueError} an
     * {@link IllegalArgumentException} (as §3.9 asks for), a null element ({@code
     * NullElementError}) a {@link NullPointerException} (§2.13), anything else a {@code
     * PythonException}; the Python details are kept as the cause.
     */
    public static RuntimeException toJava(String kind, String pythonType, String message, String traceback) {
        PythonException python = new PythonException(pythonType, message, traceback);
        switch (kind) {
            case "value":
                return new IllegalArgumentException(message, python);
            case "null":
                NullPointerException npe = new NullPointerException(message);
                npe.initCause(python);
                return npe;
            default:
                return python;
        }
    }
}
