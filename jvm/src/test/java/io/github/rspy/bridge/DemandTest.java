package io.github.rspy.bridge;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertThrows;
import static org.testng.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.testng.annotations.Test;

public class DemandTest {
    private static final long MAX = Long.MAX_VALUE;

    @Test
    public void addCapSumsAndSaturatesAtLongMax() { // §3.17
        assertEquals(Demand.addCap(2, 3), 5);
        assertEquals(Demand.addCap(MAX - 1, 1), MAX);
        assertEquals(Demand.addCap(MAX - 1, 2), MAX);
        assertEquals(Demand.addCap(MAX, MAX), MAX);
        assertEquals(Demand.addCap(1, MAX), MAX);
    }

    @Test
    public void multiplyCapSaturatesAtLongMax() {
        assertEquals(Demand.multiplyCap(1000, 3), 3000);
        assertEquals(Demand.multiplyCap(MAX, 0), 0);
        assertEquals(Demand.multiplyCap(MAX / 2, 2), MAX - 1);
        assertEquals(Demand.multiplyCap(MAX / 2 + 1, 2), MAX);
        assertEquals(Demand.multiplyCap(MAX, MAX), MAX);
    }

    @Test
    public void addSumsRequestsAndReturnsTheDemandBefore() { // §3.8: added, not kept with max
        AtomicLong demand = new AtomicLong();
        assertEquals(Demand.add(demand, 3), 0);
        assertEquals(Demand.add(demand, 2), 3);
        assertEquals(demand.get(), 5);
    }

    @Test
    public void addCapsAFiniteDemandAtLongMax() { // §3.17
        AtomicLong demand = new AtomicLong(10);
        assertEquals(Demand.add(demand, MAX), 10);
        assertEquals(demand.get(), MAX);
        assertEquals(Demand.add(demand, MAX), MAX);
        assertEquals(Demand.add(demand, 1), MAX);
        assertEquals(demand.get(), MAX);
    }

    @Test
    public void concurrentAddsAreAllCounted() throws InterruptedException {
        AtomicLong demand = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(new Thread(() -> {
                for (int i = 0; i < 10_000; i++) {
                    Demand.add(demand, 1);
                }
            }));
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join();
        }
        assertEquals(demand.get(), 40_000);
    }

    @Test
    public void producedSubtractsAndReturnsWhatIsLeft() {
        AtomicLong demand = new AtomicLong(5);
        assertEquals(Demand.produced(demand, 3), 2);
        assertEquals(Demand.produced(demand, 2), 0);
        assertEquals(demand.get(), 0);
    }

    @Test
    public void producedNeverUsesUpUnboundedDemand() { // §3.17
        AtomicLong demand = new AtomicLong(MAX);
        assertEquals(Demand.produced(demand, 1_000_000), MAX);
        assertEquals(demand.get(), MAX);
    }

    @Test
    public void producingMoreThanRequestedIsReportedNotWrapped() { // §1.1
        AtomicLong demand = new AtomicLong(2);
        assertThrows(IllegalStateException.class, () -> Demand.produced(demand, 3));
        assertEquals(demand.get(), 2);
    }

    @Test
    public void illegalRequestCitesTheRuleAndTheArgument() { // §3.9
        IllegalArgumentException zero = Demand.illegalRequest(0);
        assertEquals(zero.getMessage(),
                "§3.9: request(n) must be called with n > 0 (non-positive requests are illegal), got 0");
        assertTrue(Demand.illegalRequest(-7).getMessage().endsWith("got -7"));
        assertEquals(Demand.illegalRequest(0, "sink 'x'").getMessage(), zero.getMessage() + " (sink 'x')");
    }
}
