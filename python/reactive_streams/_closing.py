"""`Closing`: ``with x:`` closes ``x`` as the block ends, for the library's closable objects."""

from __future__ import annotations

from types import TracebackType
from typing import TypeVar

__all__ = ["Closing"]

C = TypeVar("C", bound="Closing")


class Closing:
    """A mixin for a class with a ``close()``: its ``with`` block returns the object and closes
    it at the end, however the block ends."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: C) -> C:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._on_exit(exc)

    def _on_exit(self, exc: BaseException | None) -> None:
        """`close`; a subclass may end otherwise when the block raised ``exc``."""
        self.close()
