"""Where the TCK's jars are: inside the package, beside the bridge's (the wheel carries them)."""

from __future__ import annotations

from pathlib import Path

from .._errors import ReactiveStreamsError
from ..jvm import bridge_classpath

__all__ = ["tck_classpath"]

_TCK_JARS = Path(__file__).resolve().parent.parent / "_jars" / "tck"


def tck_classpath() -> list[str]:
    """The bridge's jars plus the TCK's: the upstream reactive-streams-tck and -tck-flow 1.0.4,
    reactive-streams-examples (the TCK's helper publishers need it), TestNG and the runner.
    A JVM that runs the TCK needs them all (for Spark: ``rss.configure(builder, tck_classpath())``).

    Raises:
        ReactiveStreamsError: the package was installed without the TCK's jars.
    """
    tck = sorted(str(p) for p in _TCK_JARS.glob("*.jar"))
    if not any(Path(j).name.startswith("reactive-streams-py-tck-runner") for j in tck):
        raise ReactiveStreamsError(
            f"the TCK jars are missing from {_TCK_JARS}; build them with `gradle pythonJars`"
        )
    return [*bridge_classpath(), *tck]
