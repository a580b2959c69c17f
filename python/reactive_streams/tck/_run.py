"""Running one verification class on the JVM, and the bridges the runs share."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ReactiveStreamsError
from ..jvm import Bridge, classpath_entries
from ._jars import tck_classpath
from ._names import TEST_NAMES, rule_of
from ._probe import WhiteboxProbe
from ._reasons import python_reason
from ._verification import Verification

__all__ = ["BridgePool", "TckResult", "TckRun", "run_verification"]

BACKENDS = ("jpype", "py4j", "spark")


@dataclass(frozen=True)
class TckResult:
    """One TCK test's outcome: ``passed``, ``failed``, ``skipped`` (the TCK's own decision, with
    its reason) or ``config-failed`` (a TestNG configuration method failed: not a TCK skip).

    Attributes:
        message: the TCK's message, with the Java hooks it names given their Python names
            (``create_failed_publisher() (TCK: PublisherVerification#createFailedPublisher)``).
        cause: what went wrong earlier in the test that ``message`` does not say, one per line:
            the TCK often fails on what it waited for ("produced no element after first request
            within 2000 ms") when the reason reached its subscriber as an ``onError`` before:
            ``bridge saw: §1.1: the Python publisher emitted 2 elements, more than the 1
            requested``, ``onError(class: message)``, ``the TCK also recorded: ...``.
    """

    name: str
    outcome: str
    message: str
    stack: str
    millis: int
    cause: str = ""

    @property
    def rule(self) -> str:
        """The rule the test checks (``§3.9``), or ``""``."""
        return rule_of(self.name)

    @property
    def failed(self) -> bool:
        return self.outcome in ("failed", "config-failed")

    @property
    def reason(self) -> str:
        """One line for a table: the message's first line, then each cause, ``; ``-separated."""
        first = self.message.splitlines()[0] if self.message else ""
        return "; ".join(part for part in [first, *self.cause.splitlines()] if part)

    @property
    def details(self) -> str:
        """The whole message, then the causes, one per line."""
        return "\n".join(part for part in [self.message, self.cause] if part)


@dataclass(frozen=True)
class TckRun:
    """The results of one verification class, and how long the JVM took to run them."""

    verification: str
    kind: str
    flow: bool
    backend: str
    results: tuple[TckResult, ...]
    seconds: float

    def count(self, outcome: str) -> int:
        return sum(1 for r in self.results if r.outcome == outcome)


class BridgePool:
    """One bridge per backend, with the TCK's jars (and ``classpath``: jars your factories need),
    made on first use and closed by `close`."""

    def __init__(self, classpath: Sequence[str] = ()) -> None:
        self._bridges: dict[str, Bridge] = {}
        self._lock = threading.Lock()
        self._classpath = list(classpath)

    def get(self, backend: str) -> Bridge:
        if backend not in BACKENDS:
            raise ReactiveStreamsError(f"unknown TCK backend {backend!r}: use one of {', '.join(BACKENDS)}")
        with self._lock:
            bridge = self._bridges.get(backend)
            if bridge is None or bridge.closed:
                bridge = self._bridges[backend] = _make_bridge(backend, self._classpath)
            return bridge

    def close(self) -> None:
        with self._lock:
            bridges, self._bridges = list(self._bridges.values()), {}
        for bridge in bridges:
            bridge.close()


def _make_bridge(backend: str, extra: list[str]) -> Bridge:
    jars: dict[str, str] = {}
    for jar in [*tck_classpath(), *classpath_entries(extra)]:  # patterns and folders expanded
        jars.setdefault(Path(jar).name, jar)  # each jar once, the package's copy first
    if backend == "jpype":
        return Bridge.jpype(list(jars.values()))
    if backend == "py4j":
        return Bridge.py4j(list(jars.values()))
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None:
        raise ReactiveStreamsError(
            "the spark TCK backend needs an active SparkSession built with "
            "reactive_streams.spark.configure(builder, reactive_streams.tck.tck_classpath())"
        )
    return Bridge.spark(session)


def run_verification(
    verification: Verification, bridge: Bridge, tests: Sequence[str] = (), backend: str = ""
) -> TckRun:
    """Run the upstream TCK class of ``verification``'s kind (all of it, or ``tests``) once, in
    one TestNG run, against ``verification``'s factory methods."""
    kind = verification.kind
    if kind not in TEST_NAMES:
        raise ReactiveStreamsError(f"{type(verification).__name__} has no TCK kind")
    unknown = sorted(set(tests) - set(TEST_NAMES[kind]))
    if unknown:
        raise ReactiveStreamsError(f"not tests of the {kind} verification: {', '.join(unknown)}")
    verification.bridge = bridge
    factory = bridge.proxy(_Factory(verification, bridge), "io.github.rspy.tck.TckFactory")
    runner = bridge.jvm.io.github.rspy.tck.TckRunner
    started = time.monotonic()
    text = runner.run(
        kind, verification.flow, ",".join(tests), verification.settings(bridge.backend), factory
    )
    seconds = time.monotonic() - started
    results = tuple(_result(r, verification) for r in json.loads(str(text)))
    return TckRun(
        type(verification).__qualname__, kind, verification.flow, backend or bridge.backend, results, seconds
    )


def _result(fields: dict[str, Any], verification: Verification) -> TckResult:
    """A result as the runner reported it, with the Python names of the hooks it mentions."""
    hook = verification._hook
    fields["message"] = python_reason(fields.get("message", ""), hook)
    fields["cause"] = python_reason(fields.get("cause", ""), hook)
    return TckResult(**fields)


class _Factory:
    """Implements the runner's Java interface ``TckFactory``, which the TCK's verification
    classes call: the verification's factory methods, as Java objects."""

    def __init__(self, verification: Verification, bridge: Bridge) -> None:
        self._verification: Any = verification
        self._bridge = bridge
        self._flow = verification.flow
        self._subscribers: list[tuple[Any, Any]] = []  # (Java subscriber, Python subscriber)

    def createPublisher(self, elements: int) -> Any:
        return self._java_errors(
            lambda: self._bridge.to_jvm(self._verification.create_publisher(int(elements)), flow=self._flow)
        )

    def createFailedPublisher(self) -> Any:
        def make() -> Any:
            publisher = self._verification.create_failed_publisher()
            return None if publisher is None else self._bridge.to_jvm(publisher, flow=self._flow)

        return self._java_errors(make)

    def createWhiteboxSubscriber(self, probe: Any) -> Any:
        def make() -> Any:
            subscriber = self._verification.create_subscriber(WhiteboxProbe(probe, self._bridge))
            return self._bridge.subscriber_to_jvm(subscriber, flow=self._flow)

        return self._java_errors(make)

    def createBlackboxSubscriber(self) -> Any:
        def make() -> Any:
            subscriber = self._verification.create_subscriber()
            java = self._bridge.subscriber_to_jvm(subscriber, flow=self._flow)
            self._subscribers = [*self._subscribers[-7:], (java, subscriber)]
            return java

        return self._java_errors(make)

    def triggerRequest(self, subscriber: Any) -> None:
        def trigger() -> None:
            for java, python in self._subscribers:
                if java.equals(subscriber):
                    self._verification.trigger_request(python)
                    return

        self._java_errors(trigger)

    def createIdentityProcessor(self, buffer_size: int) -> Any:
        def make() -> Any:
            processor = self._verification.create_identity_processor(int(buffer_size))
            return self._bridge.processor_to_jvm(processor, flow=self._flow)

        return self._java_errors(make)

    def createElement(self, element: int) -> Any:
        return self._java_errors(lambda: self._bridge.box(self._verification.create_element(int(element))))

    def _java_errors(self, make: Any) -> Any:
        """Run a factory method; an exception reaches the TCK, which reports it as the test's
        failure, with its Python type, message and traceback."""
        try:
            return make()
        except Exception as exc:
            raise self._bridge.error_for_java(exc) from exc
