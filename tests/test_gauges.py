"""`describe_streams`: every live `iterate`/`aiterate`, `publish_on` and `share` stream with what it
holds, the demand outstanding, and on whom it waits since when (issue 47): a stuck stream names
its side."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import reactive_streams as rs

from .support import Probe, wait_for


def _states(kind: str, name_part: str) -> list[rs.StreamState]:
    return [s for s in rs.describe_streams() if s.kind == kind and name_part in s.name]


def _one(kind: str, publisher: object) -> rs.StreamState:
    states = _states(kind, f"at {id(publisher):#x}")
    assert len(states) == 1, rs.describe_streams()
    return states[0]


def test_an_iteration_whose_producer_is_silent_waits_on_the_producer_for_its_whole_prefetch() -> None:
    source: rs.Publisher[int] = rs.never()
    iterator = rs.iterate(source, prefetch=64)
    blocked = threading.Thread(target=next, args=(iterator, None), daemon=True)
    before = time.time()
    blocked.start()
    wait_for(lambda: _states("iterate", f"{id(source):#x}"), "the iteration to be listed")
    time.sleep(0.3)
    state = _one("iterate", source)
    assert (state.waiting_on, state.outstanding, state.held, state.delivered) == ("producer", 64, 0, 0)
    assert before - 0.05 <= state.waiting_since <= before + 0.3 and state.waiting_seconds >= 0.25
    iterator.close()
    blocked.join(5)
    assert not blocked.is_alive()
    assert not _states("iterate", f"{id(source):#x}"), "a closed iteration is listed no more"


def test_an_iteration_whose_consumer_stopped_taking_waits_on_the_consumer_with_no_demand() -> None:
    source = rs.from_iterable(range(1_000))
    iterator = rs.iterate(source, prefetch=100)
    time.sleep(0.3)  # the wait is dated from the take, not from the subscription
    assert next(iterator) == 0  # the first chunk, 100 elements, is handed out: nothing asked since
    took = time.time()
    time.sleep(0.3)
    state = _one("iterate", source)
    assert (state.waiting_on, state.outstanding, state.held, state.delivered) == ("consumer", 0, 0, 100)
    assert abs(state.waiting_since - took) < 0.1 and state.waiting_seconds >= 0.25
    assert list(iterator) == list(range(1, 1_000))
    assert not _states("iterate", f"{id(source):#x}"), "an iteration at its end is listed no more"


def test_an_iteration_holding_elements_waits_on_its_consumer() -> None:
    submission: rs.SubmissionPublisher[int] = rs.SubmissionPublisher()
    with rs.iterate(submission, prefetch=32) as iterator:
        wait_for(lambda: submission.number_of_subscribers == 1, "the iteration's subscription")
        for item in range(10):
            submission.submit(item)
        wait_for(lambda: _one("iterate", submission).held == 10, "ten elements held")
        state = _one("iterate", submission)
        assert (state.waiting_on, state.outstanding, state.delivered) == ("consumer", 22, 0)
        assert next(iterator) == 0
        state = _one("iterate", submission)
        assert (state.held, state.delivered, state.outstanding) == (0, 10, 22)
        assert state.waiting_on == "producer"  # all taken, demand outstanding
    submission.close()


def test_an_async_iteration_is_listed_with_its_kind() -> None:
    async def main() -> rs.StreamState:
        source: rs.Publisher[int] = rs.never()
        iterator = rs.aiterate(source, prefetch=8)
        waiting = asyncio.ensure_future(iterator.__anext__())
        await asyncio.sleep(0.05)
        state = _one("aiterate", source)
        waiting.cancel()
        await iterator.aclose()
        return state

    state = asyncio.run(main())
    assert (state.waiting_on, state.outstanding, state.held) == ("producer", 8, 0)


def test_publish_on_holding_for_a_subscriber_that_stopped_requesting_names_the_consumer() -> None:
    source = rs.from_iterable(range(1_000))
    probe = Probe(1)
    rs.publish_on(rs.ThreadPoolScheduler(), prefetch=16)(source).subscribe(probe)
    wait_for(lambda: len(probe.items) == 1, "the one element requested")
    wait_for(lambda: _one("publish_on", source).held == 15, "the rest of the prefetch held")
    state = _one("publish_on", source)
    assert (state.waiting_on, state.outstanding, state.delivered) == ("consumer", 0, 1)
    probe.cancel()
    wait_for(lambda: not _states("publish_on", f"{id(source):#x}"), "the cancelled stream to go")


def _held_while_busy_with_sixteen(kind: str, source: object, subscribe: Any) -> None:
    """``subscribe(probe)`` with a probe asking for 16 that holds its first element until
    released: while it does, the stream of ``kind`` over ``source`` holds all 16 for its
    consumer, with no demand outstanding on the producer."""
    release = threading.Event()

    def hold_the_first(probe: Probe, item: Any) -> None:
        if len(probe.items) == 1:
            release.wait(30)

    probe = Probe(16, hold_the_first)
    subscribe(probe)
    try:
        wait_for(lambda: len(probe.items) == 1, "the first element")
        state = _one(kind, source)
        assert (state.waiting_on, state.held, state.outstanding, state.delivered) == ("consumer", 16, 0, 0)
    finally:
        release.set()
    wait_for(lambda: len(probe.items) == 16, "the sixteen")
    probe.cancel()


def test_publish_on_names_the_consumer_while_it_is_still_on_what_it_was_sent() -> None:
    """Everything the queue had went to a downstream that is still taking it: that is held for
    the consumer, not demand outstanding on the producer."""
    source = rs.from_iterable(range(1_000))
    on_thread = rs.publish_on(rs.ThreadPoolScheduler(), prefetch=16)(source)
    _held_while_busy_with_sixteen("publish_on", source, on_thread.subscribe)


def test_share_names_the_consumer_its_slowest_member_holds_back() -> None:
    source = rs.from_iterable(range(1_000))
    shared = rs.share(prefetch=16)(source)
    fast, slow = Probe(1_000), Probe(2)
    shared.subscribe(fast)
    shared.subscribe(slow)
    wait_for(lambda: len(slow.items) == 2, "the slow member's two")
    wait_for(lambda: _one("share", source).held == 14, "what the slow member has not taken")
    state = _one("share", source)
    assert (state.waiting_on, state.delivered, state.outstanding) == ("consumer", 2, 0)
    slow.cancel()
    fast.await_done()
    assert fast.items == list(range(1_000))
    wait_for(lambda: not _states("share", f"{id(source):#x}"), "the ended connection to go")


def test_share_names_the_consumer_while_its_one_member_is_still_on_what_it_was_sent() -> None:
    """The hub moved the member's place before sending: a member busy with the whole prefetch
    holds it for the consumer; it is not demand outstanding on the producer."""
    source = rs.from_iterable(range(1_000))
    shared = rs.share(prefetch=16)(source)
    threads: list[threading.Thread] = []

    def subscribe(probe: Probe) -> None:
        # The source emits in request: the hub's drain runs on the subscribing thread.
        threads.append(threading.Thread(target=shared.subscribe, args=(probe,), daemon=True))
        threads[0].start()

    _held_while_busy_with_sixteen("share", source, subscribe)
    threads[0].join(5)


def test_a_thousand_live_iterations_are_each_listed_once_and_gone_once_closed() -> None:
    sources: list[Any] = [rs.never() for _ in range(1_000)]
    iterators = [rs.iterate(source, prefetch=4) for source in sources]
    names = {f"{type(source).__qualname__} at {id(source):#x}" for source in sources}
    try:
        listed = [state.name for state in rs.describe_streams() if state.name in names]
        assert sorted(listed) == sorted(names)  # each once
    finally:
        for iterator in iterators:
            iterator.close()
    assert not [state for state in rs.describe_streams() if state.name in names]
