"""A Spark Connect session has no JVM gateway: the Spark interop refuses it at once, saying so.
(A real local Connect server, in a subprocess: one SparkContext per process.)"""

from __future__ import annotations

import pytest

from .kit import run_script


@pytest.mark.timeout(360)  # a child process, given up to 300 s
def test_spark_connect_sessions_are_refused_with_a_clear_error() -> None:
    outcome, _ = run_script("connect_script.py", [], timeout=300)
    assert outcome["session"] == "pyspark.sql.connect.session"
    assert "Spark Connect" in outcome["bridge"] and "classic SparkSession" in outcome["bridge"]
    assert "Spark Connect" in outcome["publisher_from_dataframe"]
    assert "Spark Connect" in outcome["dataframe_from_publisher"]
