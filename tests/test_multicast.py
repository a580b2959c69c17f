"""publish, replay and share: one subscription to the source for many subscribers, paced by the
slowest; late subscribers; connect and its Connection, auto_connect, ref_count; the rules kept per
subscriber; and the hub under many threads."""

from __future__ import annotations

import functools
import logging
import random
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import reactive_streams as rs

from .support import WAIT, BatchProbe, Boom, Probe, Spy, run_threads, wait_for

MAX = rs.MAX_DEMAND


def subscriptions(source: rs.Publisher[Any]) -> tuple[list[Spy], rs.Publisher[Any]]:
    """``source`` behind a fresh `Spy` for each subscription made to it: the list grows by one
    with each, and each spy tells what that subscription was asked."""
    spies: list[Spy] = []

    def subscribe_anew() -> rs.Publisher[Any]:
        spies.append(Spy(source))
        return spies[-1]

    return spies, rs.defer(subscribe_anew)


def together(targets: list[Callable[[], object]]) -> None:
    """Run each of ``targets`` on a thread of its own, all at once, and wait for them all."""
    threads = [threading.Thread(target=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def is_suffix(items: list[Any], count: int) -> bool:
    """``items`` is ``start, start + 1, ..., count - 1`` for some ``start``: nothing lost,
    duplicated or reordered after the first it got."""
    return items == list(range(items[0] if items else count, count))


# One subscription for many.


def test_many_subscribers_share_one_subscription_to_the_source() -> None:
    spies, source = subscriptions(rs.range(0, 100))
    shared = source.publish(16)
    probes = [Probe(MAX) for _ in range(5)]
    for probe in probes:
        shared.subscribe(probe)
    assert spies == []  # joined, not yet connected
    shared.connect()
    assert len(spies) == 1 and spies[0].delivered == 100 and spies[0].cancels == 0
    for probe in probes:
        assert probe.items == list(range(100)) and probe.completed
        probe.assert_rules_held()


def test_connect_while_connected_subscribes_nothing_more() -> None:
    spies, source = subscriptions(rs.range(0, 100))
    shared = source.publish(8)
    probe = Probe(3)
    shared.subscribe(probe)
    shared.connect()
    shared.connect()
    assert len(spies) == 1 and spies[0].requests == [8] and probe.items == [0, 1, 2]


# Paced by the slowest.


@pytest.mark.parametrize("history", [0, 3], ids=["publish", "replay(3)"])
def test_a_stalled_subscriber_stops_the_source_and_it_resumes_when_that_one_requests(history: int) -> None:
    spy = Spy(rs.range(0, 1000))
    shared = spy.replay(history, prefetch=16) if history else spy.publish(prefetch=16)
    fast, stalled = Probe(MAX), Probe(0)
    shared.subscribe(fast)
    shared.subscribe(stalled)
    shared.connect()
    assert spy.requested == 16 and fast.items == list(range(16)) and stalled.items == []
    chunks = random.Random(44)
    while not stalled.done.is_set():
        stalled.request(chunks.randint(1, 10))
        # The source is asked for at most prefetch beyond what the slowest took, so the hub holds
        # at most that (received, not yet had by all), plus the `history` replay keeps.
        assert spy.requested - len(stalled.items) <= 16
        assert spy.delivered - len(stalled.items) <= 16
        assert len(fast.items) - len(stalled.items) <= 16
    assert fast.items == stalled.items == list(range(1000)) and fast.completed and stalled.completed
    fast.assert_rules_held()
    stalled.assert_rules_held()


# Late subscribers.


def test_a_late_subscriber_gets_what_comes_after_it_joins() -> None:
    shared = rs.range(0, 20).publish(4)
    early = Probe(0)
    shared.subscribe(early)
    shared.connect()  # the source's first 4 come, and are held for `early`
    late = Probe(MAX)
    shared.subscribe(late)
    early.request(MAX)
    assert early.items == list(range(20)) and late.items == list(range(4, 20))
    assert early.completed and late.completed


def test_replay_gives_a_late_subscriber_the_last_n_first() -> None:
    shared = rs.range(0, 20).replay(2, prefetch=4)
    early = Probe(0)
    shared.subscribe(early)
    shared.connect()  # 0..3 held
    late = Probe(MAX)
    shared.subscribe(late)
    assert late.items == [2, 3]
    early.request(MAX)
    assert early.items == list(range(20)) and late.items == list(range(2, 20))
    assert early.completed and late.completed


@pytest.mark.parametrize(
    "connect_first", [False, True], ids=["subscribed, then connected", "connected first"]
)
@pytest.mark.parametrize("history", [0, 3], ids=["publish", "replay(3)"])
def test_after_the_source_ended_a_subscriber_gets_the_last_n_and_the_end(
    history: int, connect_first: bool
) -> None:
    shared = rs.range(0, 10).replay(history) if history else rs.range(0, 10).publish()
    first = Probe(MAX)
    if connect_first:
        shared.connect()  # everything the source sent is held for the first subscriber
    shared.subscribe(first)
    if not connect_first:
        shared.connect()
    assert first.items == list(range(10)) and first.completed
    after = Probe(0)
    shared.subscribe(after)
    assert after.items == [] and after.done.is_set() == (history == 0)  # the end after the last n
    after.request(MAX)
    assert after.items == list(range(10 - history, 10)) and after.completed
    after.assert_rules_held()


# connect and its Connection.


def test_connect_before_any_subscriber_holds_up_to_prefetch_for_the_first() -> None:
    spy = Spy(rs.range(0, 100))
    shared = spy.publish(8)
    shared.connect()
    assert spy.requested == 8 and spy.delivered == 8  # nobody to pace the source: it waits
    first = Probe(MAX)
    shared.subscribe(first)
    assert first.items == list(range(100)) and first.completed


def test_cancelling_the_connection_cancels_the_source_and_fails_each_after_what_it_asked_for() -> None:
    spy = Spy(rs.range(0, 1000))
    shared = spy.publish(8)
    eager, slow = Probe(MAX), Probe(2)
    shared.subscribe(eager)
    shared.subscribe(slow)
    connection = shared.connect()
    assert eager.items == list(range(8)) and slow.items == [0, 1]
    connection.cancel()
    assert spy.cancels == 1
    for probe, items in ((eager, list(range(8))), (slow, [0, 1])):
        assert probe.items == items and isinstance(probe.error, rs.ReactiveStreamsError)
        assert "cancelled" in str(probe.error)
        probe.assert_rules_held()
    connection.cancel()  # idempotent
    assert spy.cancels == 1


def test_leaving_the_with_block_of_connect_cancels_the_source() -> None:
    spy = Spy(rs.range(0, 1000))
    shared = spy.publish(8)
    probe = Probe(3)
    shared.subscribe(probe)
    with shared.connect() as connection:
        assert isinstance(connection, rs.Connection)
        assert probe.items == [0, 1, 2] and spy.cancels == 0
    assert spy.cancels == 1


def test_connect_after_the_source_ended_subscribes_it_again() -> None:
    spies, source = subscriptions(rs.range(0, 5))
    shared = source.publish()
    first = Probe(MAX)
    shared.subscribe(first)
    shared.connect()
    assert first.items == list(range(5)) and first.completed
    shared.connect()
    assert len(spies) == 2
    second = Probe(MAX)
    shared.subscribe(second)  # the first subscriber of the new connection: gets what it holds
    assert second.items == list(range(5)) and second.completed


# auto_connect.


def test_auto_connect_subscribes_the_source_at_the_nth_subscriber_and_stays_connected() -> None:
    spies, source = subscriptions(rs.range(0, 10))
    shared = source.publish().auto_connect(3)
    probes = [Probe(MAX) for _ in range(3)]
    shared.subscribe(probes[0])
    shared.subscribe(probes[1])
    assert spies == [] and probes[0].items == [] and probes[1].items == []
    shared.subscribe(probes[2])
    assert len(spies) == 1
    for probe in probes:
        assert probe.items == list(range(10)) and probe.completed
    fourth = Probe(MAX)
    shared.subscribe(fourth)  # after the end: the end, and no second subscription
    assert fourth.items == [] and fourth.completed and len(spies) == 1


def test_auto_connect_0_connects_at_once() -> None:
    spy = Spy(rs.range(0, 100))
    shared = spy.publish(8).auto_connect(0)
    assert spy.requested == 8 and spy.delivered == 8
    first = Probe(MAX)
    shared.subscribe(first)
    assert first.items == list(range(100)) and first.completed


# ref_count and share.


def test_ref_count_connects_at_n_and_the_last_to_leave_cancels_the_source() -> None:
    spies, source = subscriptions(rs.range(0, 10**6))
    shared = source.publish(8).ref_count(2)
    a, b = Probe(3), Probe(5)
    shared.subscribe(a)
    assert spies == [] and a.items == []
    shared.subscribe(b)
    assert len(spies) == 1 and a.items == [0, 1, 2] and b.items == [0, 1, 2, 3, 4]
    a.cancel()
    assert spies[0].cancels == 0  # b is still there
    b.cancel()
    assert spies[0].cancels == 1
    c, d = Probe(4), Probe(4)
    shared.subscribe(c)
    assert len(spies) == 1  # a new connection, which waits for 2 again
    shared.subscribe(d)
    assert len(spies) == 2 and c.items == d.items == [0, 1, 2, 3]  # the source from its start


def test_share_subscribes_the_source_again_after_it_completed() -> None:
    spies, source = subscriptions(rs.range(0, 5))
    shared = source.share()
    first = Probe(MAX)
    shared.subscribe(first)
    assert first.items == list(range(5)) and first.completed and len(spies) == 1
    second = Probe(MAX)
    shared.subscribe(second)
    assert second.items == list(range(5)) and second.completed and len(spies) == 2


def test_the_functional_forms_work_as_the_fluent_ones() -> None:
    spies, source = subscriptions(rs.range(0, 3))
    published, replayed, shared = Probe(MAX), Probe(MAX), Probe(MAX)
    connectable = rs.publish(2)(source)
    connectable.subscribe(published)
    connectable.connect()
    rs.replay(1)(rs.range(0, 3)).auto_connect(0).subscribe(replayed)  # the first gets all it holds
    rs.share(prefetch=2)(source).subscribe(shared)
    assert published.items == replayed.items == shared.items == [0, 1, 2]
    assert len(spies) == 2 and spies[0].requests[0] == spies[1].requests[0] == 2


@pytest.fixture
def eager_thread_switches() -> Iterator[None]:
    """Threads switch every microsecond, not every 5 ms: a race between two threads is run into
    far more often."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.usefixtures("eager_thread_switches")
def test_share_a_subscriber_that_comes_as_the_last_one_leaves_is_served() -> None:
    """A subscriber may take the connection the last one is leaving; it must then keep it, or
    join a new one, never be left in one whose source is cancelled (a race these runs found: a
    stranded subscriber waits WAIT seconds, then fails the test)."""
    stranded: list[str] = []

    def one_round() -> None:
        shared = rs.range(0, 10**9).share(prefetch=2)
        leaving, coming = Probe(1), Probe(5)
        shared.subscribe(leaving)
        start = threading.Barrier(2)

        def leave() -> None:
            start.wait()
            leaving.cancel()

        def come() -> None:
            start.wait()
            shared.subscribe(coming)

        together([leave, come])
        with coming.changed:  # with the source cancelled under it, at most the 2 held would come
            coming.changed.wait_for(lambda: len(coming.items) >= 5, WAIT)
        if len(coming.items) < 5 or not is_suffix(coming.items, coming.items[0] + 5):
            stranded.append(repr(coming.items))

    def run() -> None:
        for _ in range(1000):
            one_round()

    run_threads(run, 4)
    assert stranded == []


# The rules, per subscriber.


@pytest.mark.parametrize("bad", [0, -1])
def test_a_bad_request_fails_only_that_subscriber(bad: int) -> None:
    spy = Spy(rs.range(0, 50))
    shared = spy.publish(8)
    wrong, right = Probe(0), Probe(0)
    shared.subscribe(wrong)
    shared.subscribe(right)
    shared.connect()
    wrong.request(bad)
    assert isinstance(wrong.error, rs.IllegalDemandError) and "§3.9" in str(wrong.error)  # §3.9
    right.request(MAX)
    assert right.items == list(range(50)) and right.completed and spy.cancels == 0
    assert wrong.items == []
    wrong.assert_rules_held()


def test_a_bad_request_during_the_last_on_next_fails_rather_than_completes() -> None:
    # The property suite's find: the end was decided in the same pass as the last element, so a
    # request(0) made during that on_next came after the member was done and was dropped (§3.9).
    entered, release = threading.Event(), threading.Event()
    probe = Probe(0, on_next_hook=lambda _probe, _item: (entered.set(), release.wait(WAIT)))
    rs.just(0).share(prefetch=8).subscribe(probe)
    emitter = threading.Thread(target=probe.request, args=(1,))
    emitter.start()
    try:
        assert entered.wait(WAIT)
        probe.request(0)
    finally:
        release.set()
        emitter.join(WAIT)
    probe.await_done()
    assert probe.items == [0] and isinstance(probe.error, rs.IllegalDemandError)  # §3.9
    probe.assert_rules_held()


@pytest.mark.parametrize("share", [False, True], ids=["publish", "share"])
def test_subscribing_twice_fails_the_existing_subscription_and_makes_no_second(share: bool) -> None:
    spy = Spy(rs.range(0, 100))
    connectable = spy.publish(8)
    shared = connectable.ref_count(1) if share else connectable
    other, twice = Probe(0), Probe(0)
    shared.subscribe(other)
    shared.subscribe(twice)
    subscription = twice.subscription
    shared.subscribe(twice)  # §1.10
    assert twice.subscription is subscription  # §2.12: no second on_subscribe
    assert isinstance(twice.error, rs.ReactiveStreamsError) and "§1.10" in str(twice.error)
    assert spy.cancels == 0  # the connection goes on for `other`
    twice.assert_rules_held()
    if not share:
        connectable.connect()
    other.request(MAX)
    assert other.items == list(range(100)) and other.completed


@pytest.mark.parametrize("probe_type", [Probe, BatchProbe], ids=["on_next", "on_next_batch"])
def test_a_subscriber_whose_on_next_raises_is_cancelled_and_logged_and_the_others_go_on(
    probe_type: type[Probe], caplog: pytest.LogCaptureFixture
) -> None:
    def fail_at_3(probe: Probe, item: int) -> None:
        if item == 3:
            raise Boom("on_next fails")

    spy = Spy(rs.range(0, 50))
    shared = spy.publish(8)
    failing = probe_type(MAX, on_next_hook=fail_at_3)
    others = [Probe(MAX), Probe(MAX)]
    for probe in [others[0], failing, others[1]]:
        shared.subscribe(probe)
    with caplog.at_level(logging.ERROR, logger="reactive_streams"):
        shared.connect()
    assert failing.items == [0, 1, 2, 3] and not failing.done.is_set()  # §2.13: nothing more
    for probe in others:
        assert probe.items == list(range(50)) and probe.completed
    assert spy.cancels == 0
    logged = [r for r in caplog.records if r.name == "reactive_streams" and "§2.13" in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None and isinstance(logged[0].exc_info[1], Boom)


# Many threads.

SUBSCRIBERS = 4


def subscribe_and_take_all(shared: rs.Publisher[Any], probe: Probe, count: int) -> None:
    """Subscribe ``probe``, then ask for ``count`` in random chunks from 2 threads, their calls
    serial (§2.7), and wait for the end."""
    shared.subscribe(probe)
    serial = threading.Lock()

    def requester() -> None:
        chunks, asked = random.Random(), 0
        while asked < count:
            n = chunks.randint(1, 16)
            with serial:  # §2.7
                probe.request(n)
            asked += n

    run_threads(requester, 2)
    probe.await_done()


@pytest.mark.parametrize(
    ("make", "all_join_first"),
    [
        (lambda source: source.publish(16).auto_connect(SUBSCRIBERS), True),
        (lambda source: source.share(16), False),
    ],
    ids=["publish().auto_connect(4)", "share()"],
)
def test_under_eight_threads_a_thousand_runs_no_element_is_lost_duplicated_or_reordered(
    make: Callable[[rs.Publisher[int]], rs.Publisher[int]], all_join_first: bool
) -> None:
    failures: list[str] = []

    def run() -> None:
        for _ in range(125):
            shared = make(rs.range(0, 200))
            probes = [Probe(0) for _ in range(SUBSCRIBERS)]
            together([functools.partial(subscribe_and_take_all, shared, probe, 200) for probe in probes])
            for probe in probes:
                # All joined before the connection: each gets all. With share the first connects,
                # and the others get what comes after they join: an unbroken run to the end.
                whole = probe.items == list(range(200)) if all_join_first else is_suffix(probe.items, 200)
                if not whole or not probe.completed or probe.violations:
                    failures.append(
                        f"{probe.items[:5]}...{probe.items[-3:]} {probe.completed} {probe.violations}"
                    )
            if not any(probe.items == list(range(200)) for probe in probes):
                failures.append("no subscriber got the source from its start")

    run_threads(run, 8)
    assert failures == []


def test_no_thread_is_left_behind() -> None:
    before = {t.ident for t in threading.enumerate()}
    executor = ThreadPoolExecutor(4, thread_name_prefix="multicast-test")
    pool = rs.ThreadPoolScheduler(executor)
    try:
        for _ in range(50):
            shared = rs.range(0, 100).subscribe_on(pool).delay(0.0001, scheduler=pool).share(16)
            probes = [Probe(MAX) for _ in range(3)]
            quitter = Probe(5)
            for probe in [*probes, quitter]:
                shared.publish_on(pool, prefetch=8).subscribe(probe)
            quitter.await_items(5)
            quitter.cancel()
            for probe in probes:
                probe.await_done()
                assert is_suffix(probe.items, 100) and probe.completed, probe.items
    finally:
        executor.shutdown(wait=True)
    # What stays is the library's own, started once for the process (its shared pool, the
    # finalizer); the executor's threads and the scheduler's timer thread are gone.
    wait_for(
        lambda: all(
            t.name.startswith(("reactive-streams", "rs-finalizer"))
            for t in threading.enumerate()
            if t.ident not in before
        ),
        "only the library's own threads to remain",
    )


# Arguments.


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: rs.publish(0), ValueError, r"^publish\(prefetch\) needs an int >= 1, got int 0"),
        (lambda: rs.range(0, 3).publish(0), ValueError, r"^publish\(prefetch\) needs an int >= 1"),
        (lambda: rs.replay(-1), ValueError, r"^replay\(n\) needs n >= 0, got -1"),
        (
            lambda: rs.replay("x"),  # type: ignore[arg-type]
            TypeError,
            r"^replay\(n\) needs an int, got str 'x'",
        ),
        (lambda: rs.replay(1, prefetch=0), ValueError, r"^replay\(prefetch\) needs an int >= 1"),
        (lambda: rs.share(0), ValueError, r"^share\(prefetch\) needs an int >= 1, got int 0"),
        (lambda: rs.range(0, 3).share(True), ValueError, r"^share\(prefetch\) needs an int >= 1"),
        (
            lambda: rs.range(0, 3).publish().auto_connect(-1),
            ValueError,
            r"^auto_connect\(n\) needs an int >= 0",
        ),
        (lambda: rs.range(0, 3).publish().ref_count(0), ValueError, r"^ref_count\(n\) needs an int >= 1"),
        (lambda: rs.range(0, 3).publish().ref_count("2"), TypeError, r"^ref_count\(n\) needs an int, got"),
        (lambda: rs.range(0, 3).publish().auto_connect(1.5), TypeError, r"^auto_connect\(n\) needs an int"),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(
    build: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build()
