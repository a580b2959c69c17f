"""Making a bridge: every argument is checked before anything starts, so a bad one raises an
error that names it and leaves no JVM, thread or socket behind; a single classpath path is one
entry, and a broken jar is named at start-up."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import WAIT
from .kit import WAIT_MS, Kit


def child_processes() -> set[int]:
    """This process's live children (a gateway JVM would be one)."""
    children = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid() and fields[0] != "Z":
                children.add(int(entry))
    return children


def threads() -> set[threading.Thread]:
    return set(threading.enumerate())


def broken_jar(tmp_path: Path) -> str:
    path = tmp_path / "reactor-core-broken.jar"
    path.write_bytes(b"<html>404 Not Found</html>")
    return str(path)


def refusals(tmp_path: Path, test_jars: list[str]) -> dict[str, tuple[Callable[[], Any], type, str]]:
    missing = str(tmp_path / "missing.jar")
    return {
        "py4j max_batch=0": (
            lambda: Bridge.py4j(test_jars, max_batch=0),
            ValueError,
            r"^max_batch must be an int >= 1 \(elements per crossing\), got 0$",
        ),
        "py4j max_batch=True": (lambda: Bridge.py4j(max_batch=True), ValueError, "got True"),
        "py4j threads=0": (
            lambda: Bridge.py4j(test_jars, threads=0),
            ValueError,
            r"^threads must be an int >= 1 \(JVM drain threads\), got 0$",
        ),
        "py4j demand_window=-1": (
            lambda: Bridge.py4j(test_jars, demand_window=-1),
            ValueError,
            r"^demand_window must be an int >= 1 \(elements requested ahead per stream\), got -1$",
        ),
        "py4j missing jar": (
            lambda: Bridge.py4j([missing]),
            rs.ReactiveStreamsError,
            f"^classpath entry does not exist: {missing}$",
        ),
        "py4j broken jar": (
            lambda: Bridge.py4j(broken_jar(tmp_path)),
            rs.ReactiveStreamsError,
            "not a readable jar .*reactor-core-broken.jar",
        ),
        "py4j classpath=5": (lambda: Bridge.py4j(5), TypeError, "^classpath must be a path"),  # type: ignore[arg-type]
        "py4j no java": (
            lambda: Bridge.py4j(java="/no/such/java"),
            rs.ReactiveStreamsError,
            "^java executable not found: '/no/such/java'; install a JDK 17",
        ),
        "py4j jvm_options=5": (
            lambda: Bridge.py4j(jvm_options=5),  # type: ignore[arg-type]
            TypeError,
            "^jvm_options must be a list of str",
        ),
        "py4j linger=-1": (
            lambda: Bridge.py4j(test_jars, linger=-1),
            ValueError,
            r"^linger must be 0 to 1 s \(how long rows may wait to cross\), got -1$",
        ),
        "py4j linger='0.1'": (
            lambda: Bridge.py4j(test_jars, linger="0.1"),  # type: ignore[arg-type]
            TypeError,
            r"^linger must be a number of seconds, got '0.1'$",
        ),
        "jpype linger=2": (lambda: Bridge.jpype(test_jars, linger=2), ValueError, "^linger must be 0 to 1 s"),
        "jpype linger=nan": (lambda: Bridge.jpype(test_jars, linger=float("nan")), ValueError, "got nan$"),
        "jpype linger=True": (lambda: Bridge.jpype(test_jars, linger=True), TypeError, "got True$"),
        "jpype max_batch=0": (lambda: Bridge.jpype(test_jars, max_batch=0), ValueError, "max_batch"),
        "jpype missing jar": (lambda: Bridge.jpype(missing), rs.ReactiveStreamsError, "does not exist"),
        "jpype broken jar": (
            lambda: Bridge.jpype([broken_jar(tmp_path)]),
            rs.ReactiveStreamsError,
            "reactor-core-broken.jar",
        ),
        "spark None": (
            lambda: Bridge.spark(None),
            TypeError,
            r"^Bridge.spark\(\) needs a pyspark.sql.SparkSession, got None$",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "py4j max_batch=0",
        "py4j max_batch=True",
        "py4j threads=0",
        "py4j demand_window=-1",
        "py4j missing jar",
        "py4j broken jar",
        "py4j classpath=5",
        "py4j no java",
        "py4j jvm_options=5",
        "py4j linger=-1",
        "py4j linger='0.1'",
        "jpype linger=2",
        "jpype linger=nan",
        "jpype linger=True",
        "jpype max_batch=0",
        "jpype missing jar",
        "jpype broken jar",
        "spark None",
    ],
)
def test_a_bad_argument_is_refused_before_anything_starts(
    case: str, tmp_path: Path, test_jars: list[str]
) -> None:
    import jpype

    attempt, error, message = refusals(tmp_path, test_jars)[case]
    jvm_started, children, before = jpype.isJVMStarted(), child_processes(), threads()
    with pytest.raises(error, match=message):
        attempt()
    assert child_processes() == children, "a JVM was started"
    assert threads() == before, "a thread was started"
    assert jpype.isJVMStarted() == jvm_started


