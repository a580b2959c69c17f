"""A JVM factory's partitions (a PartitionedPublishers class on the server's classpath), read
in the executors' JVMs with no Python in the data path."""

from pyspark import pipelines as dp

FACTORY = spark.conf.get("rspy.example.factory")  # noqa: F821 (spark: set by the CLI)


@dp.table
def jvm_offsets():
    return (
        spark.readStream.format("reactive-streams")  # noqa: F821
        .option("factory", FACTORY)
        .option("maxRecordsPerTrigger", 1500)
        .schema("p INT, offset LONG, pid LONG")
        .load()
    )
