"""The bridge's jars for a wheel: built by Gradle when missing or stale, then checked.

A wheel of reactive-streams-py must carry the jars the JVM bridge loads
(python/reactive_streams/_jars/*.jar, _jars/tck/*.jar, _jars/spark/*.jar, _jars/arrow/*.jar). They are
git-ignored build outputs, so `ensure_jars` runs before setuptools packs the wheel (see rspy_build.py):

- the jars are *fresh* when every expected jar is present and build/.package-jars-<digest>
  exists, <digest> being a SHA-256 over the Gradle inputs (build.gradle, settings.gradle and
  the jvm/, tck-runner/ and spark/ sources). Whoever builds them writes that stamp: this
  module, or scripts/setup.sh after its own Gradle run;
- otherwise it runs `gradle :jvm:pythonJars :tck-runner:pythonJars :spark:pythonJars` from the
  project root, with -PsparkJars=<pyspark>/jars (the Spark connectors compile against
  PySpark's jars: $RSPY_SPARK_JARS, or the pyspark package in the build environment, which
  rspy_build.py adds to the build requirements when a build is needed), then checks that every
  expected jar is there (it deletes them first: only what this Gradle run made counts).

Anything missing (java, gradle, PySpark's jars, a jar Gradle should have made) raises
`JarsBuildError` saying what and how to fix it; a wheel without the jars is never built.

Standard library only. From a shell: `python build_backend/jvm_jars.py digest|fresh|mark-built`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = [
    "EXPECTED_JARS",
    "GRADLE_INPUTS",
    "SPARK_JARS_ENV",
    "JarsBuildError",
    "ensure_jars",
    "inputs_digest",
    "is_fresh",
    "mark_built",
]

ROOT = Path(__file__).resolve().parent.parent
JARS = Path("python", "reactive_streams", "_jars")
# One jar per Gradle subproject, each Sync'ed with its runtime jars into its folder.
EXPECTED_JARS = (
    JARS / "reactive-streams-py-bridge.jar",
    JARS / "tck" / "reactive-streams-py-tck-runner.jar",
    JARS / "spark" / "reactive-streams-py-spark.jar",
    JARS / "arrow" / "arrow-vector-19.0.0.jar",  # Arrow Java for the bridges outside Spark
)
GRADLE_INPUTS = ("build.gradle", "settings.gradle", "jvm", "tck-runner", "spark")
GRADLE_TASKS = (":jvm:pythonJars", ":tck-runner:pythonJars", ":spark:pythonJars")
SPARK_JARS_ENV = "RSPY_SPARK_JARS"
SKIPPED_DIRS = {"build", ".gradle"}

SETUP_HINT = (
    "Build the wheel from a git checkout on a machine with a JDK 17 and Gradle (Debian: "
    "`apt-get install openjdk-17-jdk-headless gradle`), or build the jars first with "
    "`source scripts/setup.sh`; see README.md, Install."
)


class JarsBuildError(RuntimeError):
    """The bridge's jars are missing or stale and could not be built."""


def _input_files(root: Path) -> Iterator[Path]:
    for name in GRADLE_INPUTS:
        top = root / name
        if top.is_file():
            yield top
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            for file in sorted(files):
                yield Path(folder, file)


