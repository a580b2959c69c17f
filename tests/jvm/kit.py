"""Small helpers that hide the differences between the backends in tests."""

from __future__ import annotations

import datetime
import decimal
import gc
import time
import uuid
from collections.abc import Callable
from typing import Any

import reactive_streams as rs
from reactive_streams.jvm import Bridge, java_member

from ..support import WAIT, Probe

WAIT_MS = int(WAIT * 1000)  # a guard against hangs, as WAIT


class Kit:
    """JVM-side helpers for one bridge: Reactor, Pekko, RxJava and the test-support classes."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.jvm = bridge.jvm
        self.Flux = self.jvm.reactor.core.publisher.Flux
        self.Flowable = self.jvm.io.reactivex.rxjava3.core.Flowable

    def flux_from(self, publisher: Any) -> Any:
        """``Flux.from(publisher)`` (``from`` is a Python keyword)."""
        return java_member(self.Flux, "from")(publisher)

    def recording_subscriber(self, initial: int = 0, each: int = 0) -> Any:
        return self.jvm.io.github.rspy.bridge.testing.RecordingSubscriber(initial, each)

    def recording_publisher(self, publisher: Any) -> Any:
        return self.jvm.io.github.rspy.bridge.testing.RecordingPublisher(publisher)

    def recording_range(self, count: int) -> Any:
        """``Flux.range(0, count)`` behind a ``RecordingPublisher`` (the demand and cancels it gets)."""
        return self.recording_publisher(self.Flux.range(0, count))

    def probe_of(
        self, publisher: Any, initial: int = 0, on_next_hook: Callable[[Probe, Any], None] | None = None
    ) -> Probe:
        """A `Probe` subscribed to the JVM ``publisher`` through the bridge (``from_jvm``)."""
        probe = Probe(initial, on_next_hook)
        probe.diagnose = lambda: self.describe(publisher)
        self.bridge.from_jvm(publisher).subscribe(probe)
        return probe

    def describe(self, publisher: Any = None) -> str:
        """The bridge's state, for a wait that failed: the JVM runtime's pool, adapters and drain
        threads, the data channel's readers, and a ``RecordingPublisher``'s demand."""
        lines = [str(self.bridge.runtime.describe())]
        channel = self.bridge._host.channel
        if channel is not None:
            lines.append(f"data channel: {channel.readers} readers, {channel.registered} streams")
        if publisher is not None and hasattr(publisher, "requested"):
            lines.append(f"the publisher saw {publisher.requested()} requested")
        return "\n".join(lines)

    def recorder_of(self, publisher: rs.Publisher[Any], initial: int = 0, each: int = 0) -> Any:
        """A ``RecordingSubscriber(initial, each)`` subscribed to the Python ``publisher`` through
        the bridge (``to_jvm``)."""
        subscriber = self.recording_subscriber(initial, each)
        self.bridge.to_jvm(publisher).subscribe(subscriber)
        return subscriber

    def millis(self, ms: int) -> Any:
        return self.jvm.java.time.Duration.ofMillis(ms)

    def runtime_exception(self, message: str) -> Any:
        return self.jvm.java.lang.RuntimeException(message)

    def live_adapters(self, settle: float = WAIT) -> int:
        """The JVM side's live adapters, once it has had up to ``settle`` s to reach zero."""
        deadline = time.monotonic() + settle
        while True:
            live = int(self.bridge.runtime.liveAdapters())
            if live == 0 or time.monotonic() > deadline:
                return live
            time.sleep(0.01)


def py(value: Any) -> Any:
    """A JVM value as a plain Python one (JPype returns java.lang.String and boxed numbers)."""
    name = type(value).__name__
    if name == "java.lang.String":
        return str(value)
    if name in ("java.lang.Integer", "java.lang.Long"):
        return int(value)
    return value


_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_LOW = (1 << 64) - 1


def java_value(kind: str, i: int) -> Any:
    """What ``ValueRows.value(kind, i)`` (the Java test support) is in Python, computed here from
    the formulas it documents: nanoseconds truncated to microseconds, instants in UTC."""
    us = datetime.timedelta(microseconds=1)
    values: dict[str, Callable[[], Any]] = {
        "decimal": lambda: decimal.Decimal(7919 * i - 500).scaleb(-(i % 4)),
        "date": lambda: datetime.date(1970, 1, 1) + datetime.timedelta(days=37 * i - 20000),
        "sqlDate": lambda: datetime.date(1970, 1, 1) + datetime.timedelta(days=11000 + i),
        "localDateTime": lambda: (
            datetime.datetime(1969, 12, 31, 23, 59, 59)
            + datetime.timedelta(seconds=3601 * i)
            + (1001 * i // 1000) * us
        ),
        "instant": lambda: (
            _EPOCH_UTC + datetime.timedelta(seconds=86401 * i - 1_000_000) + (1001 * i // 1000) * us
        ),
        "timestamp": lambda: (
            _EPOCH_UTC + datetime.timedelta(seconds=1_700_000_000 + i) + (1001 * i // 1000) * us
        ),
        "offsetDateTime": lambda: (
            datetime.datetime(2024, 1, 1, 10, 0, tzinfo=datetime.timezone.utc)
            + datetime.timedelta(minutes=i)
            + i * us
        ),
        "zonedDateTime": lambda: (
            datetime.datetime(2024, 6, 1, 10, 0, tzinfo=datetime.timezone.utc) + datetime.timedelta(hours=i)
        ),  # Paris is UTC+2 in June
        "utilDate": lambda: _EPOCH_UTC + datetime.timedelta(milliseconds=1_700_000_000_000 + 1001 * i),
        "bigInteger": lambda: -(i << 40),
        "short": lambda: i - 300,
        "byte": lambda: i if i < 128 else i - 256,
        "character": lambda: chr(ord("a") + i % 26),
        "uuid": lambda: uuid.UUID(int=((i & _LOW) << 64) | (-i & _LOW)),
        "long": lambda: i,
        "double": lambda: i / 4,
        "string": lambda: f"s{i}",
    }
    return values[kind]()


def java_row(kinds: str, i: int) -> tuple[Any, ...]:
    """``ValueRows.rows(kinds, ...)``'s row ``i`` in Python: column ``c`` None when ``i % 5 == c % 5``,
    "a|b" taking turns."""
    columns = [kind.split("|") for kind in kinds.split(",")]
    return tuple(
        None if i % 5 == c % 5 else java_value(turns[i % len(turns)], i) for c, turns in enumerate(columns)
    )


def assert_arrow_sources_released(bridge: Bridge) -> None:
    """The test publishers' Arrow memory (``ArrowSources``) back at 0: a stream's root is closed by
    its ``doFinally``, which runs after the subscriber's last signal returns, on the JVM's thread.
    If it stays held, the failure names the allocators that hold it."""
    sources = bridge.jvm.io.github.rspy.bridge.testing.ArrowSources
    deadline = time.monotonic() + WAIT
    while int(sources.allocatedBytes()) != 0:
        gc.collect()
        assert time.monotonic() < deadline, f"the test publishers' Arrow memory still held:\n{sources.held()}"
        time.sleep(0.01)
