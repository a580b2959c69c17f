package io.github.rspy.bridge;

import io.github.rspy.bridge.arrow.JavaValues;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.util.List;
import java.util.UUID;
import net.razorvine.pickle.IObjectDeconstructor;
import net.razorvine.pickle.IObjectPickler;
import net.razorvine.pickle.Opcodes;
import net.razorvine.pickle.PickleException;
import net.razorvine.pickle.Pickler;
import net.razorvine.pickle.Unpickler;

/**
 * Pickles of the bridge's values beyond what Pyrolite does on its own, both ways: dates, times
 * and UUIDs as Python's own types (see {@link JavaValues}), and, in a batch that holds JVM objects
 * with no Python equivalent, those objects as references.
 *
 * <p>A date, a time or a UUID is pickled as a call of a function of Python's {@code
 * reactive_streams.jvm._values} ({@code local_date(days)}, {@code local_date_time(micros)},
 * {@code instant(micros)}, {@code uuid_of(high, low)}), which Python's pickles of them call too:
 * Pyrolite finds those names among its constructors, registered here once. Only these private
 * names are registered, never Python's own ({@code datetime.date}, ...), which Spark's unpickling,
 * in the same JVM, reads as it always has.
 *
 * <p>A reference is a persistent id: the index of the object in the list of references that
 * crosses with the pickle, where Python's unpickler finds it.
 */
final class PickledValues {
    static final String MODULE = "reactive_streams.jvm._values";
    private static final String[] FUNCTIONS = {"local_date", "local_date_time", "instant", "uuid_of"};
    private static final int DATE = 0;
    private static final int LOCAL = 1;
    private static final int INSTANT = 2;
    private static final int UUIDS = 3;

    static {
        Unpickler.registerConstructor(MODULE, FUNCTIONS[DATE], args -> JavaValues.date(longAt(args, 0)));
        Unpickler.registerConstructor(MODULE, FUNCTIONS[LOCAL], args -> JavaValues.localDateTime(longAt(args, 0)));
        Unpickler.registerConstructor(MODULE, FUNCTIONS[INSTANT], args -> JavaValues.instant(longAt(args, 0)));
        Unpickler.registerConstructor(MODULE, FUNCTIONS[UUIDS], args -> new UUID(longAt(args, 0), longAt(args, 1)));
    }

    private PickledValues() {}

    /** Registers the constructors (the class's initialization does), before the first unpickling. */
    static void register() {}

    private static long longAt(Object[] args, int i) {
        if (args.length <= i || !(args[i] instanceof Integer || args[i] instanceof Long)) {
            throw new PickleException("a value of " + MODULE + " with arguments it does not take: "
                    + java.util.Arrays.toString(args));
        }
        return ((Number) args[i]).longValue();
    }

    /** Whether {@code v} is a date, a time or a UUID that crosses as Python's own. */
    static boolean isTimeOrUuid(Object v) {
        return v instanceof UUID || JavaValues.isTime(v);
    }

    /**
     * A Pickler of the bridge's values. Without a list of references it takes values only (the
     * caller checked them, {@link Codec#isValue}); with one, any object that is not a value at
     * its place (see {@link Codec#isShallowValue}) is added to it and pickled as its index.
     */
    static final class ValuePickler extends Pickler {
        private final List<Object> references;
        private int memoized; // bit i: FUNCTIONS[i] is in the pickle's memo, at index i

        ValuePickler(List<Object> references) {
            super(false); // no memo of Pyrolite's: these indexes are ours
            this.references = references;
        }

        @Override
        public void save(Object o) throws PickleException, IOException {
            if (references != null && !isValueHere(o)) {
                int id = references.size();
                references.add(o);
                super.save(id);
                out.write(Opcodes.BINPERSID);
                return;
            }
            super.save(o);
        }

        /** Whether {@code o} crosses by value where it is: {@code recurse}, Pyrolite's, is its depth. */
        private boolean isValueHere(Object o) {
            // 1 for an element of the batch's list, 2 for a value in it, ...: deeper, atoms only
            return recurse <= Codec.MAX_DEPTH ? Codec.isShallowValue(o) : Codec.isValue(o, Codec.MAX_DEPTH);
        }

        private final IObjectPickler dates = (o, out, pickler) -> call(DATE, JavaValues.epochDay(o));
        private final IObjectPickler localTimes = (o, out, pickler) ->
                call(LOCAL, JavaValues.localMicros((LocalDateTime) o));
        private final IObjectPickler instants = (o, out, pickler) ->
                call(INSTANT, JavaValues.micros(JavaValues.instantOf(o)));
        private final IObjectPickler uuids = (o, out, pickler) ->
                call(UUIDS, ((UUID) o).getMostSignificantBits(), ((UUID) o).getLeastSignificantBits());

        @Override
        protected IObjectPickler getCustomPickler(Class<?> t) {
            if (t == String.class) {
                return null; // the common case, first
            }
            if (t == java.time.LocalDate.class || t == java.sql.Date.class) {
                return dates;
            }
            if (t == LocalDateTime.class) {
                return localTimes;
            }
            if (t == UUID.class) {
                return uuids;
            }
            if (t == java.time.Instant.class || t == java.time.OffsetDateTime.class
                    || t == java.time.ZonedDateTime.class || java.util.Date.class.isAssignableFrom(t)) {
                return instants; // java.sql.Time never comes here: not a value
            }
            return null; // and never one another library registered: the bridge's pickles are its own
        }

        @Override
        protected IObjectDeconstructor getCustomDeconstructor(Class<?> t) {
            return null;
        }

        /** {@code FUNCTIONS[function](args...)}: the function memoized after its first use. */
        private void call(int function, long... args) throws IOException {
            if (args[0] == JavaValues.NONE) { // isValue/isShallowValue let no such value through
                throw new PickleException("a date or time outside Python's years 1 to 9999");
            }
            if ((memoized & (1 << function)) != 0) {
                out.write(Opcodes.BINGET);
                out.write(function);
            } else {
                out.write(Opcodes.GLOBAL);
                out.write((MODULE + "\n" + FUNCTIONS[function] + "\n").getBytes(StandardCharsets.US_ASCII));
                out.write(Opcodes.BINPUT);
                out.write(function);
                memoized |= 1 << function;
            }
            out.write(Opcodes.MARK);
            for (long arg : args) {
                super.save(arg);
            }
            out.write(Opcodes.TUPLE);
            out.write(Opcodes.REDUCE);
        }
    }
}
