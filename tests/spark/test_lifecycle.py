"""Stopping the SparkSession closes its shared bridge and ends the live subscriptions with
on_error: no hang. (In a subprocess: the session's shared SparkSession must live on.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT, TEST_JARS


@pytest.mark.timeout(360)  # a child process, given up to 300 s
def test_stopping_the_spark_session_ends_live_streams_with_on_error() -> None:
    script = Path(__file__).with_name("lifecycle_script.py")
    result = subprocess.run(
        [sys.executable, str(script), *TEST_JARS], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["ended"] and outcome["bridge_closed"], outcome
    assert outcome["errors"] == ["BridgeClosedError", "BridgeClosedError"], outcome
    assert all("SparkContext stopped" in m for m in outcome["messages"]), outcome
    assert outcome["rows_ended"], outcome
