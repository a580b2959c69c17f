"""Time, threads and many subscribers (issue 44), each against its baseline, in one run.

- ``publish_on`` between two threads: ``from_iterable(range(N)).subscribe_on(producer)
  .publish_on(consumer)`` (its default prefetch; each scheduler a pool of one thread) into a
  subscriber, against a bare ``queue.SimpleQueue`` hand-off of 256-element chunks from one thread
  to the other, into the same subscriber. Twice: a subscriber that takes lists
  (``on_next_batch``), handed each chunk; and one called per element (``on_next``), called for
  each element of each chunk. Target: at least 80%. Also with ``prefetch=256`` (Reactor's
  default), to show what a thread hop per 192 elements costs.
- ``share`` to 4 subscribers: four subscribers of ``publish(1024).auto_connect(4)`` (``share``'s
  hub; ``share`` connects at the first subscriber, and a synchronous source would be over before
  the others join), each counting per element, against one subscriber of the plain source: each
  subscriber's rate over that one's. Twice: over ``from_iterable(range(N))`` (a producer that costs
  nothing) and over a producer that parses a JSON line per element. Target: at least 50%. Its
  bound, measured in the same run: four subscribers' ``on_next`` run one at a time, so an element
  takes at least 4 W (W: one ``on_next`` called alone in a loop) against T, one subscriber's whole
  time per element: T / 4W.
- ``buffer(1000, 0.1)`` over ``from_iterable(range(N))`` against ``batch(1000)``, both into a
  subscriber that asks for 16 lists at a time. Target: at least 80%.
- Timers: 10,000 concurrent ``never().timeout(60)`` on one ``ThreadPoolScheduler``, then 10,000
  that fire (0.05 s): the threads the process gained at the most (sampled), and the time to set
  them up and for all to fire. Target: no more than a fixed number of threads, at most 64.

    python benchmarks/time_and_multicast.py [--elements N] [--repeat R] [--quick]

Writes the ``time_and_multicast`` section of RESULTS.md and ``results/time_and_multicast.json``;
``--quick`` (50,000 elements, one run) prints and writes nothing.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import queue
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import reactive_streams as rs

try:
    from . import _report
except ImportError:  # run as a script
    import _report  # type: ignore[no-redef]

CHUNK = 256
SUBSCRIBERS = 4
TIMERS = 10_000


class Counter(rs.Subscriber[Any]):
    """Counts per element (``on_next``), asking for ``batch`` more each ``batch``; with
    ``lists``, takes lists too (``on_next_batch``)."""

    def __init__(self, batch: int = 1024, lists: bool = False) -> None:
        self.batch, self.count, self.pending = batch, 0, 0
        self.last: Any = None
        self.subscription: Any = None
        self.done = threading.Event()
        self.error: BaseException | None = None
        if lists:
            self.on_next_batch = self._batch  # type: ignore[method-assign]

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(self.batch)

    def on_next(self, item: Any) -> None:
        self.last = item
        self.count += 1
        self.pending += 1
        if self.pending == self.batch:
            self.pending = 0
            self.subscription.request(self.batch)

    def _batch(self, items: list[Any]) -> None:
        self.last = items[-1]
        self.count += len(items)
        self.pending += len(items)
        if self.pending >= self.batch:
            self.pending -= self.batch
            self.subscription.request(self.batch)

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()

    def wait(self) -> int:
        assert self.done.wait(300), "no end within 300 s"
        if self.error is not None:
            raise self.error
        return self.count


# publish_on between two threads.


class Pools:
    """Two single-thread pools, a producer's and a consumer's, and their schedulers."""

    def __init__(self) -> None:
        self.producer = ThreadPoolExecutor(1, thread_name_prefix="producer")
        self.consumer = ThreadPoolExecutor(1, thread_name_prefix="consumer")
        self.on_producer = rs.ThreadPoolScheduler(self.producer)
        self.on_consumer = rs.ThreadPoolScheduler(self.consumer)

    def close(self) -> None:
        self.producer.shutdown()
        self.consumer.shutdown()


def queue_handoff(pools: Pools, n: int, per_element: bool) -> int:
    """The baseline: chunks of range(N) put by the producer's thread, taken by the consumer's
    and handed to the subscriber (which never asks: nothing to ask)."""
    handoff: queue.SimpleQueue[list[int] | None] = queue.SimpleQueue()
    sink = Counter(batch=1 << 62, lists=not per_element)

    def produce() -> None:
        for start in range(0, n, CHUNK):
            handoff.put(list(range(start, min(start + CHUNK, n))))
        handoff.put(None)

    def consume() -> int:
        if per_element:
            on_next = sink.on_next
            while (chunk := handoff.get()) is not None:
                for x in chunk:
                    on_next(x)
        else:
            on_next_batch = sink.on_next_batch
            while (chunk := handoff.get()) is not None:
                on_next_batch(chunk)
        return sink.count

    pools.producer.submit(produce)
    return pools.consumer.submit(consume).result()


def publish_on_handoff(pools: Pools, n: int, per_element: bool, prefetch: int | None = None) -> int:
    counter = Counter(lists=not per_element)
    source = rs.from_iterable(range(n)).subscribe_on(pools.on_producer)
    moved = (
        source.publish_on(pools.on_consumer)
        if prefetch is None
        else source.publish_on(pools.on_consumer, prefetch)
    )
    moved.subscribe(counter)
    return counter.wait()


# share to 4 subscribers.


def _lines(n: int) -> list[str]:
    return [json.dumps({"id": i, "name": f"row {i}", "score": i * 0.5}) for i in range(n)]


def _plain_source(n: int, lines: list[str] | None) -> rs.Publisher[Any]:
    if lines is None:
        return rs.from_iterable(range(n))
    return rs.from_iterable(lines).map(json.loads)


def one_subscriber(n: int, lines: list[str] | None) -> int:
    counter = Counter()
    _plain_source(n, lines).subscribe(counter)
    return counter.wait()


def shared_subscribers(n: int, lines: list[str] | None) -> int:
    hub = _plain_source(n, lines).publish(prefetch=1024).auto_connect(SUBSCRIBERS)
    counters = [Counter() for _ in range(SUBSCRIBERS)]
    for counter in counters:
        hub.subscribe(counter)
    counts = {counter.wait() for counter in counters}
    assert counts == {n}, counts
    return n


def subscriber_alone(n: int) -> int:
    """A subscriber's own cost per element: its ``on_next`` called in a loop, nothing else."""
    counter = Counter(batch=1 << 62)
    on_next = counter.on_next
    for x in range(n):
        on_next(x)
    return counter.count


