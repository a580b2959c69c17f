package io.github.rspy.bridge;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertTrue;

import io.github.rspy.bridge.arrow.ArrowRows;
import io.github.rspy.bridge.arrow.OwnedElements;
import io.github.rspy.bridge.arrow.RowsFromPython;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.testng.annotations.Test;

/**
 * Arrow rows from Python made on the pool while Python encodes the next batch: made once, by
 * whoever comes first, and their loaded batches freed in every case, a cancel's too.
 */
public class RowsMadeAheadTest {
    private static final int ROWS = 100;

    /** {@code n} rows ({@code long}, {@code String}) loaded as they arrive from Python. */
    private static OwnedElements loaded(BufferAllocator allocator, int n) {
        Object[] rows = new Object[n];
        for (int i = 0; i < n; i++) {
            rows[i] = new Object[] {(long) i, "row " + i};
        }
        return RowsFromPython.decodeColumns(allocator, ArrowRows.encode(allocator, rows, n, 1));
    }

    private static void assertRows(List<Object> rows) {
        assertEquals(rows.size(), ROWS);
        for (int i = 0; i < ROWS; i++) {
            Object[] row = (Object[]) rows.get(i);
            assertEquals(row[0], i); // a Python int within 32 bits: an Integer, as pickled
            assertEquals(row[1], "row " + i);
        }
    }

    @Test
    public void theThreadItIsOfferedToMakesTheRowsAndFreesTheBatches() throws Exception {
        try (BufferAllocator allocator = new RootAllocator()) {
            AtomicInteger madeAhead = new AtomicInteger();
            RowsMadeAhead rows = new RowsMadeAhead(loaded(allocator, ROWS), madeAhead::incrementAndGet);
            assertEquals(rows.count(), ROWS);
            Thread[] thread = new Thread[1];
            rows.offerTo(task -> {
                thread[0] = new Thread(task);
                thread[0].start();
                return true;
            });
            thread[0].join(10_000);
            assertTrue(rows.isMade());
            assertEquals(madeAhead.get(), 1);
            assertEquals(allocator.getAllocatedMemory(), 0); // freed once made, before they are taken
            assertRows(rows.rows());
        }
    }

    @Test
    public void theTakerMakesTheRowsWhenThePoolRefuses() {
        try (BufferAllocator allocator = new RootAllocator()) {
            AtomicInteger madeAhead = new AtomicInteger();
            RowsMadeAhead rows = new RowsMadeAhead(loaded(allocator, ROWS), madeAhead::incrementAndGet);
            rows.offerTo(task -> false);
            assertFalse(rows.isMade());
            assertRows(rows.rows());
            assertEquals(madeAhead.get(), 0); // not ahead: the taker made them
            assertEquals(allocator.getAllocatedMemory(), 0);
        }
    }

    @Test
    public void rowsNeverMadeAreFreedWhenClosedAndThePoolsTaskThenDoesNothing() {
        try (BufferAllocator allocator = new RootAllocator()) {
            AtomicInteger madeAhead = new AtomicInteger();
            RowsMadeAhead rows = new RowsMadeAhead(loaded(allocator, ROWS), madeAhead::incrementAndGet);
            List<Runnable> held = new ArrayList<>();
            rows.offerTo(held::add); // a busy pool: the task waits in its queue
            assertTrue(allocator.getAllocatedMemory() > 0);
            rows.closeUndelivered(); // a cancel
            assertEquals(allocator.getAllocatedMemory(), 0);
            held.get(0).run(); // the pool comes to it after all
            assertEquals(madeAhead.get(), 0);
            assertEquals(allocator.getAllocatedMemory(), 0);
        }
    }

    @Test
    public void closingWaitsForRowsBeingMadeSoTheirMemoryIsBackWhenItReturns() throws Exception {
        try (BufferAllocator allocator = new RootAllocator()) {
            CountDownLatch making = new CountDownLatch(1);
            CountDownLatch mayFinish = new CountDownLatch(1);
            RowsMadeAhead rows = new RowsMadeAhead(loaded(allocator, ROWS), () -> {
                making.countDown();
                try {
                    mayFinish.await(); // the pool's thread is inside the making
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            rows.offerTo(task -> {
                new Thread(task).start();
                return true;
            });
            assertTrue(making.await(10, TimeUnit.SECONDS));
            Thread closing = new Thread(rows::closeUndelivered);
            closing.start();
            closing.join(300);
            assertTrue(closing.isAlive(), "closeUndelivered returned while the rows were still being made");
            mayFinish.countDown();
            closing.join(10_000);
            assertFalse(closing.isAlive());
            assertEquals(allocator.getAllocatedMemory(), 0);
        }
    }
}
