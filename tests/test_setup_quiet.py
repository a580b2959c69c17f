"""Set-up says what it does, and nothing else; the demo prints its own lines only.

`source scripts/setup.sh` on a fresh copy of the project (this checkout's virtual environment
borrowed, so the step that runs is the Gradle build) prints one ``[setup]`` line per step and
nothing else: no JVM test output, no SLF4J warning, no stack trace. Then the demo and its
``--connect`` form (what ``./run-demo`` runs once set up) print no stack trace and no WARN or
ERROR line (tests/quiet_logs.py says which lines those are) but Spark's own, listed below.
About a minute on two cores: the Gradle build is most of it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import TEST_JAVA_OPTIONS
from .quiet_logs import noisy_lines

ROOT = Path(__file__).resolve().parent.parent

# Spark's own lines on a successful demo: no concern of ours.
SPARKS = {
    r" WARN ResolveWriteToStream: spark\.sql\.adaptive\.enabled is not supported": "every streaming query",
}


def _environment(*dropped: str) -> dict[str, str]:
    """This process's environment without pytest's and Spark's settings, but the suite's JVM
    options (conftest.py's JDK_JAVA_OPTIONS, spark_share.py's SPARK_SUBMIT_OPTS)."""
    kept = {"SPARK_SUBMIT_OPTS"}
    dropped_prefixes = ("PYTEST_", "SPARK_", "PYSPARK_")
    return {
        k: v
        for k, v in os.environ.items()
        if (k in kept or not k.startswith(dropped_prefixes)) and k not in dropped
    }


def _fresh_copy(target: Path) -> Path:
    """The checkout's tracked and new files, without anything built; its .venv the one running
    this test (set-up's install step is then skipped: its stamp is there)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (item.decode() for item in listed)):
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    (target / ".venv").symlink_to(sys.prefix)  # the virtual environment running this test
    return target


def _install_is_current() -> bool:
    """Whether the running .venv has set-up's stamp for today's pyproject.toml and constraints:
    without it, set-up in the copy would install the project into this shared .venv again, from
    the copy, which is then deleted (every later test would import nothing)."""
    digest = subprocess.run(
        ["bash", "-c", "sha256sum pyproject.toml scripts/dev-constraints.txt | sha256sum | cut -c1-16"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return (Path(sys.prefix) / f".installed-{digest}").is_file()


@pytest.mark.timeout(600)
def test_set_up_prints_one_line_per_step_and_nothing_else(tmp_path: Path) -> None:
    if not _install_is_current():
        pytest.fail(
            "pyproject.toml or the dev constraints changed since set-up ran: run scripts/setup.sh first"
        )
    copy = _fresh_copy(tmp_path / "checkout")
    done = subprocess.run(
        ["bash", "-c", "source scripts/setup.sh"],
        cwd=copy,
        # Gradle's JVMs would say they picked JDK_JAVA_OPTIONS up; GRADLE_OPTS, which they take
        # silently, gives them C1 only as well (36 s of CPU for the build instead of 48; a user's
        # own GRADLE_OPTS wins)
        env={"GRADLE_OPTS": TEST_JAVA_OPTIONS, **_environment("JDK_JAVA_OPTIONS")},
        capture_output=True,
        text=True,
        timeout=540,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "[setup] building the JVM side (gradle pythonJars)" in output.splitlines(), output
    assert [line for line in output.splitlines() if not line.startswith("[setup] ")] == [], output
    assert (copy / "python" / "reactive_streams" / "_jars").is_dir()


@pytest.mark.timeout(400)
@pytest.mark.parametrize("arguments", [[], ["--connect"]], ids=["classic", "connect"])
def test_the_demo_prints_no_stack_trace_and_no_warning(arguments: list[str]) -> None:
    done = subprocess.run(  # ./run-demo after its set-up (the test above): the demo itself
        [sys.executable, str(ROOT / "examples" / "demo.py"), *arguments],
        cwd=ROOT,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=360,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert "3. streaming query" in done.stdout, output[-6000:]
    assert noisy_lines(output, SPARKS) == [], output[-6000:]
