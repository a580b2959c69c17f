package io.github.rspy.spark.common;

import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * The Arrow types of the format's rows, the same for the source's batches and the sink's: those
 * of PySpark's {@code df.toArrow()}. Internal to the connectors.
 */
public final class ArrowSchemas {
    /** Of Arrow timestamps: UTC, as PySpark's {@code df.toArrow()} gives them. */
    private static final String ARROW_TIME_ZONE = "UTC";

    private ArrowSchemas() {}

    /** The Arrow schema of rows of {@code schema}. */
    public static Schema arrowSchema(StructType schema) {
        return ArrowUtils.toArrowSchema(schema, ARROW_TIME_ZONE, false, false,
                ArrowUtils.toArrowSchema$default$5());
    }
}
