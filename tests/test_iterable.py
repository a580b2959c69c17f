"""from_iterable: what it accepts (anything iterable, one-shot or not) and what it refuses at
once (what cannot be iterated, rather than failing on the first request)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import reactive_streams as rs


def test_what_cannot_be_iterated_is_refused_at_once_naming_its_type() -> None:
    with pytest.raises(TypeError) as refused:
        rs.from_iterable(5)  # type: ignore[arg-type]
    assert str(refused.value) == (
        "from_iterable() needs an iterable (a list, tuple, range, set, generator, iterator, ...), got int 5"
    )
    with pytest.raises(TypeError, match=r"got object <object object at"):
        rs.from_iterable(object())  # type: ignore[arg-type]
    with pytest.raises(rs.NullElementError, match="iterable must not be None"):
        rs.from_iterable(None)  # type: ignore[arg-type]


def test_one_shot_iterables_are_accepted_and_not_consumed_by_the_check() -> None:
    def generator() -> Iterator[int]:
        yield from range(3)

    started = generator()
    publisher = rs.from_iterable(started)
    assert list(rs.iterate(publisher)) == [0, 1, 2]
    assert list(rs.iterate(publisher)) == []  # shared, not replayed
    assert list(rs.iterate(rs.from_iterable(iter([4, 5])))) == [4, 5]


def test_re_iterable_collections_replay_and_old_style_sequences_work() -> None:
    class Squares:  # iterable through __getitem__ only
        def __getitem__(self, index: int) -> int:
            if index >= 3:
                raise IndexError(index)
            return index * index

    for iterable, expected in [
        (Squares(), [0, 1, 4]),
        ("ab", ["a", "b"]),
        ({"k": 1}, ["k"]),
        (range(2), [0, 1]),
    ]:
        publisher: rs.Publisher[Any] = rs.from_iterable(iterable)
        assert list(rs.iterate(publisher)) == expected
        assert list(rs.iterate(publisher)) == expected


class BatchProbe(rs.Subscriber[Any]):
    """A batch-aware subscriber: records each ``on_next_batch`` list, requests ``initial``."""

    def __init__(self, initial: int, cancel_after: int | None = None) -> None:
        self.initial = initial
        self.cancel_after = cancel_after
        self.batches: list[list[Any]] = []
        self.singles: list[Any] = []
        self.error: BaseException | None = None
        self.completed = False
        self.subscription: rs.Subscription | None = None

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(self.initial)

    def on_next(self, item: Any) -> None:
        self.singles.append(item)

    def on_next_batch(self, items: list[Any]) -> None:
        self.batches.append(items)
        if self.cancel_after is not None and len(self.batches) == self.cancel_after:
            assert self.subscription is not None
            self.subscription.cancel()

    def on_error(self, exc: BaseException) -> None:
        self.error = exc

    def on_complete(self) -> None:
        self.completed = True

    @property
    def items(self) -> list[Any]:
        return [item for batch in self.batches for item in batch]


def test_a_batch_aware_subscriber_gets_lists_within_demand() -> None:
    probe = BatchProbe(initial=10)
    rs.from_iterable(range(25)).subscribe(probe)
    assert probe.batches == [list(range(10))] and probe.singles == [] and not probe.completed
    assert probe.subscription is not None
    probe.subscription.request(15)
    assert probe.items == list(range(25)) and probe.completed  # Sized: completes with the last


def test_unbounded_demand_goes_in_lists_of_at_most_bulk() -> None:
    from reactive_streams._iterable import BULK

    probe = BatchProbe(initial=2**63 - 1)
    rs.from_iterable(iter(range(2 * BULK + 5))).subscribe(probe)
    assert [len(batch) for batch in probe.batches] == [BULK, BULK, 5]
    assert probe.items == list(range(2 * BULK + 5)) and probe.completed


def test_elements_before_a_failure_or_a_none_are_delivered_first() -> None:
    def failing() -> Iterator[int]:
        yield from range(5)
        raise ValueError("the source broke")

    probe = BatchProbe(initial=100)
    rs.from_iterable(failing()).subscribe(probe)
    assert probe.items == list(range(5))
    assert isinstance(probe.error, ValueError) and not probe.completed

    probe = BatchProbe(initial=100)
    rs.from_iterable([1, 2, None, 4]).subscribe(probe)
    assert probe.items == [1, 2]
    assert isinstance(probe.error, rs.NullElementError)


def test_a_none_is_found_by_identity_not_by_equality() -> None:
    class NoEquality:
        def __eq__(self, other: object) -> bool:
            raise AssertionError("compared with ==")

        __hash__ = object.__hash__

    items = [NoEquality() for _ in range(3)]
    probe = BatchProbe(initial=10)
    rs.from_iterable(items).subscribe(probe)
    assert probe.items == items and probe.error is None and probe.completed


def test_a_cancel_inside_on_next_batch_stops_the_lists() -> None:
    from reactive_streams._iterable import BULK

    pulled = []

    def counted() -> Iterator[int]:
        for index in range(10 * BULK):
            pulled.append(index)
            yield index

    probe = BatchProbe(initial=2**63 - 1, cancel_after=1)
    rs.from_iterable(counted()).subscribe(probe)
    assert len(probe.batches) == 1 and len(pulled) == BULK  # §1.8: nothing pulled after the cancel
    assert probe.error is None and not probe.completed


def test_a_raising_on_next_batch_cancels_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    class Raising(BatchProbe):
        def on_next_batch(self, items: list[Any]) -> None:
            super().on_next_batch(items)
            raise RuntimeError("boom")

    probe = Raising(initial=5)
    rs.from_iterable(range(100)).subscribe(probe)
    assert probe.subscription is not None
    probe.subscription.request(5)
    assert len(probe.batches) == 1 and probe.error is None and not probe.completed  # §2.13
    assert "on_next_batch" in caplog.text
