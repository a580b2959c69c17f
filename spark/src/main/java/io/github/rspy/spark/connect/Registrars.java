package io.github.rspy.spark.connect;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.Set;
import org.apache.spark.sql.SparkSession;

/**
 * Runs the classes named by {@code spark.rspy.connect.registrars} (comma-separated), each
 * through its {@code public static void register(SparkSession)} or {@code register()}, so a
 * server can name its publishers in {@code StreamRegistry} without code of its own in the
 * driver. Each runs once; one that fails runs again on the next call.
 */
final class Registrars {
    static final String CONF = "spark.rspy.connect.registrars";
    private static final Set<String> DONE = new HashSet<>(); // guarded by Registrars.class

    private Registrars() {}

    /**
     * Runs the registrars {@code names} (the conf's value) that have not run yet; the first
     * failure throws, naming its class.
     */
    static synchronized void run(String names, SparkSession session) {
        for (String name : names.split(",")) {
            String className = name.trim();
            if (className.isEmpty() || DONE.contains(className)) {
                continue;
            }
            try {
                invoke(className, session);
            } catch (InvocationTargetException e) {
                throw new IllegalStateException("the registrar " + className + " (" + CONF + ") failed: "
                        + e.getCause(), e.getCause());
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                throw new IllegalStateException("the registrar " + className + " (" + CONF + ") cannot be run: " + e
                        + "; it needs a public static void register(SparkSession) or register()", e);
            }
            DONE.add(className);
        }
    }

    private static void invoke(String className, SparkSession session) throws ReflectiveOperationException {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        // --jars classes are on the context loader (Spark's), which may not be ours
        Class<?> registrar = Class.forName(className, true,
                loader != null ? loader : Registrars.class.getClassLoader());
        for (Method method : registrar.getMethods()) {
            if (method.getName().equals("register") && Modifier.isStatic(method.getModifiers())
                    && method.getParameterCount() == 1 && method.getParameterTypes()[0].isInstance(session)) {
                method.invoke(null, session);
                return;
            }
        }
        registrar.getMethod("register").invoke(null); // NoSuchMethodException names what is missing
    }
}
