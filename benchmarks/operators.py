"""The operator library (issue 42): each operator in the loop a user writes, against the same work
done the plain-Python way and in RxPY, in one run.

- Element-wise: ``for x in rs.iterate(rs.from_iterable(range(N)).op(...))`` for each element-wise
  operator, against the same work as a user writes it without this library: ``map``, ``filter``
  and ``itertools`` where they have it (``accumulate``, ``takewhile``, ``dropwhile``, ``chain``,
  ``groupby``, ``islice``), a generator function otherwise (``tap``, ``default_if_empty``,
  ``switch_if_empty``). Both sides call the same user functions. Target: at least 50% of it.
- Aggregates: ``rs.from_iterable(range(N)).sum()`` (and ``count``, ``min``, ``max``, ``average``,
  ``reduce``, ``all``, ``some``, ``contains``, ``element_at``, ``last``, ``to_list``), its one
  element read with ``next(iter(rs.iterate(...)))``, against Python's own (``sum``, ``max``,
  ``functools.reduce``, ...) over the same iterable in the 1,024-element chunks the aggregates
  ask for. Every answer needs the whole stream (``all`` is true to the end, ``contains`` looks for
  an absent value). Target: at least 50%. ``first()``, which stops at once, is timed in the notes.
- ``zip``: ``rs.iterate(rs.zip(from_iterable(a), from_iterable(b)))`` (and ``zip_with``) against
  ``zip(a, b)``. Target: at least 50%.
- RxPY (``reactivex`` 6, which has no backpressure): the same pipelines (map → filter, scan,
  take_while, distinct_until_changed, start_with, sum, max, reduce, count, zip), subscribed with
  an ``on_next`` that keeps the last element (``.run()`` for aggregates), against this library's
  measured above. Target: at least as fast (ratio ≥ 1).

And the bounds, in the same run: a bare ``for x in range(N): pass`` and
``for x in rs.iterate(rs.from_iterable(range(N)))``, which no element-wise pipeline read through
``rs.iterate`` can beat (its ratio to each baseline is in the ``bound`` column), and
``from_iterable(range(N))`` handing its lists to a subscriber that asks for 1,024 at a time and
does nothing (what an aggregate's source costs). Every loop runs inside a function with an empty
body, as last_mile.py's; every scenario's result is checked against Python's (and, on 1,000
elements first, every element of it).

    python benchmarks/operators.py [--elements N] [--repeat R] [--quick]

Each scenario runs ``--repeat`` times, interleaved with the others, and keeps its best. Writes
the ``operators`` section of RESULTS.md and ``results/operators.json``; ``--quick`` (20,000
elements, one run each) prints the table and writes nothing.
"""

from __future__ import annotations

import argparse
import functools
import gc
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, chain, dropwhile, groupby, islice, takewhile
from operator import add
from typing import Any

import reactive_streams as rs

try:
    from . import _report
except ImportError:  # run as a script
    import _report  # type: ignore[no-redef]

try:
    import reactivex as rx
    from reactivex import operators as ops
except ImportError:  # the dev extra has it (Python 3.11 and later)
    rx = None  # type: ignore[assignment]

CHUNK = 1024  # what the aggregates ask upstream for at a time
TARGET = 0.5
CHECK = 1000  # elements of the full-sequence check before the runs


# The user's functions, the same objects on every side.


def _plus_one(x: int) -> int:
    return x + 1


def _not_thirds(x: int) -> int:
    return x % 3


def _non_negative(x: int) -> bool:
    return x >= 0


def _negative(x: int) -> bool:
    return x < 0


def _below_ten(x: int) -> bool:
    return x < 10


def _ignore(x: int) -> None:
    pass


def _just(x: int) -> rs.Publisher[int]:
    return rs.just(x)


def _single(x: int) -> tuple[int]:
    return (x,)


@functools.lru_cache(maxsize=2)
def _pairs(n: int) -> list[int]:
    """0, 0, 1, 1, 2, 2, ...: for distinct_until_changed, every other element a repeat."""
    return [i >> 1 for i in range(n)]


# The plain-Python equivalents that itertools lacks, as a user writes them.


def _tapped(iterable: Iterable[int], on_next: Callable[[int], object]) -> Iterator[int]:
    for x in iterable:
        on_next(x)
        yield x


