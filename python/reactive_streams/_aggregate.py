"""`Aggregate`: the kit of the operators whose answer is one element (`reduce`, `count`, `first`,
...): upstream's subscriber and downstream's subscription at once.

Upstream is asked for nothing until downstream asks for the answer. Then it is asked for
``chunk`` elements, and again for three quarters of them each time that many have been folded,
so that at most ``chunk`` are ever outstanding; each element (or list) is folded as it arrives
and dropped, so nothing is held beyond the accumulator. When the answer is known early (`all`
meets a false, `first` its element), upstream is cancelled at once and its later signals are
ignored (§2.8).

The answer goes out, ``on_next`` then ``on_complete``, once it is known and downstream has asked
for it (§1.1), from whichever of the two came last, decided under a lock so that it goes out
once (§1.3, §1.7). An error goes out as soon as it is known, with or without a request (§1.4,
§2.10). Calls upstream go through a `SerialUpstream` (§2.7).
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._compose import operator
from ._demand import check_request
from ._errors import IllegalDemandError, NoSuchElementError, NullElementError
from ._fluent import MISSING
from ._operator_types import Operator
from ._operators import DISCARD
from ._rules import log_subscriber_failure, require_not_none, signal_or_cancel, signal_terminal
from ._upstream import SerialUpstream

__all__ = ["CHUNK", "Aggregate", "AggregatePublisher", "aggregate", "check_default", "or_default"]

T = TypeVar("T")
R = TypeVar("R")

#: The elements an aggregate asks upstream for at a time (at most this many outstanding).
CHUNK = 1024


def aggregate(name: str, make: Callable[[Subscriber[Any]], Aggregate[Any, Any]]) -> Operator[Any, Any]:
    """The aggregate operator ``name``: each subscriber gets a fresh `Aggregate` from ``make``."""
    return operator(name, lambda source: AggregatePublisher(source, make))


def or_default(default: Any, error: str) -> Any:
    """``default``, or `NoSuchElementError` with ``error`` when there is none."""
    if default is MISSING:
        raise NoSuchElementError(error)
    return default


def check_default(default: object, what: str) -> None:
    """Refuse ``default=None`` when it is given, not when an empty stream would signal it (§2.13)."""
    if default is None:
        raise NullElementError(f"§2.13: {what} needs a default that is not None: None is no element")


class AggregatePublisher(Publisher[R], Generic[T, R]):
    """An aggregate's publisher: each subscriber gets a fresh `Aggregate` from ``make``."""

    __slots__ = ("_make", "_source")

    def __init__(self, source: Publisher[T], make: Callable[[Subscriber[R]], Aggregate[T, R]]) -> None:
        self._source = source
        self._make = make

    def subscribe(self, subscriber: Subscriber[R]) -> None:
        """Subscribe ``subscriber`` through a new aggregate (§1.9)."""
        require_not_none(subscriber, "subscriber", "§1.9")
        self._source.subscribe(self._make(subscriber))


