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