def _default_if_empty(iterable: Iterable[int], default: int) -> Iterator[int]:
    it = iter(iterable)
    for first in it:
        yield first
        yield from it
        return
    yield default


def _switch_if_empty(iterable: Iterable[int], fallback: Iterable[int]) -> Iterator[int]:
    it = iter(iterable)
    for first in it:
        yield first
        yield from it
        return
    yield from fallback


def _batched(iterable: Iterable[int], size: int) -> Iterator[list[int]]:
    it = iter(iterable)
    return iter(lambda: list(islice(it, size)), [])


def _chunks(n: int) -> Iterator[list[int]]:
    """range(N) in the chunks the aggregates ask for."""
    return _batched(range(n), CHUNK)


def _source(n: int) -> rs.Publisher[int]:
    return rs.from_iterable(range(n))


# Python's own aggregates over the chunks.


def _py_sum(n: int) -> int:
    total = 0
    for chunk in _chunks(n):
        total += sum(chunk)
    return total


def _py_count(n: int) -> int:
    total = 0
    for chunk in _chunks(n):
        total += len(chunk)
    return total


def _py_min(n: int) -> int:
    return min(min(chunk) for chunk in _chunks(n))


def _py_max(n: int) -> int:
    return max(max(chunk) for chunk in _chunks(n))


def _py_average(n: int) -> float:
    total = count = 0
    for chunk in _chunks(n):
        total += sum(chunk)
        count += len(chunk)
    return total / count


def _py_reduce(n: int) -> int:
    value = 0
    for chunk in _chunks(n):
        value = functools.reduce(add, chunk, value)
    return value


def _py_all(n: int) -> bool:
    for chunk in _chunks(n):
        if not all(map(_non_negative, chunk)):
            return False
    return True


def _py_some(n: int) -> bool:
    for chunk in _chunks(n):
        if any(map(_negative, chunk)):
            return True
    return False


def _py_contains(n: int) -> bool:
    for chunk in _chunks(n):
        if -1 in chunk:
            return True
    return False


def _py_element_at(n: int) -> int:
    index, seen = n - 1, 0
    for chunk in _chunks(n):
        if index < seen + len(chunk):
            return chunk[index - seen]
        seen += len(chunk)
    raise IndexError(index)


def _py_last(n: int) -> int:
    for chunk in _chunks(n):
        last = chunk[-1]
    return last


def _py_to_list(n: int) -> list[int]:
    result: list[int] = []
    for chunk in _chunks(n):
        result.extend(chunk)
    return result


@dataclass
class Case:
    """One scenario: this library's pipeline (``core``: N -> a publisher), Python's own
    (``plain``: N -> an iterable, or the aggregate's value) and RxPY's (N -> an observable)."""

    key: str
    label: str
    kind: str  # "element-wise", "aggregate" or "zip"
    core: Callable[[int], rs.Publisher[Any]]
    plain: Callable[[int], Any]
    plain_label: str
    rx: Callable[[int], Any] | None = None
    floor: str = ""  # the name of a floor of its own (`FLOORS`), when iterate's is not the tight one
    prefetch: int = 1024  # iterate's, for element-wise rows


def _rx_source(n: int) -> Any:
    return rx.from_iterable(range(n))


