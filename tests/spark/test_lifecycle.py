"""Stopping the SparkSession closes its shared bridge and ends the live subscriptions with
on_error: no hang. (In a subprocess: the session's shared SparkSession must live on.)"""

from __future__ import annotations

import pytest

from ..conftest import TEST_JARS
from .kit import run_script


@pytest.mark.timeout(360)  # a child process, given up to 300 s
def test_stopping_the_spark_session_ends_live_streams_with_on_error() -> None:
    outcome, _ = run_script("lifecycle_script.py", TEST_JARS, timeout=300)
    assert outcome["ended"] and outcome["bridge_closed"], outcome
    assert outcome["errors"] == ["BridgeClosedError", "BridgeClosedError"], outcome
    assert all("SparkContext stopped" in m for m in outcome["messages"]), outcome
    assert outcome["rows_ended"], outcome
