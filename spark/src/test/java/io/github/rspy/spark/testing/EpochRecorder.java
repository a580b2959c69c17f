package io.github.rspy.spark.testing;

import io.github.rspy.spark.sink.SinkEpochs;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A JVM subscriber of the sink for the Python tests: records each row's first column (a long)
 * with the epoch and query id its {@link SinkEpochs} subscription gives, as "value epoch id".
 */
public final class EpochRecorder implements Subscriber<Row> {
    private final long demand;
    private final List<String> lines = new ArrayList<>(); // guarded by this
    private volatile SinkEpochs subscription;

    public EpochRecorder(long demand) {
        this.demand = demand;
    }

    @Override
    public void onSubscribe(Subscription s) {
        subscription = (SinkEpochs) s;
        s.request(demand);
    }

    @Override
    public synchronized void onNext(Row row) {
        lines.add(row.getLong(0) + " " + subscription.epoch() + " " + subscription.queryId());
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onComplete() {}

    public synchronized int size() {
        return lines.size();
    }

    public synchronized List<String> lines() {
        return new ArrayList<>(lines);
    }
}
