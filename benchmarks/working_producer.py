"""A JVM producer that works for each row (issue 45, part 2): where its rows arrive in Python,
live, against the two paces that bound them, measured in one run per backend.

The producer is ``WorkingRows`` (the test-support jar): row ``i`` is ``Object[]{long, double,
String, Boolean, String or null}``, built with about 1.4 µs of real work (a decimal computed and
formatted, a hash), the shape and the pace of the issue's R2DBC query. For each backend, of N rows:

- ``jvm alone``: the JVM counting the producer (``Flux.from(p).count().block()``), no bridge and no
  Python, timed around the call; the producer emitting synchronously inside ``request``
  (``Flux.range(0, N).map(row)``) and on Reactor's own worker (``….publishOn(parallel, 256)``);
- ``made first``: the same rows built before the run, ``Flux.fromIterable(made)``, through
  ``bridge.from_jvm`` into ``for _ in rs.iterate(…)`` and into the benchmarks' counting
  subscriber: Python's pace on these rows, the bridge's delivery and Python's taking;
- ``live``: the two producers through ``bridge.from_jvm`` into the same two consumers.

A live stream cannot beat the slower of the JVM making the rows and Python taking them: the bound
is min(JVM alone, Python on the rows made first), and the issue's target is 80% of it. If the two
did not overlap at all, the live rate would be the serial sum 1/(1/jvm + 1/python); each live row
is printed against both, and with how far it went from the one to the other (overlap).

Each run also reads the producer's own clock (``WorkingRows.makingNanos``: the time spent building
rows, on whatever thread): its pace in that run (rows over that time), which no live run can beat
as it builds one row at a time, and how much of the run it was busy. The two split a shortfall in
two: the producer not building (waiting for demand or for a core, or handing rows over: busy under
100%), and the producer building rows slower than alone (other threads, the bridge's, Python's or
another process's, sharing the cores).

    python benchmarks/working_producer.py [--rows N] [--repeat R] [--warm-up W] [--prefetch P]
        [--quick] [--backends jpype py4j]

Each scenario runs ``--warm-up`` unmeasured times, then ``--repeat`` rounds, a round running every
scenario once in turn. The table gives each one's best run and the spread of its runs; the target's
verdict compares each live run with the bound measured in its own round and takes the median of
those ratios, since the JVM alone's pace may swing from one run to the next (1.5–2× on a busy
two-core host) and the best of it is then the top of the swing. ``--quick`` (100,000 rows, one
run each) prints the table and writes nothing; otherwise the ``working-producer`` section of
RESULTS.md and ``results/working-producer.json`` are written.
"""

from __future__ import annotations

import argparse
import gc
import statistics
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
BUFFER = 256  # publishOn's prefetch
AHEAD = 4  # the counting subscriber's requests outstanding, each a quarter of iterate's prefetch
TARGET = 0.8  # of the bound, for a live producer (issue 45)
PRODUCERS = {
    "sync": "`Flux.range(0, N).map(row)` (in `request`)",
    "publishOn": f"`….publishOn(Schedulers.parallel(), {BUFFER})`",
}
SOURCES = (*PRODUCERS, "made")
CONSUMERS = ("iterate", "subscriber")


def _consumer_text(consumer: str, prefetch: int) -> str:
    if consumer == "iterate":
        return f"`for _ in rs.iterate(…, prefetch={prefetch:,})`"
    if consumer == "subscriber":
        return f"counting subscriber, request({prefetch // AHEAD:,}), {prefetch:,} outstanding"
    return "the JVM alone, `Flux.from(p).count().block()`"


