"""The first stream of a new bridge against the warm rate (issue 45, part 4), each sample in a
fresh process (and so, on both backends, a fresh JVM), with what the producer itself pays cold.

In each fresh process: a bridge starts, then the first ``--rows`` rows of ``WorkingRows.sync``
(about 1.4 µs of work a row, emitted inside ``request``) go through ``for _ in rs.iterate(...)``
and are timed; then the same stream runs ``--warm-up`` more times unmeasured and ``--repeat``
times measured, and the best is the warm rate. In other fresh processes, the same with the JVM
alone counting the producer (``Flux.from(p).count()``, no bridge in the stream): how much of the
first stream's shortfall is the producer's own (its classes loaded, its code compiled), which
the bridge cannot take away.

    python benchmarks/first_stream.py [--rows N] [--samples S] [--quick] [--backends jpype py4j]

``--quick`` prints and writes nothing; otherwise the ``first-stream`` section of RESULTS.md and
``results/first-stream.json`` are written.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

try:
    from . import _report
except ImportError:  # run as a script
    import _report  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
TEST_JARS = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("*.jar"))
TARGET = 0.8  # the first stream's rate, of the warm rate (issue 45)
MODES = ("live", "alone", "made")


def child(backend: str, mode: str, rows: int, warm_up: int, repeat: int) -> dict[str, float]:
    """One fresh process's figures: the bridge's start, the first run, the warm rate."""
    import reactive_streams as rs
    from reactive_streams.jvm import Bridge

    started = time.perf_counter()
    bridge = Bridge.jpype(TEST_JARS) if backend == "jpype" else Bridge.py4j(TEST_JARS)
    with bridge:
        start_seconds = time.perf_counter() - started
        working_rows = bridge.jvm.io.github.rspy.bridge.testing.WorkingRows

        flux = bridge.jvm.reactor.core.publisher.Flux

        def iterated(publisher: Any) -> float:
            """Rows/s of ``publisher`` through ``for _ in rs.iterate(bridge.from_jvm(...))``."""
            begun = time.perf_counter()
            count = 0
            for _ in rs.iterate(bridge.from_jvm(publisher)):
                count += 1
            assert count == rows
            return rows / (time.perf_counter() - begun)

        made = working_rows.made(rows) if mode == "made" else None  # made before the clock starts

        def alone() -> float:
            begun = time.perf_counter()
            assert int(working_rows.countAlone(working_rows.sync(rows))) == rows
            return rows / (time.perf_counter() - begun)

        run = {
            "live": lambda: iterated(working_rows.sync(rows)),
            "alone": alone,
            "made": lambda: iterated(flux.fromIterable(made)),
        }[mode]
        first = run()
        for _ in range(warm_up):
            run()
        warm = max(run() for _ in range(repeat))
    return {"start_seconds": start_seconds, "first": first, "warm": warm}


def sample(backend: str, mode: str, args: argparse.Namespace) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", backend, mode, "--rows", str(args.rows)]
    command += ["--warm-up", str(args.warm_up), "--repeat", str(args.repeat)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the {backend} {mode} sample failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the first stream (200,000)")
    parser.add_argument(
        "--samples", type=int, default=None, help="fresh processes per figure (3; --quick: 1)"
    )
    parser.add_argument("--warm-up", type=int, default=5, help="unmeasured runs before the warm rate")
    parser.add_argument("--repeat", type=int, default=5, help="measured runs for the warm rate")
    parser.add_argument("--quick", action="store_true", help="a cheap check: prints, writes nothing")
    parser.add_argument("--backends", nargs="+", choices=["jpype", "py4j"], default=["jpype", "py4j"])
    parser.add_argument("--child", nargs=2, metavar=("BACKEND", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.rows, args.warm_up, args.repeat)))
        return
    args.samples = args.samples or (1 if args.quick else 3)
    rows: list[dict[str, Any]] = []
    targets: list[str] = []
    extra: dict[str, Any] = {"rows": args.rows, "samples": args.samples}
    for backend in args.backends:
        figures: dict[str, list[dict[str, float]]] = {}
        for mode in MODES:  # interleaved, one fresh process after another
            figures[mode] = []
        for _ in range(args.samples):
            for mode in MODES:
                figures[mode].append(sample(backend, mode, args))
        extra[backend] = figures
        ratios = {mode: [s["first"] / s["warm"] for s in figures[mode]] for mode in figures}
        for mode, text in (
            ("live", "`for _ in rs.iterate(bridge.from_jvm(WorkingRows.sync(N)))`"),
            ("alone", "the JVM alone, `Flux.from(WorkingRows.sync(N)).count()`"),
            ("made", "the same rows made first: `rs.iterate(bridge.from_jvm(Flux.fromIterable(made)))`"),
        ):
            samples = figures[mode]
            rows.append(
                {
                    "backend": backend,
                    "stream": text,
                    "bridge start (s)": ", ".join(f"{s['start_seconds']:.2f}" for s in samples),
                    "first N rows/s": ", ".join(f"{s['first']:,.0f}" for s in samples),
                    "warm rows/s": ", ".join(f"{s['warm']:,.0f}" for s in samples),
                    "first ÷ warm": ", ".join(f"{r:.0%}" for r in ratios[mode]),
                }
            )
        live, alone, made = (min(ratios[mode]) for mode in MODES)
        bound = max(ratios["alone"])  # the producer's own first rows: a live stream goes no faster
        if live >= TARGET:
            verdict = "met"
        elif bound < TARGET:
            verdict = f"blocked: the producer alone reaches {bound:.0%} of its warm rate cold"
        else:
            verdict = "NOT met"
        targets.append(
            f"{backend} the first {args.rows:,} rows of a new bridge ≥ {TARGET:.0%} of the warm rate — "
            f"{live:.0%} at worst of {args.samples} fresh processes; the producer alone, cold, {alone:.0%} "
            f"of its warm rate; the bridge and Python alone (rows made first), cold, {made:.0%}: {verdict}."
        )
    for row in rows:
        print(" | ".join(str(v) for v in row.values()))
    for line in targets:
        print("-", line)
    if args.quick:
        return
    _report.write(
        "first-stream",
        "The first stream of a new bridge against the warm rate",
        rows,
        [
            f"Each sample a fresh process and JVM: a bridge starts, the first {args.rows:,} rows of "
            "`WorkingRows.sync` (about 1.4 µs of work a row, emitted in `request`) are timed, then the warm "
            f"rate is the best of {args.repeat} runs after {args.warm_up} unmeasured ones; the JVM alone, "
            "in fresh processes of its own, shows what the producer itself pays cold; the same rows made "
            "before the clock starts show what the bridge and Python pay cold.",
            *targets,
        ],
        extra,
    )


if __name__ == "__main__":
    main()