def cases() -> list[Case]:
    e, a = "element-wise", "aggregate"
    chain_first = "`chain((-1,), range(N))`"
    chain_last = "`chain(range(N), (N,))`"
    has_rx = rx is not None
    return [
        Case(
            "map",
            "`map(f)`",
            e,
            lambda n: _source(n).map(_plus_one),
            lambda n: map(_plus_one, range(n)),
            "`map(f, range(N))`",
        ),
        Case(
            "filter",
            "`filter(g)`",
            e,
            lambda n: _source(n).filter(_not_thirds),
            lambda n: filter(_not_thirds, range(n)),
            "`filter(g, range(N))`",
        ),
        Case(
            "map filter",
            "`map(f).filter(g)`",
            e,
            lambda n: _source(n).map(_plus_one).filter(_not_thirds),
            lambda n: filter(_not_thirds, map(_plus_one, range(n))),
            "`filter(g, map(f, range(N)))`",
            (lambda n: _rx_source(n).pipe(ops.map(_plus_one), ops.filter(_not_thirds))) if has_rx else None,
        ),
        Case(
            "scan",
            "`scan(add)`",
            e,
            lambda n: _source(n).scan(add),
            lambda n: accumulate(range(n), add),
            "`accumulate(range(N), add)`",
            (lambda n: _rx_source(n).pipe(ops.scan(add))) if has_rx else None,
        ),
        Case(
            "scan initial",
            "`scan(add, 0)`",
            e,
            lambda n: _source(n).scan(add, 0),
            lambda n: accumulate(range(n), add, initial=0),
            "`accumulate(range(N), add, initial=0)`",
        ),
        Case(
            "take_while",
            "`take_while(p)`, true to the end",
            e,
            lambda n: _source(n).take_while(_non_negative),
            lambda n: takewhile(_non_negative, range(n)),
            "`takewhile(p, range(N))`",
            (lambda n: _rx_source(n).pipe(ops.take_while(_non_negative))) if has_rx else None,
        ),
        Case(
            "skip_while",
            "`skip_while(p)`, false from the 11th",
            e,
            lambda n: _source(n).skip_while(_below_ten),
            lambda n: dropwhile(_below_ten, range(n)),
            "`dropwhile(p, range(N))`",
        ),
        Case(
            "distinct_until_changed",
            "`distinct_until_changed()`, every other element a repeat",
            e,
            lambda n: rs.from_iterable(_pairs(n)).distinct_until_changed(),
            lambda n: (k for k, _ in groupby(_pairs(n))),
            "`(k for k, _ in groupby(data))`",
            (lambda n: rx.from_iterable(_pairs(n)).pipe(ops.distinct_until_changed())) if has_rx else None,
        ),
        Case(
            "start_with",
            "`start_with(-1)`",
            e,
            lambda n: _source(n).start_with(-1),
            lambda n: chain((-1,), range(n)),
            chain_first,
            (lambda n: _rx_source(n).pipe(ops.start_with(-1))) if has_rx else None,
        ),
        Case(
            "end_with",
            "`end_with(N)`",
            e,
            lambda n: _source(n).end_with(n),
            lambda n: chain(range(n), (n,)),
            chain_last,
        ),
        Case(
            "prepend",
            "`prepend(rs.just(-1))`",
            e,
            lambda n: _source(n).prepend(rs.just(-1)),
            lambda n: chain((-1,), range(n)),
            chain_first,
        ),
        Case(
            "append",
            "`append(rs.just(N))`",
            e,
            lambda n: _source(n).append(rs.just(n)),
            lambda n: chain(range(n), (n,)),
            chain_last,
        ),
        Case(
            "default_if_empty",
            "`default_if_empty(-1)`, not empty",
            e,
            lambda n: _source(n).default_if_empty(-1),
            lambda n: _default_if_empty(range(n), -1),
            "a generator: first, then `yield from`",
        ),
        Case(
            "switch_if_empty",
            "`switch_if_empty(rs.just(-1))`, not empty",
            e,
            lambda n: _source(n).switch_if_empty(rs.just(-1)),
            lambda n: _switch_if_empty(range(n), (-1,)),
            "a generator: first, then `yield from`",
        ),
        Case(
            "concat_map",
            "`concat_map(lambda x: rs.just(x))`",
            e,
            lambda n: _source(n).concat_map(_just),
            lambda n: chain.from_iterable(map(_single, range(n))),
            "`chain.from_iterable(map(lambda x: (x,), range(N)))`",
            floor="publishers alone",
        ),
        Case(
            "tap",
            "`tap(on_next=f)`",
            e,
            lambda n: _source(n).tap(on_next=_ignore),
            lambda n: _tapped(range(n), _ignore),
            "a generator: `f(x); yield x`",
        ),
        Case(
            "take",
            "`take(N)`",
            e,
            lambda n: _source(n).take(n),
            lambda n: islice(range(n), n),
            "`islice(range(N), N)`",
        ),
        Case(
            "skip",
            "`skip(10)`",
            e,
            lambda n: _source(n).skip(10),
            lambda n: islice(range(n), 10, None),
            "`islice(range(N), 10, None)`",
        ),
        Case(
            "batch",
            "`batch(1024)`, read with `prefetch=8` (elements/s of its input)",
            e,
            lambda n: _source(n).batch(CHUNK),
            lambda n: _batched(range(n), CHUNK),
            "`iter(lambda: list(islice(it, 1024)), [])`",
            prefetch=8,  # 8 lists held; the default, 1,024 lists, holds a million elements
        ),
        Case(
            "sum",
            "`sum()`",
            a,
            lambda n: _source(n).sum(),
            _py_sum,
            "`sum(chunk)`, added up",
            (lambda n: _rx_source(n).pipe(ops.sum())) if has_rx else None,
        ),
        Case(
            "count",
            "`count()`",
            a,
            lambda n: _source(n).count(),
            _py_count,
            "`len(chunk)`, added up",
            (lambda n: _rx_source(n).pipe(ops.count())) if has_rx else None,
        ),
        Case("min", "`min()`", a, lambda n: _source(n).min(), _py_min, "`min(min(chunk) for chunk ...)`"),
        Case(
            "max",
            "`max()`",
            a,
            lambda n: _source(n).max(),
            _py_max,
            "`max(max(chunk) for chunk ...)`",
            (lambda n: _rx_source(n).pipe(ops.max())) if has_rx else None,
        ),
        Case(
            "average",
            "`average()`",
            a,
            lambda n: _source(n).average(),
            _py_average,
            "`sum(chunk)` and `len(chunk)`, added up",
        ),
        Case(
            "reduce",
            "`reduce(add, 0)`",
            a,
            lambda n: _source(n).reduce(add, 0),
            _py_reduce,
            "`functools.reduce(add, chunk, value)`",
            (lambda n: _rx_source(n).pipe(ops.reduce(add, 0))) if has_rx else None,
        ),
        Case(
            "all",
            "`all(p)`, true to the end",
            a,
            lambda n: _source(n).all(_non_negative),
            _py_all,
            "`all(map(p, chunk))`",
        ),
        Case(
            "some",
            "`some(p)`, false to the end",
            a,
            lambda n: _source(n).some(_negative),
            _py_some,
            "`any(map(p, chunk))`",
        ),
        Case(
            "contains",
            "`contains(-1)`, absent",
            a,
            lambda n: _source(n).contains(-1),
            _py_contains,
            "`-1 in chunk`",
        ),
        Case(
            "element_at",
            "`element_at(N - 1)`",
            a,
            lambda n: _source(n).element_at(n - 1),
            _py_element_at,
            "`chunk[i - seen]`, lengths added up",
        ),
        Case("last", "`last()`", a, lambda n: _source(n).last(), _py_last, "`chunk[-1]`"),
        Case(
            "to_list", "`to_list()`", a, lambda n: _source(n).to_list(), _py_to_list, "`result.extend(chunk)`"
        ),
        Case(
            "zip",
            "`rs.zip(from_iterable(a), from_iterable(b))`",
            "zip",
            lambda n: rs.zip(_source(n), _source(n)),
            lambda n: zip(range(n), range(n), strict=False),
            "`zip(a, b)`",
            (lambda n: rx.zip(_rx_source(n), _rx_source(n))) if has_rx else None,
            floor="two sources zipped",
        ),
        Case(
            "zip_with",
            "`from_iterable(a).zip_with(from_iterable(b))`",
            "zip",
            lambda n: _source(n).zip_with(_source(n)),
            lambda n: zip(range(n), range(n), strict=False),
            "`zip(a, b)`",
            floor="two sources zipped",
        ),
    ]


