package io.github.rspy.bridge;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.lang.reflect.Field;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.testng.annotations.Test;

public class BridgeRuntimeCloseTest {
    private static ThreadPoolExecutor poolOf(BridgeRuntime runtime) throws ReflectiveOperationException {
        Field executor = BridgeRuntime.class.getDeclaredField("executor");
        executor.setAccessible(true);
        return (ThreadPoolExecutor) executor.get(runtime);
    }

    /**
     * The pool makes a thread it never starts when a task comes as it shuts down: close() must
     * not wait out its time for that one (it did, 5 s, when threads were counted as made).
     */
    @Test
    public void closeDoesNotWaitForADrainThreadThePoolMadeAndNeverStarted() throws Exception {
        BridgeRuntime runtime = new BridgeRuntime(64, 64, 2);
        Thread neverStarted = poolOf(runtime).getThreadFactory().newThread(() -> {});
        long start = System.nanoTime();
        runtime.close();
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(neverStarted.getState(), Thread.State.NEW);
        assertEquals(runtime.drainThreads(), 0L);
        assertTrue(millis < 2000, "close() took " + millis + " ms");
    }

    /** The threads that did start are waited for, to the end of their last call. */
    @Test
    public void closeWaitsForTheDrainThreadsThatRan() throws Exception {
        BridgeRuntime runtime = new BridgeRuntime(64, 64, 2);
        CountDownLatch running = new CountDownLatch(2);
        for (int i = 0; i < 2; i++) {
            assertTrue(runtime.execute(() -> {
                running.countDown();
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        assertTrue(running.await(10, TimeUnit.SECONDS));
        runtime.close();
        assertEquals(runtime.drainThreads(), 0L);
        assertTrue(poolOf(runtime).isTerminated());
    }
}
