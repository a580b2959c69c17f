"""Property-based tests: random sequences of request(n) and cancel(), from one thread and from
several, against every reference publisher and operator.

Checked each time: never more on_next than requested (§1.1), signals never overlap (§1.3),
at most one terminal signal and nothing after it (§1.7), nothing after cancel has taken effect
(§1.8, §3.6), and nothing lost or duplicated.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reactive_streams as rs

from .support import SOURCE_IDS, SOURCES, WAIT, Probe, Source

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
    probe = Probe()
    source(count).subscribe(probe)
    probe.await_subscribed()
    serial = threading.Lock()
    if threads == 1:
        for op in ops:
            _apply(probe, op, serial)
    else:
        parts = [ops[i::threads] for i in range(threads)]
        workers = [
            threading.Thread(target=lambda part=part: [_apply(probe, op, serial) for op in part])
            for part in parts
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join(WAIT)
    cancelled = any(kind == "cancel" for kind, _ in ops)
    requested = probe.requested
    if cancelled:
        _quiesce(source, probe)
        settled = (len(probe.items), probe.done.is_set())
        probe.request(5)  # §3.6: a no-op now
        _quiesce(source, probe)
        assert (len(probe.items), probe.done.is_set()) == settled, "a signal after cancel took effect"
        if threads == 1 and source.synchronous:
            assert probe.signals_after_cancel == 0
    else:
        probe.await_items(min(count, requested))
        if requested >= count + 1 or requested >= rs.MAX_DEMAND:
            probe.await_done()
    probe.assert_rules_held()
    _check_items(source, probe, count)


def _quiesce(source: Source, probe: Probe) -> None:
    if source.synchronous:
        return
    last = -1
    while last != len(probe.items):  # until a pause passes with no new element
        last = len(probe.items)
        time.sleep(0.03)


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
