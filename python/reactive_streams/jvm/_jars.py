"""Where the bridge's jars are: inside the package (the wheel carries them)."""

from __future__ import annotations

from pathlib import Path

from .._errors import ReactiveStreamsError

__all__ = ["BRIDGE_CLASS", "JARS_DIR", "bridge_classpath"]

JARS_DIR = Path(__file__).resolve().parent.parent / "_jars"
BRIDGE_CLASS = "io.github.rspy.bridge.BridgeRuntime"


def bridge_classpath() -> list[str]:
    """The jars the bridge needs on the JVM's classpath: its own, the Reactive Streams API and
    Pyrolite (pickle). Raises `ReactiveStreamsError` if the package was installed without them."""
    jars = sorted(str(p) for p in JARS_DIR.glob("*.jar"))
    if not any(Path(j).name.startswith("reactive-streams-py-bridge") for j in jars):
        raise ReactiveStreamsError(
            f"the bridge jars are missing from {JARS_DIR}; build them with `gradle pythonJars` "
            "(./run-tests and ./run-demo do it) or install a wheel that carries them"
        )
    return jars


def tck_classpath() -> list[str]:
    """The bridge's jars plus the TCK's: the upstream reactive-streams-tck and -tck-flow 1.0.4,
    reactive-streams-examples (the TCK's helper publishers need it), TestNG and the runner."""
    tck = sorted(str(p) for p in (JARS_DIR / "tck").glob("*.jar"))
    if not any(Path(j).name.startswith("reactive-streams-py-tck-runner") for j in tck):
        raise ReactiveStreamsError(
            f"the TCK jars are missing from {JARS_DIR / 'tck'}; build them with `gradle pythonJars`"
        )
    return [*bridge_classpath(), *tck]


def spark_connector_jars() -> list[str]:
    """The Spark connectors' jar (DataFrame and streaming support), built against PySpark's
    jars; it belongs on a Spark driver's classpath only (``reactive_streams.spark.configure``)."""
    jars = sorted(str(p) for p in (JARS_DIR / "spark").glob("*.jar"))
    if not jars:
        raise ReactiveStreamsError(
            f"the Spark connectors jar is missing from {JARS_DIR / 'spark'}; build it with "
            "`gradle -PsparkJars=<pyspark>/jars pythonJars` (./run-tests and ./run-demo do it)"
        )
    return jars
