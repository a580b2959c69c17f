"""One standalone Spark Connect server with the plugin and the test streams, shared by the
Connect tests (starting one costs half a minute), and Connect sessions on it.

Creating a Connect session sets ``SPARK_CONNECT_MODE_ENABLED`` for the whole process, which
would turn the classic session's tests to Connect: `connect_session` removes it again (the
Connect session works without it)."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import reactive_streams as rs

from ..conftest import ROOT
from .kit import SPARK_ELASTIC_POOLS

SPARK_TESTING = "io.github.rspy.spark.testing.ConnectTestStreams"
IDLE_TIMEOUT = 3.0  # the test server's spark.rspy.connect.idleTimeout, seconds
#: How soon a silent client's streams are ended: the idle timeout, the reaper's round of a second,
#: then the cancels, with room for a loaded two-core machine (well short of any other timeout).
REAPED_WITHIN = IDLE_TIMEOUT + 15
#: How soon a client's stream threads end once its streams have: the reply path's linger (2 s),
#: then its close op's round trip to the server and the call's end, with room for a loaded
#: two-core machine (a cold CI run once took more than 10 s).
THREADS_END_WITHIN = 20.0
_SERVERS: list[Any] = []


def test_support_jar() -> str:
    return str(ROOT / "build" / "test-jars" / "reactive-streams-py-spark-test-support.jar")


def start_server(**conf: str) -> Any:
    """A new standalone server with the plugin, the test streams and a short idle timeout."""
    from reactive_streams.spark.connect_server import ConnectServer

    return ConnectServer.start(
        0,
        master="local[2]",
        extra_jars=[test_support_jar()],
        conf={
            "spark.rspy.connect.registrars": SPARK_TESTING,
            "spark.rspy.connect.diagnostics": "true",
            "spark.rspy.connect.idleTimeout": f"{IDLE_TIMEOUT:.0f}s",
            "spark.sql.shuffle.partitions": "2",
            **conf,
        },
    )


def shared_server() -> Any:
    """The session's server (started on first use, stopped at the end by conftest)."""
    if not _SERVERS:
        _SERVERS.append(start_server())
    return _SERVERS[0]


def stop_shared_server() -> None:
    while _SERVERS:
        _SERVERS.pop().stop()


def connect_session(url: str | None = None) -> Any:
    """A new Connect session (its own session id) on ``url``, the shared server by default."""
    from pyspark.sql import SparkSession

    was = os.environ.get("SPARK_CONNECT_MODE_ENABLED")
    try:
        return SparkSession.builder.remote(url or shared_server().url).create()
    finally:
        if was is None:
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


def stop_session(session: Any, server_gone: bool = False) -> None:
    """Stop ``session``; if its server is gone, without PySpark's retries (minutes of them)."""
    if server_gone:
        session.client.set_retry_policies([])
    was = os.environ.get("SPARK_CONNECT_MODE_ENABLED")
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"  # stop() removes it
    try:
        session.stop()
    except Exception:  # a session whose server is gone
        pass
    finally:
        if was is None:
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


def server_stats(session: Any) -> dict[str, Any]:
    """The server's diagnostics: this session's streams, and every session's (``all``)."""
    from reactive_streams.spark._connect._connection import connection

    return connection(session).quick([{"op": "stats"}])[0]


def all_streams(session: Any) -> dict[str, Any]:
    """Every stream the server knows, open or ended (the last 1000), by id."""
    stats = server_stats(session)["all"]
    return {**stats.get("ended", {}), **stats.get("streams", {})}


def wait_for(
    condition: Callable[[], Any], timeout: float, what: str, state: Callable[[], str] | None = None
) -> Any:
    """Poll ``condition`` until it is truthy; fail naming ``what`` after ``timeout`` seconds,
    with what ``state()`` says then."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}" + (f"\n{state()}" if state else ""))
        time.sleep(0.1)


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


_SESSIONS: list[Any] = []


def shared_session() -> Any:
    """A Connect session on the shared server, for tests that cannot take fixtures (the TCK's)."""
    if not _SESSIONS:
        _SESSIONS.append(connect_session())
    return _SESSIONS[0]


def stop_shared() -> None:
    """Stop the shared session and server (the end of the test session)."""
    while _SESSIONS:
        stop_session(_SESSIONS.pop())
    stop_shared_server()


class AskingBy64(rs.Subscriber[int]):
    """Requests 64 at a time, each time 64 have arrived; ``block`` (at most 2 minutes) is waited
    for at the first element, once `started` is set, before that element is kept."""

    def __init__(self, block: threading.Event | None = None) -> None:
        self.items: list[int] = []
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.block = block
        self.started = threading.Event()

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(64)

    def on_next(self, item: int) -> None:
        if not self.items:
            self.started.set()
            if self.block is not None:
                self.block.wait(120)
        self.items.append(item)
        if len(self.items) % 64 == 0:
            self.subscription.request(64)

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()


def stream_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("rs-connect")]


def client_state(session: Any) -> str:
    """The client's side of ``session``'s streams, for a wait that failed: its threads, the
    leases it renews, the ops waiting, the reply paths and their streams."""
    from reactive_streams.spark._connect._connection import connection

    conn = connection(session)
    with conn._lock:
        paths = [(path.id, path.streams, path.readers) for path in conn._paths]
        state = (
            f"threads {stream_threads()}; leases {sorted(conn._open)}; pending {conn._pending}; "
            f"watched {len(conn._watched)}; paths (id, streams, readers) {paths}; "
            f"current path {conn._path.id if conn._path else None}"
        )
    return state


def server_thread_kinds(server: Any) -> dict[str, int]:
    """The server's threads by name, digits dropped (names are cut to 15 characters)."""
    kinds: dict[str, int] = {}
    for task in os.listdir(f"/proc/{server.pid}/task"):
        try:
            with open(f"/proc/{server.pid}/task/{task}/comm") as comm:
                name = comm.read().strip().rstrip("0123456789-#_ ")
        except OSError:  # ended meanwhile
            continue
        kinds[name] = kinds.get(name, 0) + 1
    return kinds


def server_threads(server: Any) -> int:
    """The server's threads but those of Spark's elastic pools."""
    elastic = {pool[:15] for pool in SPARK_ELASTIC_POOLS}  # as /proc names them
    return sum(n for kind, n in server_thread_kinds(server).items() if kind not in elastic)


def sockets() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:  # closed meanwhile
            pass
    return count
