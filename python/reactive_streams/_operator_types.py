"""The types of operators: `Operator`, what `pipe` applies, and the generic operators' own.

The operators whose element type out follows from the one in, for every element type
(``take(3)`` is ``Publisher[T] -> Publisher[T]`` for any ``T``), are typed as callables that are
generic themselves: a type checker then carries the element type through `pipe` in any position,
where a generic `Operator` it would have to solve before it knows ``T``. Each is an `Operator`
of every element type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from ._api import Publisher

__all__ = ["ListOperator", "Operator", "PairOperator", "SameOperator", "UnionOperator"]

A = TypeVar("A")
B = TypeVar("B")
T = TypeVar("T")
R_co = TypeVar("R_co", covariant=True)

#: An operator: what `pipe` applies, and what the library's operator functions return
#: (``rs.map(f)``, ``rs.sum()``); any function of a publisher to a publisher is one.
Operator = Callable[[Publisher[A]], Publisher[B]]


class SameOperator(Protocol):
    """``Publisher[T] -> Publisher[T]``, for every ``T`` (`take`, `skip`, `retry`, `first`, ...)."""

    def __call__(self, source: Publisher[T], /) -> Publisher[T]: ...


class ListOperator(Protocol):
    """``Publisher[T] -> Publisher[list[T]]``, for every ``T`` (`batch`, `to_list`)."""

    def __call__(self, source: Publisher[T], /) -> Publisher[list[T]]: ...


class UnionOperator(Protocol[R_co]):
    """``Publisher[T] -> Publisher[T | R]``, for every ``T`` (`start_with`, `catch`, `sum`, ...)."""

    def __call__(self, source: Publisher[T], /) -> Publisher[T | R_co]: ...


class PairOperator(Protocol[R_co]):
    """``Publisher[T] -> Publisher[tuple[T, R]]``, for every ``T`` (`zip_with` of one more)."""

    def __call__(self, source: Publisher[T], /) -> Publisher[tuple[T, R_co]]: ...