# buffer against batch.


def batched(n: int, timed: bool, lists_asked: int = 16) -> int:
    counter = Counter(batch=lists_asked)
    source = rs.from_iterable(range(n))
    (source.buffer(1000, 0.1) if timed else source.batch(1000)).subscribe(counter)
    counter.wait()
    return int(counter.last[-1]) + 1  # the last list's last element is N - 1: nothing lost


# Timers.


class ThreadPeak:
    """The most threads the process had while the block ran (sampled every millisecond)."""

    def __init__(self) -> None:
        self.peak = threading.active_count()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.001):
            self.peak = max(self.peak, threading.active_count())

    def __enter__(self) -> ThreadPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def timers() -> dict[str, float]:
    scheduler = rs.ThreadPoolScheduler()
    rs.just(1).delay(0.001, scheduler=scheduler).to_list()  # the shared pool started beforehand
    list(rs.just(1).delay(0.001, scheduler=scheduler).iterate())
    before = threading.active_count() - 1  # without the sampler's own thread
    with ThreadPeak() as peak:
        start = time.perf_counter()
        waiting = [Counter(batch=1) for _ in range(TIMERS)]
        for counter in waiting:
            rs.never().timeout(60, scheduler=scheduler).subscribe(counter)
        setup = time.perf_counter() - start
        for counter in waiting:
            counter.subscription.cancel()
        firing = [Counter(batch=1) for _ in range(TIMERS)]
        start = time.perf_counter()
        for counter in firing:
            rs.never().timeout(0.05, scheduler=scheduler).subscribe(counter)
        for counter in firing:
            assert counter.done.wait(60) and isinstance(counter.error, rs.StreamTimeoutError)
        fired = time.perf_counter() - start
    return {
        "threads before": before,
        "threads at most": peak.peak - 1,
        "setup µs per timeout": setup / TIMERS * 1e6,
        "all fired s": fired,
    }


def _default_prefetch() -> int:
    default = inspect.signature(rs.publish_on).parameters["prefetch"].default
    return int(default)


