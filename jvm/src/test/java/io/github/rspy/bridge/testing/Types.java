package io.github.rspy.bridge.testing;

import java.util.ArrayList;
import java.util.List;

/** Java-side facts about values, for the Python tests (Py4J converts values on the way out). */
public final class Types {
    private Types() {}

    /** The class name of each element, as Java sees it ("null" for null). */
    public static List<String> classNames(List<?> items) {
        List<String> names = new ArrayList<>();
        for (Object item : items) {
            names.add(item == null ? "null" : item.getClass().getName());
        }
        return names;
    }

    /** The class name of each value of each row (Object[] or Map), row after row. */
    public static List<String> rowValueClassNames(List<?> rows) {
        List<Object> values = new ArrayList<>();
        for (Object row : rows) {
            if (row instanceof Object[]) {
                values.addAll(java.util.Arrays.asList((Object[]) row));
            } else {
                values.addAll(new java.util.TreeMap<>((java.util.Map<?, ?>) row).values());
            }
        }
        return classNames(values);
    }
}
