"""Chains whose element types mypy --strict must infer (checked by tests/test_typing.py, never run)."""

from __future__ import annotations

import operator

from typing_extensions import assert_type

import reactive_streams as rs

numbers = rs.range(0, 10)
assert_type(numbers, rs.Publisher[int])

# Fluent chains: each method's result type follows from the one before.
assert_type(numbers.map(str), rs.Publisher[str])
assert_type(numbers.map(str).filter(lambda s: s != "3").take(4), rs.Publisher[str])
assert_type(numbers.scan(operator.add), rs.Publisher[int])
assert_type(numbers.scan(lambda text, x: text + str(x), ""), rs.Publisher[str])
assert_type(numbers.batch(3), rs.Publisher[list[int]])
assert_type(numbers.map(float).sum(), rs.Publisher[float | int])
assert_type(numbers.max(key=lambda x: -x), rs.Publisher[int])
assert_type(numbers.first(default="none"), rs.Publisher[int | str])
assert_type(numbers.count(), rs.Publisher[int])
assert_type(numbers.average(), rs.Publisher[float])
assert_type(numbers.all(lambda x: x < 5), rs.Publisher[bool])
assert_type(numbers.to_list(), rs.Publisher[list[int]])
assert_type(numbers.reduce(operator.mul), rs.Publisher[int])
assert_type(numbers.reduce(lambda acc, x: [*acc, x], [0]), rs.Publisher[list[int]])
assert_type(numbers.start_with("start"), rs.Publisher[int | str])
assert_type(numbers.catch(lambda error: rs.just("fallback")), rs.Publisher[int | str])
assert_type(numbers.on_error_return(-1), rs.Publisher[int])
assert_type(numbers.zip_with(rs.just("a")), rs.Publisher[tuple[int, str]])
assert_type(numbers.concat_map(lambda x: rs.repeat(str(x), x)), rs.Publisher[str])
assert_type(numbers.retry(3).take_while(lambda x: x < 5).distinct_until_changed(), rs.Publisher[int])

# Sources and combining.
assert_type(rs.just("a", "b"), rs.Publisher[str])
assert_type(rs.generate(0, lambda n: (str(n), n + 1) if n < 3 else None), rs.Publisher[str])
assert_type(rs.zip(numbers, rs.just("a"), rs.just(1.5)), rs.Publisher[tuple[int, str, float]])
assert_type(rs.defer(lambda: rs.just(b"x")), rs.Publisher[bytes])

# Composition: the library's operators and a user's own, as plain functions.


def evens(source: rs.Publisher[int]) -> rs.Publisher[int]:
    return source.filter(lambda x: x % 2 == 0)


assert_type(rs.pipe(numbers, evens, rs.map(str)), rs.Publisher[str])
# Operators whose element type out follows from the one in, in any position.
assert_type(rs.pipe(numbers, evens, rs.take(3), rs.to_list()), rs.Publisher[list[int]])
assert_type(rs.pipe(numbers, rs.skip(1), rs.batch(2)), rs.Publisher[list[int]])
assert_type(rs.pipe(numbers, rs.start_with("x"), rs.last(), rs.retry(2)), rs.Publisher[int | str])
assert_type(rs.pipe(numbers, evens, rs.sum()), rs.Publisher[int])
assert_type(rs.pipe(numbers, evens, rs.first(default=0.5)), rs.Publisher[int | float])
assert_type(rs.pipe(numbers, evens, rs.zip_with(rs.just("a"))), rs.Publisher[tuple[int, str]])
assert_type(
    rs.pipe(numbers, rs.distinct_until_changed(), rs.catch(lambda e: rs.just(0.5))), rs.Publisher[int | float]
)
assert_type(numbers.pipe(evens, rs.to_list()), rs.Publisher[list[int]])
assert_type(rs.pipe(numbers, rs.sum()), rs.Publisher[int])
labels: rs.Operator[int, str] = rs.compose(evens, rs.map(str))
assert_type(labels(numbers), rs.Publisher[str])
assert_type(rs.compose(evens, rs.count()), rs.Operator[int, int])
for value in numbers.map(str).iterate():
    assert_type(value, str)
