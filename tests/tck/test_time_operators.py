"""The upstream TCK judges the operators of time, hot sources and multicast (issue 44) on real
time with short periods, one row each as in ``test_operator_library.py``, and ``publish_on`` as
an identity processor (``IdentityProcessorVerification``).

Operators that drop or gather by time (``sample``, ``throttle_first``, ``debounce``, ``buffer``
cut by its timeout) run over a source whose elements come ``SPACING`` apart, well beyond their
period, so each element passes alone and a row has exactly the elements it names. ``sample``,
``debounce`` and the timed ``buffer`` are judged with ``on_backpressure_buffer`` after them: they
drop (or gather into one list) what comes while the subscriber has not asked, by design, and the
TCK's subscribers ask only after each element; ``throttle_first`` keeps demand as ``filter`` does
and is judged alone, as is ``buffer`` cut by size. ``interval`` runs behind each backpressure
strategy (without one, a TCK subscriber that waits between requests rightly gets
`MissingDemandError`). The multicast
rows are judged as one subscriber sees them: a late subscriber gets what comes after it joins, so
the TCK's optional tests that expect every subscriber to get the same elements are skipped
(``expected_skips.json`` says which).
"""

from __future__ import annotations

from typing import Any

import reactive_streams as rs
from reactive_streams.tck import IdentityProcessorVerification, PublisherVerification

from ..support import Boom
from .test_core_publishers import Naturals, failed
from .test_operator_library import ENDLESS, Row, _of, _operator

SPACING = 0.02  # seconds between the elements of a spaced source
PERIOD = 0.002  # the period of the operators over it
FEW = 20  # rows on time run the TCK's tests of up to this many elements (the rest are skipped)


def _spaced(elements: int) -> rs.Publisher[int]:
    """``elements`` ints, one every ``SPACING`` seconds (endless for 2**63-1)."""
    numbers: Any = Naturals() if elements == ENDLESS else range(elements)
    return rs.from_iterable(numbers).concat_map(lambda x: rs.timer(SPACING).map(lambda _: x))


def _interval(elements: int, strategy: Any) -> rs.Publisher[int]:
    ticks = strategy(rs.interval(0.001))
    return ticks if elements == ENDLESS else ticks.take(elements)


def _one(elements: int, make: Any) -> rs.Publisher[Any]:
    return make() if elements else make().skip(1)


ROWS: dict[str, Row] = {
    "Timer": Row(lambda n: _one(n, lambda: rs.timer(PERIOD)), most=1),
    "IntervalDrop": Row(lambda n: _interval(n, lambda p: p.on_backpressure_drop()), most=FEW),
    "IntervalLatest": Row(lambda n: _interval(n, lambda p: p.on_backpressure_latest()), most=FEW),
    "IntervalBuffer": Row(
        lambda n: _interval(n, lambda p: p.on_backpressure_buffer(1000, "drop_oldest")), most=FEW
    ),
    "OnBackpressureBuffer": _operator(
        lambda p: p.on_backpressure_buffer(10_000), lambda n: _of(min(n, 5000))
    ),
    "Delay": _operator(lambda p: p.delay(PERIOD), _of),
    "DelaySubscription": _operator(lambda p: p.delay_subscription(PERIOD), _of),
    "Timeout": _operator(lambda p: p.timeout(30), _of),
    "TimeoutFallback": Row(
        lambda n: rs.never().timeout(PERIOD, _of(n)), lambda: rs.never().timeout(PERIOD, failed())
    ),
    "Buffer": _operator(
        lambda p: p.buffer(3, 30).map(lambda items: items[0]), lambda n: _of(n if n == ENDLESS else 3 * n)
    ),
    "BufferTimed": Row(
        lambda n: _spaced(n).buffer(1000, PERIOD).on_backpressure_buffer(1000).map(lambda items: items[0]),
        lambda: failed().buffer(10, PERIOD),
        most=FEW,
    ),
    "Sample": Row(
        lambda n: _spaced(n).sample(PERIOD).on_backpressure_buffer(1000),
        lambda: failed().sample(PERIOD),
        most=FEW,
    ),
    "ThrottleFirst": Row(
        lambda n: _spaced(n).throttle_first(PERIOD), lambda: failed().throttle_first(PERIOD), most=FEW
    ),
    "Debounce": Row(
        lambda n: _spaced(n).debounce(PERIOD).on_backpressure_buffer(1000),
        lambda: failed().debounce(PERIOD),
        most=FEW,
    ),
    "RetryBackoff": Row(
        lambda n: rs.defer(lambda: _flaky_then(n).retry(1, backoff=PERIOD)),
        lambda: failed().retry(1, backoff=PERIOD),
    ),
    "SubscribeOn": _operator(lambda p: p.subscribe_on(rs.default_scheduler()), _of),
    "PublishOn": _operator(lambda p: p.publish_on(rs.default_scheduler(), prefetch=16), _of),
    "Share": _operator(lambda p: p.share(prefetch=16), _of),
    "PublishAutoConnect": _operator(lambda p: p.publish(prefetch=16).auto_connect(), _of),
    "ReplayRefCount": _operator(lambda p: p.replay(4, prefetch=16).ref_count(), _of),
}


def _flaky_then(elements: int) -> rs.Publisher[int]:
    """Fails at once the first time it is subscribed, then gives ``elements``: made per
    subscriber (the row's ``defer``), so each TCK subscriber's retry sees one failure."""
    attempts: list[int] = []

    def attempt() -> rs.Publisher[int]:
        attempts.append(1)
        return rs.error(Boom("first attempt")) if len(attempts) == 1 else _of(elements)

    return rs.defer(attempt)


def _verification(name: str, row: Row) -> type[PublisherVerification]:
    class Verification(PublisherVerification):
        def create_publisher(self, elements: int) -> rs.Publisher[Any]:
            return row.make(elements)

        def create_failed_publisher(self) -> rs.Publisher[Any] | None:
            return row.failed() if row.failed is not None else None

        def max_elements_from_publisher(self) -> int:
            return row.most

    Verification.__name__ = Verification.__qualname__ = f"Test{name}"
    Verification.__module__ = __name__
    return Verification


for _name, _row in ROWS.items():
    globals()[f"Test{_name}"] = _verification(_name, _row)


class PublishOnProcessor(rs.Processor[Any, Any]):
    """``publish_on`` as a processor: what it is given goes through an `IdentityProcessor`, and
    each subscriber gets it through ``publish_on`` on the default scheduler."""

    def __init__(self) -> None:
        self._inner: rs.IdentityProcessor[Any] = rs.IdentityProcessor()
        self._out = self._inner.publish_on(rs.default_scheduler(), prefetch=16)

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self._inner.on_subscribe(subscription)

    def on_next(self, item: Any) -> None:
        self._inner.on_next(item)

    def on_error(self, exc: BaseException) -> None:
        self._inner.on_error(exc)

    def on_complete(self) -> None:
        self._inner.on_complete()

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        self._out.subscribe(subscriber)


class TestPublishOnProcessor(IdentityProcessorVerification):
    def create_identity_processor(self, buffer_size: int) -> rs.Processor[Any, Any]:
        return PublishOnProcessor()

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        return failed().publish_on(rs.default_scheduler())
