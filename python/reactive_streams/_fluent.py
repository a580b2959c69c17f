"""The functions behind `Publisher`'s fluent methods, and `MISSING`.

Each operator module registers its functions here with `fluent` as the package is imported;
``Publisher.scan(f, 0)`` then calls ``rs.scan(f, 0)`` through `apply`. So the operator modules
depend on ``_api`` (they build publishers) and ``_api`` on none of them: this module, at the
ground, is all the two share.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Final, TypeVar

__all__ = ["MISSING", "Missing", "apply", "call", "fluent"]

F = TypeVar("F", bound=Callable[..., Any])


class Missing(enum.Enum):
    """The type of `MISSING`."""

    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "<no value>"


#: The default of an argument that may be left out where None is a value of its own
#: (``first(default=...)``, ``scan(f, initial=...)``).
MISSING: Final = Missing.MISSING

#: The functions behind `Publisher`'s fluent methods, by name, registered by their modules.
_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def fluent(function: F) -> F:
    """Register ``function`` as what the `Publisher` method of its name calls."""
    name = function.__name__
    if name in _FUNCTIONS:
        raise RuntimeError(f"two functions registered for Publisher.{name}")
    _FUNCTIONS[name] = function
    return function


def registered() -> frozenset[str]:
    """The names registered so far."""
    return frozenset(_FUNCTIONS)


def apply(name: str, source: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``rs.<name>(*args, **kwargs)(source)``: the operator made, then applied to ``source``."""
    return _FUNCTIONS[name](*args, **kwargs)(source)


def call(name: str, /, *args: Any, **kwargs: Any) -> Any:
    """``rs.<name>(*args, **kwargs)``."""
    return _FUNCTIONS[name](*args, **kwargs)