def best(runs: dict[str, Callable[[], int]], n: int, repeat: int) -> dict[str, float]:
    """Elements per second of each run, the best of ``repeat`` interleaved rounds."""
    rates: dict[str, float] = {}
    for round_ in range(repeat):
        print(f"round {round_ + 1} of {repeat}", file=sys.stderr, flush=True)
        for name, run in runs.items():
            gc.collect()
            start = time.perf_counter()
            got = run()
            elapsed = time.perf_counter() - start
            assert got == n, (name, got)
            rates[name] = max(rates.get(name, 0.0), n / elapsed)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=None, help="elements per run (1,000,000)")
    parser.add_argument("--repeat", type=int, default=None, help="rounds (5; --quick: 1)")
    parser.add_argument("--quick", action="store_true", help="a cheap check: prints, writes nothing")
    args = parser.parse_args()
    n = args.elements or (50_000 if args.quick else 1_000_000)
    repeat = args.repeat or (1 if args.quick else 5)
    lines = _lines(n)
    pools = Pools()
    try:
        runs: dict[str, Callable[[], int]] = {
            "queue lists": lambda: queue_handoff(pools, n, False),
            "publish_on lists": lambda: publish_on_handoff(pools, n, False),
            "publish_on(prefetch=256) lists": lambda: publish_on_handoff(pools, n, False, CHUNK),
            "queue per element": lambda: queue_handoff(pools, n, True),
            "publish_on per element": lambda: publish_on_handoff(pools, n, True),
            "publish_on(prefetch=256) per element": lambda: publish_on_handoff(pools, n, True, CHUNK),
            "one subscriber (range)": lambda: one_subscriber(n, None),
            "4 shared (range)": lambda: shared_subscribers(n, None),
            "subscriber alone": lambda: subscriber_alone(n),
            "one subscriber (json)": lambda: one_subscriber(n, lines),
            "4 shared (json)": lambda: shared_subscribers(n, lines),
            "batch(1000)": lambda: batched(n, False),
            "buffer(1000, 0.1)": lambda: batched(n, True),
            "batch(1000), one list at a time": lambda: batched(n, False, 1),
        }
        rate = best(runs, n, repeat)
    finally:
        pools.close()
    timer = timers()

    def share_bound(kind: str) -> float:
        # Four subscribers' on_next calls run one at a time (one thread; and the GIL would
        # serialize them on four): per element at least 4 W, against one subscriber's whole time.
        one, own = 1 / rate[f"one subscriber ({kind})"], 1 / rate["subscriber alone"]
        return min(1.0, one / (SUBSCRIBERS * own))

    rows: list[dict[str, Any]] = []
    missed: list[str] = []

    def row(scenario: str, core: float, base: float, baseline: str, target: float, bound: str = "") -> None:
        ratio = core / base
        rows.append(
            {
                "scenario": scenario,
                "elements/s": core,
                "baseline": baseline,
                "baseline elements/s": base,
                "ratio": ratio,
                "target": f">= {target:.2f}",
                "bound": bound,
            }
        )
        if ratio < target:
            missed.append(f"{scenario}: {ratio:.2f} < {target:.2f}" + (f" (bound {bound})" if bound else ""))

    row("publish_on, lists", rate["publish_on lists"], rate["queue lists"], "SimpleQueue chunks", 0.8)
    row(
        "publish_on, per element",
        rate["publish_on per element"],
        rate["queue per element"],
        "SimpleQueue chunks",
        0.8,
    )
    for kind in ("range", "json"):
        row(
            f"share to 4 ({kind}), per subscriber",
            rate[f"4 shared ({kind})"],
            rate[f"one subscriber ({kind})"],
            "one subscriber",
            0.5,
            f"{share_bound(kind):.2f}",
        )
    row("buffer(1000, 0.1)", rate["buffer(1000, 0.1)"], rate["batch(1000)"], "batch(1000)", 0.8)
    threads_gained = timer["threads at most"] - timer["threads before"]
    one_list = rate["batch(1000), one list at a time"] / rate["batch(1000)"]
    hop_per_element = rate["publish_on(prefetch=256) per element"] / rate["queue per element"]
    notes = [
        f"{n:,} elements, best of {repeat} interleaved rounds; peak RSS {_report.peak_rss_mib():.0f} MiB.",
        f"publish_on at its default prefetch ({_default_prefetch()}); with prefetch=256 (Reactor's "
        f"default) it ran {rate['publish_on(prefetch=256) lists'] / rate['queue lists']:.2f} of the "
        f"baseline with lists and {hop_per_element:.2f} "
        "per element: a hop between the two threads every 192 elements.",
        "bound: what the row cannot beat, measured in the same run: for share, one subscriber's whole "
        "time per element T over the least four take, 4 W, with W one subscriber's on_next called "
        f"alone in a loop ({rate['subscriber alone']:,.0f}/s): four on_next calls of Python code "
        "run one at a time (on one thread here; the GIL would serialize them on four).",
        "buffer asks upstream for at most size less what it holds and has in flight, so that with no "
        "demand it holds at most size: one request upstream per list, made once its drain has let go, "
        "so that a synchronous source sends the next list within its running loop; batch(1000) slices "
        "the source's chunks of 8,192 in C. batch(1000) whose subscriber asks for one list at a time "
        f"(one request upstream per list too) ran at {one_list:.2f} of batch(1000) asked 16 at a time.",
        f"Timers: {TIMERS:,} concurrent timeouts on one ThreadPoolScheduler: {timer['threads before']:.0f} "
        f"threads before, {timer['threads at most']:.0f} at most while they were set, waited and fired "
        f"({threads_gained:+.0f}; target: at most 64), {timer['setup µs per timeout']:.1f} µs to set one "
        f"up, all {TIMERS:,} of 0.05 s fired in {timer['all fired s']:.2f} s.",
    ]
    if threads_gained > 64:
        missed.append(f"timers: {threads_gained:.0f} threads gained > 64")
    notes += missed or ["Every target met."]
    if args.quick:
        for r in rows:
            print(r)
        print("\n".join(notes))
        return
    _report.write(
        "time_and_multicast",
        "Time, threads and many subscribers (issue 44)",
        rows,
        notes,
        {"elements": n, "repeat": repeat, "rates": rate, "timers": timer},
    )


if __name__ == "__main__":
    main()
