"""Property-based tests: random sequences of request(n) and cancel(), from one thread and from
several, against every reference publisher and operator.

Checked each time: never more on_next than requested (§1.1), signals never overlap (§1.3),
at most one terminal signal and nothing after it (§1.7), nothing after cancel has taken effect
(§1.8, §3.6), the cancel reaches upstream, nothing lost or duplicated, and liveness: with less
demand than elements exactly the demand arrives, and more demand brings the rest and completion.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reactive_streams as rs

from .support import SOURCE_IDS, SOURCES, WAIT, Probe, Source, Upstream

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
