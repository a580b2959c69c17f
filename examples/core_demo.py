"""The pure-Python core, end to end (no JVM): python examples/core_demo.py

A bursty producer feeds a SubmissionPublisher; two subscribers consume it at different
speeds through operators; one iterates with a bounded buffer, the other with asyncio. It
prints what each received, the throughput, and the most elements ever buffered, which
stays within the demand each consumer signalled.
"""

from __future__ import annotations

import asyncio
import threading
import time

import reactive_streams as rs


def main() -> None:
    print(f"reactive-streams {rs.__version__}: the core, no JVM")

    # 1. A cold pipeline, pulled by a blocking iterator that never buffers more than 64.
    start = time.perf_counter()
    squares = rs.from_iterable(range(1_000_000)).map(lambda x: x * x).filter(lambda x: x % 3 == 0)
    total = sum(rs.iterate(squares, prefetch=64))
    elapsed = time.perf_counter() - start
    print(f"1. sum of squares divisible by 3 below 10^12: {total} ({1_000_000 / elapsed:,.0f} elements/s)")

    # 2. A hot, multicast source with bounded buffers: submit() waits for the slowest consumer.
    publisher: rs.SubmissionPublisher[int] = rs.SubmissionPublisher(max_buffer_capacity=16)
    peak = {"fast": 0}
    fast_items = rs.iterate(publisher.batch(100), prefetch=4)  # lists of 100

    async def slow_consumer() -> int:
        received = 0
        async for _item in rs.aiterate(publisher.take(500), prefetch=8):
            received += 1
            if received % 100 == 0:
                await asyncio.sleep(0.01)  # a slow consumer slows the producer, no buffer grows
        return received

    def produce() -> None:
        for i in range(2_000):
            lag = publisher.submit(i)
            peak["fast"] = max(peak["fast"], lag)
        publisher.close()

    fast_received = 0

    def fast_consumer() -> None:
        nonlocal fast_received
        fast_received = sum(len(batch) for batch in fast_items)

    threads = [threading.Thread(target=produce), threading.Thread(target=fast_consumer)]
    for thread in threads:
        thread.start()
    slow_received = asyncio.run(slow_consumer())
    for thread in threads:
        thread.join()
    print(
        f"2. multicast: fast consumer got {fast_received} in batches of 100, asyncio consumer took "
        f"{slow_received} then cancelled; most buffered for one subscriber: {peak['fast']} (cap 16)"
    )

    # 3. Merge and flat_map with a concurrency bound, across threads.
    words = rs.from_iterable(["reactive", "streams", "for", "python"])
    letters = words.flat_map(lambda w: rs.AsyncIterablePublisher(w.upper()), concurrency=2)
    print(f"3. flat_map(concurrency=2) over executor threads: {''.join(sorted(rs.iterate(letters)))}")

    # 4. The rules hold: a None element is refused (§2.13), as Java refuses null.
    try:
        list(rs.iterate(rs.from_iterable([1, None, 3])))
    except rs.NullElementError as exc:
        print(f"4. a None element ends the stream with: {exc}")


if __name__ == "__main__":
    main()
