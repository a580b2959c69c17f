"""Composition: `pipe` and `compose` (rs's ``Pipe`` and ``BuildPipe``). An operator is any
``Callable[[Publisher[A]], Publisher[B]]``: the library's (``rs.map(f)``, ``rs.sum()``) and a
user's own, written as a plain function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

from ._api import Publisher
from ._fluent import fluent
from ._operator_types import Operator
from ._rules import describe, require_callable, require_publisher

__all__ = ["compose", "operator", "pipe"]

A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")
E = TypeVar("E")
F = TypeVar("F")
G = TypeVar("G")
H = TypeVar("H")


def operator(name: str, make: Callable[[Publisher[Any]], Publisher[Any]]) -> Operator[Any, Any]:
    """The library's operator ``name``: ``make(source)``, once ``source`` is known to be a
    publisher (a clear error otherwise, naming the operator). Its type is the operator
    function's to declare: an `Operator`, or a generic one (`SameOperator`, ...)."""

    def apply(source: Publisher[Any]) -> Publisher[Any]:
        require_publisher(source, f"the {name}(...) operator")
        return make(source)

    apply.__name__ = apply.__qualname__ = name
    return apply


# fmt: off
@overload
def pipe(publisher: Publisher[A], /) -> Publisher[A]: ...
@overload
def pipe(publisher: Publisher[A], op1: Operator[A, B], /) -> Publisher[B]: ...
@overload
def pipe(publisher: Publisher[A], op1: Operator[A, B], op2: Operator[B, C], /) -> Publisher[C]: ...
@overload
def pipe(
    publisher: Publisher[A], op1: Operator[A, B], op2: Operator[B, C], op3: Operator[C, D], /
) -> Publisher[D]: ...
@overload
def pipe(
    publisher: Publisher[A], op1: Operator[A, B], op2: Operator[B, C], op3: Operator[C, D],
    op4: Operator[D, E], /
) -> Publisher[E]: ...
@overload
def pipe(
    publisher: Publisher[A], op1: Operator[A, B], op2: Operator[B, C], op3: Operator[C, D],
    op4: Operator[D, E], op5: Operator[E, F], /
) -> Publisher[F]: ...
@overload
def pipe(
    publisher: Publisher[A], op1: Operator[A, B], op2: Operator[B, C], op3: Operator[C, D],
    op4: Operator[D, E], op5: Operator[E, F], op6: Operator[F, G], /
) -> Publisher[G]: ...
@overload
def pipe(
    publisher: Publisher[A], op1: Operator[A, B], op2: Operator[B, C], op3: Operator[C, D],
    op4: Operator[D, E], op5: Operator[E, F], op6: Operator[F, G], op7: Operator[G, H], /
) -> Publisher[H]: ...
@overload
def pipe(publisher: Publisher[Any], *operators: Operator[Any, Any]) -> Publisher[Any]: ...
# fmt: on
@fluent
def pipe(publisher: Publisher[Any], *operators: Operator[Any, Any]) -> Publisher[Any]:
    """``publisher`` through each operator in turn: ``pipe(p, f, g)`` is ``g(f(p))``.

    Nothing is subscribed: the result is a cold publisher like any other.

    >>> next(rs.pipe(rs.range(1, 3), rs.map(lambda x: x * x), rs.sum()).iterate())
    14

    Raises:
        TypeError: ``publisher`` is not a publisher, an operator is not callable, or one returns
            what is not a publisher (the message names which).
    """
    require_publisher(publisher, "pipe(publisher, *operators)")
    for index, op in enumerate(operators):
        require_callable(op, f"pipe(publisher, *operators): operator #{index + 1}")
    result = publisher
    for index, op in enumerate(operators):
        result = op(result)
        if not callable(getattr(result, "subscribe", None)):
            name = getattr(op, "__qualname__", None) or describe(op)
            raise TypeError(
                f"pipe(publisher, *operators): operator #{index + 1} ({name}) returned "
                f"{describe(result)}, not a reactive_streams.Publisher"
            )
    return result


# fmt: off
@overload
def compose(op1: Operator[A, B], /) -> Operator[A, B]: ...
@overload
def compose(op1: Operator[A, B], op2: Operator[B, C], /) -> Operator[A, C]: ...
@overload
def compose(op1: Operator[A, B], op2: Operator[B, C], op3: Operator[C, D], /) -> Operator[A, D]: ...
@overload
def compose(
    op1: Operator[A, B], op2: Operator[B, C], op3: Operator[C, D], op4: Operator[D, E], /
) -> Operator[A, E]: ...
@overload
def compose(
    op1: Operator[A, B], op2: Operator[B, C], op3: Operator[C, D], op4: Operator[D, E],
    op5: Operator[E, F], /
) -> Operator[A, F]: ...
@overload
def compose(*operators: Operator[Any, Any]) -> Operator[Any, Any]: ...
# fmt: on
def compose(*operators: Operator[Any, Any]) -> Operator[Any, Any]:
    """One operator made of ``operators``, applied in turn: ``compose(f, g)(p)`` is ``g(f(p))``,
    a reusable stage for `pipe` or for another `compose`.

    Raises:
        TypeError: an operator is not callable.
    """
    for index, op in enumerate(operators):
        require_callable(op, f"compose(*operators): operator #{index + 1}")

    def composed(source: Publisher[Any]) -> Publisher[Any]:
        return pipe(source, *operators)

    names = ", ".join(getattr(op, "__name__", "?") for op in operators)
    composed.__name__ = composed.__qualname__ = f"compose({names})"
    return composed
