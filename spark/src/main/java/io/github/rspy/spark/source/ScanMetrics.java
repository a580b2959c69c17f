package io.github.rspy.spark.source;

import java.util.Map;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/**
 * The {@code reactive-streams} source's figures as DSv2 custom metrics of its scan, which
 * Spark's UI shows on the scan's node of each micro-batch's plan (SQL tab): the driver reports
 * them once the batch is planned ({@code Scan.reportDriverMetrics}). Spark makes each metric
 * class by name (a public no-argument constructor) to aggregate its values.
 */
public final class ScanMetrics {
    private ScanMetrics() {}

    /** A figure of the source: its progress metric's name, and the label Spark's UI shows. */
    abstract static class Figure extends CustomSumMetric {
        private final String name;
        private final String description;

        Figure(String name, String description) {
            this.name = name;
            this.description = "reactive-streams: " + description;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String description() {
            return description;
        }
    }

    /** Demand signalled to the publisher and not yet met. */
    public static final class OutstandingDemand extends Figure {
        public OutstandingDemand() {
            super("outstandingDemand", "outstanding demand");
        }
    }

    /** Elements received and not yet committed. */
    public static final class BufferedElements extends Figure {
        public BufferedElements() {
            super("bufferedElements", "elements held");
        }
    }

    /** Elements the publisher emitted to this run. */
    public static final class EmittedElements extends Figure {
        public EmittedElements() {
            super("emittedElements", "elements emitted");
        }
    }

    static final CustomMetric[] SUPPORTED = {new OutstandingDemand(), new BufferedElements(), new EmittedElements()};

    /** The supported metrics' values in {@code metrics} (a source's progress metrics). */
    static CustomTaskMetric[] values(Map<String, String> metrics) {
        CustomTaskMetric[] values = new CustomTaskMetric[SUPPORTED.length];
        for (int i = 0; i < SUPPORTED.length; i++) {
            String name = SUPPORTED[i].name();
            long value = Long.parseLong(metrics.getOrDefault(name, "0"));
            values[i] = new CustomTaskMetric() {
                @Override
                public String name() {
                    return name;
                }

                @Override
                public long value() {
                    return value;
                }
            };
        }
        return values;
    }

    /** The metrics Spark's UI shows for a scan of {@code source}, or none before the query starts it. */
    public static CustomTaskMetric[] reported(PublisherSource source) {
        return source == null ? new CustomTaskMetric[0] : values(source.metrics(java.util.Optional.empty()));
    }

    public static CustomMetric[] supported() {
        return SUPPORTED.clone();
    }
}
