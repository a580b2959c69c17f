"""`tap`: user callbacks that see every signal, in both directions, and change none.

Each callback runs before its signal is passed on. One that raises ends the stream with what it
raised and cancels upstream, as any user code in an operator (§2.13), except ``on_cancel``'s,
which is logged: the downstream that cancelled is owed nothing more. An ``on_request`` callback
runs on the requesting thread, so the downstream signals of a tap are sent holding a re-entrant
lock, which keeps the error it may have to signal from there serial with the upstream's (§1.3).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._compose import operator
from ._fluent import fluent
from ._operator_types import Operator
from ._operators import CANCELLED, OperatorPublisher, OperatorSubscriber
from ._rules import require_callable, require_not_none

__all__ = ["tap"]

T = TypeVar("T")
logger = logging.getLogger("reactive_streams")

_HOOKS = ("on_next", "on_error", "on_complete", "on_request", "on_cancel")


@fluent
def tap(
    on_next: Callable[[T], object] | None = None,
    on_error: Callable[[BaseException], object] | None = None,
    on_complete: Callable[[], object] | None = None,
    on_request: Callable[[int], object] | None = None,
    on_cancel: Callable[[], object] | None = None,
) -> Operator[T, T]:
    """``(callbacks) -> (Publisher[T] -> Publisher[T])``: the stream unchanged, each signal shown
    to its callback first: ``on_next(element)``, ``on_error(exception)``, ``on_complete()``,
    ``on_request(n)`` (each request, on the requesting thread) and ``on_cancel()``.

    Demand and cancel pass through unchanged. A callback that raises cancels upstream and ends
    the stream with its exception (after the elements before it; ``on_error``'s has the original
    as its ``__context__``); ``on_cancel``'s is logged on the ``reactive_streams`` logger.

    Callbacks run serially with the signals they see (§1.3); cancel passes upstream at once
    (§3.12, §3.13); a §3.9 request is passed up and signalled (§3.9).

    Raises:
        TypeError: a callback that is given is not callable, or none is given.
    """
    hooks: dict[str, Callable[..., object] | None] = {
        "on_next": on_next,
        "on_error": on_error,
        "on_complete": on_complete,
        "on_request": on_request,
        "on_cancel": on_cancel,
    }
    given = {name: hook for name, hook in hooks.items() if hook is not None}
    if not given:
        raise TypeError(f"tap() needs at least one callback of {', '.join(_HOOKS)}")
    for name, hook in given.items():
        require_callable(hook, f"tap({name}=)")
    return operator("tap", lambda source: _TapPublisher(source, given))


class _TapPublisher(OperatorPublisher[T, T]):
    __slots__ = ("_hooks",)

    def __init__(self, source: Publisher[T], hooks: dict[str, Callable[..., object]]) -> None:
        super().__init__(source)
        self._hooks = hooks

    def _operator(self, downstream: Subscriber[T]) -> Subscriber[T]:
        return _TapSubscriber(downstream, self._hooks)


class _TapSubscriber(OperatorSubscriber[T, T]):
    __slots__ = ("_complete", "_error", "_next", "_on_cancel", "_request", "_signal")

    def __init__(self, downstream: Subscriber[T], hooks: dict[str, Callable[..., object]]) -> None:
        super().__init__(downstream)
        self._next = hooks.get("on_next")
        self._error = hooks.get("on_error")
        self._complete = hooks.get("on_complete")
        self._request = hooks.get("on_request")
        self._on_cancel = hooks.get("on_cancel")
        self._signal = threading.RLock()  # held while signalling downstream (see the module)

    def on_next(self, item: T) -> None:
        with self._signal:
            if self._done:
                return  # §2.8
            if self._next is not None:
                try:
                    self._next(item)
                except Exception as exc:
                    self._stop(exc)
                    return
            self._emit(item)

    def on_next_batch(self, items: list[T]) -> None:
        """The callback over the list, in C; the elements it saw before it raised go first."""
        with self._signal:
            if self._done:
                return  # §2.8
            if self._next is None:
                self._emit_batch(items)
                return
            seen: list[object] = []
            try:
                seen.extend(map(self._next, items))  # keeps a result per element before a raise
            except Exception as exc:
                if seen:
                    self._emit_batch(items[: len(seen)])
                self._stop(exc)
                return
            self._emit_batch(items)

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        with self._signal:
            if self._error is not None and not self._done:
                try:
                    self._error(exc)
                except Exception as failure:
                    if failure is not exc and failure.__context__ is None:
                        failure.__context__ = exc
                    exc = failure
            self._terminate(exc)

    def on_complete(self) -> None:
        with self._signal:
            if self._complete is not None and not self._done:
                try:
                    self._complete()
                except Exception as failure:
                    self._terminate(failure)
                    return
            self._terminate(None)

    def request(self, n: int) -> None:
        if self._request is not None and not self._done:
            try:
                self._request(n)
            except Exception as exc:
                with self._signal:
                    self._stop(exc)  # serial with the upstream's signals (§1.3)
                return
        super().request(n)

    def cancel(self) -> None:
        hook, self._on_cancel = self._on_cancel, None  # once (§3.7)
        if hook is not None and self._upstream is not CANCELLED:
            try:
                hook()
            except Exception:
                logger.exception("tap(on_cancel=) raised; the cancel goes on")
        super().cancel()

    def on_subscribe(self, subscription: Subscription) -> None:
        with self._signal:
            super().on_subscribe(subscription)
