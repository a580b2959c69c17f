"""Core throughput: from_iterable -> map -> filter -> subscriber, request(256) batches, against
a bare Python loop calling the same subscriber's on_next (the ceiling), in one run.

    python benchmarks/core_pipeline.py [--elements N] [--repeat R]

Target (issue 2): the pipeline reaches at least 20% of the ceiling.
"""

from __future__ import annotations

import argparse
import gc
import time

import reactive_streams as rs

try:
    from . import _report
except ImportError:  # run as a script
    import _report  # type: ignore[no-redef]

BATCH = 256


def pipeline(elements: int, batch: int) -> float:
    subscriber = _report.CountingSubscriber(batch)
    publisher = rs.from_iterable(range(elements)).map(lambda x: x + 1).filter(lambda x: x > 0)
    start = time.perf_counter()
    publisher.subscribe(subscriber)
    elapsed = time.perf_counter() - start
    assert subscriber.count == elements and subscriber.done.is_set()
    return elements / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    best: dict[str, float] = {"ceiling": 0.0, "pipeline": 0.0}
    for _ in range(args.repeat):  # interleaved, best of each, so both see the same machine
        for name, run in (("ceiling", _report.bare_loop), ("pipeline", pipeline)):
            gc.collect()
            best[name] = max(best[name], run(args.elements, BATCH))
    ratio = best["pipeline"] / best["ceiling"]
    rows = [
        {
            "scenario": "bare loop calling on_next (ceiling)",
            "elements/s": best["ceiling"],
            "ratio to ceiling": 1.0,
        },
        {
            "scenario": "from_iterable → map → filter → subscriber, request(256)",
            "elements/s": best["pipeline"],
            "ratio to ceiling": ratio,
        },
    ]
    _report.write(
        "core",
        "Core pipeline (issue 2)",
        rows,
        [
            f"{args.elements:,} elements, best of {args.repeat} interleaved runs; peak RSS "
            f"{_report.peak_rss_mib():.0f} MiB.",
            f"Target: pipeline ≥ 20% of the ceiling — {'met' if ratio >= 0.2 else 'NOT met'} ({ratio:.0%}).",
        ],
        {"elements": args.elements, "repeat": args.repeat, "ratio": ratio},
    )


if __name__ == "__main__":
    main()
