package io.github.rspy.bridge.arrow;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Whether Arrow Java can run here (on the classpath, and its memory usable: JDK 17 must open
 * {@code java.nio} to it), checked once; and each runtime's Arrow allocator. Nothing here names
 * an Arrow type, so a JVM without Arrow loads this class and learns that it has none.
 */
public final class ArrowSupport {
    private static final Logger LOG = Logger.getLogger("io.github.rspy.bridge.arrow");
    private static final boolean AVAILABLE = probe();

    private ArrowSupport() {}

    public static boolean available() {
        return AVAILABLE;
    }

    private static boolean probe() {
        try {
            return Allocators.probe();
        } catch (LinkageError | RuntimeException e) {
            LOG.log(Level.FINE, "Arrow Java is not usable here: rows cross pickled", e);
            return false;
        }
    }

    /**
     * Every Arrow allocator the bridge and the Spark connectors make: one per runtime, the
     * sink's, and each one the source, its partitions and the Connect plugin open, all children
     * of one root, so that what a runtime holds, and what all of them hold, can be counted.
     */
    public static final class Allocators {
        private static final org.apache.arrow.memory.RootAllocator ROOT = new org.apache.arrow.memory.RootAllocator();

        private Allocators() {}

        static boolean probe() {
            try (org.apache.arrow.memory.BufferAllocator a = ROOT.newChildAllocator("probe", 0, 64)) {
                a.buffer(8).close(); // direct memory: fails without java.nio opened to Arrow
            }
            return true;
        }

        public static Object newChild(String name) {
            return ROOT.newChildAllocator(name, 0, Long.MAX_VALUE);
        }

        /** Bytes held by every allocator made here, child allocators included. */
        public static long allocatedBytes() {
            return ROOT.getAllocatedMemory();
        }
    }
}
