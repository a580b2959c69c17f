"""The upstream TCK judges every source and operator of the library (issue 42), one row each:
``ROWS`` names how the row builds a publisher of exactly ``elements`` elements (endless for
2**63-1) over a finite upstream, and, where the operator can fail without a request, a failed
one. Each row becomes a ``PublisherVerification`` class (one pytest item per TCK test), seen from
Java through ``to_jvm``, as ``test_core_publishers.py``'s are (map, filter, take, skip, batch,
flat_map, merge and concat are judged there).

Aggregates answer with one element: their rows declare ``max_elements_from_publisher`` 1 (the
TCK skips what needs more, saying so), and make their empty stream as the aggregate's answer
skipped (``.skip(1)``). ``start_with`` and ``scan`` with an initial value have no failed
publisher: they subscribe their source once their first values are out, so none fails before a
request (the TCK skips its two tests of one, saying so). ``never`` is not here: it never
completes, which no row can describe (tests/test_sources.py checks its rules).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import reactive_streams as rs
from reactive_streams.tck import PublisherVerification

from ..support import Boom
from .test_core_publishers import Naturals, failed, source

ENDLESS = rs.MAX_DEMAND


def _of(elements: int) -> rs.Publisher[Any]:
    """``from_iterable`` of ``elements`` ints (endless for 2**63-1)."""
    return rs.from_iterable(source(elements))


def _split(elements: int, first: int) -> tuple[int, int]:
    """``first`` elements (at most), and the rest; the rest stays endless."""
    head = min(first, elements)
    return head, elements if elements == ENDLESS else elements - head


def _finite_first(elements: int, make: Callable[[int, int], rs.Publisher[Any]]) -> rs.Publisher[Any]:
    half, rest = _split(elements, 10 if elements == ENDLESS else elements // 2)
    return make(half, rest)


def _with_values(op: str, elements: int) -> rs.Publisher[Any]:
    """start_with / end_with of up to 2 values, the rest from the source; none: a value skipped."""
    if elements == 0:
        return getattr(rs.empty(), op)(-1).skip(1)
    count, rest = _split(elements, 2)
    return getattr(_of(rest), op)(*range(-count, 0))


def _flaky(elements: int) -> rs.Publisher[Any]:
    """Per subscriber: a source that fails halfway, then, subscribed again by retry, the rest."""

    def subscriber_own() -> rs.Publisher[Any]:
        attempts: list[int] = []
        half, rest = _split(elements, 10 if elements == ENDLESS else elements // 2)

        def attempt() -> rs.Publisher[Any]:
            attempts.append(1)
            return (
                rs.range(0, half).append(rs.error(Boom("first attempt"))) if len(attempts) == 1 else _of(rest)
            )

        return rs.defer(attempt).retry(1)

    return rs.defer(subscriber_own)


def _empty_as_skipped(elements: int, make: Callable[[], rs.Publisher[Any]]) -> rs.Publisher[Any]:
    """``make()``, whose one element is there for 1 element and skipped for 0."""
    return make() if elements else make().skip(1)


@dataclass(frozen=True)
class Row:
    make: Callable[[int], rs.Publisher[Any]]
    failed: Callable[[], rs.Publisher[Any]] | None = None
    most: int = ENDLESS - 1  # max_elements_from_publisher


def _operator(
    op: Callable[[rs.Publisher[Any]], rs.Publisher[Any]], make: Callable[[int], rs.Publisher[Any]]
) -> Row:
    """An element-wise operator's row: ``op`` over what ``make`` gives, and over a failing source."""
    return Row(lambda n: op(make(n)), lambda: op(failed()))


def _aggregate(op: Callable[[rs.Publisher[Any]], rs.Publisher[Any]]) -> Row:
    return Row(
        lambda n: _empty_as_skipped(n, lambda: op(rs.range(1, 10))),
        lambda: op(rs.error(Boom("failed publisher"))),
        most=1,
    )


