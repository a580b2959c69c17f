"""Fixtures of the streaming tests: publishers read as a stream and queries into subscribers,
registered under names, and started, for one test and cleaned up after it."""

from __future__ import annotations

import os
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reactive_streams.spark import _session
from reactive_streams.spark._streaming import register_publisher, register_subscriber, unregister

from .kit import Sink, Source, read, to_subscriber


@pytest.fixture
def name(spark_session: Any) -> Iterator[Callable[[str], str]]:
    """``name(prefix)``: a unique registry name, unregistered after the test."""
    made: list[str] = []

    def make(prefix: str) -> str:
        made.append(f"{prefix}_{uuid.uuid4().hex[:8]}")
        return made[-1]

    yield make
    for n in made:
        unregister(spark_session, n)


@pytest.fixture
def started(spark_session: Any) -> Iterator[list[Any]]:
    """Queries a test starts, stopped after it whatever happens."""
    queries: list[Any] = []
    yield queries
    for query in queries:
        query.stop()


@pytest.fixture
def source(spark_session: Any, name: Callable[[str], str]) -> Source:
    """``source(publisher, **read_options)``: ``publisher``, registered for the test, read as a
    stream of ``value LONG`` (options: `kit.read`'s)."""

    def load(publisher: Any, **options: Any) -> Any:
        registered = name("source")
        register_publisher(spark_session, registered, publisher)
        return read(spark_session, registered, "value LONG", **options)

    return load


@pytest.fixture
def sink(spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path) -> Sink:
    """``sink(df, subscriber, once=False, checkpoint=None, **options)``: a query, checkpointed
    in ``tmp_path`` (or ``checkpoint``), that writes ``df`` to ``subscriber`` registered for the
    test (with ``register_subscriber``'s ``options``); the query, and the subscriber's name."""

    def start(
        df: Any, subscriber: Any, once: bool = False, checkpoint: Path | None = None, **options: Any
    ) -> tuple[Any, str]:
        registered = name("sink")
        register_subscriber(spark_session, registered, subscriber, **options)
        return to_subscriber(df, registered, checkpoint or tmp_path, started, once), registered

    return start


@pytest.fixture(scope="module")
def connect() -> Iterator[Any]:
    """A Connect session of the module's own (its own session id) on the shared server."""
    from .connect_kit import connect_session, stop_session

    session = connect_session()
    yield session
    stop_session(session)


@pytest.fixture(scope="session", autouse=True)
def _connect_server_stopped_at_the_end() -> Iterator[None]:
    """The Connect tests share one standalone server (connect_kit), stopped when they are done."""
    yield
    from .connect_kit import stop_shared

    stop_shared()


@pytest.fixture(autouse=True)
def _no_connect_mode_left_behind() -> Iterator[None]:
    """A Connect client marks the whole process as Connect (SPARK_CONNECT_MODE_ENABLED), which
    turns the classic session's calls, and the child processes tests start, to Connect: a test
    that leaves it set fails here, naming itself, rather than the tests after it."""
    yield
    assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ, "this test left SPARK_CONNECT_MODE_ENABLED set"


@pytest.fixture(autouse=True)
def _no_stream_left_on_the_shared_bridges(request: pytest.FixtureRequest) -> Iterator[None]:
    """The session-wide bridges outlive each test: a stream a test leaves live there holds its Arrow
    memory and shows in a later test's counts, on whichever worker. Say which test left it (a
    warning in the run's summary, for the streams it added), after a moment for streams that end
    on the bridge's thread."""
    if "spark_session" not in request.fixturenames:
        yield
        return
    spark = request.getfixturevalue("spark_session")

    def shared() -> list[Any]:
        bridges = [_session._bridges.get(spark)]
        if "spark_bridge" in request.fixturenames:
            bridges.append(request.getfixturevalue("spark_bridge"))
        return [b for b in bridges if b is not None and not b.closed]

    def live(bridge: Any) -> list[Any]:
        with bridge._host._lock:  # the bridge's threads add and drop streams meanwhile
            return list(bridge._host._live)

    before = {id(adapter) for bridge in shared() for adapter in live(bridge)}
    yield
    for bridge in shared():
        deadline = time.monotonic() + 3
        while (added := [a for a in live(bridge) if id(a) not in before]) and time.monotonic() < deadline:
            time.sleep(0.05)
        if added:
            streams = sorted(map(repr, added))
            warnings.warn(
                f"{request.node.nodeid} left {len(added)} live streams on {bridge!r}: {streams}", stacklevel=1
            )
