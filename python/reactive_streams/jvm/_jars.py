"""Where the bridge's jars are: inside the package (the wheel carries them). The TCK's and the
Spark connectors' jars sit beside them, in ``_jars/tck`` and ``_jars/spark``, and their own
packages find them."""

from __future__ import annotations

from pathlib import Path

from .._errors import ReactiveStreamsError

__all__ = ["ARROW_JVM_OPTIONS", "BRIDGE_CLASS", "JARS_DIR", "arrow_classpath", "bridge_classpath"]

JARS_DIR = Path(__file__).resolve().parent.parent / "_jars"
BRIDGE_CLASS = "io.github.rspy.bridge.BridgeRuntime"
# Arrow Java reads direct buffers' addresses by reflection, which JDK 17 allows only when opened
# (Spark's launcher passes the same). Its SLF4J, without a provider, would warn on stderr at
# first use: only SLF4J's errors are shown (a user's own -D option, after these, wins).
ARROW_JVM_OPTIONS = ("--add-opens=java.base/java.nio=ALL-UNNAMED", "-Dslf4j.internal.verbosity=ERROR")


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


def arrow_classpath() -> list[str]:
    """Arrow Java (the version PySpark 4 carries, with ``arrow-c-data`` and its JNI library), for
    the JVMs the bridge starts: Spark's driver has its own. Empty if the package has none."""
    return sorted(str(p) for p in (JARS_DIR / "arrow").glob("*.jar"))
