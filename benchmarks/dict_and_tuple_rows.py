"""Dict rows from the JVM and tuples to it (issue 45, part 3), each against what Python itself pays
for the same conversion from or into the same Arrow columns, measured in one run per backend.

The rows are `WorkingRows`' (the test-support jar), made before the run: five columns (long id,
double, String, Boolean, String null every 3rd row).

- ``Map rows → dicts``: ``WorkingRows.madeMaps(N)`` (a ``HashMap`` a row, the null kept under its
  key) through ``bridge.from_jvm(Flux.fromIterable(...))`` into the benchmarks' counting
  subscriber (``request(256)``, 1,024 outstanding), one ``on_next`` a dict. Python's own cost: the
  same rows as ``pyarrow.RecordBatch``es of 1,024 rows (what that subscriber's demand lets cross
  at a time), made before the run, turned into dicts in Python and handed to the same
  subscriber's ``on_next``: ``RecordBatch.to_pylist()``, and each column's ``to_pylist()`` zipped
  into dicts; the faster of the two is the bound.
- ``Python → JVM tuples``: the same rows as Python tuples through
  ``bridge.to_jvm(rs.from_iterable(rows))``, counted in the JVM (``Flux.from(p).count()``).
  Python's own cost: the same tuples read into Arrow, 8,192 at a time (the bridge's ``max_batch``):
  a column at a time into ``pyarrow.array``, then ``RecordBatch.from_arrays``, with pyarrow
  inferring each column's type, and with the types given; the faster is the bound. Beside it,
  the same with the checks the bridge makes before it sends rows as Arrow (every element a tuple,
  all of one width, a float column all floats: pyarrow alone would take ints and bools among
  them, where Java must see what the pickle gives): what no bridge that keeps the values exact
  can beat.

    python benchmarks/dict_and_tuple_rows.py [--rows N] [--repeat R] [--warm-up W] [--quick]
        [--backends jpype py4j]

Each scenario runs ``--warm-up`` unmeasured times, then ``--repeat`` times interleaved with the
others, and keeps its best. ``--quick`` prints the table and writes nothing; otherwise the
``dict-and-tuple-rows`` section of RESULTS.md and ``results/dict-and-tuple-rows.json`` are written.
"""

from __future__ import annotations

import argparse
import gc
import operator
import time
from collections.abc import Callable
from itertools import repeat
from pathlib import Path
from typing import Any

import pyarrow

import reactive_streams as rs
from reactive_streams.jvm import Bridge

try:
    from . import _report
except ImportError:  # run as a script
    import _report  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
TEST_JARS = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("*.jar"))
TARGET = 0.8  # of Python's own cost (issue 45)
REQUEST = 256  # the counting subscriber's request, 4 outstanding
AHEAD = 4
CROSSING = REQUEST * AHEAD  # rows per Arrow batch in Python's own dicts
CHUNK = 8192  # the bridge's max_batch: rows per Arrow batch in Python's own tuples
NAMES = ["id", "amount", "label", "even", "note"]
TYPES = [pyarrow.int64(), pyarrow.float64(), pyarrow.string(), pyarrow.bool_(), pyarrow.string()]


def _counter() -> _report.CountingSubscriber:
    return _report.CountingSubscriber(REQUEST, None, AHEAD)


def _record_batches(rows: list[tuple[Any, ...]], size: int) -> list[pyarrow.RecordBatch]:
    batches = []
    for start in range(0, len(rows), size):
        chunk = rows[start : start + size]
        columns = [pyarrow.array([row[i] for row in chunk], type=TYPES[i]) for i in range(len(NAMES))]
        batches.append(pyarrow.RecordBatch.from_arrays(columns, names=NAMES))
    return batches


def _dicts_into_on_next(
    dicts_of: Callable[[pyarrow.RecordBatch], Any], batches: list[pyarrow.RecordBatch], count: int
) -> float:
    """Python's own: ``dicts_of(batch)`` for each batch, each dict to the same subscriber's ``on_next``."""
    counter = _counter()
    counter.subscription = _report.NoSubscription()
    on_next = counter.on_next
    gc.collect()  # as before the bridge's runs
    start = time.perf_counter()
    for batch in batches:
        for row in dicts_of(batch):
            on_next(row)
    elapsed = time.perf_counter() - start
    assert counter.count == count
    return count / elapsed


