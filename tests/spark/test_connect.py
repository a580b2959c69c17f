"""A Spark Connect session has no JVM gateway: the Spark interop refuses it at once, saying so.
(A real local Connect server, in a subprocess: one SparkContext per process.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT


@pytest.mark.timeout(360)  # a child process, given up to 300 s
def test_spark_connect_sessions_are_refused_with_a_clear_error() -> None:
    script = Path(__file__).with_name("connect_script.py")
    result = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["session"] == "pyspark.sql.connect.session"
    assert "Spark Connect" in outcome["bridge"] and "classic SparkSession" in outcome["bridge"]
    assert "Spark Connect" in outcome["publisher_from_dataframe"]
    assert "Spark Connect" in outcome["dataframe_from_publisher"]