def test_a_bad_max_batch_on_spark_starts_nothing(spark_session: Any) -> None:
    before = threads()
    with pytest.raises(ValueError, match="max_batch"):
        Bridge.spark(spark_session, max_batch=0)
    with pytest.raises(ValueError, match=r"^linger must be 0 to 1 s"):
        Bridge.spark(spark_session, linger=-0.5)
    assert threads() == before


def reactor_jar(test_jars: list[str]) -> str:
    return next(j for j in test_jars if Path(j).name.startswith("reactor-core"))


def test_py4j_takes_a_single_str_as_one_classpath_entry(test_jars: list[str]) -> None:
    with Bridge.py4j(reactor_jar(test_jars), jvm_options="-Xmx256m -Drs.test=yes") as bridge:
        flux = bridge.jvm.reactor.core.publisher.Flux.range(0, 3)
        assert list(bridge.from_jvm(flux).iterate()) == [0, 1, 2]
        assert str(bridge.jvm.java.lang.System.getProperty("rs.test")) == "yes"


def test_py4j_takes_a_folder_of_jars_and_classes(tmp_path: Path, test_jars: list[str]) -> None:
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "reactor-core.jar").symlink_to(reactor_jar(test_jars))
    with Bridge.py4j(libs) as bridge:
        flux = bridge.jvm.reactor.core.publisher.Flux.range(0, 3)
        assert list(bridge.from_jvm(flux).iterate()) == [0, 1, 2]
        classpath = str(bridge.jvm.java.lang.System.getProperty("java.class.path")).split(os.pathsep)
        assert str(libs) in classpath and str(libs / "reactor-core.jar") in classpath


def test_jpype_takes_a_single_str_as_one_classpath_entry(jpype_bridge: Bridge, test_jars: list[str]) -> None:
    with Bridge.jpype(reactor_jar(test_jars)) as bridge:  # the session's JVM, which has it
        kit = Kit(bridge)
        assert list(bridge.from_jvm(kit.Flux.range(0, 3)).iterate()) == [0, 1, 2]


def test_the_wrong_side_of_the_boundary_is_named(bridge: Bridge) -> None:
    with pytest.raises(TypeError) as refused:
        bridge.to_jvm([1, 2])  # type: ignore[arg-type]
    assert str(refused.value) == (
        "to_jvm() needs a reactive_streams.Publisher, got list [1, 2]; for the elements of a list or "
        "another iterable, pass rs.from_iterable(...)"
    )
    flux = Kit(bridge).Flux.range(0, 3)
    with pytest.raises(TypeError, match=r"; it is a JVM object already$"):
        bridge.to_jvm(flux)
    with pytest.raises(TypeError, match=r"; it is a Python publisher already$"):
        bridge.from_jvm(rs.from_iterable([1]))


class _Counting(rs.Subscriber[Any]):
    """Requests ``batch`` at a time and counts."""

    def __init__(self, batch: int) -> None:
        self.batch, self.items, self.error = batch, 0, None
        self.done = threading.Event()

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(self.batch)

    def on_next(self, item: Any) -> None:
        self.items += 1
        if self.items % self.batch == 0:
            self.subscription.request(self.batch)

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()


@pytest.mark.parametrize("backend", ["spark", "py4j", "jpype"])
def test_many_streams_share_the_bounded_drain_threads(
    backend: str, test_jars: list[str], request: Any
) -> None:
    # 200 concurrent streams each way, on a bridge of 2 drain threads: all exact, and the JVM
    # side never ran more than 2 drain threads (a cached pool ran one per waiting stream, and
    # on Py4J each was a callback connection and a Python thread).
    from reactive_streams.jvm import Bridge

    if backend == "spark":
        bridge = Bridge.spark(request.getfixturevalue("spark_session"), threads=2)
    elif backend == "py4j":
        bridge = Bridge.py4j(test_jars, threads=2)
    else:
        bridge = Bridge.jpype(test_jars, threads=2)
    with bridge:
        testing = bridge.jvm.io.github.rspy.bridge.testing
        counters = [_Counting(64) for _ in range(200)]
        for counter in counters:
            bridge.from_jvm(testing.Sources.parallelLongs(500)).subscribe(counter)
        java_counters = [testing.CountingSubscriber(64) for _ in range(200)]
        for java_counter in java_counters:
            bridge.to_jvm(rs.from_iterable(range(500))).subscribe(java_counter)
        for counter in counters:
            assert counter.done.wait(WAIT), "a JVM -> Python stream stalled"
        assert all(c.error is None and c.items == 500 for c in counters)
        for java_counter in java_counters:
            assert java_counter.awaitDone(WAIT_MS), "a Python -> JVM stream stalled"
        assert all(c.isComplete() and int(c.count()) == 500 for c in java_counters)
        # at most 2; on JPype the drains share one serial lane of the pool, which widens only
        # while a drain is stuck, so one thread may have done it all
        assert 1 <= int(bridge.runtime.largestThreadCount()) <= 2
        assert bridge.settings.threads == 2


