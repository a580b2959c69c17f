package io.github.rspy.bridge;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import net.razorvine.pickle.PickleException;
import net.razorvine.pickle.Unpickler;

/**
 * Elements cross the boundary in batches, each one {@code byte[]} led by a tag byte:
 * {@code 'q'} a run of little-endian 64-bit integers (every element an Integer or Long, the
 * common case, decoded in C on the Python side), {@code 'd'} of 64-bit floats, {@code 'P'} a
 * pickle of a Python list (Pyrolite, which Spark also carries) for any other batch of values
 * (null, booleans, numbers, strings, byte arrays, dates, times, UUIDs, and lists, maps and
 * arrays of values; see {@link PickledValues}). A batch holding JVM objects with no Python
 * equivalent is pickled too, with those objects as references beside it ({@link
 * #encodeWithReferences}); one of such objects only crosses as an {@code Object[]} of references.
 *
 * <p>Integers decode as Python does them for Java too: an Integer when they fit in 32 bits, a
 * Long otherwise (BigInteger beyond 64 bits, through the pickle).
 */
final class Codec {
    static final byte LONGS = 'q';
    static final byte DOUBLES = 'd';
    static final byte PICKLE = 'P';
    /** Values nest at most this deep; deeper, a list or map is not a value (nor a cycle, then). */
    static final int MAX_DEPTH = 32;

    static {
        PickledValues.register(); // before the first pickle from Python names its functions
    }

    private Codec() {}

    /** The batch as a tagged byte array, or null if an element is not a value. */
    static byte[] encodeValues(Object[] batch, int length) {
        boolean integers = true;
        boolean doubles = true;
        for (int i = 0; i < length; i++) {
            Object o = batch[i];
            integers &= o instanceof Long || o instanceof Integer;
            doubles &= o instanceof Double;
            if (!integers && !doubles && !isValue(o, 0)) {
                return null;
            }
        }
        if (integers || doubles) {
            ByteBuffer out = ByteBuffer.allocate(1 + 8 * length).order(ByteOrder.LITTLE_ENDIAN);
            out.put(integers ? LONGS : DOUBLES);
            for (int i = 0; i < length; i++) {
                if (integers) {
                    out.putLong(((Number) batch[i]).longValue());
                } else {
                    out.putDouble((Double) batch[i]);
                }
            }
            return out.array();
        }
        return pickle(batch, length, null);
    }

    /**
     * The batch pickled with each object that is not a value at its place (see {@link
     * #isShallowValue}) added to {@code references} and pickled as its index there: a row holding
     * one stays a row, and only that object crosses as a reference. Null if the pickler failed.
     */
    static byte[] encodeWithReferences(Object[] batch, int length, List<Object> references) {
        return pickle(batch, length, references);
    }

    private static byte[] pickle(Object[] batch, int length, List<Object> references) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream(16 * length + 16);
            out.write(PICKLE);
            new PickledValues.ValuePickler(references).dump(Arrays.asList(batch).subList(0, length), out);
            return out.toByteArray();
        } catch (IOException | PickleException e) {
            return null;
        }
    }

    /** A tagged batch from Python, as Java objects. */
    static List<?> decode(byte[] payload) {
        if (payload.length == 0) {
            throw new IllegalArgumentException("an empty batch from Python");
        }
        byte tag = payload[0];
        if (tag == LONGS || tag == DOUBLES) {
            ByteBuffer in = ByteBuffer.wrap(payload, 1, payload.length - 1).order(ByteOrder.LITTLE_ENDIAN);
            int n = (payload.length - 1) / 8;
            List<Object> items = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                if (tag == DOUBLES) {
                    items.add(in.getDouble());
                } else {
                    long v = in.getLong();
                    items.add(v == (int) v ? (Object) (int) v : (Object) v);
                }
            }
            return items;
        }
        if (tag != PICKLE) {
            throw new IllegalArgumentException("unknown batch tag " + tag);
        }
        try {
            Object result = new Unpickler().loads(Arrays.copyOfRange(payload, 1, payload.length));
            if (!(result instanceof List)) {
                throw new IllegalArgumentException("expected a pickled list, got " + result.getClass());
            }
            return (List<?>) result;
        } catch (IOException | PickleException e) {
            throw new IllegalArgumentException("cannot unpickle a batch from Python: " + e, e);
        }
    }

    /**
     * Whether {@code o} is a value with all it holds: null, a string, a number, a boolean, a
     * character, a byte array, a date, a time or a UUID Python can hold, or a list, map, set or
     * array of values, nested at most {@link #MAX_DEPTH} deep.
     */
    static boolean isValue(Object o, int depth) {
        if (isAtom(o)) {
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
        return false;
    }

    /**
     * Whether {@code o} crosses by value at its place in a batch that may hold references: a
     * value that holds nothing else, or an array, list or other collection (each element judged
     * on its own), or a map whose keys and a set whose elements are values (Python must hash
     * them: a map or set holding another object crosses as a reference, whole).
     */
    static boolean isShallowValue(Object o) {
        if (isAtom(o) || o instanceof Object[] || o instanceof List) {
            return true;
        }
        if (o instanceof Map) {
            for (Object key : ((Map<?, ?>) o).keySet()) {
                if (!isValue(key, 1)) {
                    return false;
                }
            }
            return true;
        }
        if (o instanceof java.util.Set) {
            return isValue(o, 0);
        }
        return o instanceof Collection;
    }

    private static boolean isAtom(Object o) {
        return o == null || o instanceof String || o instanceof Long || o instanceof Integer
                || o instanceof Double || o instanceof Boolean || o instanceof byte[]
                || o instanceof Short || o instanceof Byte || o instanceof Float || o instanceof BigInteger
                || o instanceof BigDecimal || o instanceof Character
                || o instanceof int[] || o instanceof long[] || o instanceof double[]
                || PickledValues.isTimeOrUuid(o);
    }
}