class Backend:
    """One bridge's producer, its rows made first, and the runs."""

    def __init__(self, bridge: Bridge, rows: int, prefetch: int) -> None:
        self.bridge = bridge
        self.count = rows
        self.prefetch = prefetch
        self.working_rows = bridge.jvm.io.github.rspy.bridge.testing.WorkingRows
        self.flux = bridge.jvm.reactor.core.publisher.Flux
        self.made = self.working_rows.made(rows)  # built once, in the JVM
        # Each run of a working producer: its rate, and the producer's own nanoseconds a row.
        self.making: dict[tuple[str, str], list[tuple[float, float]]] = {}
        # Each run's CPU seconds a row, both sides (Py4J's JVM is a process of its own).
        self.pids: tuple[int | str, ...] = ("self",)
        if bridge.jvm_process is not None:
            self.pids += (bridge.jvm_process.pid,)
        self.cpu: dict[tuple[str, str], list[float]] = {}
        # Each run's rows a batch as they went to Python (each batch one crossing).
        self.batch_rows: dict[tuple[str, str], list[float]] = {}

    def publisher(self, source: str) -> Any:
        """A new JVM publisher of the ``count`` rows."""
        if source == "sync":
            return self.working_rows.sync(self.count)
        if source == "publishOn":
            return self.working_rows.publishOn(self.count, BUFFER)
        return self.flux.fromIterable(self.made)

    def alone(self, source: str) -> float:
        """Rows/s of the JVM counting ``source`` with no bridge and no Python."""
        publisher = self.publisher(source)
        gc.collect()
        making = int(self.working_rows.makingNanos())
        cpu = _report.cpu_seconds(*self.pids)
        start = time.perf_counter()
        count = int(self.working_rows.countAlone(publisher))
        elapsed = time.perf_counter() - start
        assert count == self.count, f"the JVM alone counted {count} rows of {self.count}"
        return self._note_making(("alone", source), self.count / elapsed, making, cpu)

    def _note_making(self, key: tuple[str, str], rate: float, making_before: int, cpu_before: float) -> float:
        """Keeps, beside the run's rate, the producer's own nanoseconds a row in that run, and
        the CPU seconds a row both sides used."""
        self.cpu.setdefault(key, []).append((_report.cpu_seconds(*self.pids) - cpu_before) / self.count)
        nanos = (int(self.working_rows.makingNanos()) - making_before) / self.count
        self.making.setdefault(key, []).append((rate, nanos))
        return rate

    def making_nanos(self, key: tuple[str, str], rate: float) -> float:
        """The producer's own nanoseconds a row in the run of ``key`` that reached ``rate``."""
        return next(nanos for run_rate, nanos in self.making[key] if run_rate == rate)

    def run(self, source: str, consumer: str) -> float:
        """Rows/s of ``source`` through the bridge into ``consumer``."""
        publisher = self.bridge.from_jvm(self.publisher(source))
        gc.collect()
        making = int(self.working_rows.makingNanos())
        batches = int(self.bridge.runtime.batchesToPython())
        cpu = _report.cpu_seconds(*self.pids)
        start = time.perf_counter()
        if consumer == "iterate":
            count = 0
            for _ in rs.iterate(publisher, prefetch=self.prefetch):
                count += 1
        else:
            counter = _report.CountingSubscriber(self.prefetch // AHEAD, None, AHEAD)
            publisher.subscribe(counter)
            counter.done.wait()
            assert counter.error is None, counter.error
            count = counter.count
        elapsed = time.perf_counter() - start
        assert count == self.count, f"{source} → {consumer}: {count} rows of {self.count}"
        batches = int(self.bridge.runtime.batchesToPython()) - batches
        self.batch_rows.setdefault((source, consumer), []).append(self.count / max(1, batches))
        return self._note_making((source, consumer), self.count / elapsed, making, cpu)


class Run:
    """Every backend's scenarios, the table's rows, the figures and the verdicts."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rows: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {
            "rows": args.rows,
            "repeat": args.repeat,
            "warm_up": args.warm_up,
            "prefetch": args.prefetch,
        }
        self.targets: list[str] = []

    def target(self, text: str, met: bool, blocked: str = "") -> str:
        verdict = "met" if met else f"blocked: {blocked}" if blocked else "NOT met"
        self.targets.append(f"{text}: {verdict}.")
        return "met" if met else "blocked" if blocked else "NOT met"

    def row(self, name: str, source: str, into: str, rates: list[float], **ratios: str) -> None:
        self.rows.append(
            {
                "backend": name,
                "rows from": source,
                "into": into,
                "rows/s": max(rates),
                "runs (min–max)": f"{min(rates):,.0f}–{max(rates):,.0f}",
                "bound": ratios.get("bound", "-"),
                "÷ bound": ratios.get("of_bound", "-"),
                "÷ bound, round by round (median)": ratios.get("by_round", "-"),
                "machine's bound ÷ bound (median)": ratios.get("machine_share", "-"),
                "÷ machine's bound (median)": ratios.get("of_machine", "-"),
                "live CPU a row ÷ the two sides' apart (median)": ratios.get("live_cpu", "-"),
                "cores live used (median)": ratios.get("live_cores", "-"),
                "rows a batch to Python (median)": ratios.get("batch_rows", "-"),
                "serial sum": ratios.get("serial", "-"),
                "÷ serial sum": ratios.get("of_serial", "-"),
                "overlap": ratios.get("overlap", "-"),
                "producer's own pace": ratios.get("own_pace", "-"),
                "producer busy": ratios.get("busy", "-"),
                "target": ratios.get("target", "-"),
            }
        )

    def backend(self, name: str, bridge: Bridge) -> None:
        args = self.args
        backend = Backend(bridge, args.rows, args.prefetch)
        scenarios: dict[Any, Callable[[], float]] = {
            ("alone", source): (lambda s=source: backend.alone(s)) for source in PRODUCERS
        }
        scenarios.update(
            {
                (source, consumer): (lambda s=source, c=consumer: backend.run(s, c))
                for source in SOURCES
                for consumer in CONSUMERS
            }
        )
        # The cores the machine ran at once, measured in each round beside its runs (its pace
        # swings within a minute here: 1.15–2.0 on a busy two-core host).
        scenarios["cores", "at_once"] = lambda: _report.cores_at_once(runs=1)
        rounds = _report.rounds_of(scenarios, args.warm_up, args.repeat)
        # The rounds' runs, not the warm-up's.
        cpu = {key: runs[-args.repeat :] for key, runs in backend.cpu.items()}
        batch_rows = {
            key: statistics.median(runs[-args.repeat :]) for key, runs in backend.batch_rows.items()
        }
        best = {key: max(rates) for key, rates in rounds.items()}
        figures: dict[str, Any] = {f"{a}_{b}": rate for (a, b), rate in best.items()}
        figures["rounds"] = {f"{a}_{b}": rates for (a, b), rates in rounds.items()}
        for source, text in PRODUCERS.items():
            rate = best["alone", source]
            own = 1e9 / backend.making_nanos(("alone", source), rate)
            self.row(
                name,
                f"the producer, {text}",
                _consumer_text("alone", 0),
                rounds["alone", source],
                own_pace=f"{own:,.0f}",
                busy=f"{rate / own:.0%}",
            )
            figures[f"alone_{source}_own_pace"] = own
        for consumer in CONSUMERS:
            text = "made first, `Flux.fromIterable(made)`"
            self.row(
                name,
                text,
                _consumer_text(consumer, args.prefetch),
                rounds["made", consumer],
                batch_rows=f"{batch_rows['made', consumer]:,.0f}",
            )
        for source, text in PRODUCERS.items():
            for consumer in CONSUMERS:
                rate = best[source, consumer]
                jvm, python = best["alone", source], best["made", consumer]
                bound = min(jvm, python)
                serial = 1 / (1 / jvm + 1 / python)
                # How much of the way from no overlap to full overlap the live rate went: the
                # ratio to the bound alone hides it when Python is much faster than the JVM, as
                # the serial sum then nears the bound.
                overlap = (rate - serial) / (bound - serial)
                # The verdict's ratio: each live run against the bound measured in its own round,
                # the median of those. Where the machine's pace swings from one run to the next,
                # the best of the JVM alone is the top of its swing, while a live run, paced by
                # both sides, swings less; runs of one round met the machine in about one state.
                live_runs, alone_runs, made_runs = (
                    rounds[source, consumer],
                    rounds["alone", source],
                    rounds["made", consumer],
                )
                live_cpu_runs, alone_cpu, made_cpu = (
                    cpu[source, consumer],
                    cpu["alone", source],
                    cpu["made", consumer],
                )
                by_round = _median_by_round(
                    lambda live, alone, made: live / min(alone, made), live_runs, alone_runs, made_runs
                )
                # The machine's bound, round by round: the CPU seconds a row the two sides used
                # apart (the JVM alone; the bridge and Python on the rows made first, itself on
                # more than one core), on the cores the machine ran at once in that round, and
                # never above that round's bound.
                machines = [
                    min(alone, made, cores / (a_cpu + m_cpu))
                    for alone, made, cores, a_cpu, m_cpu in zip(
                        alone_runs, made_runs, rounds["cores", "at_once"], alone_cpu, made_cpu, strict=True
                    )
                ]
                machine_share = _median_by_round(
                    lambda m, alone, made: m / min(alone, made), machines, alone_runs, made_runs
                )
                of_machine = _median_by_round(lambda live, m: live / m, live_runs, machines)
                # Live's CPU a row against the two sides' apart: above 100%, the work the bridge
                # adds when both run at once (hand-offs, wake-ups, more batches); and the cores
                # live used (its rate times its CPU a row).
                live_cpu = _median_by_round(lambda c, a, m: c / (a + m), live_cpu_runs, alone_cpu, made_cpu)
                live_cores = _median_by_round(lambda live, c: live * c, live_runs, live_cpu_runs)
                # The producer builds its rows one at a time, so no live run beats its own pace
                # in that run (the rows over the time it spent building them); "busy" is how much
                # of the run it spent building, the overlap as the producer saw it.
                alone_own = 1e9 / backend.making_nanos(("alone", source), jvm)
                own = 1e9 / backend.making_nanos((source, consumer), rate)
                verdict = self.target(
                    f"{name} live {source} → {consumer} ≥ {TARGET:.0%} of min(JVM alone, Python on the rows "
                    f"made first), round by round — {by_round:.0%} (median of {len(alone_runs)} rounds; "
                    f"best against best {rate / bound:.0%} of {bound:,.0f} rows/s, the JVM alone "
                    f"{min(alone_runs):,.0f}–{max(alone_runs):,.0f} over the rounds; {rate / serial:.0%} of "
                    f"the serial sum {serial:,.0f}; overlap {overlap:.0%}; in its best run the producer "
                    f"built its rows at {own:,.0f} rows/s, {1e9 / own:,.0f} ns a row against "
                    f"{1e9 / alone_own:,.0f} in its best run alone, and was busy {rate / own:.0%} of it; "
                    f"the machine's bound {machine_share:.0%} of the bound and live {of_machine:.0%} of it, "
                    f"live's CPU a row {live_cpu:.0%} of the two sides' apart, on {live_cores:.2f} cores, "
                    "round by round)",
                    by_round >= TARGET,
                    _blocked(machine_share, of_machine),
                )
                self.row(
                    name,
                    f"live, {text}",
                    _consumer_text(consumer, args.prefetch),
                    rounds[source, consumer],
                    bound=f"{bound:,.0f}",
                    of_bound=f"{rate / bound:.0%}",
                    by_round=f"{by_round:.0%}",
                    machine_share=f"{machine_share:.0%}",
                    of_machine=f"{of_machine:.0%}",
                    live_cpu=f"{live_cpu:.0%}",
                    live_cores=f"{live_cores:.2f}",
                    batch_rows=f"{batch_rows[source, consumer]:,.0f}",
                    serial=f"{serial:,.0f}",
                    of_serial=f"{rate / serial:.0%}",
                    overlap=f"{overlap:.0%}",
                    own_pace=f"{own:,.0f}",
                    busy=f"{rate / own:.0%}",
                    target=verdict,
                )
                figures[f"{source}_{consumer}_own_pace"] = own
                figures[f"{source}_{consumer}_bound"] = bound
                figures[f"{source}_{consumer}_serial_sum"] = serial
                figures[f"{source}_{consumer}_overlap"] = overlap
                figures[f"{source}_{consumer}_of_bound_by_round"] = by_round
                figures[f"{source}_{consumer}_machine_share"] = machine_share
                figures[f"{source}_{consumer}_of_machine"] = of_machine
                figures[f"{source}_{consumer}_live_cpu_of_apart"] = live_cpu
                figures[f"{source}_{consumer}_live_cores"] = live_cores
        figures["jvm_nanos_per_row_sync"] = 1e9 / best["alone", "sync"]
        figures["jvm_nanos_per_row_publishOn"] = 1e9 / best["alone", "publishOn"]
        figures["cpu_seconds_a_row"] = {f"{a}_{b}": runs for (a, b), runs in cpu.items()}
        figures["rows_a_batch"] = {f"{a}_{b}": rows for (a, b), rows in batch_rows.items()}
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


def _median_by_round(ratio: Callable[..., float], *runs: list[float]) -> float:
    """The median over the rounds of ``ratio`` of each round's runs (one list per scenario)."""
    return statistics.median(ratio(*one_round) for one_round in zip(*runs, strict=True))


def _blocked(machine_share: float, of_machine: float) -> str:
    """Why the target is out of this run's reach, or "" if it is not: round by round (medians),
    the machine's bound (the two sides' CPU on the cores it ran at once) below the target, and
    live at the target of that bound, so that the shortfall is the machine's and not the code's.
    (The producer's own pace in the run is printed beside it, not counted as a bound: the other
    threads slowing it may be the bridge's own.)"""
    if machine_share < TARGET and of_machine >= TARGET:
        return (
            f"round by round, the cores this machine ran at once let the two sides' CPU reach at "
            f"most {machine_share:.0%} of the bound, and live reached {of_machine:.0%} of that"
        )
    return ""


def _settle(bridge: Bridge) -> None:
    """Every stream ended on both sides and the Arrow allocator back at zero: nothing leaked."""
    deadline = time.monotonic() + 30
    while int(bridge.runtime.liveAdapters()) or bridge.live_streams:
        assert time.monotonic() < deadline, "streams still live after the runs"
        time.sleep(0.01)
    assert int(bridge.runtime.arrowAllocatedBytes()) == 0, "the Arrow allocator holds bytes after the runs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _report.run_options(parser, 500_000, repeat=9)
    parser.add_argument(
        "--prefetch",
        type=int,
        default=1024,
        help="iterate's prefetch, and the subscriber's outstanding demand (1,024: iterate's default)",
    )
    args = _report.parse_run_options(parser)

    run = Run(args)
    _report.on_each_bridge(args.backends, TEST_JARS, run.backend)
    if args.quick:
        run.print_table()
        return
    _report.write(
        "working-producer",
        "A JVM producer that works for each row: live, against the JVM alone and the rows made first",
        run.rows,
        [
            f"{args.rows:,} rows per run of `WorkingRows` (long id, double, String, Boolean, String null "
            "every 3rd row; about 1.4 µs of real work a row: a decimal computed and formatted, a hash), "
            f"{args.repeat} rounds after {args.warm_up} unmeasured ones, a round running every scenario "
            "once in turn; rows/s is each scenario's best run, beside the spread of its runs.",
            "JVM alone: `Flux.from(p).count().block()` in the bridge's JVM, timed from Python around the "
            "call; made first: the same rows built before the run, `Flux.fromIterable(made)`, through the "
            "bridge: Python's own pace on these rows.",
            "Bound: min(JVM alone for the same producer, Python on the rows made first into the same "
            "consumer), what a live stream whose two sides overlapped fully would reach; serial sum: "
            "1/(1/jvm + 1/python), what it reaches when they do not overlap at all; overlap: (live − "
            "serial sum) / (bound − serial sum), 0% for none and 100% for full (when Python is much "
            "faster than the JVM the serial sum nears the bound, and the ratio to the bound says little). "
            f"Target (issue 45): a live producer ≥ {TARGET:.0%} of the bound, judged round by round: "
            "each live run against the bound measured in its own round, the median of those ratios "
            "(÷ bound, round by round). The best run against the best bound (÷ bound) takes the top "
            "of the JVM alone's swing, which a live run paced by both sides rarely meets; the table "
            "gives both.",
            "Producer's own pace: the rows over the time `WorkingRows` spent building them in the "
            "run (`makingNanos`, two clock reads a row, 2–5% of it, on whatever thread built it), the "
            "most a live run could reach as rows are built one at a time; producer busy: the run's "
            "rate over it, the share of the run the producer spent building (the rest it waited for "
            "demand or a core, or handed rows over).",
            "Machine's bound: overlap needs two cores at once, and a busy host may not give them. "
            "Each round also measures the cores it runs at once (`_report.cores_at_once`: a busy "
            "Python loop alone against two at once, 2.0 for two full cores), and each run the CPU "
            "seconds a row of both sides (every thread of the Python process and of the JVM, from "
            "/proc); the machine's bound is those cores over the CPU a row of the JVM alone plus "
            "that of the rows made first (itself on more than one core: the bridge encodes on "
            "the JVM while Python takes), never above the bound. Round by round (medians), the "
            "table gives that bound over the bound, live over that bound, live's CPU a row over "
            "the two sides' apart (above 100%: what the bridge adds when both run at once), and "
            "the cores live used; rows a batch is the rows over the batches that went to "
            "Python in a run (each one hand-over, with its own fixed cost on both sides). A "
            "target is blocked, not missed, only when that bound is below the target and live "
            "reaches the target of it: otherwise the code has a share in the shortfall.",
            *run.targets,
        ],
        run.extra,
    )


if __name__ == "__main__":
    main()
