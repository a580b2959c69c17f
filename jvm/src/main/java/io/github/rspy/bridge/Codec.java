package io.github.rspy.bridge;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import net.razorvine.pickle.PickleException;
import net.razorvine.pickle.Pickler;
import net.razorvine.pickle.Unpickler;

/**
 * Elements cross the boundary in batches. A batch of values (null, booleans, numbers,
 * strings, byte arrays, and lists, maps and arrays of values) crosses as one pickle (Pyrolite,
 * which Spark also carries); a batch holding anything else crosses as an {@code Object[]} of
 * references.
 */
final class Codec {
    private static final int MAX_DEPTH = 32;

    private Codec() {}

    /** The batch pickled as a Python list, or null if an element is not a value. */
    static byte[] encodeValues(Object[] batch, int length) {
        for (int i = 0; i < length; i++) {
            if (!isValue(batch[i], 0)) {
                return null;
            }
        }
        try {
            return new Pickler(false).dumps(Arrays.asList(batch).subList(0, length));
        } catch (IOException | PickleException e) {
            return null;
        }
    }

    /** A pickled Python list, as Java objects (ints as Integer, Long or BigInteger). */
    static List<?> decode(byte[] pickled) {
        try {
            Object result = new Unpickler().loads(pickled);
            if (!(result instanceof List)) {
                throw new IllegalArgumentException("expected a pickled list, got " + result.getClass());
            }
            return (List<?>) result;
        } catch (IOException | PickleException e) {
            throw new IllegalArgumentException("cannot unpickle a batch from Python: " + e, e);
        }
    }

    static boolean isValue(Object o, int depth) {
        if (o == null || o instanceof String || o instanceof Long || o instanceof Integer
                || o instanceof Double || o instanceof Boolean || o instanceof byte[]) {
            return true;
        }
        if (o instanceof Short || o instanceof Byte || o instanceof Float
                || o instanceof BigInteger || o instanceof BigDecimal || o instanceof Character) {
            return true;
        }
        if (depth >= MAX_DEPTH) {
            return false;
        }
        if (o instanceof Collection) {
            for (Object e : (Collection<?>) o) {
                if (!isValue(e, depth + 1)) {
                    return false;
                }
            }
            return true;
        }
        if (o instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
                if (!isValue(e.getKey(), depth + 1) || !isValue(e.getValue(), depth + 1)) {
                    return false;
                }
            }
            return true;
        }
        if (o instanceof Object[]) {
            for (Object e : (Object[]) o) {
                if (!isValue(e, depth + 1)) {
                    return false;
                }
            }
            return true;
        }
        return o instanceof int[] || o instanceof long[] || o instanceof double[];
    }
}