ROWS: dict[str, Row] = {
    # sources
    "Just": Row(lambda n: rs.just(*range(n)), most=1000),  # its values are held
    "Empty": Row(lambda n: rs.empty(), lambda: rs.error(Boom("failed publisher")), most=0),
    "Range": Row(lambda n: rs.range(0, n)),
    "Repeat": Row(lambda n: rs.repeat("x", None if n == ENDLESS else n)),
    "Defer": Row(lambda n: rs.defer(lambda: _of(n)), lambda: rs.defer(lambda: 1 / 0)),  # type: ignore[arg-type,return-value]
    "Generate": Row(lambda n: rs.generate(0, lambda i: (i, i + 1) if i < n else None)),
    # element-wise and filtering
    "Scan": _operator(lambda p: p.scan(operator.add), _of),
    "ScanInitial": Row(
        lambda n: (
            rs.empty().scan(operator.add, 0).skip(1)
            if n == 0
            else _of(n if n == ENDLESS else n - 1).scan(operator.add, 0)
        ),
    ),
    "TakeWhile": Row(
        lambda n: rs.from_iterable(Naturals()).take_while(lambda x: x < n),
        lambda: failed().take_while(lambda x: True),
    ),
    "SkipWhile": _operator(
        lambda p: p.skip_while(lambda x: x < 0),
        lambda n: rs.from_iterable(range(-5, n) if n < ENDLESS else Naturals()),
    ),
    "DistinctUntilChanged": _operator(
        lambda p: p.distinct_until_changed(), lambda n: _of(2 * n if n < ENDLESS else n).map(lambda x: x // 2)
    ),
    "StartWith": Row(lambda n: _with_values("start_with", n)),
    "EndWith": Row(lambda n: _with_values("end_with", n), lambda: failed().end_with(-1)),
    "Prepend": Row(
        lambda n: _finite_first(n, lambda half, rest: _of(rest).prepend(rs.range(0, half))),
        lambda: failed().prepend(rs.empty()),
    ),
    "Append": Row(
        lambda n: _finite_first(n, lambda half, rest: rs.range(0, half).append(_of(rest))),
        lambda: failed().append(rs.just(1)),
    ),
    "DefaultIfEmpty": Row(
        lambda n: (
            rs.empty().default_if_empty(0).skip(1 - min(n, 1)) if n < 2 else _of(n).default_if_empty(-1)
        ),
        lambda: failed().default_if_empty(-1),
    ),
    "SwitchIfEmpty": Row(
        lambda n: rs.empty().switch_if_empty(_of(n)), lambda: rs.empty().switch_if_empty(failed())
    ),
    "ConcatMap": _operator(lambda p: p.concat_map(lambda x: rs.just(x)), _of),
    "Tap": _operator(lambda p: p.tap(on_next=lambda x: None, on_request=lambda n: None), _of),
    # combining
    # Ints, not tuples: a tuple is an Object[] in Java, equal only to itself, which the TCK's
    # multi-subscriber tests would take for different elements.
    "Zip": Row(
        lambda n: rs.zip(_of(n), rs.from_iterable(Naturals())).map(lambda pair: pair[0]),
        lambda: rs.zip(failed(), rs.never()),
    ),
    # errors
    "Catch": Row(
        lambda n: _finite_first(
            n,
            lambda half, rest: rs.range(0, half).append(rs.error(Boom("caught"))).catch(lambda e: _of(rest)),
        ),
        lambda: rs.error(Boom("caught")).catch(lambda e: failed()),
    ),
    "OnErrorReturn": Row(
        lambda n: (
            _empty_as_skipped(
                n, lambda: rs.range(0, 0).append(rs.error(Boom("returned"))).on_error_return(-1)
            )
            if n < 2
            else _of(n if n == ENDLESS else n - 1).append(rs.error(Boom("returned"))).on_error_return(-1)
        ),
        lambda: failed().on_error_return(lambda e: 1 / 0),  # type: ignore[arg-type,return-value]
    ),
    "Retry": Row(_flaky, lambda: failed().retry(2)),
    # aggregates
    "Reduce": _aggregate(lambda p: p.reduce(operator.add)),
    "ReduceInitial": _aggregate(lambda p: p.reduce(operator.add, 0)),
    "Count": _aggregate(lambda p: p.count()),
    "Sum": _aggregate(lambda p: p.sum()),
    "Min": _aggregate(lambda p: p.min()),
    "Max": _aggregate(lambda p: p.max(key=lambda x: -x)),
    "Average": _aggregate(lambda p: p.average()),
    "All": _aggregate(lambda p: p.all(lambda x: x < 5)),
    "Some": _aggregate(lambda p: p.some(lambda x: x > 100)),
    "Contains": _aggregate(lambda p: p.contains(3)),
    "ElementAt": _aggregate(lambda p: p.element_at(4)),
    "First": _aggregate(lambda p: p.first()),
    "FirstMatching": _aggregate(lambda p: p.first(lambda x: x > 5)),
    "Last": _aggregate(lambda p: p.last()),
    "ToList": _aggregate(lambda p: p.to_list()),
}


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