# The hooks for code built on the bridge (the TCK runner and the Spark integration use them).


class _Task:
    """A Python implementation of java.lang.Runnable and java.util.concurrent.Callable."""

    def __init__(self, bridge: Bridge, fail: bool = False) -> None:
        self.bridge, self.fail = bridge, fail
        self.ran = threading.Event()

    def run(self) -> None:
        self.ran.set()

    def call(self) -> Any:
        try:
            raise ValueError("boom")
        except ValueError as exc:
            raise self.bridge.error_for_java(exc) from exc


def test_proxy_box_and_error_for_java_work_alike_on_every_backend(bridge: Bridge) -> None:
    task = _Task(bridge)
    bridge.jvm.java.lang.Thread(bridge.proxy(task, "java.lang.Runnable")).start()
    assert task.ran.wait(WAIT)
    lang, objects = bridge.jvm.java.lang, bridge.jvm.java.util.Objects
    assert objects.equals(bridge.box(5), lang.Integer.valueOf(5))  # as an element crosses
    assert objects.equals(bridge.box(2**40), lang.Long.valueOf(2**40))
    future = bridge.jvm.java.util.concurrent.FutureTask(bridge.proxy(task, "java.util.concurrent.Callable"))
    future.run()
    with pytest.raises(Exception) as failed:
        future.get()
    assert "ValueError" in str(failed.value) and "boom" in str(failed.value)


def test_on_close_callbacks_run_once_in_order_when_close_closes(
    jpype_bridge: Bridge, test_jars: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    from reactive_streams.jvm import BridgeClosedError

    calls: list[str] = []
    bridge = Bridge.jpype(test_jars)
    assert bridge.jvm_process is None and bridge.max_batch == bridge.settings.max_batch
    with pytest.raises(AttributeError):
        bridge.max_batch = 1  # type: ignore[misc]  # settings own it
    bridge.on_close(lambda: calls.append("first"))
    bridge.on_close(lambda: 1 / 0)  # logged; the others still run
    bridge.on_close(lambda: calls.append("third"))
    bridge.close()
    bridge.close()
    assert calls == ["first", "third"]
    assert "an on_close callback" in caplog.text and "ZeroDivisionError" in caplog.text
    with pytest.raises(BridgeClosedError, match=r"^this bridge is closed$"):
        bridge.on_close(lambda: None)


@pytest.mark.parametrize("backend", ["py4j", "jpype"])
def test_a_close_from_the_jvm_side_ends_the_streams_and_leaves_the_rest_to_close(
    backend: str, jpype_bridge: Bridge, test_jars: list[str]
) -> None:
    # BridgeRuntime.close(reason), as Spark's lifecycle watch calls it: the streams end with the
    # reason; a JVM the bridge started runs on until close() (the call came from a JVM thread).
    from reactive_streams.jvm import BridgeClosedError

    from ..support import Probe

    bridge = Bridge.py4j(test_jars) if backend == "py4j" else Bridge.jpype(test_jars)
    calls: list[str] = []
    bridge.on_close(lambda: calls.append("closed"))
    probe = Probe(1)
    bridge.from_jvm(Kit(bridge).Flux.never()).subscribe(probe)
    probe.await_subscribed()
    bridge.runtime.close("the JVM side is done")
    probe.await_done()
    assert isinstance(probe.error, BridgeClosedError) and str(probe.error) == "the JVM side is done"
    assert bridge.closed and bridge.live_streams == 0
    process = bridge.jvm_process
    assert (process is None) == (backend == "jpype")
    assert process is None or process.poll() is None
    bridge.close()
    assert calls == []  # close() did not close it: the JVM side had
    if process is not None:
        assert process.wait(WAIT) is not None


def test_a_standalone_py4j_bridges_java_errors_stay_its_own_while_spark_runs(
    spark_session: Any, py4j_bridge: Bridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PySpark converts every Java exception through its own gateway once a SparkContext runs;
    # an exception of the standalone JVM must still arrive as Py4J raises it, naming its cause.
    from py4j.protocol import Py4JJavaError
    from pyspark.errors.exceptions import captured
    from pyspark.errors.exceptions.captured import install_exception_handler

    # Whether Spark's conversion fails on a foreign exception depends on the object ids its own
    # JVM happens to hold: record that it is never asked instead.
    converted: list[Any] = []
    monkeypatch.setattr(
        captured, "convert_exception", lambda e: converted.append(e) or captured.UnknownException(origin=e)
    )
    for spark_started_again in (False, True):
        if spark_started_again:
            install_exception_handler()  # what a SparkContext started after the bridge does
        with pytest.raises(Py4JJavaError) as failed:
            py4j_bridge.jvm.java.lang.Integer.parseInt("not a number")
        assert "java.lang.NumberFormatException" in str(failed.value)
        assert not converted, "PySpark's handler converted the standalone JVM's exception"
