package io.github.rspy.bridge;

import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertNull;
import static org.testng.Assert.assertSame;
import static org.testng.Assert.assertThrows;
import static org.testng.Assert.assertTrue;
import static org.testng.Assert.expectThrows;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.testng.annotations.Test;

public class BridgeRuntimeLingerTest {
    /** A linger outside 0 to 1 s is refused, naming the range, and the linger set before stays. */
    @Test
    public void aLingerOutOfRangeIsRefusedAndTheOneBeforeKept() {
        BridgeRuntime runtime = new BridgeRuntime(64, 64, 1);
        try {
            Executor before = runtime.lingerer();
            assertNotNull(before, "a runtime lingers by default");
            IllegalArgumentException e = expectThrows(IllegalArgumentException.class, () -> runtime.lingerMicros(-1));
            assertTrue(e.getMessage().contains("0 to 1,000,000 µs, got -1"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> runtime.lingerMicros(1_000_001));
            assertSame(runtime.lingerer(), before);
        } finally {
            runtime.close();
        }
    }

    /** 0 means no linger at all; a linger set runs its task once that time has passed, not before. */
    @Test
    public void zeroTurnsTheLingerOffAndALingerSetWaitsItsTime() throws InterruptedException {
        BridgeRuntime runtime = new BridgeRuntime(64, 64, 1);
        try {
            runtime.lingerMicros(0);
            assertNull(runtime.lingerer());
            runtime.lingerMicros(200_000);
            CountDownLatch ran = new CountDownLatch(1);
            long start = System.nanoTime();
            runtime.lingerer().execute(ran::countDown);
            assertTrue(ran.await(10, TimeUnit.SECONDS), "the linger's task never ran");
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(waited >= 190, "a 200 ms linger ran its task after " + waited + " ms");
        } finally {
            runtime.close();
        }
    }
}
