"""Small helpers that hide the differences between the backends in tests."""

from __future__ import annotations

import time
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
        self.bridge.from_jvm(publisher).subscribe(probe)
        return probe

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