def _zipped_columns(batch: pyarrow.RecordBatch) -> Any:
    """Each column's ``to_pylist()``, zipped into dicts."""
    names = batch.schema.names
    return map(
        dict, map(zip, repeat(names), zip(*(column.to_pylist() for column in batch.columns), strict=False))
    )


def tuples_into_arrow(rows: list[tuple[Any, ...]], typed: bool) -> float:
    """Python's own: the tuples read into Arrow record batches of ``CHUNK`` rows, a column at a time."""
    gc.collect()  # as before the bridge's runs
    start = time.perf_counter()
    made = 0
    for first in range(0, len(rows), CHUNK):
        chunk = rows[first : first + CHUNK]
        arrays = [
            pyarrow.array(list(map(operator.itemgetter(i), chunk)), type=TYPES[i] if typed else None)
            for i in range(len(NAMES))
        ]
        made += pyarrow.RecordBatch.from_arrays(arrays, names=NAMES).num_rows
    elapsed = time.perf_counter() - start
    assert made == len(rows)
    return len(rows) / elapsed


def tuples_into_arrow_checked(rows: list[tuple[Any, ...]]) -> float:
    """`tuples_into_arrow` (inferred) with the checks the bridge makes first: every element a
    tuple, every row as wide as the first, and a column pyarrow made floats all floats."""
    gc.collect()  # as before the bridge's runs
    start = time.perf_counter()
    made = 0
    for first in range(0, len(rows), CHUNK):
        chunk = rows[first : first + CHUNK]
        assert set(map(type, chunk)) == {tuple} and set(map(len, chunk)) == {len(NAMES)}
        columns = [list(map(operator.itemgetter(i), chunk)) for i in range(len(NAMES))]
        arrays = [pyarrow.array(column) for column in columns]
        for column, array in zip(columns, arrays, strict=True):
            if array.type == pyarrow.float64():
                assert set(map(type, column)) - {type(None)} == {float}
        made += pyarrow.RecordBatch.from_arrays(arrays, names=NAMES).num_rows
    elapsed = time.perf_counter() - start
    assert made == len(rows)
    return len(rows) / elapsed


def _tuples_verdict(bridge: float, bound: float, checked: float) -> str:
    """The Python → JVM tuples target: met at ``TARGET`` of Python's own reading (``bound``);
    blocked only when the checks that keep Java's values exact hold Python's own reading
    (``checked``) below the target and the bridge reaches the target of that reading, so that
    the shortfall is the checks' and not the bridge's; else not met, with what the checks leave."""
    if bridge >= TARGET * bound:
        return "met"
    if checked < TARGET * bound and bridge >= TARGET * checked:
        return (
            f"blocked: the checks that keep Java's values exact leave Python's own reading "
            f"{checked / bound:.0%} of it ({checked:,.0f} rows/s), and the bridge reaches "
            f"{bridge / checked:.0%} of that"
        )
    return (
        f"NOT met: the bridge reaches {bridge / checked:.0%} of Python's own reading with the checks "
        f"that keep Java's values exact ({checked:,.0f} rows/s), short of {TARGET:.0%} of it"
    )


