"""Property-based tests: random sequences of request(n) and cancel(), from one thread and from
several, against every reference publisher and operator.

Checked each time: never more on_next than requested (§1.1), signals never overlap (§1.3),
at most one terminal signal and nothing after it (§1.7), nothing after cancel has taken effect
(§1.8, §3.6), the cancel reaches upstream, nothing lost or duplicated, and liveness: with less
demand than elements exactly the demand arrives, and more demand brings the rest and completion.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reactive_streams as rs

from .support import SOURCE_IDS, SOURCES, WAIT, Probe, Source, Upstream, quiesce, shared_loop

Op = tuple[str, int]

ops_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("request"), st.integers(min_value=1, max_value=20)),
        st.tuples(st.just("request"), st.sampled_from([rs.MAX_DEMAND, rs.MAX_DEMAND - 1, 2**62])),
        st.tuples(st.just("cancel"), st.just(0)),
    ),
    max_size=12,
)

common = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _apply(probe: Probe, op: Op, serial: threading.Lock) -> None:
    kind, n = op
    if kind == "cancel":
        probe.cancel()  # thread-safe (§3.5): not serialized
    else:
        with serial:  # §2.7: requests are serial, whichever thread makes them
            probe.request(n)


def _run(source: Source, count: int, ops: list[Op], threads: int) -> None:
    upstream = Upstream()
    probe = Probe()
    source(count, upstream=upstream).subscribe(probe.relay())
    probe.await_subscribed()
    _apply_all(probe, ops, threads)
    cancelled = any(kind == "cancel" for kind, _ in ops)
    if cancelled:
        upstream.await_cancelled()
        probe.await_released()  # from here on nothing can signal the probe
        if threads == 1 and source.synchronous:
            assert probe.signals_after_cancel == 0
        settled = (len(probe.items), probe.done.is_set())
        probe.request(5)  # §3.6: a no-op now
        assert (len(probe.items), probe.done.is_set()) == settled, "a signal after cancel took effect"
    else:
        _finish(probe, count)
    probe.assert_rules_held()
    _check_items(source, probe, count)


def _apply_all(probe: Probe, ops: list[Op], threads: int) -> None:
    serial = threading.Lock()
    if threads == 1:
        for op in ops:
            _apply(probe, op, serial)
        return
    parts = [ops[i::threads] for i in range(threads)]
    workers = [
        threading.Thread(target=lambda p=part: [_apply(probe, op, serial) for op in p]) for part in parts
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(WAIT)
        assert not w.is_alive(), "a request or cancel did not return (§3.4, §3.5)"


def _finish(probe: Probe, count: int) -> None:
    """Liveness: what was requested arrives, no more; more demand brings the rest and completion."""
    delivered = min(count, probe.requested)
    probe.await_items(delivered)
    if delivered < count:
        assert len(probe.items) == delivered, f"{len(probe.items)} items for {probe.requested} requested"
        assert not probe.done.is_set(), f"ended after {delivered} of {count} items"
    probe.request(count - delivered + 1)  # the rest, and one more to find the end (§1.2)
    probe.await_done()
    assert probe.completed, f"{probe.error!r} instead of on_complete"


def _check_items(source: Source, probe: Probe, count: int) -> None:
    expected: list[Any] = source.expected(count)
    items = probe.items if source.ordered else sorted(probe.items)
    if source.ordered:
        assert items == expected[: len(items)], "lost, duplicated or reordered"
    else:
        assert len(set(items)) == len(items) and set(items) <= set(expected), "lost or duplicated"
    if probe.completed:
        assert items == expected, "completed without every element"
    assert probe.error is None, f"unexpected error {probe.error!r}"


@pytest.mark.parametrize("source", SOURCES, ids=SOURCE_IDS)
@common
@given(count=st.integers(min_value=0, max_value=40), ops=ops_strategy)
def test_random_requests_and_cancels_from_one_thread(source: Source, count: int, ops: list[Op]) -> None:
    _run(source, count, ops, threads=1)


@pytest.mark.parametrize("source", SOURCES, ids=SOURCE_IDS)
@common
@given(count=st.integers(min_value=0, max_value=40), ops=ops_strategy, threads=st.integers(2, 4))
def test_random_requests_and_cancels_from_several_threads(
    source: Source, count: int, ops: list[Op], threads: int
) -> None:
    _run(source, count, ops, threads=threads)


# While the emit loop is inside user code (a slow on_next, a slow iterator, an async generator
# that awaits), a second thread requests, cancels or requests illegal demand (§3.9).

stalled_ops = st.lists(
    st.one_of(
        st.tuples(st.just("request"), st.integers(min_value=1, max_value=20)),
        st.tuples(st.just("request"), st.just(rs.MAX_DEMAND)),
        st.tuples(st.just("cancel"), st.just(0)),
        st.tuples(st.just("illegal"), st.sampled_from([0, -1])),
    ),
    min_size=1,
    max_size=6,
)


class _Gate:
    """Where the emit loop waits: ``entered`` is set when it gets there, and it goes on when
    `open` is called (from any thread)."""

    def __init__(self) -> None:
        self.entered, self._opened = threading.Event(), threading.Event()
        self._async: asyncio.Event | None = None

    def open(self) -> None:
        self._opened.set()
        if self._async is not None:
            shared_loop().call_soon_threadsafe(self._async.set)

    def wait(self) -> None:
        self.entered.set()
        assert self._opened.wait(WAIT)

    async def wait_async(self) -> None:
        self._async = asyncio.Event()
        self.entered.set()
        if not self._opened.is_set():
            await self._async.wait()

    def iterate(self, count: int, at: int) -> Iterator[int]:
        for i in range(count + 1):
            if i == at:
                self.wait()
            if i < count:
                yield i

    def async_iterable(self, count: int, at: int) -> Any:
        gate = self

        class Source:
            def __aiter__(self) -> Any:
                async def gen() -> Any:
                    for i in range(count + 1):
                        if i == at:
                            await gate.wait_async()
                        if i < count:
                            yield i

                return gen().__aiter__()

        return Source()


def _stalled(source: Source, probe: Probe, gate: _Gate, initial: int, count: int, ops: list[Op]) -> None:
    source(count).subscribe(probe)
    probe.await_subscribed()
    emitter = threading.Thread(target=probe.request, args=(initial,))  # runs a synchronous loop
    emitter.start()
    assert gate.entered.wait(WAIT), "the emit loop never reached the gate"
    for kind, n in ops:  # this thread, while the loop waits at the gate
        if kind == "cancel":
            probe.cancel()
        else:
            probe.request(n)  # an illegal n is passed on, and not counted
    gate.open()
    emitter.join(WAIT)
    kinds = [kind for kind, _ in ops]
    first = next((k for k in kinds if k != "request"), None)
    if first == "illegal" and "cancel" not in kinds:
        probe.await_done()
        assert isinstance(probe.error, rs.IllegalDemandError), f"§3.9 error lost: {probe.error!r}"
    elif first is not None:
        quiesce(source, probe)
        if first == "cancel":
            assert probe.error is None, f"a signal after cancel: {probe.error!r}"  # §3.6
        else:
            assert probe.error is None or isinstance(probe.error, rs.IllegalDemandError)
    else:  # only requests: all of them are served, even those made while the loop waited
        wanted = min(count, probe.requested)
        with probe.changed:
            assert probe.changed.wait_for(lambda: len(probe.items) >= wanted, WAIT), "stalled"
        if probe.requested > count:
            probe.await_done()
            assert probe.completed, f"not completed: {probe.error!r}"
    probe.assert_rules_held()
    expected: list[Any] = source.expected(count)
    if source.ordered:
        assert probe.items == expected[: len(probe.items)], "lost, duplicated or reordered"
    else:
        assert sorted(probe.items) == sorted(set(probe.items)) and set(probe.items) <= set(expected)


@pytest.mark.parametrize("source", SOURCES, ids=SOURCE_IDS)
@settings(common, max_examples=15)
@given(count=st.integers(min_value=1, max_value=30), ops=stalled_ops)
def test_ops_from_another_thread_during_a_slow_on_next(source: Source, count: int, ops: list[Op]) -> None:
    gate = _Gate()
    probe = Probe(on_next_hook=lambda probe, item: gate.wait() if item in (0, [0]) else None)
    try:
        _stalled(source, probe, gate, 1, count, ops)
    finally:
        gate.open()


STALLING = {
    "from_iterable": (lambda gate, n, at: rs.from_iterable(gate.iterate(n, at)), True),
    "async_iterable": (
        lambda gate, n, at: rs.AsyncIterablePublisher(gate.iterate(n, at), batch_size=7),
        False,
    ),
    "from_async_iterable": (
        lambda gate, n, at: rs.from_async_iterable(gate.async_iterable(n, at), shared_loop()),
        False,
    ),
}


@pytest.mark.parametrize("name", list(STALLING))
@settings(common, max_examples=15)
@given(data=st.data(), count=st.integers(min_value=0, max_value=30), ops=stalled_ops)
def test_ops_from_another_thread_while_the_source_is_pulled(
    name: str, data: st.DataObject, count: int, ops: list[Op]
) -> None:
    at = data.draw(st.integers(min_value=0, max_value=count), label="gate before element")
    make, sync = STALLING[name]
    gate = _Gate()
    source = Source(name, lambda n, e, upstream: make(gate, n, at), synchronous=sync)
    try:
        _stalled(source, Probe(), gate, at + 1, count, ops)
    finally:
        gate.open()


demand_chunks = st.lists(st.integers(min_value=1, max_value=7), max_size=8)


@pytest.mark.parametrize("source", SOURCES, ids=SOURCE_IDS)
@common
@given(count=st.integers(min_value=1, max_value=40), data=st.data(), threads=st.integers(1, 3))
def test_less_demand_than_elements_delivers_exactly_that_then_the_rest(
    source: Source, count: int, data: st.DataObject, threads: int
) -> None:
    first = data.draw(demand_chunks.filter(lambda c: sum(c) < count), label="first requests")
    rest = data.draw(st.lists(st.integers(1, count), min_size=1, max_size=4), label="later requests")
    probe = Probe()
    source(count).subscribe(probe)
    probe.await_subscribed()
    _apply_all(probe, [("request", n) for n in first], threads)
    probe.await_items(sum(first))
    assert len(probe.items) == sum(first) and not probe.done.is_set()
    for n in rest:
        probe.request(n)
    missing = count + 1 - probe.requested
    if missing > 0:
        probe.request(missing)  # enough for the rest and the end (§1.2)
    probe.await_done()
    assert probe.completed, f"{probe.error!r} instead of on_complete"
    probe.assert_rules_held()
    _check_items(source, probe, count)
