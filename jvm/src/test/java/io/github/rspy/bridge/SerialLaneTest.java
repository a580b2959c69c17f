package io.github.rspy.bridge;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

public class SerialLaneTest {
    /** Long enough that a thread the machine does not run for a while is not taken for a stuck task. */
    private static final long STALL_MILLIS = 100;
    private ExecutorService pool;
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger mostInside = new AtomicInteger();

    @BeforeMethod
    public void startPool() {
        pool = Executors.newFixedThreadPool(4);
        inside.set(0);
        mostInside.set(0);
    }

    @AfterMethod
    public void stopPool() throws InterruptedException {
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** A task that notes how many tasks of the lane run at once, taking {@code micros}. */
    private Runnable counted(long micros, Runnable also) {
        return () -> {
            mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
            long end = System.nanoTime() + micros * 1000;
            while (System.nanoTime() < end) {
                Thread.onSpinWait();
            }
            also.run();
            inside.decrementAndGet();
        };
    }

    @Test
    public void runsTasksOneAtATimeInOrderWhateverThreadGivesThem() throws InterruptedException {
        SerialLane lane = new SerialLane(pool, 4, 10 * STALL_MILLIS);
        List<Integer> ran = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(4000);
        Thread[] submitters = new Thread[4];
        for (int t = 0; t < submitters.length; t++) {
            int base = t * 1000;
            submitters[t] = new Thread(() -> {
                for (int i = 0; i < 1000; i++) {
                    int n = base + i;
                    lane.execute(counted(5, () -> {
                        ran.add(n);
                        done.countDown();
                    }));
                }
            });
            submitters[t].start();
        }
        for (Thread t : submitters) {
            t.join();
        }
        assertTrue(done.await(30, TimeUnit.SECONDS));
        assertEquals(mostInside.get(), 1); // no task was stuck: the lane stayed one wide
        for (int t = 0; t < 4; t++) { // each submitter's tasks in the order it gave them
            int base = t * 1000;
            List<Integer> mine = ran.stream().filter(n -> n / 1000 == base / 1000).toList();
            assertEquals(mine.size(), 1000);
            for (int i = 0; i < 1000; i++) {
                assertEquals((int) mine.get(i), base + i);
            }
        }
    }

    @Test
    public void aStuckTaskLetsAnotherThreadRunTheTasksBehindIt() throws InterruptedException {
        SerialLane lane = new SerialLane(pool, 4, STALL_MILLIS);
        CountDownLatch release = new CountDownLatch(1);
        runStuck(lane, release);
        CountDownLatch others = new CountDownLatch(100);
        for (int i = 0; i < 100; i++) {
            lane.execute(counted(0, others::countDown));
        }
        assertTrue(others.await(10, TimeUnit.SECONDS), "the tasks behind a stuck one waited for it");
        assertEquals(release.getCount(), 1); // ...while it was still stuck
        assertTrue(lane.drainers() <= 2, "drainers: " + lane.drainers());
        release.countDown();
    }

    @Test
    public void theLaneNarrowsToOneWhenTheStuckTaskReturnsWhileItStillHasWork() throws InterruptedException {
        SerialLane lane = new SerialLane(pool, 4, STALL_MILLIS);
        CountDownLatch release = new CountDownLatch(1);
        runStuck(lane, release);
        // Work behind the stuck task, enough to keep a second drainer busy past its return.
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger countFrom = new AtomicInteger(Integer.MAX_VALUE);
        AtomicInteger insideLater = new AtomicInteger();
        AtomicInteger mostInsideLater = new AtomicInteger();
        CountDownLatch hundred = new CountDownLatch(100);
        CountDownLatch all = new CountDownLatch(20_000);
        for (int i = 0; i < 20_000; i++) {
            lane.execute(() -> {
                boolean later = ran.incrementAndGet() > countFrom.get();
                if (later) {
                    mostInsideLater.accumulateAndGet(insideLater.incrementAndGet(), Math::max);
                }
                long end = System.nanoTime() + 20_000;
                while (System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
                if (later) {
                    insideLater.decrementAndGet();
                }
                hundred.countDown();
                all.countDown();
            });
        }
        assertTrue(hundred.await(10, TimeUnit.SECONDS)); // a second drainer took them
        assertTrue(lane.drainers() >= 2, "drainers: " + lane.drainers());
        // The stuck task returns while the lane is busy: one drainer must leave, so that the
        // rest runs one at a time again (counted from a few tasks after the release).
        release.countDown();
        // Counted once one drainer is left (a loaded machine may take a while to run the
        // released one back into the lane), or after 5 s if none leaves: then two run at once.
        long narrowed = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (lane.drainers() > 1 && System.nanoTime() < narrowed && all.getCount() > 2_000) {
            Thread.sleep(1);
        }
        countFrom.set(ran.get() + 20);
        assertTrue(all.await(30, TimeUnit.SECONDS));
        assertTrue(ran.get() > countFrom.get() + 1000, "too little was left to count: " + countFrom.get());
        assertEquals(mostInsideLater.get(), 1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lane.drainers() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(lane.drainers(), 0); // idle: no drainer left behind
    }

    @Test
    public void aDrainerThePoolRefusesIsNotCounted() {
        SerialLane lane = new SerialLane(pool, 4, STALL_MILLIS);
        pool.shutdown(); // BridgeRuntime gives the lane nothing once its pool is shut down
        AtomicInteger ran = new AtomicInteger();
        lane.execute(ran::incrementAndGet);
        assertEquals(ran.get(), 0); // never on the caller's stack (§3.3)
        assertEquals(lane.drainers(), 0);
    }

    /** Gives {@code lane} a task that stays inside until {@code release}, and waits until it is. */
    private static void runStuck(SerialLane lane, CountDownLatch release) throws InterruptedException {
        CountDownLatch stuck = new CountDownLatch(1);
        lane.execute(() -> {
            stuck.countDown();
            awaitQuietly(release);
        });
        assertTrue(stuck.await(10, TimeUnit.SECONDS));
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
