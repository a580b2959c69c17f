package io.github.rspy.spark.common;

import io.github.rspy.bridge.BridgeRuntime;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;

/** Ties a bridge to its SparkContext: when the context stops, the bridge's streams end. */
public final class SparkLifecycle {
    private SparkLifecycle() {}

    /**
     * Closes {@code runtime} (its close listeners first) when {@code context} stops; closing the
     * returned watch removes the listener again (a closed bridge leaves nothing registered).
     */
    public static AutoCloseable watch(BridgeRuntime runtime, SparkContext context) {
        SparkListener listener = new SparkListener() {
            @Override
            public void onApplicationEnd(SparkListenerApplicationEnd end) {
                runtime.close("the SparkContext stopped");
            }
        };
        context.addSparkListener(listener);
        return () -> context.removeSparkListener(listener);
    }
}
