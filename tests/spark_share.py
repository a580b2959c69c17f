"""One class-data-sharing archive (the JDK's CDS) of Spark's own classes, for the suite's Spark
JVMs: drivers and Connect servers map some 15,000 classes ready-made instead of loading and
verifying them. A Spark start and first query then take 4 s of CPU instead of 8 (measured on
two cores), and the suite starts about eighty of them.

The archive is made once per JDK and PySpark installation (its name holds a digest of both and of
Spark's jars), in ~/.cache/reactive-streams-py/spark-cds/, from the classes a classic session and
a Connect server load running `spark/class_list_script.py`: in the background of the first run
that starts Spark (about a minute), whose JVMs map it from the moment it is there. A JVM whose
class path or jars differ from the archive's runs without it, quietly: the archive is an
acceleration, never a condition of a test. It is handed to Spark's driver JVMs only, through
``SPARK_SUBMIT_OPTS`` (Spark's launcher adds it to the driver's command line; executors and other
JVMs keep the JDK's own archive), with ``TMPDIR`` as the drivers' ``java.io.tmpdir`` when it is set."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

# Outside the checkout: scratch copies of it (tests/mutations/run.py, the set-up test) share it.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
ARCHIVES = CACHE / "reactive-streams-py" / "spark-cds"
WORKLOAD = Path(__file__).resolve().parent / "spark" / "class_list_script.py"
OPTION = "-XX:SharedArchiveFile="
KEPT = 4  # archives (about 220 MB each) kept for other JDKs and PySpark installations


def _key() -> str:
    """A digest of the JDK (`java -version`), PySpark's version and its jars' names, sizes and times."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    digest = hashlib.sha256(f"{pyspark.__version__} {jars}".encode())  # the archive names the jars' paths
    version = subprocess.run(["java", "-version"], capture_output=True, text=True, env=_plain_env(quiet=True))
    digest.update(version.stderr.encode())
    for jar in sorted(jars.glob("*.jar")):
        stat = jar.stat()
        digest.update(f"{jar.name} {stat.st_size} {stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def _plain_env(quiet: bool = False, **extra: str) -> dict[str, str]:
    """This environment for the workload's and the dump's processes; ``quiet``: without the JVM
    options a launcher would announce ("NOTE: Picked up ..."), for `java -version`."""
    dropped = {"SPARK_SUBMIT_OPTS", "SPARK_CONNECT_MODE_ENABLED", "PYTEST_XDIST_WORKER"}
    if quiet:
        dropped |= {"JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"}
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, **extra}


def _make(archive: Path) -> None:
    """Run the workload twice (a classic session, a Connect server), each JVM listing the classes it
    loads, then dump their union into ``archive`` with the driver's class path."""
    work = archive.with_suffix(".work")
    work.mkdir(parents=True, exist_ok=True)
    log = archive.with_suffix(".log")
    with log.open("w") as out:
        listed: dict[str, None] = {}
        classpath = ""
        for mode in ("classic", "connect"):
            lst = work / f"{mode}.lst"
            done = subprocess.run(
                [sys.executable, str(WORKLOAD), mode],
                env=_plain_env(SPARK_SUBMIT_OPTS=f"-XX:DumpLoadedClassList={lst}"),
                stdout=subprocess.PIPE,
                stderr=out,
                text=True,
                timeout=300,
                check=True,
            )
            classpath = classpath or done.stdout.strip().splitlines()[-1]
            lines = lst.read_text().splitlines()
            listed.update(dict.fromkeys(line for line in lines if not line.startswith("#")))
        (work / "classes.lst").write_text("\n".join(listed) + "\n")
        made = work / "archive.jsa"
        dump = ["-Xshare:dump", f"-XX:SharedClassListFile={work / 'classes.lst'}", f"{OPTION}{made}"]
        subprocess.run(
            ["java", *dump, "-cp", classpath],
            env=_plain_env(),
            stdout=out,
            stderr=out,
            timeout=600,
            check=True,
        )
        made.replace(archive)  # whole or not at all: a JVM never maps a half-written archive
    shutil.rmtree(work)


def archive_path() -> Path:
    """Where this JDK's and PySpark installation's archive is, or will be once made."""
    return ARCHIVES / f"spark-{_key()}.jsa"


def make_once(archive: Path) -> bool:
    """Make ``archive`` unless it is there or another process is making it (a lock file): whether
    it is there now. A failure leaves its log beside it."""
    ARCHIVES.mkdir(parents=True, exist_ok=True)
    with (ARCHIVES / "lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return archive.exists()  # another run makes it: its JVMs after the rename map it
        if not archive.exists():
            try:
                _make(archive)
            except (OSError, subprocess.SubprocessError, IndexError):
                return False
            for old in sorted(ARCHIVES.glob("spark-*.jsa"), key=lambda p: p.stat().st_mtime)[:-KEPT]:
                old.unlink()  # other installations' archives, the oldest beyond KEPT
    return True


def use_for_spark_drivers() -> None:
    """Hand the archive to every Spark driver JVM started from now on, by this process or its
    children (``SPARK_SUBMIT_OPTS``), unless the user set that variable. Not made yet: it is made
    in the background (a minute) while the tests run; the JVMs started before it is there run
    without it, quietly (a missing archive is no error), the ones after map it."""
    if "SPARK_SUBMIT_OPTS" in os.environ:
        return
    try:
        archive = archive_path()
    except (ImportError, OSError):  # no PySpark (the wheel's checks) or no `java`: no Spark starts
        return
    options = f"{OPTION}{archive}"
    tmp = os.environ.get("TMPDIR")
    if tmp and " " not in tmp:  # their temporary files beside this process's (./run-tests sets it)
        options += f" -Djava.io.tmpdir={tmp}"
    os.environ["SPARK_SUBMIT_OPTS"] = options
    if not archive.exists():
        threading.Thread(target=make_once, args=(archive,), name="spark-class-archive", daemon=True).start()
