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
import net.razorvine.pickle.Pickler;
import net.razorvine.pickle.Unpickler;

/**
 * Elements cross the boundary in batches, each one {@code byte[]} led by a tag byte:
 * {@code 'q'} a run of little-endian 64-bit integers (every element an Integer or Long, the
 * common case, decoded in C on the Python side), {@code 'd'} of 64-bit floats, {@code 'P'} a
 * pickle of a Python list (Pyrolite, which Spark also carries) for any other batch of values
 * (null, booleans, numbers, strings, byte arrays, and lists, maps and arrays of values). A batch
 * holding anything else crosses as an {@code Object[]} of references instead.
 *
 * <p>Integers decode as Python does them for Java too: an Integer when they fit in 32 bits, a
 * Long otherwise (BigInteger beyond 64 bits, through the pickle).
 */
final class Codec {
    static final byte LONGS = 'q';
    static final byte DOUBLES = 'd';
    static final byte PICKLE = 'P';
    private static final int MAX_DEPTH = 32;

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
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream(16 * length + 16);
            out.write(PICKLE);
            new Pickler(false).dump(Arrays.asList(batch).subList(0, length), out);
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
