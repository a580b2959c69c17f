"""A thousand streams at once across the bridge, on every backend (issue 11).

JVM -> Python: ``streams`` Reactor publishers (``Flux.range(0, elements)`` emitted on Reactor's
parallel scheduler), each into a Python subscriber that requests ``batch`` at a time.
Python -> JVM: ``streams`` ``from_iterable(range(elements))`` publishers, each into a Java
subscriber that requests ``batch`` at a time. The ratio base, in the same run: the fastest one
stream of ``streams * elements`` goes, to the same kind of subscriber: of the same source, or
(JVM -> Python) of the same longs emitted synchronously inside ``request(n)``. Each source is
warmed up first.

Each run is a fresh process with a fresh JVM (a standalone Py4J gateway, JPype's in-process
JVM, or a local SparkSession's gateway). While the streams run, and again 5 s after they end,
it counts the Python process's threads and sockets.

    python benchmarks/bridge_concurrency.py [--backends py4j,jpype,spark] [--runs 5]
        [--streams 1000] [--elements 10000] [--batch 64]

Targets: every stream complete and exact; aggregate throughput >= 50% of one stream's; Python
threads <= 64 and sockets <= 64 while the streams run and 5 s after; the same in every run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import reactive_streams as rs

try:
    from . import _report
except ImportError:
    import _report  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
TEST_JARS = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("*.jar"))
BACKENDS = ("py4j", "jpype", "spark")
LIMIT = 64  # threads and sockets
TIMEOUT = 600.0  # seconds for one phase's streams to end


sockets = _report.sockets


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


class Peaks:
    """The most Python threads, sockets and OS threads seen while a block runs (every 50 ms)."""

    def __init__(self) -> None:
        self.threads = self.sockets = self.os_threads = 0
        self._stop = threading.Event()

    def _sample(self) -> None:
        self.threads = max(self.threads, threading.active_count())
        self.sockets = max(self.sockets, sockets())
        self.os_threads = max(self.os_threads, os_threads())

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self._sample()

    @contextmanager
    def watching(self) -> Iterator[Peaks]:
        sampler = threading.Thread(target=self._run, name="peaks", daemon=True)
        sampler.start()
        try:
            yield self
        finally:
            self._stop.set()
            sampler.join()
            self._sample()


def phase(
    start: Callable[[], list[Any]],
    wait: Callable[[Any, float], None],
    exact: Callable[[Any], bool],
    total: int,
) -> dict[str, Any]:
    """Start the streams, wait for them all, and measure."""
    peaks = Peaks()
    with peaks.watching():
        began = time.perf_counter()
        handles = start()
        deadline = time.monotonic() + TIMEOUT
        for handle in handles:
            wait(handle, max(0.0, deadline - time.monotonic()))
        elapsed = time.perf_counter() - began
    time.sleep(5)
    return {
        "rate": total / elapsed,
        "seconds": elapsed,
        "exact": sum(map(exact, handles)),
        "streams": len(handles),
        "peak_threads": peaks.threads,
        "peak_sockets": peaks.sockets,
        "peak_os_threads": peaks.os_threads,
        "threads_after_5s": threading.active_count(),
        "sockets_after_5s": sockets(),
    }


def jvm_to_python(
    bridge: Any, streams: int, elements: int, batch: int, source: str = "parallelLongs"
) -> dict[str, Any]:
    make = getattr(bridge.jvm.io.github.rspy.bridge.testing.Sources, source)

    def start() -> list[Any]:
        counters = [_report.CountingSubscriber(batch) for _ in range(streams)]
        for counter in counters:
            bridge.from_jvm(make(elements)).subscribe(counter)
        return counters

    return phase(
        start,
        lambda counter, timeout: counter.done.wait(timeout),
        lambda counter: counter.error is None and counter.done.is_set() and counter.count == elements,
        streams * elements,
    )


def python_to_jvm(
    bridge: Any, streams: int, elements: int, batch: int, source: str = "from_iterable"
) -> dict[str, Any]:
    counting = bridge.jvm.io.github.rspy.bridge.testing.CountingSubscriber

    def start() -> list[Any]:
        counters = [counting(batch) for _ in range(streams)]
        for counter in counters:
            bridge.to_jvm(rs.from_iterable(range(elements))).subscribe(counter)
        return counters

    return phase(
        start,
        lambda counter, timeout: counter.awaitDone(int(timeout * 1000)),
        lambda counter: bool(counter.isComplete()) and int(counter.count()) == elements,
        streams * elements,
    )


@contextmanager
def open_bridge(backend: str, threads: int | None) -> Iterator[Any]:
    from reactive_streams.jvm import Bridge

    settings = {} if threads is None else {"threads": threads}
    if backend == "py4j":
        with Bridge.py4j(TEST_JARS, **settings) as bridge:
            yield bridge
    elif backend == "jpype":
        with Bridge.jpype(TEST_JARS, **settings) as bridge:
            yield bridge
    else:
        from pyspark.sql import SparkSession

        import reactive_streams.spark as rss

        spark = (
            rss.configure(SparkSession.builder.master("local[2]"), TEST_JARS)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        try:
            with Bridge.spark(spark, **settings) as bridge:
                yield bridge
        finally:
            spark.stop()


# Each direction's sources: the thousand streams take the first; the base is the fastest single
# stream of any of them (JVM -> Python: the same longs emitted on Reactor's parallel scheduler, or
# synchronously inside request(n), which saves a thread hand-off per batch and goes faster alone).
DIRECTIONS: dict[str, tuple[Callable[..., dict[str, Any]], tuple[str, ...]]] = {
    "jvm_to_python": (jvm_to_python, ("parallelLongs", "longs")),
    "python_to_jvm": (python_to_jvm, ("from_iterable",)),
}


def child(args: argparse.Namespace) -> None:
    """One run: a fresh JVM, both directions; each warmed up, then the bases, then the streams."""
    before = {"threads": threading.active_count(), "sockets": sockets()}
    with open_bridge(args.child, args.threads) as bridge:
        result: dict[str, Any] = {"backend": args.child, "before": before, "settings": repr(bridge.settings)}
        for name, (direction, sources) in DIRECTIONS.items():
            for source in sources:  # the JIT compiles both paths before anything is measured
                direction(bridge, 1, args.warmup, args.batch, source)
            direction(bridge, max(1, args.streams // 10), args.elements, args.batch, sources[0])
            total = args.streams * args.elements
            ones = {source: direction(bridge, 1, total, args.batch, source) for source in sources}
            fastest = max(ones, key=lambda source: ones[source]["rate"])
            many = direction(bridge, args.streams, args.elements, args.batch, sources[0])
            result[name] = {
                "one": ones[fastest],
                "one_source": fastest,
                "one_by_source": {source: one["rate"] for source, one in ones.items()},
                "many": many,
                "many_source": sources[0],
                "ratio": many["rate"] / ones[fastest]["rate"],
            }
    print("RESULT " + json.dumps(result), flush=True)


def run_child(backend: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        backend,
        "--streams",
        str(args.streams),
        "--elements",
        str(args.elements),
        "--batch",
        str(args.batch),
        "--warmup",
        str(args.warmup),
    ]
    if args.threads is not None:
        command += ["--threads", str(args.threads)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=4 * TIMEOUT)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])  # type: ignore[no-any-return]
    raise RuntimeError(f"the {backend} run failed (exit {done.returncode}):\n{done.stderr[-4000:]}")


def verdicts(direction: dict[str, Any]) -> dict[str, bool]:
    many = direction["many"]
    return {
        "exact": many["exact"] == many["streams"] and direction["one"]["exact"] == 1,
        "ratio": direction["ratio"] >= 0.5,
        "threads": max(many["peak_threads"], many["threads_after_5s"]) <= LIMIT,
        "sockets": max(many["peak_sockets"], many["sockets_after_5s"]) <= LIMIT,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--elements", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=64, help="what each subscriber requests at a time")
    parser.add_argument("--threads", type=int, default=None, help="the bridge's threads (default: its own)")
    parser.add_argument(
        "--warmup", type=int, default=1_000_000, help="elements of the single-stream warm-up of each source"
    )
    parser.add_argument("--child", choices=BACKENDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown:
        parser.error(f"unknown backends {unknown}; choose from {list(BACKENDS)}")
    rows: list[dict[str, Any]] = []
    runs: dict[str, list[dict[str, Any]]] = {}
    failed: list[str] = []
    for backend in backends:
        for run in range(1, args.runs + 1):
            result = run_child(backend, args)
            runs.setdefault(backend, []).append(result)
            for name in ("jvm_to_python", "python_to_jvm"):
                direction = result[name]
                one, many = direction["one"], direction["many"]
                checks = verdicts(direction)
                failed += [f"{backend} run {run} {name}: {k}" for k, ok in checks.items() if not ok]
                rows.append(
                    {
                        "backend": backend,
                        "run": run,
                        "direction": name.replace("_", " ").replace("jvm", "JVM").replace("python", "Python"),
                        "one stream /s": one["rate"],
                        "fastest single source": direction["one_source"],
                        f"{args.streams} streams /s": many["rate"],
                        "ratio": f"{direction['ratio']:.0%}",
                        "exact": f"{many['exact']}/{many['streams']}",
                        "threads peak / +5 s": f"{many['peak_threads']} / {many['threads_after_5s']}",
                        "sockets peak / +5 s": f"{many['peak_sockets']} / {many['sockets_after_5s']}",
                        "OS threads peak": many["peak_os_threads"],
                        "met": "yes"
                        if all(checks.values())
                        else "NO: " + ", ".join(k for k, ok in checks.items() if not ok),
                    }
                )
            print(
                f"{backend} run {run}: "
                + "; ".join(f"{n} {result[n]['ratio']:.0%}" for n in ("jvm_to_python", "python_to_jvm")),
                flush=True,
            )
    notes = [
        f"{args.streams} streams x {args.elements:,} elements, each subscriber requesting {args.batch} "
        "at a time (JVM -> Python: Reactor's Flux.range of longs emitted on its parallel scheduler, "
        "Sources.parallelLongs; Python -> JVM: from_iterable(range(n)) into a Java subscriber). The "
        f"base is the fastest single stream of {args.streams * args.elements:,} with the same "
        "subscriber, in the same process: JVM -> Python, of the same parallel source or of "
        "Sources.longs, which emits inside request(n) and saves a thread hand-off per batch. Each "
        f"source is warmed up first (one stream of {args.warmup:,}, then {max(1, args.streams // 10)} "
        "streams), so the JIT has compiled both paths.",
        "Each run is a fresh process and JVM. Threads: Python's threading.active_count(); sockets: the "
        "process's socket descriptors; OS threads: /proc/self/task (JPype's JVM runs in the process).",
        f"Targets: every stream exact, ratio >= 50%, threads and sockets <= {LIMIT} while running "
        "and 5 s after. " + ("All met, in every run." if not failed else "Not met: " + "; ".join(failed)),
    ]
    _report.write(
        "bridge_concurrency",
        "Bridge concurrency: 1,000 streams at once (issues 11 and 20)",
        rows,
        notes,
        {"runs": runs, "args": vars(args)},
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