class Backend:
    """One bridge's scenarios over the same rows."""

    def __init__(self, bridge: Bridge, count: int) -> None:
        self.bridge = bridge
        self.count = count
        working_rows = bridge.jvm.io.github.rspy.bridge.testing.WorkingRows
        self.flux = bridge.jvm.reactor.core.publisher.Flux
        self.maps = working_rows.madeMaps(count)
        self.working_rows = working_rows
        self.tuples: list[tuple[Any, ...]] = list(
            rs.iterate(bridge.from_jvm(self.flux.fromIterable(working_rows.made(count))))
        )
        assert len(self.tuples) == count and len(self.tuples[0]) == len(NAMES)
        self.batches = _record_batches(self.tuples, CROSSING)

    def maps_to_dicts(self) -> float:
        counter = _counter()
        publisher = self.bridge.from_jvm(self.flux.fromIterable(self.maps))
        gc.collect()
        start = time.perf_counter()
        publisher.subscribe(counter)
        counter.done.wait()
        elapsed = time.perf_counter() - start
        assert counter.error is None and counter.count == self.count, (counter.error, counter.count)
        return self.count / elapsed

    def maps_to_dicts_iterated(self) -> float:
        """The loop a user writes: ``for row in rs.iterate(...)`` (iterate's own prefetch)."""
        publisher = self.bridge.from_jvm(self.flux.fromIterable(self.maps))
        gc.collect()
        count = 0
        start = time.perf_counter()
        for _ in rs.iterate(publisher):
            count += 1
        elapsed = time.perf_counter() - start
        assert count == self.count, count
        return self.count / elapsed

    def tuples_to_jvm(self) -> float:
        java = self.bridge.to_jvm(rs.from_iterable(self.tuples))
        gc.collect()
        start = time.perf_counter()
        counted = int(self.working_rows.countAlone(java))
        elapsed = time.perf_counter() - start
        assert counted == self.count, (counted, self.count)
        return self.count / elapsed

    def scenarios(self) -> dict[str, Callable[[], float]]:
        return {
            "maps_to_dicts": self.maps_to_dicts,
            "maps_to_dicts_iterated": self.maps_to_dicts_iterated,
            "dicts_to_pylist": lambda: _dicts_into_on_next(
                pyarrow.RecordBatch.to_pylist, self.batches, self.count
            ),
            "dicts_from_columns": lambda: _dicts_into_on_next(_zipped_columns, self.batches, self.count),
            "tuples_to_jvm": self.tuples_to_jvm,
            "tuples_into_arrow_inferred": lambda: tuples_into_arrow(self.tuples, typed=False),
            "tuples_into_arrow_typed": lambda: tuples_into_arrow(self.tuples, typed=True),
            "tuples_into_arrow_checked": lambda: tuples_into_arrow_checked(self.tuples),
        }

    def first_dict(self) -> dict[str, Any]:
        """The first dict the bridge gives, which must be the one Python makes of the same columns."""
        got = next(iter(rs.iterate(self.bridge.from_jvm(self.flux.fromIterable(self.maps)))))
        assert got == self.batches[0].to_pylist()[0], (got, self.batches[0].to_pylist()[0])
        return dict(got)


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rows: list[dict[str, Any]] = []
        self.targets: list[str] = []
        self.warmth: list[str] = []  # each backend's warm-up: until the JVM's compiler settled
        self.extra: dict[str, Any] = {"rows": args.rows, "repeat": args.repeat, "warm_up": args.warm_up}

    def row(
        self, backend: str, scenario: str, rate: float, bound: float | None = None, met: bool | None = None
    ) -> None:
        self.rows.append(
            {
                "backend": backend,
                "scenario": scenario,
                "rows/s": rate,
                "÷ Python's own": f"{rate / bound:.0%}" if bound else "-",
                "target": "-" if met is None else ("met" if met else "NOT met"),
            }
        )

    def backend(self, name: str, bridge: Bridge) -> None:
        backend = Backend(bridge, self.args.rows)
        backend.first_dict()
        warmth = _report.Warmth(bridge)
        best = _report.best_of(backend.scenarios(), self.args.warm_up, self.args.repeat, warmth)
        self.warmth.append(f"{name}: {warmth.text()}.")
        dicts_bound = max(best["dicts_to_pylist"], best["dicts_from_columns"])
        tuples_bound = max(best["tuples_into_arrow_inferred"], best["tuples_into_arrow_typed"])
        self.row(name, "Python's own: 1,024-row RecordBatch.to_pylist() → on_next", best["dicts_to_pylist"])
        self.row(
            name, "Python's own: columns' to_pylist() zipped into dicts → on_next", best["dicts_from_columns"]
        )
        dicts_met = best["maps_to_dicts"] >= TARGET * dicts_bound
        self.row(
            name,
            "JVM `HashMap` rows → dicts, counting subscriber (request(256), 1,024 outstanding)",
            best["maps_to_dicts"],
            dicts_bound,
            dicts_met,
        )
        self.row(
            name,
            "JVM `HashMap` rows → dicts, `for row in rs.iterate(…)` (not a target: the loop a user writes)",
            best["maps_to_dicts_iterated"],
            dicts_bound,
        )
        self.row(
            name,
            "Python's own: tuples → pyarrow.array per column (inferred) → RecordBatch",
            best["tuples_into_arrow_inferred"],
        )
        self.row(
            name,
            "Python's own: tuples → pyarrow.array per column (types given) → RecordBatch",
            best["tuples_into_arrow_typed"],
        )
        checked = best["tuples_into_arrow_checked"]
        self.row(
            name,
            "Python's own (inferred) with the bridge's checks: every element a tuple of one width, "
            "floats only floats",
            checked,
            tuples_bound,
        )
        tuples_met = best["tuples_to_jvm"] >= TARGET * tuples_bound
        self.row(
            name,
            "Python tuples → JVM, `from_iterable` → `count()`",
            best["tuples_to_jvm"],
            tuples_bound,
            tuples_met,
        )
        self.targets.append(
            f"{name} Map rows → dicts ≥ {TARGET:.0%} of Python's own making of the same dicts from the same "
            f"columns ({dicts_bound:,.0f} rows/s) — {best['maps_to_dicts'] / dicts_bound:.0%}: "
            f"{'met' if dicts_met else 'NOT met'}."
        )
        verdict = _tuples_verdict(best["tuples_to_jvm"], tuples_bound, checked)
        self.targets.append(
            f"{name} Python → JVM tuples ≥ {TARGET:.0%} of Python's own reading of them into Arrow "
            f"({tuples_bound:,.0f} rows/s) — {best['tuples_to_jvm'] / tuples_bound:.0%}: {verdict}."
        )
        self.extra[name] = dict(best)
        gc.collect()
        assert int(bridge.runtime.arrowAllocatedBytes()) == 0, "Arrow memory held after the runs"

    def print_table(self) -> None:
        for row in self.rows:
            print(" | ".join(f"{v:,.0f}" if isinstance(v, float) else str(v) for v in row.values()))
        for line in self.warmth + self.targets:
            print("-", line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _report.run_options(parser, 300_000)
    args = _report.parse_run_options(parser)

    run = Run(args)
    _report.on_each_bridge(args.backends, TEST_JARS, run.backend)
    if args.quick:
        run.print_table()
        return
    _report.write(
        "dict-and-tuple-rows",
        "Dict rows from the JVM and tuples to it, against Python's own conversion of the same columns",
        run.rows,
        [
            f"{args.rows:,} rows of `WorkingRows` made before the run, best of {args.repeat} interleaved "
            f"runs after at least {args.warm_up} unmeasured runs of each, and more until the JVM's "
            "compiler settled (`_report.Warmth`); every run starts from a collected heap.",
            *run.warmth,
            "Map rows → dicts: `WorkingRows.madeMaps` (a `HashMap` a row, nulls kept under their key) "
            "through `bridge.from_jvm(Flux.fromIterable(…))`; Python's own: the same rows as 1,024-row "
            "`pyarrow.RecordBatch`es made before the run, turned into dicts and handed to the same "
            "subscriber (the faster of `to_pylist()` and zipped columns is the bound).",
            "Python → JVM tuples: `bridge.to_jvm(rs.from_iterable(tuples))` counted in the JVM; "
            "Python's own: the same tuples read into 8,192-row record batches a column at a time (the "
            "faster of inferred and given types is the bound); with the bridge's checks: the same, "
            "after checking that every element is a tuple as wide as the first and that a column "
            "pyarrow made floats holds only floats (Java must see what the pickle gives).",
            *run.targets,
        ],
        run.extra,
    )


if __name__ == "__main__":
    main()
