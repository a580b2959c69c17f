package io.github.rspy.bridge.arrow;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The {@link RowReader}s: Java records (their components, by their accessors) always; the
 * readers {@link ServiceLoader} finds (Spark's rows, from the Spark connectors' jar); and, only
 * for a subscriber that gave a schema, JavaBeans (public getters {@code getX()}, {@code isX()}).
 * Beans are not rows by default: any object with getters would then change from a reference into
 * a dict in Python, for code that has always received references.
 */
final class RowReaders {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.bridge.arrow");

    private RowReaders() {}

    /** Found once, when the first row of a kind the bridge does not read itself is met. */
    private static final class Found {
        static final List<RowReader> READERS = load();

        private static List<RowReader> load() {
            List<RowReader> readers = new ArrayList<>();
            ServiceLoader<RowReader> loader = ServiceLoader.load(RowReader.class, RowReader.class.getClassLoader());
            for (ServiceLoader.Provider<RowReader> provider : (Iterable<ServiceLoader.Provider<RowReader>>)
                    loader.stream()::iterator) {
                try {
                    readers.add(provider.get());
                } catch (ServiceConfigurationError | LinkageError e) { // its dependencies are absent here
                    LOG.log(Level.FINE, "a RowReader could not be loaded: skipped", e);
                }
            }
            return Collections.unmodifiableList(readers);
        }
    }

    /** The layout of {@code row} as a row without a schema (a record, or a reader's), or null. */
    static RowReader.Layout byDefault(Object row) {
        RowReader.Layout layout = RECORDS.get(row.getClass());
        if (layout != null) {
            return layout;
        }
        for (RowReader reader : Found.READERS) {
            try {
                layout = reader.layoutOf(row);
            } catch (RuntimeException | LinkageError e) {
                LOG.log(Level.FINE, "a RowReader failed: its rows cross as references", e);
            }
            if (layout != null) {
                return layout;
            }
        }
        return null;
    }

    /** The layout of {@code row} for a schema: {@link #byDefault}, else a JavaBean's; never null. */
    static RowReader.Layout withBeans(Object row) {
        RowReader.Layout layout = byDefault(row);
        return layout != null ? layout : BEANS.get(row.getClass());
    }

    private static final ClassValue<RowReader.Layout> RECORDS = new ClassValue<>() {
        @Override
        protected RowReader.Layout computeValue(Class<?> type) {
            if (!type.isRecord()) {
                return null;
            }
            RecordComponent[] components = type.getRecordComponents();
            List<String> names = new ArrayList<>(components.length);
            Method[] getters = new Method[components.length];
            for (int i = 0; i < components.length; i++) {
                names.add(components[i].getName());
                getters[i] = readable(components[i].getAccessor());
                if (getters[i] == null) {
                    return null; // a record this code may not read: it crosses as a reference
                }
            }
            return new Getters(type, names, getters, RowReader.Shape.DICT);
        }
    };

    private static final ClassValue<RowReader.Layout> BEANS = new ClassValue<>() {
        @Override
        protected RowReader.Layout computeValue(Class<?> type) {
            List<String> names = new ArrayList<>();
            List<Method> getters = new ArrayList<>();
            for (Method m : type.getMethods()) { // public, inherited ones too
                String property = property(m);
                if (property != null && !names.contains(property) && readable(m) != null) {
                    names.add(property);
                    getters.add(m);
                }
            }
            return new Getters(type, names, getters.toArray(new Method[0]), RowReader.Shape.DICT);
        }
    };

    /** The JavaBeans property {@code m} reads ({@code getName} → {@code name}), or null. */
    private static String property(Method m) {
        if (Modifier.isStatic(m.getModifiers()) || m.getParameterCount() != 0 || m.getDeclaringClass() == Object.class) {
            return null;
        }
        String name = m.getName();
        String rest;
        if (name.startsWith("get") && name.length() > 3 && m.getReturnType() != void.class) {
            rest = name.substring(3);
        } else if (name.startsWith("is") && name.length() > 2
                && (m.getReturnType() == boolean.class || m.getReturnType() == Boolean.class)) {
            rest = name.substring(2);
        } else {
            return null;
        }
        if (rest.length() > 1 && Character.isUpperCase(rest.charAt(0)) && Character.isUpperCase(rest.charAt(1))) {
            return rest; // getURL → URL, as java.beans.Introspector.decapitalize does
        }
        return rest.substring(0, 1).toLowerCase(Locale.ROOT) + rest.substring(1);
    }

    /** {@code m}, callable from here (a public method of a class that is not public needs this), or null. */
    private static Method readable(Method m) {
        if (Modifier.isPublic(m.getModifiers()) && Modifier.isPublic(m.getDeclaringClass().getModifiers())) {
            return m;
        }
        return m.trySetAccessible() ? m : null;
    }

    /** Rows of one class, each column read by a getter. */
    private static final class Getters implements RowReader.Layout {
        private final Class<?> type;
        private final List<String> names;
        private final Method[] getters;
        private final RowReader.Shape shape;

        Getters(Class<?> type, List<String> names, Method[] getters, RowReader.Shape shape) {
            this.type = type;
            this.names = Collections.unmodifiableList(names);
            this.getters = getters;
            this.shape = shape;
        }

        @Override
        public List<String> names() {
            return names;
        }

        @Override
        public int width() {
            return getters.length;
        }

        @Override
        public RowReader.Shape shape() {
            return shape;
        }

        @Override
        public boolean fits(Object row) {
            return row.getClass() == type;
        }

        @Override
        public Object value(Object row, int column) {
            try {
                return getters[column].invoke(row);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                throw new IllegalStateException(getters[column].getName() + "() threw " + cause, cause);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(getters[column].getName() + "() cannot be called: " + e, e);
            }
        }
    }
}
