"""pipe and compose: any function of a publisher to a publisher is an operator, the library's and
a user's own alike."""

from __future__ import annotations

import operator
from typing import Any

import pytest

import reactive_streams as rs


def evens_squared(source: rs.Publisher[int]) -> rs.Publisher[int]:
    """A user's own operator: a plain function."""
    return source.filter(lambda x: x % 2 == 0).map(lambda x: x * x)


def test_pipe_applies_each_operator_in_turn() -> None:
    total = rs.pipe(rs.range(0, 10), evens_squared, rs.take(3), rs.sum())
    assert list(total.iterate()) == [0 + 4 + 16]
    assert rs.range(0, 10).pipe(evens_squared, rs.to_list()).iterate().__next__() == [0, 4, 16, 36, 64]
    source = rs.just(1)
    assert rs.pipe(source) is source


def test_compose_makes_one_reusable_operator() -> None:
    stats = rs.compose(evens_squared, rs.scan(operator.add), rs.last())
    assert list(stats(rs.range(0, 5)).iterate()) == [0 + 4 + 16]
    assert list(rs.pipe(rs.range(0, 3), stats).iterate()) == [4]
    assert rs.compose(rs.map(str), rs.take(1)).__name__ == "compose(map, take)"


def test_nothing_is_subscribed_until_the_result_is() -> None:
    subscribed: list[int] = []
    source = rs.defer(lambda: subscribed.append(1) or rs.range(0, 3))  # type: ignore[func-returns-value]
    piped = rs.pipe(source, rs.map(lambda x: x + 1))
    assert subscribed == []
    assert list(piped.iterate()) == [1, 2, 3] and subscribed == [1]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: rs.pipe([1, 2], rs.sum()),
            r"^pipe\(publisher, \*operators\) needs a reactive_streams.Publisher",
        ),
        (lambda: rs.pipe(rs.just(1), 5), r"^pipe\(publisher, \*operators\): operator #1 needs a callable"),
        (
            lambda: rs.pipe(rs.just(1), rs.sum(), lambda p: [1]),
            r"operator #2 \(.*<lambda>\) returned list \[1\]",
        ),
        (
            lambda: rs.compose(rs.sum(), None),
            r"^compose\(\*operators\): operator #2: the function must not",
        ),
        (lambda: rs.sum()([1]), r"^the sum\(...\) operator needs a reactive_streams.Publisher, got list"),
    ],
)
def test_bad_arguments_fail_at_once_with_a_clear_message(build: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        build()
