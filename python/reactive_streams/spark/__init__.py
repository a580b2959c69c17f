"""Spark interop: the bridge inside PySpark's own JVM gateway.

from pyspark.sql import SparkSession
from reactive_streams import spark as rss
spark = rss.configure(SparkSession.builder).getOrCreate()
"""

from ._configure import configure as configure
from ._configure import spark_classpath as spark_classpath
from ._dataframe import arrow_batches_from_dataframe as arrow_batches_from_dataframe
from ._dataframe import dataframe_from_publisher as dataframe_from_publisher
from ._dataframe import publisher_from_dataframe as publisher_from_dataframe

__all__ = [
    "arrow_batches_from_dataframe",
    "configure",
    "dataframe_from_publisher",
    "publisher_from_dataframe",
    "spark_classpath",
]