# The runners: N -> the last element (element-wise) or the answer (aggregates), each loop in a
# function of its own with an empty body.


def iterated(build: Callable[[int], Iterable[Any]]) -> Callable[[int], Any]:
    def run(n: int) -> Any:
        last = None
        for last in build(n):  # noqa: B007 (the last is the check)
            pass
        return last

    return run


def through_iterate(build: Callable[[int], rs.Publisher[Any]], prefetch: int = 1024) -> Callable[[int], Any]:
    def run(n: int) -> Any:
        last = None
        for last in rs.iterate(build(n), prefetch):  # noqa: B007 (the last is the check)
            pass
        return last

    return run


def answered(build: Callable[[int], rs.Publisher[Any]]) -> Callable[[int], Any]:
    return lambda n: next(iter(rs.iterate(build(n))))


def rx_subscribed(build: Callable[[int], Any]) -> Callable[[int], Any]:
    def run(n: int) -> Any:
        last = None

        def on_next(x: Any) -> None:
            nonlocal last
            last = x

        build(n).subscribe(on_next)
        return last

    return run


def rx_run(build: Callable[[int], Any]) -> Callable[[int], Any]:
    return lambda n: build(n).run()


class _Drain(rs.Subscriber[Any]):
    """from_iterable's lists taken 1,024 elements at a time, as an aggregate asks, and dropped."""

    def __init__(self) -> None:
        self.count = 0
        self.pending = 0
        self.subscription: Any = None

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(CHUNK)

    def on_next(self, item: Any) -> None:
        self.on_next_batch([item])

    def on_next_batch(self, items: list[Any]) -> None:
        self.count += len(items)
        self.pending += len(items)
        if self.pending >= CHUNK:
            self.pending -= CHUNK
            self.subscription.request(CHUNK)

    def on_error(self, exc: BaseException) -> None:
        raise exc

    def on_complete(self) -> None:
        pass


