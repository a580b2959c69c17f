"""The last mile from the JVM (issue 34, part 4): rows from publishers that emit on threads of
their own, against the same rows emitted synchronously, on every backend, in one run.

The rows are the throughput benchmark's ``Object[]{long, double, 12-character string}``, built in
the JVM before the runs (``ThreadedRows.rows``), from three publishers:

- ``sync``: ``Flux.fromIterable(rows)``, which emits on the thread that requests (the bridge's
  drain);
- ``publishOn``: ``Flux.fromIterable(rows).publishOn(Schedulers.parallel(), 256)``, which emits
  on Reactor's workers;
- ``submission``: a JDK ``SubmissionPublisher`` (buffer 256) fed by a JVM thread of its own and
  delivering on the common fork-join pool, as drivers and network clients emit;

each into three consumers: the benchmarks' counting subscriber requesting 1,024 at a time and
waiting for each request to be met; the same with 4,096 outstanding (demand kept ahead); and
``for _ in rs.iterate(publisher, prefetch=...)``, the loop a user writes. For each: rows/s, the
ratio to the same consumer on the synchronous rows, the ratio of iterate to the subscriber on the
same rows, and the share of the rows that crossed as Arrow record batches
(``BridgeRuntime.arrowRows``; the rest went pickled, in batches under Arrow's 16-row minimum).

And what bounds a threaded source: the same three publishers into a Java consumer thread that,
once the 1,024 rows it requested have all arrived, works on them as long as the whole synchronous
pipeline took (a busy wait) and then requests 1,024 more, with no bridge and no Python
(``ThreadedRows.stopAndWaitRate``). What that bound loses to the synchronous rows is the source's
own latency after each request, which a subscriber waiting on each request pays every time.

    python benchmarks/last_mile_jvm.py [--rows N] [--repeat R] [--prefetch N] [--quick]
        [--backends jpype py4j spark]

Each scenario runs ``--warm-up`` unmeasured times, then ``--repeat`` times interleaved with the
others, and keeps its best (the share as Arrow: its lowest). ``--quick`` (100,000 rows, one run
each) prints the table and writes nothing; otherwise the ``last-mile-jvm`` section of RESULTS.md
and ``results/last-mile-jvm.json`` are written.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import reactive_streams as rs
from reactive_streams.jvm import Bridge

try:
    from . import _report
except ImportError:  # run as a script
    import _report  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
TEST_JARS = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("*.jar"))
BATCH = 1024  # the counting subscriber's request
AHEAD = 4  # batches outstanding, for the subscriber that keeps demand ahead
BUFFER = 256  # publishOn's prefetch and the SubmissionPublisher's buffer
TARGET = 0.8
ARROW_TARGET = 0.99
SOURCES = {
    "sync": "`Flux.fromIterable(rows)`",
    "publishOn": "`….publishOn(Schedulers.parallel(), 256)`",
    "submission": "`SubmissionPublisher` fed by a JVM thread",
}
CONSUMERS = ("subscriber", "ahead", "iterate")


def _consumer_text(consumer: str, prefetch: int) -> str:
    return {
        "subscriber": "counting subscriber, request(1024) waiting on each",
        "ahead": "counting subscriber, 4,096 outstanding",
        "iterate": f"`for _ in rs.iterate(…, prefetch={prefetch:,})`",
    }[consumer]


class Backend:
    """One bridge's rows, publishers and runs."""

    def __init__(self, bridge: Bridge, rows: int, prefetch: int) -> None:
        self.bridge = bridge
        self.count = rows
        self.prefetch = prefetch
        self.threaded_rows = bridge.jvm.io.github.rspy.bridge.testing.ThreadedRows
        self.rows = self.threaded_rows.rows(rows)  # built once, in the JVM

    def publisher(self, source: str) -> Any:
        """A new JVM publisher of the rows (the SubmissionPublisher's feeds one subscriber)."""
        if source == "sync":
            return self.threaded_rows.sync(self.rows)
        if source == "publishOn":
            return self.threaded_rows.publishOn(self.rows, BUFFER)
        return self.threaded_rows.submission(self.rows, BUFFER)

    def run(self, source: str, consumer: str) -> tuple[float, float, int]:
        """Rows/s of one run, the share of its rows that crossed as Arrow, and its Arrow batches."""
        runtime = self.bridge.runtime
        arrow_rows, arrow_batches = int(runtime.arrowRows()), int(runtime.arrowBatches())
        publisher = self.bridge.from_jvm(self.publisher(source))
        gc.collect()
        start = time.perf_counter()
        if consumer == "iterate":
            count = _iterate(publisher, self.prefetch)
        else:
            counter = _report.CountingSubscriber(BATCH, None, AHEAD if consumer == "ahead" else 1)
            publisher.subscribe(counter)
            counter.done.wait()
            assert counter.error is None, counter.error
            count = counter.count
        elapsed = time.perf_counter() - start
        assert count == self.count, f"{source} → {consumer}: {count} rows of {self.count}"
        share = (int(runtime.arrowRows()) - arrow_rows) / self.count
        return self.count / elapsed, share, int(runtime.arrowBatches()) - arrow_batches

    def bound(self, source: str, nanos_per_row: int) -> float:
        """Rows/s of ``source`` into a Java consumer thread that works ``nanos_per_row`` a row on
        each 1,024 it requested once they have all arrived, then requests 1,024 more: no bridge,
        no Python."""
        return float(
            self.threaded_rows.stopAndWaitRate(self.publisher(source), self.count, BATCH, nanos_per_row)
        )


