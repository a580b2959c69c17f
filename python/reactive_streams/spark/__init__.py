"""Spark interop: the bridge inside PySpark's own JVM gateway.

from pyspark.sql import SparkSession
from reactive_streams import spark as rss
spark = rss.configure(SparkSession.builder).getOrCreate()
"""

from ._configure import configure as configure
from ._configure import spark_classpath as spark_classpath

__all__ = ["configure", "spark_classpath"]