def bare_loop(n: int) -> Any:
    last = None
    for last in range(n):  # noqa: B007 (the last is the check)
        pass
    return last


def iterate_alone(n: int) -> Any:
    last = None
    for last in rs.iterate(rs.from_iterable(range(n))):  # noqa: B007 (the last is the check)
        pass
    return last


def source_alone(n: int) -> Any:
    drain = _Drain()
    rs.from_iterable(range(n)).subscribe(drain)
    return drain.count - 1


def publishers_alone(n: int) -> Any:
    """concat_map's floor: the inner publishers made (``rs.just(x)``), and nothing else."""
    x = None
    for x in range(n):
        _just(x)
    return x


def two_sources_zipped(n: int) -> Any:
    r"""zip's floor: each round, one list asked of each source (1,024, more than iterate's rounds
    of 768 ask for), zipped in C and iterated: the least that a zip of two ``from_iterable``\ s
    through iterate does."""
    left, right = _OneList(), _OneList()
    rs.from_iterable(range(n)).subscribe(left)
    rs.from_iterable(range(n)).subscribe(right)
    pair = None
    for _ in range(-(-n // CHUNK)):
        left.subscription.request(CHUNK)
        right.subscription.request(CHUNK)
        for pair in zip(left.items, right.items, strict=True):  # noqa: B007 (the last is the check)
            pass
    return pair[0] if pair is not None else None


class _OneList(rs.Subscriber[Any]):
    """Keeps the last list a request brought."""

    def __init__(self) -> None:
        self.subscription: Any = None
        self.items: list[Any] = []

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription

    def on_next(self, item: Any) -> None:
        self.items = [item]

    def on_next_batch(self, items: list[Any]) -> None:
        self.items = items

    def on_error(self, exc: BaseException) -> None:
        raise exc

    def on_complete(self) -> None:
        pass


#: The floors some operators have of their own, beside iterate's (measured with the bounds).
FLOORS: dict[str, Callable[[int], Any]] = {
    "publishers alone": publishers_alone,
    "two sources zipped": two_sources_zipped,
}


def check(all_cases: list[Case]) -> None:
    """Every element of each pipeline on CHECK elements, against Python's (and RxPY's)."""
    for case in all_cases:
        if case.kind == "aggregate":
            expected = case.plain(CHECK)
            got = [next(iter(rs.iterate(case.core(CHECK))))]
            if case.rx is not None:
                got.append(case.rx(CHECK).run())
            assert all(g == expected for g in got), f"{case.key}: {got} != {expected}"
        else:
            expected = list(case.plain(CHECK))
            got = [list(rs.iterate(case.core(CHECK)))]
            if case.rx is not None:
                seen: list[Any] = []
                case.rx(CHECK).subscribe(seen.append)
                got.append(seen)
            for g in got:
                assert g == expected, f"{case.key}: {g[:5]}...{g[-5:]} != {expected[:5]}...{expected[-5:]}"


def best_rates(all_cases: list[Case], n: int, repeat: int) -> dict[str, float]:
    """Elements per second of every scenario (``<key> core``, ``<key> plain``, ``<key> rx`` and
    the bounds), the best of ``repeat`` interleaved runs; each core and RxPY result checked
    against Python's of the same round."""
    groups: list[list[tuple[str, Callable[[int], Any]]]] = [
        [
            ("bare", bare_loop),
            ("iterate alone", iterate_alone),
            ("source alone", source_alone),
            *((f"floor: {name}", run) for name, run in FLOORS.items()),
        ]
    ]
    for case in all_cases:
        aggregate = case.kind == "aggregate"
        group = [
            (f"{case.key} plain", case.plain if aggregate else iterated(case.plain)),
            (
                f"{case.key} core",
                answered(case.core) if aggregate else through_iterate(case.core, case.prefetch),
            ),
        ]
        if not aggregate and case.prefetch != 1024:  # beside it, at iterate's default
            group.append((f"{case.key} core at 1024", through_iterate(case.core)))
        if case.rx is not None:
            group.append((f"{case.key} rx", (rx_run if aggregate else rx_subscribed)(case.rx)))
        groups.append(group)
    best: dict[str, float] = {}
    for round_ in range(repeat):
        print(f"round {round_ + 1} of {repeat}", file=sys.stderr, flush=True)
        for group in groups:
            expected: Any = None
            for i, (name, run) in enumerate(group):
                gc.collect()
                start = time.perf_counter()
                result = run(n)
                elapsed = time.perf_counter() - start
                if i == 0:
                    expected = result if name != "bare" else n - 1
                assert result == expected, f"{name}: {str(result)[:80]} != {str(expected)[:80]}"
                del result
                best[name] = max(best.get(name, 0.0), n / elapsed)
    return best


def first_latency(n: int, repeat: int) -> tuple[float, float]:
    """µs for ``first()`` on from_iterable(range(N)) through iterate, and for ``next(iter(range(N)))``."""
    core = plain = float("inf")
    for _ in range(max(repeat, 1) * 20):
        start = time.perf_counter()
        got = next(iter(rs.iterate(_source(n).first())))
        core = min(core, time.perf_counter() - start)
        start = time.perf_counter()
        expected = next(iter(range(n)))
        plain = min(plain, time.perf_counter() - start)
        assert got == expected == 0
    return core * 1e6, plain * 1e6


def table(all_cases: list[Case], rate: dict[str, float]) -> tuple[list[dict[str, Any]], list[str]]:
    rows: list[dict[str, Any]] = []
    missed: list[str] = []
    bare, iterate_rate, source_rate = rate["bare"], rate["iterate alone"], rate["source alone"]

    def row(
        scenario: str, core: float, base: float, base_label: str, target: float | None, bound: str = ""
    ) -> float:
        ratio = core / base
        rows.append(
            {
                "scenario": scenario,
                "core elements/s": core,
                "baseline": base_label,
                "baseline elements/s": base,
                "ratio": ratio,
                "target": "" if target is None else f"≥ {target:.2f}",
                "result": "" if target is None else "met" if ratio >= target else f"NOT met ({ratio:.3f})",
                "bound": bound,
            }
        )
        return ratio

    row("bound: bare `for x in range(N): pass`", bare, bare, "itself", None)
    row("bound: `for x in rs.iterate(rs.from_iterable(range(N)))`", iterate_rate, bare, "the bare loop", None)
    row(
        "bound: `from_iterable(range(N))` → a subscriber taking 1,024 at a time",
        source_rate,
        bare,
        "the bare loop",
        None,
    )
    row(
        "floor of `concat_map`: `rs.just(x)` made for each element, alone",
        rate["floor: publishers alone"],
        bare,
        "the bare loop",
        None,
    )
    row(
        "floor of `zip`: a list asked of each source a round, zipped in C and iterated",
        rate["floor: two sources zipped"],
        bare,
        "the bare loop",
        None,
    )
    for case in all_cases:
        base = rate[f"{case.key} plain"]
        own_bound = (source_rate if case.kind == "aggregate" else iterate_rate) / base
        if case.floor:  # its own floor, where it is lower
            own_bound = min(own_bound, rate[f"floor: {case.floor}"] / base)
        ratio = row(
            case.label if case.kind != "element-wise" else f"iterate: {case.label}",
            rate[f"{case.key} core"],
            base,
            case.plain_label,
            TARGET,
            f"{own_bound:.2f}",
        )
        if ratio < TARGET:
            which = (
                f"its floor ({case.floor})"
                if case.floor
                else "from_iterable's lists into a subscriber"
                if case.kind == "aggregate"
                else "iterate alone"
            )
            missed.append(
                f"`{case.key}` misses ≥ {TARGET:.2f}: {ratio:.2f}, {1 - ratio / TARGET:.0%} short; "
                f"{which} runs at {own_bound:.2f} of its baseline"
                + (
                    ", so no pipeline there can meet it"
                    if own_bound < TARGET
                    else ": the gap is the operator's own cost"
                )
                + "."
            )
    for case in all_cases:
        if f"{case.key} core at 1024" in rate:
            row(
                f"iterate: {case.label.split(',')[0]}, at iterate's default `prefetch`, 1,024 (lists held)",
                rate[f"{case.key} core at 1024"],
                rate[f"{case.key} plain"],
                case.plain_label,
                None,
            )
    for case in all_cases:
        if case.rx is None or f"{case.key} rx" not in rate:
            continue
        ratio = row(
            f"RxPY: {case.label}",
            rate[f"{case.key} core"],
            rate[f"{case.key} rx"],
            f"reactivex {rx.__version__} (no backpressure)",
            1.0,
            "",
        )
        if ratio < 1.0:
            missed.append(
                f"RxPY `{case.key}`: this core runs at {ratio:.2f} of reactivex's rate (target ≥ 1)."
            )
    return rows, missed


def print_table(rows: list[dict[str, Any]], notes: list[str]) -> None:
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("| " + " | ".join("---" for _ in columns) + " |")
    for row in rows:
        print("| " + " | ".join(_report._cell(row[c]) for c in columns) + " |")
    print()
    for note in notes:
        print(f"- {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--elements", type=int, default=None, help="elements per run (1,000,000; --quick: 20,000)"
    )
    parser.add_argument("--repeat", type=int, default=None, help="runs of each scenario (3; --quick: 1)")
    parser.add_argument("--quick", action="store_true", help="a cheap check: prints, writes nothing")
    args = parser.parse_args()
    n = args.elements or (20_000 if args.quick else 1_000_000)
    repeat = args.repeat or (1 if args.quick else 3)
    all_cases = cases()
    check(all_cases)
    rate = best_rates(all_cases, n, repeat)
    first_core, first_plain = first_latency(n, repeat)
    rows, missed = table(all_cases, rate)
    bare, iterate_rate, source_rate = rate["bare"], rate["iterate alone"], rate["source alone"]
    notes = [
        f"{n:,} elements, best of {repeat} interleaved runs; every loop's body is `pass`; each result "
        f"checked against Python's (every element, on {CHECK:,} first); peak RSS "
        f"{_report.peak_rss_mib():.0f} MiB.",
        "ratio: this core's rate over the baseline's; bound: what the pipeline's floor reaches against the "
        "same baseline, `for x in rs.iterate(from_iterable(range(N)))` for element-wise and zip rows, "
        "`from_iterable(range(N))` into a subscriber taking 1,024 at a time for aggregates, or the "
        "operator's own floor where it is lower (`concat_map`: an inner publisher made per element; "
        "`zip`: both sources' lists zipped): a ratio above it is out of reach.",
        f"Bounds: the bare loop runs at {bare:,.0f} elements/s; iterate alone at {iterate_rate:,.0f} "
        f"({iterate_rate / bare:.2f} of it); from_iterable's lists alone at {source_rate:,.0f} "
        f"({source_rate / bare:.2f}).",
        f"`first()` (stops at the first element; no target): {first_core:.0f} µs through `rs.iterate`, "
        f"against {first_plain:.1f} µs for `next(iter(range(N)))`.",
    ]
    if rx is not None:
        notes.append(
            "RxPY's `zip` of two synchronous sources takes all of the first into a list before the second "
            "starts (no backpressure), then each tuple takes from that list's front (`list.pop(0)`): its "
            "time grows with N², and so does that ratio."
        )
    if rx is None:
        notes.append("reactivex is not installed (the dev extra, Python 3.11 and later): no RxPY rows.")
    notes += missed or ["Every target met."]
    if args.quick:
        print_table(rows, notes)
        return
    _report.write(
        "operators",
        "Operators (issue 42)",
        rows,
        notes,
        {"elements": n, "repeat": repeat, "rates": rate, "first_us": [first_core, first_plain]},
    )


if __name__ == "__main__":
    main()