def _iterate(publisher: rs.Publisher[Any], prefetch: int) -> int:
    count = 0
    for _ in rs.iterate(publisher, prefetch=prefetch):
        count += 1
    return count


def best_of(
    scenarios: dict[Any, Callable[[], tuple[float, float, int]]], warm_up: int, repeat: int
) -> dict[Any, tuple[float, float, int]]:
    """Each scenario's best rate (with that run's Arrow batches) and lowest Arrow share, over
    ``repeat`` interleaved runs after ``warm_up`` unmeasured runs of each (the JVM compiles a
    path only after it has run it a while)."""
    for _ in range(warm_up):
        for run in scenarios.values():
            run()
    best: dict[Any, tuple[float, float, int]] = {}
    for _ in range(repeat):
        for key, run in scenarios.items():
            rate, share, batches = run()
            old_rate, old_share, old_batches = best.get(key, (0.0, 1.0, 0))
            best[key] = (
                max(rate, old_rate),
                min(share, old_share),
                batches if rate > old_rate else old_batches,
            )
    return best


class Run:
    """Every backend's scenarios, the table's rows, the figures and the verdicts."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rows: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {"rows": args.rows, "repeat": args.repeat, "prefetch": args.prefetch}
        self.targets: list[str] = []

    def target(self, text: str, met: bool) -> str:
        self.targets.append(f"{text}: {'met' if met else 'NOT met'}.")
        return "met" if met else "NOT met"

    def backend(self, name: str, bridge: Bridge) -> None:
        args = self.args
        backend = Backend(bridge, args.rows, args.prefetch)
        scenarios = {
            (source, consumer): (lambda s=source, c=consumer: backend.run(s, c))
            for source in SOURCES
            for consumer in CONSUMERS
        }
        best = best_of(scenarios, args.warm_up, args.repeat)
        # The bound, with the consumer working as long a row as the synchronous pipeline took.
        nanos = round(1e9 / best["sync", "subscriber"][0])
        bounds = {
            source: max(backend.bound(source, nanos) for _ in range(1 + max(1, args.repeat // 2)))
            for source in SOURCES
        }
        figures: dict[str, Any] = {}
        for source, text in SOURCES.items():
            for consumer in CONSUMERS:
                rate, share, batches = best[source, consumer]
                of_sync = rate / best["sync", consumer][0]
                # iterate against the subscriber that keeps as much demand outstanding
                like = "ahead" if args.prefetch >= BATCH * AHEAD else "subscriber"
                of_subscriber = rate / best[source, like][0] if consumer == "iterate" else None
                verdicts = []
                # The targets hold for consumers that keep demand ahead (iterate, and the subscriber
                # with 4,096 outstanding); one waiting on each request pays the source's latency
                # each time, which the bound below measures without the bridge.
                if source != "sync" and consumer != "subscriber":
                    verdicts.append(
                        self.target(
                            f"{name} {source} → {consumer} ≥ {TARGET:.0%} of the synchronous rows — "
                            f"{of_sync:.0%}",
                            of_sync >= TARGET,
                        )
                    )
                if of_subscriber is not None:
                    verdicts.append(
                        self.target(
                            f"{name} {source} → iterate ≥ {TARGET:.0%} of the subscriber on the same rows — "
                            f"{of_subscriber:.0%}",
                            of_subscriber >= TARGET,
                        )
                    )
                self.rows.append(
                    {
                        "backend": name,
                        "rows from": text,
                        "into": _consumer_text(consumer, args.prefetch),
                        "rows/s": rate,
                        "÷ sync": f"{of_sync:.0%}",
                        "÷ subscriber": "-" if of_subscriber is None else f"{of_subscriber:.0%}",
                        "as Arrow": f"{share:.2%}",
                        "Arrow batches": batches,
                        "targets": ", ".join(verdicts) or "-",
                    }
                )
                figures[f"{source}_{consumer}"] = {
                    "rate": rate,
                    "arrow_share": share,
                    "arrow_batches": batches,
                }
            bound = bounds[source]
            self.rows.append(
                {
                    "backend": name,
                    "rows from": text,
                    "into": f"bound: a Java thread, request(1024) waiting on each, then {nanos} ns a row",
                    "rows/s": bound,
                    "÷ sync": f"{bound / bounds['sync']:.0%}",
                    "÷ subscriber": "-",
                    "as Arrow": "-",
                    "Arrow batches": "-",
                    "targets": "-",
                }
            )
            figures[f"{source}_bound"] = bound
        lowest = min(share for _, share, _ in best.values())
        self.target(
            f"{name}: nearly all rows (≥ {ARROW_TARGET:.0%}) cross as Arrow in every scenario — "
            f"{lowest:.2%} at the lowest",
            lowest >= ARROW_TARGET,
        )
        figures["bound_nanos_per_row"] = nanos
        figures["max_queued_jvm"] = int(bridge.runtime.maxQueued())
        figures["max_buffered_python"] = bridge.max_buffered
        self.extra[name] = figures
        _settle(bridge)

    def print_table(self) -> None:
        columns = list(self.rows[0])
        print(" | ".join(columns))
        for row in self.rows:
            print(" | ".join(f"{v:,.0f}" if isinstance(v, float) else str(v) for v in row.values()))
        for line in self.targets:
            print("-", line)


def _settle(bridge: Bridge) -> None:
    """Every stream ended on both sides and the Arrow allocator back at zero: nothing leaked."""
    deadline = time.monotonic() + 30
    while int(bridge.runtime.liveAdapters()) or bridge.live_streams:
        assert time.monotonic() < deadline, "streams still live after the runs"
        time.sleep(0.01)
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0, "the Arrow allocator holds bytes after the runs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _report.run_options(parser, 500_000, ("jpype", "py4j", "spark"))
    parser.add_argument("--prefetch", type=int, default=BATCH * AHEAD, help="iterate's prefetch (4,096)")
    args = _report.parse_run_options(parser)

    run = Run(args)
    _report.on_each_bridge(args.backends, TEST_JARS, run.backend)
    if "spark" in args.backends:
        from pyspark.sql import SparkSession

        from reactive_streams import spark as rss

        spark = (
            rss.configure(SparkSession.builder.master("local[2]"), TEST_JARS)
            .config("spark.ui.enabled", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        try:
            with Bridge.spark(spark) as bridge:
                run.backend("spark", bridge)
        finally:
            spark.stop()
    if args.quick:
        run.print_table()
        return
    _report.write(
        "last-mile-jvm",
        "The last mile from the JVM: rows from publishers on threads of their own (issue 34)",
        run.rows,
        [
            f"{args.rows:,} rows (long, double, 12-character string) per run, best of {args.repeat} "
            f"interleaved runs after {args.warm_up} unmeasured runs of each; as Arrow: the lowest share "
            "of the rows that crossed as Arrow record batches in those runs (the rest crossed pickled); "
            "Arrow batches: of the best run. ÷ sync: against the same consumer on the synchronous rows; "
            "÷ subscriber: iterate against the counting subscriber that keeps as much demand "
            f"outstanding (iterate's prefetch {args.prefetch:,}: "
            f"{'4,096 outstanding' if args.prefetch >= BATCH * AHEAD else 'request(1024) waiting on each'}), "
            "on the same rows. The threaded sources' targets are for the consumers that keep demand "
            "ahead (iterate, and the subscriber with 4,096 outstanding); the subscriber waiting on each "
            "request pays the source's latency once a request, which the bound measures.",
            "Bound: each publisher into a Java consumer thread that, once the 1,024 rows it requested "
            "have all arrived, works on them as long as the synchronous rows took end to end into the "
            "counting subscriber (a busy wait), then requests 1,024 more: no bridge, no Python. What it "
            "loses to the synchronous rows is the source's own latency after each request, which a "
            "consumer waiting on each request pays once a request and one with demand ahead hides.",
            *run.targets,
        ],
        run.extra,
    )


if __name__ == "__main__":
    main()