def inputs_digest(root: Path = ROOT) -> str:
    """16 hex digits of SHA-256 over the Gradle inputs' relative paths and contents."""
    total = hashlib.sha256()
    for path in _input_files(root):
        total.update(path.relative_to(root).as_posix().encode() + b"\0")
        total.update(hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()[:16]


def _stamp(root: Path) -> Path:
    return root / "build" / f".package-jars-{inputs_digest(root)}"


def _missing(root: Path) -> list[str]:
    return [str(jar) for jar in EXPECTED_JARS if not (root / jar).is_file()]


def is_fresh(root: Path = ROOT) -> bool:
    """Whether every expected jar is present and was built from the current Gradle inputs."""
    return not _missing(root) and _stamp(root).is_file()


def mark_built(root: Path = ROOT) -> None:
    """Record that the jars in place were built from the current inputs (after a Gradle run)."""
    missing = _missing(root)
    if missing:
        raise JarsBuildError(f"Gradle ran but these jars are missing: {', '.join(missing)}. {SETUP_HINT}")
    for old in (root / "build").glob(".package-jars-*"):
        old.unlink()
    _stamp(root).parent.mkdir(parents=True, exist_ok=True)
    _stamp(root).touch()


def spark_jars_dir(env: Mapping[str, str]) -> Path:
    """PySpark's jars folder: $RSPY_SPARK_JARS, else the importable pyspark package's."""
    if env.get(SPARK_JARS_ENV):
        folder = Path(env[SPARK_JARS_ENV])
    else:
        try:
            import pyspark
        except ImportError:
            raise JarsBuildError(
                "the Spark connectors jar is compiled against PySpark's jars, and pyspark is not "
                f"importable here: install pyspark>=4.0 in the build environment, or set "
                f"{SPARK_JARS_ENV}=<pyspark>/jars. {SETUP_HINT}"
            ) from None
        folder = Path(pyspark.__file__).parent / "jars"
    if not any(folder.glob("spark-core_*.jar")):
        raise JarsBuildError(f"{folder} holds no Spark jars (spark-core_*.jar); it should be <pyspark>/jars")
    return folder


def _java_present(env: Mapping[str, str]) -> bool:
    java_home = env.get("JAVA_HOME")
    if java_home and Path(java_home, "bin", "java").is_file():
        return True
    return shutil.which("java", path=env.get("PATH")) is not None


def ensure_jars(root: Path = ROOT, env: Mapping[str, str] | None = None) -> None:
    """Make sure the expected jars are in place and fresh, running Gradle if they are not.

    Raises:
        JarsBuildError: java, gradle or PySpark's jars are missing, Gradle failed, or it did not
            produce every expected jar.
    """
    env = os.environ if env is None else env
    if is_fresh(root):
        return
    why = "missing" if _missing(root) else "stale (their Gradle inputs changed)"
    if not (root / "build.gradle").is_file():
        raise JarsBuildError(f"the bridge's jars are {why}, and {root} has no build.gradle. {SETUP_HINT}")
    gradle = shutil.which("gradle", path=env.get("PATH"))
    if gradle is None:
        raise JarsBuildError(f"the bridge's jars are {why} and `gradle` is not on PATH. {SETUP_HINT}")
    if not _java_present(env):
        raise JarsBuildError(
            f"the bridge's jars are {why} and there is no `java` on PATH (nor in $JAVA_HOME). {SETUP_HINT}"
        )
    command = [
        gradle,
        "--no-daemon",
        "--quiet",
        "--console=plain",
        f"-PsparkJars={spark_jars_dir(env)}",
        *GRADLE_TASKS,
    ]
    print(f"[reactive-streams-py] the bridge's jars are {why}: {' '.join(command)}", file=sys.stderr)
    for (
        jar
    ) in EXPECTED_JARS:  # what is there afterwards is this run's (Gradle reruns a Sync whose output went)
        (root / jar).unlink(missing_ok=True)
    result = subprocess.run(command, cwd=root, env=dict(env), check=False)
    if result.returncode != 0:
        raise JarsBuildError(
            f"`{' '.join(command)}` failed with exit status {result.returncode} (its output is above)"
        )
    mark_built(root)


def main(argv: list[str]) -> int:
    """digest: print the inputs' digest; fresh: exit 0 if the jars are fresh, else 1;
    mark-built: record the jars in place as built (scripts/setup.sh); ensure: `ensure_jars`."""
    command = argv[0] if len(argv) == 1 else ""
    try:
        if command == "digest":
            print(inputs_digest())
        elif command == "fresh":
            return 0 if is_fresh() else 1
        elif command == "mark-built":
            mark_built()
        elif command == "ensure":
            ensure_jars()
        else:
            print(f"usage: python {Path(__file__).name} digest|fresh|mark-built|ensure", file=sys.stderr)
            return 2
    except JarsBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
