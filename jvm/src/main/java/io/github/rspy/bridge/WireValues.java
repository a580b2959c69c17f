package io.github.rspy.bridge;

/**
 * The public face of the bridge's batch encoding and decoding ({@link Codec}, package-private), for code that
 * sends elements to Python over another channel than the bridge's own: the Spark Connect plugin
 * sends exactly these bytes in its {@code Elements} replies, so the Python side decodes them
 * with the bridge's decoder.
 */
public final class WireValues {
    private WireValues() {}

    /**
     * The first {@code length} elements of {@code batch} as one tagged byte array ({@code 'q'}
     * longs, {@code 'd'} doubles, {@code 'P'} a pickled list), or null if an element is not a
     * value (see {@link #isValue}).
     */
    public static byte[] encode(Object[] batch, int length) {
        return Codec.encodeValues(batch, length);
    }

    /**
     * A tagged batch that Python's encoder made (what {@link #encode} makes), as Java objects:
     * ints and longs, doubles, strings, byte arrays, booleans, nulls, BigDecimals, LocalDates,
     * LocalDateTimes (naive datetimes), Instants (aware ones), UUIDs; tuples as {@code Object[]},
     * lists as {@code List}, dicts as {@code Map}.
     *
     * @throws IllegalArgumentException if the bytes are not such a batch
     */
    public static java.util.List<?> decode(byte[] payload) {
        return Codec.decode(payload);
    }

    /**
     * Whether {@code element} can cross as a value: null, a string, a number, a boolean, a byte
     * array, a date, a time or a UUID Python can hold, or a list, map or array of values.
     */
    public static boolean isValue(Object element) {
        return Codec.isValue(element, 0);
    }
}
