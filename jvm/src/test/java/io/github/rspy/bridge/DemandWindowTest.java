package io.github.rspy.bridge;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertThrows;

import org.testng.annotations.Test;

public class DemandWindowTest {
    private static final long MAX = Long.MAX_VALUE;

    @Test
    public void nothingIsForwardedWithoutDemand() {
        DemandWindow window = new DemandWindow(8);
        assertEquals(window.take(0), 0);
        assertEquals(window.forwarded(), 0);
    }

    @Test
    public void forwardsAtMostTheWindowAndRefillsByHalves() {
        DemandWindow window = new DemandWindow(4);
        window.add(10);
        assertEquals(window.take(0), 4); // a full window in flight
        assertEquals(window.take(0), 0);
        assertEquals(window.take(1), 0); // 3 in flight: less than half the window is free
        assertEquals(window.take(2), 2); // half arrived: refill to a full window
        assertEquals(window.take(6), 4);
        assertEquals(window.forwarded(), 10);
        assertEquals(window.take(10), 0); // all of it forwarded: never more (§1.1)
        assertEquals(window.forwarded(), 10);
    }

    @Test
    public void forwardsLessThanTheWindowAtOnceWhenThatIsAllThatWasRequested() {
        DemandWindow window = new DemandWindow(100);
        window.add(3);
        window.add(2); // added, not kept with max (§3.8)
        assertEquals(window.take(0), 5);
        window.add(1);
        assertEquals(window.take(0), 1); // little in flight: more goes at once
        assertEquals(window.forwarded(), 6);
    }

    @Test
    public void unboundedDemandIsNeverUsedUp() { // §3.17
        DemandWindow window = new DemandWindow(4);
        window.add(MAX - 1);
        window.add(5); // capped: unbounded from here on
        long arrived = 0;
        for (int i = 0; i < 1000; i++) {
            long n = window.take(arrived);
            assertEquals(n, 4);
            arrived += n;
        }
        assertEquals(window.forwarded(), 4000);
    }

    @Test
    public void demandAddedWhileElementsAreInFlightIsKept() {
        DemandWindow window = new DemandWindow(4);
        window.add(4);
        assertEquals(window.take(0), 4);
        window.add(MAX); // a finite demand pending plus unbounded: unbounded, not wrapped
        assertEquals(window.take(4), 4);
        assertEquals(window.take(8), 4);
    }

    @Test
    public void aWindowHoldsAtLeastOneElement() {
        assertThrows(IllegalArgumentException.class, () -> new DemandWindow(0));
        DemandWindow one = new DemandWindow(1);
        one.add(2);
        assertEquals(one.take(0), 1);
        assertEquals(one.take(0), 0);
        assertEquals(one.take(1), 1);
    }
}
