package io.github.rspy.spark.testing;

import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.sql.streaming.StreamingQueryListener;

/**
 * A listener ({@code spark.extraListeners}) that holds Spark's shared listener queue for a second
 * on each streaming query's end: the listeners after it, the sink's among them, hear of the end
 * that much after {@code query.stop()} returned, as they may on a loaded machine.
 */
public final class SlowQueryEnds extends SparkListener {
    private static final long DELAY_MILLIS = 1000;

    @Override
    public void onOtherEvent(SparkListenerEvent event) {
        if (event instanceof StreamingQueryListener.QueryTerminatedEvent) {
            try {
                Thread.sleep(DELAY_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
