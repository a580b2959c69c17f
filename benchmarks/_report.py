"""Shared by the benchmarks: machine facts, and writing results to a JSON file and to one
section of RESULTS.md (each benchmark owns the section between its markers)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import reactive_streams as rs

HERE = Path(__file__).resolve().parent
RESULTS_MD = HERE / "RESULTS.md"
RESULTS_DIR = HERE / "results"
HEADER = "# Benchmark results\n\nWritten by the scripts in this folder; each owns one section.\n"


class CountingSubscriber(rs.Subscriber[Any]):
    """The benchmarks' subscriber: counts elements (or, with ``weigh``, what each weighs, say
    an Arrow batch's rows) and requests ``batch`` more each time ``batch`` have arrived, with
    ``ahead`` batches outstanding (1: it waits for each request to be met before the next)."""

    def __init__(self, batch: int, weigh: Any = None, ahead: int = 1) -> None:
        self.batch = batch
        self.ahead = ahead
        self.weigh = weigh
        self.count = 0
        self.pending = 0
        self.subscription: Any = None
        self.done = threading.Event()
        self.error: BaseException | None = None

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(self.batch * self.ahead)

    def on_next(self, item: Any) -> None:
        self.count += 1 if self.weigh is None else self.weigh(item)
        self.pending += 1
        if self.pending == self.batch:
            self.pending = 0
            self.subscription.request(self.batch)

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()


class NoSubscription(rs.Subscription):
    """For a subscriber driven by a bare loop (the ceiling): requests go nowhere."""

    def request(self, n: int) -> None:
        pass

    def cancel(self) -> None:
        pass


def bare_loop(elements: int, batch: int) -> float:
    """The ceiling, in elements/s: a plain Python loop calling a `CountingSubscriber`'s on_next
    (requesting ``batch`` at a time, into a `NoSubscription`)."""
    subscriber = CountingSubscriber(batch)
    subscriber.subscription = NoSubscription()
    start = time.perf_counter()
    on_next = subscriber.on_next
    for item in range(elements):
        on_next(item)
    elapsed = time.perf_counter() - start
    assert subscriber.count == elements
    return elements / elapsed


def run_options(
    parser: argparse.ArgumentParser,
    rows: int,
    backends: Sequence[str] = ("jpype", "py4j"),
    repeat: int = 5,
) -> None:
    """The options of a best-of benchmark (`best_of`): ``--rows`` (``rows`` by default),
    ``--repeat`` (``repeat``), ``--warm-up``, ``--quick`` and ``--backends``; `parse_run_options`
    fills them in."""
    parser.add_argument("--rows", type=int, default=None, help=f"rows per run ({rows:,}; --quick: 100,000)")
    parser.add_argument(
        "--repeat", type=int, default=None, help=f"measured runs of each scenario ({repeat}; --quick: 1)"
    )
    parser.add_argument(
        "--warm-up", type=int, default=None, help="unmeasured runs of each first (3; --quick: 1)"
    )
    parser.add_argument("--quick", action="store_true", help="a cheap check: prints, writes nothing")
    parser.add_argument("--backends", nargs="+", choices=list(backends), default=list(backends))
    parser.set_defaults(full_rows=rows, full_repeat=repeat)


def parse_run_options(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """The command line, with what `run_options` left unset made a full run's (or ``--quick``'s)."""
    args = parser.parse_args()
    args.rows = args.rows or (100_000 if args.quick else args.full_rows)
    args.repeat = args.repeat or (1 if args.quick else args.full_repeat)
    args.warm_up = args.warm_up if args.warm_up is not None else (1 if args.quick else 3)
    return args


def on_each_bridge(backends: Sequence[str], jars: list[str], measure: Callable[[str, Any], None]) -> None:
    """``measure(name, bridge)`` on JPype's bridge, then Py4J's (those of them in ``backends``),
    one at a time: a JVM started for another backend would share the two cores with the run."""
    from reactive_streams.jvm import Bridge

    if "jpype" in backends:
        with Bridge.jpype(jars) as bridge:
            measure("jpype", bridge)
    if "py4j" in backends:
        with Bridge.py4j(jars) as bridge:
            measure("py4j", bridge)


def best_of(
    scenarios: dict[Any, Callable[[], float]], warm_up: int, repeat: int, warmth: Warmth | None = None
) -> dict[Any, float]:
    """Each scenario's best rate over ``repeat`` interleaved runs after ``warm_up`` unmeasured
    runs of each (the JVM compiles a path only after it has run it a while; interleaving spreads
    the machine's slow moments over every scenario); with ``warmth``, after the JVM's compiler
    has settled too (`rounds_of`)."""
    return {key: max(rates) for key, rates in rounds_of(scenarios, warm_up, repeat, warmth).items()}


class Warmth:
    """Whether a JVM is warm, by its JIT compiler: the compilation time its
    ``CompilationMXBean`` counts. A JVM calls each batch's code (an encoder, the allocator) once a
    batch, so that code reaches the optimizing compiler only after about ten thousand batches,
    and its compiles, 0.1–0.6 s each on a slow two-core machine, then take a core from the run
    measured (seen here: JPype runs of 300,000 dict rows, 600 batches each, still compiling for
    50–340 ms of each of the sixth to tenth runs).
    A warm-up round that compiled for no more than ``settled`` of its own time is warm;
    `rounds_of` warms up until one is, for at most ``most_rounds`` rounds in all, and records
    what it found."""

    def __init__(self, bridge: Any, settled: float = 0.02, most_rounds: int = 30) -> None:
        self._compilation = bridge.jvm.java.lang.management.ManagementFactory.getCompilationMXBean()
        self.settled = settled
        self.most_rounds = most_rounds
        self.warm_up_rounds = 0  # unmeasured rounds run
        self.last_warm_up = 0.0  # the share of its time the last of them compiled
        self.measured = 0.0  # the share of their time the measured rounds compiled

    def compiled_ms(self) -> int:
        """The JVM's compilation time so far, in ms."""
        return int(self._compilation.getTotalCompilationTime())

    def text(self) -> str:
        """What the warm-up found, for a results note."""
        settled = "settled" if self.last_warm_up <= self.settled else "NOT settled"
        return (
            f"{self.warm_up_rounds} unmeasured rounds, the JVM compiling for {self.last_warm_up:.1%} of "
            f"the last one's time ({settled}: at most {self.settled:.0%}), and for "
            f"{self.measured:.1%} of the measured rounds' time"
        )


def rounds_of(
    scenarios: dict[Any, Callable[[], float]], warm_up: int, repeat: int, warmth: Warmth | None = None
) -> dict[Any, list[float]]:
    """Each scenario's rate in each of ``repeat`` rounds, after ``warm_up`` unmeasured rounds: a
    round runs every scenario once, in turn, so the rates of one round met the machine in about
    the same state (compare them round by round where its pace swings). With ``warmth``, the
    unmeasured rounds go on until one leaves the JVM's compiler settled (`Warmth`)."""

    def one_round() -> None:
        for run in scenarios.values():
            run()

    compiled_ms = warmth.compiled_ms if warmth is not None else (lambda: 0)

    def compiling(run: Callable[[], None]) -> float:
        """``run()``; the share of its time the JVM spent compiling (0 without ``warmth``)."""
        before, start = compiled_ms(), time.perf_counter()
        run()
        return (compiled_ms() - before) / 1000 / (time.perf_counter() - start)

    warm_up_rounds, last = 0, 0.0
    while warm_up_rounds < warm_up or (
        warmth is not None and last > warmth.settled and warm_up_rounds < warmth.most_rounds
    ):
        last = compiling(one_round)
        warm_up_rounds += 1
    rounds: dict[Any, list[float]] = {key: [] for key in scenarios}

    def measured_rounds() -> None:
        for _ in range(repeat):
            for key, run in scenarios.items():
                rounds[key].append(run())

    measured = compiling(measured_rounds)
    if warmth is not None:
        warmth.warm_up_rounds, warmth.last_warm_up, warmth.measured = warm_up_rounds, last, measured
    return rounds


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr
        java = java.splitlines()[0] if java else "none"
    except (OSError, subprocess.SubprocessError):
        java = "none"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "java": java,
        "system": f"{platform.system()} {platform.release()}",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


_BUSY = (
    "import time; t = time.perf_counter(); sum(i * i for i in range(6_000_000)); "
    "print(time.perf_counter() - t)"
)


def cores_at_once(runs: int = 3) -> float:
    """How many cores this machine runs at once, measured: a busy Python loop alone, then the
    same loop in two processes at the same time (best of ``runs`` each); ``2 × alone / pair``,
    2.0 for two full cores, 1.0 when two busy processes share one (a host that time-slices its
    virtual CPUs). Work on two threads (the JVM making rows while Python takes them) can overlap
    only as far as this allows."""

    def busy(count: int) -> float:
        procs = [
            subprocess.Popen([sys.executable, "-c", _BUSY], stdout=subprocess.PIPE, text=True)
            for _ in range(count)
        ]
        return max(float(proc.communicate()[0]) for proc in procs)

    alone = min(busy(1) for _ in range(runs))
    pair = min(busy(2) for _ in range(runs))
    return min(2.0, 2 * alone / pair)


def cpu_seconds(*pids: int | str) -> float:
    """The CPU seconds (user and system, every thread) the processes ``pids`` have used so far,
    from /proc (10 ms steps): what a run of several threads or processes cost the machine."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids or ("self",):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime: the 14th and 15th fields
    return total / tick


def peak_rss_mib() -> float:
    """This process's peak RSS so far (monotonic)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mib(pid: int | str = "self") -> float:
    """A process's current RSS, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class PeakSampler:
    """The largest value each probe (a name and a function) returned while a block ran, sampled
    every 20 ms."""

    def __init__(self, probes: dict[Any, Any]) -> None:
        import threading

        self.probes = probes
        self.peak = {name: 0.0 for name in probes}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            for name, probe in self.probes.items():
                self.peak[name] = max(self.peak[name], probe())

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class RssSampler(PeakSampler):
    """The largest RSS of some processes while a block runs (``peak`` by pid)."""

    def __init__(self, *pids: int | str) -> None:
        super().__init__({pid: (lambda pid=pid: rss_mib(pid)) for pid in pids or ("self",)})


def progress_time(progress: dict[str, Any]) -> float:
    """A streaming progress report's timestamp, in seconds since the epoch."""
    return datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp()


def query_window(
    query: Any,
    rows_at: Any,
    warmup: float,
    window: float,
    *,
    patience: float = 120.0,
    meter: Any = None,
) -> dict[str, Any]:
    """A running query measured between two progress reports taken ``window`` seconds apart,
    after its second batch and ``warmup`` seconds more: rows from ``rows_at(progress)``, time
    from the reports' timestamps, batches from their ids, and what ``meter()`` (CPU seconds,
    say) grew by over the same span. A query that fails or makes no progress raises."""
    deadline = time.monotonic() + warmup + patience
    while query.lastProgress is None or query.lastProgress["batchId"] < 2:
        if query.exception() is not None:
            raise query.exception()
        assert time.monotonic() < deadline, "the query made no progress"
        time.sleep(0.05)
    time.sleep(warmup)
    first, before = query.lastProgress, meter() if meter else 0.0
    end = time.monotonic() + window
    while time.monotonic() < end or query.lastProgress["batchId"] < first["batchId"] + 2:
        if query.exception() is not None:
            raise query.exception()
        time.sleep(0.05)
    last, after = query.lastProgress, meter() if meter else 0.0
    rows = rows_at(last) - rows_at(first)
    seconds = progress_time(last) - progress_time(first)
    batches = last["batchId"] - first["batchId"]
    return {
        "rows": rows,
        "seconds": seconds,
        "rate": rows / seconds,
        "batches": batches,
        "last": last,
        "metered": after - before,
    }


def write(name: str, title: str, rows: list[dict[str, Any]], notes: list[str], extra: dict[str, Any]) -> None:
    """Write ``results/<name>.json`` and the ``name`` section of RESULTS.md."""
    info = machine()
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"{name}.json").write_text(
        json.dumps({"machine": info, "rows": rows, "extra": extra}, indent=2) + "\n"
    )
    columns = list(rows[0])
    lines = [
        f"## {title}",
        "",
        f"Measured {info['date']} on {info['cpu']} ({info['cores']} cores), Python {info['python']}, "
        f"{info['java']}, {info['system']}.",
        "",
        "| " + " | ".join(columns) + " |",
        "| " + " | ".join("---" for _ in columns) + " |",
    ]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row[c]) for c in columns) + " |")
    lines += [""] + [f"- {note}" for note in notes]
    section = "\n".join(lines).rstrip() + "\n"
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = (
        RESULTS_MD.read_text()
        if RESULTS_MD.exists()
        else "# Benchmark results\n\nWritten by the scripts in this folder; each owns one section.\n"
    )
    block = f"{start}\n{section}{end}"
    if start in text:
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS_MD.write_text(text)
    print(section)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def sockets() -> int:
    """This process's open sockets (file descriptors)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count
