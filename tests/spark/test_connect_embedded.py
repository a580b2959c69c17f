"""An embedded Connect server (``SparkSession.builder.remote("local[1]")``), each in a child
process (it dials port 15002 and starts a SparkContext in its process): with the plugin added
by `configure`, the functions work; without it, the error names the confs to add."""

from __future__ import annotations

import pytest

from .kit import run_script


@pytest.mark.timeout(400)
def test_configure_gives_an_embedded_server_the_plugin() -> None:
    outcome, _ = run_script("connect_embedded_script.py", ["configured"], timeout=360)
    assert "no-such-stream" in outcome["error"] and "registered publishers" in outcome["error"]
    assert outcome["rows"] is True and outcome["round_trip"] == 50
    assert outcome["streamed"] is True  # register_publisher → source → sink → register_subscriber
    # PySpark sets the server's static confs again on the session, and warned of each refusal.
    assert outcome["warnings"] == []


@pytest.mark.timeout(400)
def test_a_server_without_the_plugin_names_the_confs_to_add() -> None:
    outcome, _ = run_script("connect_embedded_script.py", ["plain"], timeout=360)
    assert outcome["session"] == "pyspark.sql.connect.session"
    # What still needs a JVM gateway is refused, naming what works on Connect.
    assert "Spark Connect" in outcome["bridge"] and "jvm_publisher" in outcome["bridge"]
    assert "spark.connect.extensions.command.classes" in outcome["register_publisher"]
    assert "spark.connect.extensions.command.classes" in outcome["error"]
    assert "spark.jars" in outcome["error"]