class Aggregate(Subscriber[T], Subscription, Generic[T, R]):
    """A subclass folds (`_fold`, `_fold_batch`: True once the answer is known) and answers
    (`_answer`, which raises when there is none). ``chunk`` is what it asks upstream for at
    first; with ``replenish`` False it never asks again (its answer needs no more)."""

    def __init__(self, downstream: Subscriber[R], chunk: int = CHUNK, replenish: bool = True) -> None:
        self._downstream: Subscriber[R] = downstream
        self._upstream = SerialUpstream()
        self._lock = threading.Lock()
        self._chunk = chunk
        self._limit = max(1, chunk - (chunk >> 2)) if replenish else 0
        self._folded = 0  # since the last request upstream
        self._subscribed = False
        self._requested = False  # downstream asked for the answer
        self._answer_held: Any = MISSING  # the answer, known before it was asked for
        self._stopped = False  # upstream's signals no longer count
        self._finished = False  # the answer, or an error, went out (or is going)
        self._cancelled = False

    @abstractmethod
    def _fold(self, item: T) -> bool:
        """Fold one element; True if the answer is now known."""

    def _fold_batch(self, items: list[T]) -> bool:
        """Fold a list; True if the answer is now known. Default: one element at a time."""
        fold = self._fold
        return any(fold(item) for item in items)

    @abstractmethod
    def _answer(self) -> R:
        """The answer, once upstream completed or `_fold` said it is known."""

    # Upstream's signals.

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        if self._subscribed:
            subscription.cancel()  # §2.5
            return
        self._subscribed = True
        self._upstream.set(subscription)
        signal_or_cancel(self._downstream, "on_subscribe", self, self.cancel)  # §1.9, §2.13

    def on_next(self, item: T) -> None:
        if not self._stopped:  # §2.8
            self._take(self._fold, item, 1)

    def on_next_batch(self, items: list[T]) -> None:
        if not self._stopped:  # §2.8
            self._take(self._fold_batch, items, len(items))

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        if self._stopped:
            return
        self._stopped = True
        self._finish(MISSING, exc)

    def on_complete(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._conclude()

    # Downstream's subscription.

    def request(self, n: int) -> None:
        """The first request starts asking upstream; the answer goes out if it is known. A §3.9
        request cancels upstream and is signalled (§3.9); more requests change nothing (§3.6)."""
        checked = n if n.__class__ is int and n > 0 else check_request(n)
        illegal = isinstance(checked, IllegalDemandError)
        with self._lock:
            if self._finished or self._cancelled:
                return
            start = not self._requested and not illegal
            self._requested = True
            answer = self._answer_held
            emit = illegal or answer is not MISSING
            if emit:
                self._finished = True
                downstream, self._downstream = self._downstream, DISCARD  # §3.13
        if illegal:
            self._stopped = True
            self._upstream.cancel()
            signal_terminal(downstream, checked)  # type: ignore[arg-type]
        elif emit:
            self._emit(downstream, answer)
        elif start:
            self._upstream.request(self._chunk)

    def cancel(self) -> None:
        """Cancel upstream; nothing more goes downstream (§3.5, §3.7, §3.13)."""
        with self._lock:
            self._cancelled = True
            self._downstream = DISCARD
        self._stopped = True
        self._upstream.cancel()

    # The answer.

    def _take(self, fold: Callable[[Any], bool], elements: Any, count: int) -> None:
        """Fold ``elements`` (one, or a list of ``count``), then answer, or ask for as many as
        were folded once three quarters of the chunk are."""
        try:
            known = fold(elements)
        except Exception as exc:
            self._fail(exc)
            return
        if known:
            self._known()
        elif self._limit:
            self._folded += count
            if self._folded >= self._limit:
                folded, self._folded = self._folded, 0
                self._upstream.request(folded)

    def _known(self) -> None:
        """The answer is known before upstream ended: cancel it, then answer."""
        self._stopped = True
        self._upstream.cancel()
        self._conclude()

    def _fail(self, exc: BaseException) -> None:
        """User code failed: cancel upstream, then signal (§2.13)."""
        self._stopped = True
        self._upstream.cancel()
        self._finish(MISSING, exc)

    def _conclude(self) -> None:
        try:
            answer = self._answer()
        except Exception as exc:
            self._finish(MISSING, exc)
            return
        if answer is None:
            self._finish(MISSING, NullElementError("§2.13: the aggregate's answer is None"))
            return
        self._finish(answer, None)

    def _finish(self, answer: Any, error: BaseException | None) -> None:
        """Signal ``error`` now, or ``answer`` if it was asked for (else hold it for the request)."""
        with self._lock:
            if self._finished:
                return
            if error is None and not self._requested:
                self._answer_held = answer  # §1.1: it waits for a request
                return
            self._finished = True
            downstream, self._downstream = self._downstream, DISCARD  # §3.13
        if error is not None:
            signal_terminal(downstream, error)
        else:
            self._emit(downstream, answer)

    def _emit(self, downstream: Subscriber[R], answer: R) -> None:
        try:
            downstream.on_next(answer)
        except Exception as exc:
            self.cancel()
            log_subscriber_failure(downstream, "on_next", exc)  # §2.13
            return
        if not self._cancelled:  # a cancel inside on_next: nothing more (§1.8)
            signal_terminal(downstream, None)
