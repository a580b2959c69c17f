"""The last mile (issue 34): the loop a user writes, against the bare loop and the generator it
replaces, in one run.

Core (always): a bare ``for`` loop over ``range(N)`` (the baseline), ``for x in rs.iterate(...)``
and ``async for x in rs.aiterate(...)`` over ``rs.from_iterable(range(N))``, and
``rs.iterate(from_iterable → map → filter)`` against the plain generator doing the same work.
Beside them, what bounds each: a generator, a ``chain`` and an async generator yielding from
pre-made 1,024-element lists (a hand-over in chunks with nothing else to do), and a counting
subscriber on the same publisher (what the bridge-side benchmarks measure).

DataFrame (``--dataframe``, local Spark): ``for row in rs.iterate(rss.publisher_from_dataframe(df))``
over 10^6 rows (long, double, string) against a counting subscriber on the same publisher and
``df.toLocalIterator()``.

    python benchmarks/last_mile.py [--elements N] [--repeat R] [--dataframe] [--rows N]

Each scenario runs ``--repeat`` times, interleaved with the others, and keeps its best: the
machine is the same for all of them. Writes the ``last-mile`` (and ``last-mile-dataframe``)
sections of RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import Callable
from itertools import chain
from typing import Any

import reactive_streams as rs

try:
    from . import _report
except ImportError:  # run as a script
    import _report  # type: ignore[no-redef]

CHUNK = 1024


def _plus_one(x: int) -> int:
    return x + 1


def _not_thirds(x: int) -> int:
    return x % 3


# Each scenario takes N and returns the last element it saw (checked). The loops run inside
# functions, as a user's do, and have the bare loop's empty body: what is measured is the loop.


def bare_loop(n: int) -> int:
    for last in range(n):  # noqa: B007 (the last is the check)
        pass
    return last


def chunks_of(n: int) -> list[list[int]]:
    return [list(range(i, min(i + CHUNK, n))) for i in range(0, n, CHUNK)]


def chunked_generator(chunks: list[list[int]]) -> Callable[[int], int]:
    def elements() -> Any:
        for chunk in chunks:
            yield from chunk

    def run(n: int) -> int:
        for last in elements():  # noqa: B007 (the last is the check)
            pass
        return last

    return run


def chunked_chain(chunks: list[list[int]]) -> Callable[[int], int]:
    def run(n: int) -> int:
        for last in chain.from_iterable(chunks):  # noqa: B007 (the last is the check)
            pass
        return last

    return run


def chunked_async_generator(chunks: list[list[int]]) -> Callable[[int], int]:
    async def elements() -> Any:
        for chunk in chunks:
            for item in chunk:
                yield item

    async def main() -> int:
        async for last in elements():  # noqa: B007 (the last is the check)
            pass
        return last

    return lambda n: asyncio.run(main())


class _Lists(rs.Subscriber[Any]):
    """Takes every list ``from_iterable`` makes, at once (unbounded demand), doing nothing else."""

    def __init__(self) -> None:
        self.lists: list[list[Any]] = []

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        subscription.request(rs.MAX_DEMAND)

    def on_next(self, item: Any) -> None:
        self.lists.append([item])

    def on_next_batch(self, items: list[Any]) -> None:
        self.lists.append(items)

    def on_error(self, exc: BaseException) -> None:
        raise exc

    def on_complete(self) -> None:
        pass


def source_lists(n: int) -> list[list[int]]:
    lists = _Lists()
    rs.from_iterable(range(n)).subscribe(lists)
    return lists.lists


def source_then_chain(n: int) -> int:
    for last in chain.from_iterable(source_lists(n)):  # noqa: B007 (the last is the check)
        pass
    return last


def source_then_async_generator(n: int) -> int:
    async def elements(lists: list[list[int]]) -> Any:
        for chunk in lists:
            for item in chunk:
                yield item

    async def main() -> int:
        async for last in elements(source_lists(n)):  # noqa: B007 (the last is the check)
            pass
        return last

    return asyncio.run(main())


def iterate(prefetch: int) -> Callable[[int], int]:
    def run(n: int) -> int:
        for last in rs.iterate(rs.from_iterable(range(n)), prefetch=prefetch):  # noqa: B007 (the last is the check)
            pass
        return last

    return run


def aiterate(prefetch: int) -> Callable[[int], int]:
    def run(n: int) -> int:
        async def main() -> int:
            async for last in rs.aiterate(rs.from_iterable(range(n)), prefetch=prefetch):  # noqa: B007 (the last is the check)
                pass
            return last

        return asyncio.run(main())

    return run


def subscriber(n: int) -> int:
    counter = _report.CountingSubscriber(256)
    rs.from_iterable(range(n)).subscribe(counter)
    assert counter.done.is_set() and counter.count == n
    return n - 1


def generator_map_filter(n: int) -> int:
    for last in (y for y in map(_plus_one, range(n)) if _not_thirds(y)):  # noqa: B007 (the last is the check)
        pass
    return last


def iterate_map_filter(prefetch: int) -> Callable[[int], int]:
    def run(n: int) -> int:
        publisher = rs.from_iterable(range(n)).map(_plus_one).filter(_not_thirds)
        for last in rs.iterate(publisher, prefetch=prefetch):  # noqa: B007 (the last is the check)
            pass
        return last

    return run


def best_rates(scenarios: dict[str, Callable[[int], int]], n: int, repeat: int) -> dict[str, float]:
    """Elements per second of each scenario, the best of ``repeat`` interleaved runs (each one's
    last element checked: ``n - 1``, or for map → filter the last of 1..n it keeps)."""
    best = dict.fromkeys(scenarios, 0.0)
    for _ in range(repeat):
        for name, run in scenarios.items():
            gc.collect()
            start = time.perf_counter()
            last = run(n)
            elapsed = time.perf_counter() - start
            expected = max(y for y in range(n - 2, n + 1) if y % 3) if "map filter" in name else n - 1
            assert last == expected, f"{name}: ended with {last}, expected {expected}"
            best[name] = max(best[name], n / elapsed)
    return best


def core(n: int, repeat: int) -> None:
    chunks = chunks_of(n)  # made once, outside the timed runs
    scenarios: dict[str, Callable[[int], int]] = {
        "bare": bare_loop,
        "generator": chunked_generator(chunks),
        "chain": chunked_chain(chunks),
        "async generator": chunked_async_generator(chunks),
        "source then chain": source_then_chain,
        "source then async generator": source_then_async_generator,
        "subscriber": subscriber,
        "iterate 256": iterate(256),
        "iterate 1024": iterate(1024),
        "aiterate 256": aiterate(256),
        "aiterate 1024": aiterate(1024),
        "map filter generator": generator_map_filter,
        "iterate map filter 256": iterate_map_filter(256),
        "iterate map filter 1024": iterate_map_filter(1024),
    }
    rate = best_rates(scenarios, n, repeat)
    bare, generator = rate["bare"], rate["map filter generator"]
    rows: list[dict[str, Any]] = []

    def row(scenario: str, name: str, baseline: float, target: float | None = None) -> float:
        ratio = rate[name] / baseline
        verdict = "" if target is None else ("met" if ratio >= target else "NOT met") + f" (≥ {target:.0%})"
        rows.append({"scenario": scenario, "elements/s": rate[name], "ratio": ratio, "target": verdict})
        return ratio

    row("bare `for x in range(N): pass` (baseline)", "bare", bare)
    row("bound: a generator yielding from 1,024-element lists", "generator", bare)
    row("bound: `chain.from_iterable` over 1,024-element lists", "chain", bare)
    row("bound: an async generator yielding from 1,024-element lists", "async generator", bare)
    row("bound: from_iterable's own lists (unbounded demand), then `chain`", "source then chain", bare)
    row(
        "bound: from_iterable's own lists (unbounded demand), then an async generator",
        "source then async generator",
        bare,
    )
    row("from_iterable → counting subscriber, request(256)", "subscriber", bare)
    row(
        "`for` over `rs.iterate(from_iterable(range(N)))`, prefetch 1,024 (default)",
        "iterate 1024",
        bare,
        0.25,
    )
    row("`for` over `rs.iterate(...)`, prefetch 256 (the default before)", "iterate 256", bare, 0.25)
    row("`async for` over `rs.aiterate(...)`, prefetch 1,024 (default)", "aiterate 1024", bare, 0.15)
    row("`async for` over `rs.aiterate(...)`, prefetch 256", "aiterate 256", bare, 0.15)
    row(
        "`(y for y in map(f, range(N)) if g(y))` (baseline for the next two)",
        "map filter generator",
        generator,
    )
    row(
        "`rs.iterate(from_iterable → map → filter)`, prefetch 1,024 (default)",
        "iterate map filter 1024",
        generator,
        0.5,
    )
    row("`rs.iterate(from_iterable → map → filter)`, prefetch 256", "iterate map filter 256", generator, 0.5)
    async_bound = rate["async generator"] / bare
    source_async_bound = rate["source then async generator"] / bare
    _report.write(
        "last-mile",
        "The last mile: the user's loop (issue 34)",
        rows,
        [
            f"{n:,} elements, best of {repeat} interleaved runs; every loop's body is `pass`; ratios to "
            "the bare loop, or to the generator for map → filter; peak RSS "
            f"{_report.peak_rss_mib():.0f} MiB.",
            f"An async generator alone, yielding from lists made beforehand, runs at {async_bound:.0%} of "
            "the bare loop: that bounds any `async for` here. With the lists made by "
            "`from_iterable(range(N))` in the same run, which any consumer of it waits for: "
            f"{source_async_bound:.0%}.",
        ],
        {"elements": n, "repeat": repeat, "rates": rate},
    )


def dataframe(rows_wanted: int, repeat: int) -> None:
    from pyspark.sql import SparkSession

    from reactive_streams import spark as rss

    spark = (
        rss.configure(SparkSession.builder.master("local[2]"))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(0, rows_wanted, numPartitions=8).selectExpr(
        "id", "CAST(id AS DOUBLE) * 0.5 AS x", "CONCAT('name-', LPAD(CAST(id AS STRING), 7, '0')) AS s"
    )
    df.cache().count()

    def local_iterator(_: int) -> int:
        for last in df.toLocalIterator():  # noqa: B007 (the last is the check)
            pass
        return int(last.id)

    def counted(_: int) -> int:
        counter = _report.CountingSubscriber(1024)
        rss.publisher_from_dataframe(df, prefetch_partitions=1).subscribe(counter)
        counter.done.wait()
        assert counter.error is None and counter.count == rows_wanted
        return rows_wanted - 1

    def iterated(prefetch: int) -> Callable[[int], int]:
        def run(_: int) -> int:
            rows = rs.iterate(rss.publisher_from_dataframe(df, prefetch_partitions=1), prefetch=prefetch)
            for last in rows:  # noqa: B007 (the last is the check)
                pass
            return int(last.id)

        return run

    scenarios = {
        "toLocalIterator": local_iterator,
        "subscriber": counted,
        "iterate 256": iterated(256),
        "iterate 1024": iterated(1024),
    }
    counted(0)  # warmed: the JVM compiles the path
    rate = best_rates(scenarios, rows_wanted, repeat)
    baseline, by_subscriber = rate["toLocalIterator"], rate["subscriber"]
    rows = []
    for name, scenario in (
        ("toLocalIterator", "`df.toLocalIterator()` (baseline)"),
        ("subscriber", "publisher_from_dataframe → counting subscriber, request(1024)"),
        ("iterate 1024", "`for` over `rs.iterate(publisher_from_dataframe(df))`, prefetch 1,024 (default)"),
        ("iterate 256", "`for` over `rs.iterate(publisher_from_dataframe(df))`, prefetch 256"),
    ):
        ok = rate[name] >= 0.8 * by_subscriber and rate[name] >= 4 * baseline
        rows.append(
            {
                "scenario": scenario,
                "rows/s": rate[name],
                "× toLocalIterator": rate[name] / baseline,
                "of the subscriber": rate[name] / by_subscriber,
                "target": ("met" if ok else "NOT met") if name.startswith("iterate") else "",
            }
        )
    spark.stop()
    _report.write(
        "last-mile-dataframe",
        "The last mile: DataFrame rows in the user's loop (issue 34)",
        rows,
        [
            f"{rows_wanted:,} rows (long, double, 12-character string; the double made as "
            "`CAST(id AS DOUBLE) * 0.5`: Spark types `id * 0.5` DECIMAL(22, 1), which spark_interop.py's "
            "and spark_connect.py's DataFrames hold), cached, 8 partitions, local[2]; "
            f"best of {repeat} interleaved runs.",
            "Target: `rs.iterate` ≥ 80% of the subscriber and ≥ 4× `toLocalIterator`.",
        ],
        {"rows": rows_wanted, "repeat": repeat, "rates": rate},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dataframe", action="store_true", help="also the DataFrame scenarios (local Spark)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    core(args.elements, args.repeat)
    if args.dataframe:
        dataframe(args.rows, args.repeat)


if __name__ == "__main__":
    main()
