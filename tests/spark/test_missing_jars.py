"""A classic session whose JVM lacks the library's jars gets one error, the same from every entry
point that needs them, saying what to do: build the session with `configure`, or, when the JVM
had started earlier in the process without them, start the process again."""

from __future__ import annotations

import pytest

from .kit import run_script

ENTRY_POINTS = [
    "dataframe_from_publisher()",
    "publisher_from_dataframe()",
    "arrow_batches_from_dataframe()",
    "jvm_publisher()",
    "reactive_streams.spark.bridge()",
    "register_publisher()",
    "register_subscriber()",
    "Bridge.spark()",
]
FORMAT = (
    'Without them Spark cannot find the "reactive-streams" format either: '
    'spark.readStream.format("reactive-streams") fails with [DATA_SOURCE_NOT_FOUND].'
)


@pytest.mark.timeout(360)  # a child process, given up to 300 s, that starts Spark twice
def test_every_entry_point_says_what_to_do_when_the_jars_are_missing() -> None:
    outcome, _ = run_script("missing_jars_script.py", [], timeout=300)
    for name in ENTRY_POINTS:
        assert outcome["unconfigured"][name] == (
            f"ReactiveStreamsError: {name} needs the reactive-streams jars on the Spark driver's "
            "classpath, and this session's JVM has none: build the session with "
            "reactive_streams.spark.configure(SparkSession.builder), before the process's first "
            f"SparkSession starts its JVM. {FORMAT}"
        ), name
        restarted = outcome["restarted"][name]
        assert restarted.startswith(f"ReactiveStreamsError: {name} needs the reactive-streams jars"), name
        assert "its JVM had started earlier in this Python process without them" in restarted, name
        assert "Start the Python process again" in restarted and restarted.endswith(FORMAT), name
