"""Session-wide JVM fixtures: one SparkSession, one standalone Py4J JVM and JPype's in-process
JVM, shared by every test that needs them (starting a JVM costs seconds)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .subprocess_budget import subprocess_waits_fit_the_test  # noqa: F401 (an autouse fixture)

ROOT = Path(__file__).resolve().parent.parent

# Every JVM the suite starts through the `java` launcher (Spark's, Py4J's, the TCK's, the child
# scripts') compiles with C1 only: most live seconds, and C2's compiler threads took a third of
# the CPU of a Spark start (14 s of CPU against 9 s) on a suite that is bound by two cores.
# Each such JVM says so on its stderr ("NOTE: Picked up JDK_JAVA_OPTIONS"); a user's own setting wins.
TEST_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"
os.environ.setdefault("JDK_JAVA_OPTIONS", TEST_JAVA_OPTIONS)


def _test_jars() -> list[str]:
    """build/test-jars (Reactor, Pekko, RxJava, test helpers) and the TCK's jars, each artifact
    once: every JVM of the session gets them all, so the TCK plugin can share them."""
    from reactive_streams.tck import tck_classpath

    jars: dict[str, str] = {}
    for jar in [*tck_classpath(), *sorted((ROOT / "build" / "test-jars").glob("*.jar"))]:
        jars.setdefault(Path(jar).name, str(jar))
    return list(jars.values())


TEST_JARS = _test_jars()
BACKENDS = ["spark", "py4j", "jpype"]


@pytest.fixture(scope="session")
def test_jars() -> list[str]:
    if not TEST_JARS:
        pytest.fail("build/test-jars is empty: run `gradle pythonJars` (./run-tests does)")
    return TEST_JARS


_SPARK: list[Any] = []


def shared_spark() -> Any:
    """The session's one local SparkSession (started on first use, stopped at the end)."""
    if not _SPARK:
        from pyspark.sql import SparkSession

        from reactive_streams import spark as rss

        spark = (
            rss.configure(SparkSession.builder.master("local[2]"), TEST_JARS)
            .appName("reactive-streams-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.memory", "1g")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        _SPARK.append(spark)
    return _SPARK[0]


CONNECT_PORT = 15002  # where an embedded Connect server (.remote("local[2]")) listens


def _port_bindable(port: int) -> bool:
    """Whether a server could bind ``port`` now, as the JVM's does (SO_REUSEADDR, every address):
    a socket still bound there, listening or not, fails it; a connect probe misses the latter."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True


def port_holders(port: int = CONNECT_PORT) -> str:
    """Who holds ``port``: its sockets (ss) and their processes' command lines, for a failure."""
    held = subprocess.run(["ss", "-tanp", f"sport = :{port}"], capture_output=True, text=True).stdout
    pids = sorted(set(re.findall(r"pid=(\d+)", held)))
    if pids:
        held += subprocess.run(
            ["ps", "-o", "pid,ppid,etime,args", "-p", ",".join(pids)], capture_output=True, text=True
        ).stdout
    return held


def with_port_holders(stderr: str) -> str:
    """``stderr``, and who holds Connect's port if it says a server could not bind it."""
    if "BindException" not in stderr:
        return stderr
    return f"{stderr}\n--- port {CONNECT_PORT}, now:\n{port_holders()}"


def wait_for_port(port: int = CONNECT_PORT, seconds: float = 90.0) -> None:
    """Wait until ``port`` can be bound: an embedded Connect server stops a few seconds after the
    Python process that started it ends. Still taken after ``seconds``: fail, naming who holds it."""
    deadline = time.monotonic() + seconds
    while not _port_bindable(port):
        if time.monotonic() > deadline:
            raise AssertionError(f"port {port} still taken after {seconds:.0f} s:\n{port_holders(port)}")
        time.sleep(0.2)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """The tests that start an embedded Connect server get its port free (they share one worker:
    `worker_group`). TCK classes on the spark backend use the active SparkSession: make sure
    there is one."""
    if worker_group(item.nodeid) == FIXED_PORT_GROUP:
        wait_for_port()
    verification = getattr(item.parent, "obj", None)
    if getattr(verification, "backend", None) == "spark" or (
        verification is not None and os.environ.get("RS_TCK_BACKEND") == "spark"
    ):
        shared_spark()


# --quick: the inner loop. The core, the bridge and the TCK on JPype; no Spark, no Py4J, none of
# the slow checks of the tree (the docs' pages, run-tests' own gate), of the TCK's tooling (its
# command line, verdicts and skips files, each a JVM of its own) or soak tests.
_NOT_QUICK_FILES = (
    "tests/spark/",
    "tests/test_docs.py",
    "tests/test_run_tests.py",
    "tests/test_setup_quiet.py",  # a Gradle build and the demos, on Spark
    "tests/tck/test_docs_examples.py",
    "tests/tck/test_cli.py",
    "tests/tck/test_expected_skips.py",
    "tests/tck/test_after_run.py",
    "tests/tck/test_verdicts.py",
)
_NOT_QUICK_NAMES = ("ten_thousand", "spark_drivers")
_NOT_QUICK_FIXTURES = {"spark_session", "spark_bridge", "py4j_bridge"}

# Parallel runs (pytest-xdist, ./run-tests's --dist loadgroup): the tests that must share a
# worker, told by node id (xdist's scheduler sees nothing else). A TCK class is one TestNG run, made
# by its first item: its items stay together. Everything of one module stays together too (module
# fixtures, order within a module). The tests that start an embedded Connect server, on Spark
# Connect's fixed port 15002, share one worker; so do docs pages' blocks that do.
FIXED_PORT_GROUP = "spark-connect-port-15002"
_FIXED_PORT_TESTS = (  # node ids, or their beginnings
    "tests/spark/test_connect_embedded.py",
    "tests/spark/test_connect_close.py",
    "tests/test_setup_quiet.py::test_the_demo_prints_no_stack_trace_and_no_warning[connect]",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick",
        action="store_true",
        help="the inner loop: the core, the bridge and the TCK on JPype only (./run-tests --quick)",
    )


def _in_quick_tier(item: pytest.Item) -> bool:
    path = item.nodeid.split("::")[0]
    if path.startswith(_NOT_QUICK_FILES) or _NOT_QUICK_FIXTURES & set(getattr(item, "fixturenames", ())):
        return False
    if any(name in item.name for name in _NOT_QUICK_NAMES):
        return False
    callspec = getattr(item, "callspec", None)
    if callspec is not None and {"spark", "py4j"} & set(callspec.id.replace(" ", "-").split("-")):
        return False  # the case of a test parametrized by backend that runs on Spark or Py4J
    verification = getattr(item.parent, "obj", None)
    backend = getattr(verification, "backend", None) or os.environ.get("RS_TCK_BACKEND", "jpype")
    return not (isinstance(verification, type) and hasattr(verification, "settings") and backend != "jpype")


DEPLOY_GROUP = "tests/deploy"  # the cluster of namespace hosts' tests (tests/deploy/conftest.py)


def worker_group(nodeid: str) -> str:
    """The group of tests ``nodeid`` runs with on one xdist worker (see above)."""
    path, *names = nodeid.split("::")
    if nodeid.startswith(_FIXED_PORT_TESTS):
        return FIXED_PORT_GROUP
    if path == "tests/test_docs.py":  # each page (or block) apart, but those that start a server
        from .test_docs import CONNECT_PARTS

        return FIXED_PORT_GROUP if nodeid in CONNECT_PARTS else nodeid
    if path.startswith(DEPLOY_GROUP + "/"):  # one cluster of fixed host names: one worker makes it
        return DEPLOY_GROUP
    if len(names) > 1:  # a class: only the TCK's verifications are (tests/tck, test_connect_tck.py)
        return f"{path}::{names[0]}"
    return path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """--dist loadgroup by `worker_group`. (xdist's own loadgroup reads xdist_group marks into
    the node id, which pytest 9 no longer lets it change: no group ever applied, and the Connect
    port's tests ran on two workers at once.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # in collection order: the longest groups first

    class ByWorkerGroup(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ByWorkerGroup(config, log)


# The longest groups (seconds of a worker's time, measured by --durations on this 2-core machine)
# go out first under xdist, so that none starts last and runs on while the other workers idle.
_LONGEST_GROUPS = (
    DEPLOY_GROUP,  # minutes: the kit's hosts and every test on them (more when thin clients are made)
    "tests/spark/test_pipelines.py",  # 130 s
    "tests/spark/test_arrow_memory.py",  # 104 s
    FIXED_PORT_GROUP,  # 97 s
    "tests/spark/test_sink.py",  # 88 s
    "tests/spark/test_connect_streams.py",  # 80 s
    "tests/tck/test_docs_examples.py",  # 78 s
    "tests/test_setup_quiet.py",  # 74 s
    "tests/spark/test_partitioned.py",  # 55 s
    "tests/spark/test_connect_faults.py",  # 51 s
)


def _longest_first(item: pytest.Item) -> int:
    group = worker_group(item.nodeid)
    return _LONGEST_GROUPS.index(group) if group in _LONGEST_GROUPS else len(_LONGEST_GROUPS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--quick"):
        kept = [item for item in items if _in_quick_tier(item)]
        config.hook.pytest_deselected(items=[item for item in items if not _in_quick_tier(item)])
        items[:] = kept
    if not all(map(_in_quick_tier, items)):  # Spark will start: with its classes shared
        from .spark_share import use_for_spark_drivers

        use_for_spark_drivers()
    if hasattr(config, "workerinput"):  # an xdist worker: the scheduler takes groups in this order
        items.sort(key=_longest_first)  # stable: each group's own order stays


_SKIPPED: dict[str, str] = {}  # node id: reason, every skip of the run (on xdist's controller too)


def _skip_reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPPED[report.nodeid] = _skip_reason(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped:  # a module-level importorskip: the whole module
        _SKIPPED[report.nodeid] = _skip_reason(report)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _SPARK:
        _SPARK.pop().stop()
    if hasattr(session.config, "workerinput"):
        return  # the controller sees every worker's reports
    from . import skip_gate

    problems = skip_gate.unexpected(_SKIPPED, skip_gate.expected(), skip_gate.tck_classes())
    if problems:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(skip_gate.message(problems), red=True)
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def spark_session() -> Any:
    return shared_spark()


@pytest.fixture(scope="session")
def spark_bridge(spark_session: Any) -> Iterator[Any]:
    from reactive_streams.jvm import Bridge

    with Bridge.spark(spark_session) as bridge:
        yield bridge


@pytest.fixture(scope="session")
def py4j_bridge(test_jars: list[str]) -> Iterator[Any]:
    from reactive_streams.jvm import Bridge

    with Bridge.py4j(test_jars) as bridge:
        yield bridge


@pytest.fixture(scope="session")
def jpype_bridge(test_jars: list[str]) -> Iterator[Any]:
    from reactive_streams.jvm import Bridge

    with Bridge.jpype(test_jars) as bridge:
        yield bridge


@pytest.fixture(params=BACKENDS)
def bridge(request: pytest.FixtureRequest) -> Any:
    """The session's bridge on each backend in turn."""
    return request.getfixturevalue(f"{request.param}_bridge")


@pytest.fixture
def own_bridge_with(bridge: Any, test_jars: list[str], request: pytest.FixtureRequest) -> Callable[..., Any]:
    """Makes bridges of their own on ``bridge``'s backend and JVM, with the settings given
    (`BridgeSettings`' names): each a context manager, the caller's to close."""
    from reactive_streams.jvm import Bridge, BridgeSettings

    def make(**settings: Any) -> Any:
        if bridge.backend == "spark":
            return Bridge.spark(request.getfixturevalue("spark_session"), **settings)
        if bridge.backend == "py4j":  # the session's JVM
            return Bridge.py4j_gateway(bridge._host.backend._gateway, BridgeSettings(**settings), name="py4j")
        return Bridge.jpype(test_jars, **settings)

    return make


@pytest.fixture
def own_bridge(own_bridge_with: Callable[..., Any]) -> Iterator[Any]:
    """A bridge of its own on ``bridge``'s backend and JVM: its runtime's counters (maxQueued)
    are this test's alone."""
    with own_bridge_with() as own:
        yield own


@pytest.fixture(scope="session")
def pekko() -> Iterator[Any]:
    """``pekko(bridge)``: one Pekko ActorSystem per JVM, terminated at the end of the session."""
    systems: dict[int, Any] = {}

    def system_for(bridge: Any) -> Any:
        key = id(bridge)
        if key not in systems:
            systems[key] = bridge.jvm.org.apache.pekko.actor.ActorSystem.create("tests")
        return systems[key]

    yield system_for
    for system in systems.values():
        try:
            system.terminate()
        except Exception:
            pass
