"""The four interfaces of the specification, as abstract base classes with snake_case names.

`Publisher` also carries the library's operators in fluent form
(``rs.from_iterable(x).map(f).filter(p)``), so every publisher, including one that comes
from the JVM bridge or a user's own subclass, can be composed the same way. Each fluent method
calls the library's function of the same name (``p.scan(f, 0)`` is ``rs.scan(f, 0)(p)``),
which its module registers in ``_fluent`` as the package is imported: the operator modules
depend on this one, and this one on none of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from ._fluent import MISSING, apply, call

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

__all__ = ["ConnectablePublisher", "Connection", "Processor", "Publisher", "Subscriber", "Subscription"]

T = TypeVar("T")
R = TypeVar("R")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")
E = TypeVar("E")
T_co = TypeVar("T_co", covariant=True)
T_contra = TypeVar("T_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)


def _apply(name: str, source: Publisher[Any], /, *args: Any, **kwargs: Any) -> Publisher[Any]:
    """`apply` for a method: its publisher, typed."""
    result: Publisher[Any] = apply(name, source, *args, **kwargs)
    return result


class Subscription(ABC):
    """The one-to-one relationship between a `Subscriber` and a `Publisher` (§3.1)."""

    __slots__ = ()

    @abstractmethod
    def request(self, n: int) -> None:
        """Ask for ``n`` more elements.

        Rules: additive, summed and capped at 2**63-1 (§3.8, §3.17); ``n <= 0`` is signalled
        as ``on_error(IllegalDemandError)``, a ``ValueError`` (§3.9); a no-op after cancel
        (§3.6); returns normally and promptly (§3.4, §3.16); callable from inside ``on_next``
        and ``on_subscribe`` without unbounded recursion (§3.2, §3.3).
        """

    @abstractmethod
    def cancel(self) -> None:
        """Ask the publisher to stop signalling and drop its reference to the subscriber.

        Rules: idempotent, thread-safe and prompt (§3.5, §3.7); eventually stops signals
        (§3.12) and drops references (§3.13); returns normally (§3.15).
        """


class Subscriber(ABC, Generic[T_contra]):
    """Receives a stream's signals: one ``on_subscribe``, then ``on_next`` calls, then at most
    one terminal signal, all serially (§1.3)."""

    __slots__ = ()

    @abstractmethod
    def on_subscribe(self, subscription: Subscription) -> None:
        """Receive the subscription; called at most once (§2.12).

        Rules: cancel a second subscription if one is active (§2.5); raise ``TypeError`` for
        ``None`` and otherwise return normally (§2.13).
        """

    @abstractmethod
    def on_next(self, item: T_contra) -> None:
        """Receive one element, never more than requested (§1.1).

        Rules: raise ``TypeError`` for ``None`` and otherwise return normally (§2.13);
        may call ``request`` (§3.2) and must be prepared for elements after ``cancel`` (§2.8).
        """

    @abstractmethod
    def on_error(self, exc: BaseException) -> None:
        """Receive the terminal failure, with or without a prior request (§2.10).

        Rules: consider the subscription cancelled and do not call it (§2.3, §2.4).
        """

    @abstractmethod
    def on_complete(self) -> None:
        """Receive successful termination, with or without a prior request (§2.9).

        Rules: consider the subscription cancelled and do not call it (§2.3, §2.4).
        """


class Publisher(ABC, Generic[T_co]):
    """A provider of a potentially unbounded number of elements, paced by demand (§1.1)."""

    __slots__ = ()

    @abstractmethod
    def subscribe(self, subscriber: Subscriber[T_co]) -> None:
        """Start a subscription: ``on_subscribe`` first, then other signals (§1.9).

        Rules: raise ``TypeError`` if ``subscriber`` is ``None``, otherwise return normally
        and signal any failure through ``on_error`` after ``on_subscribe`` (§1.9).
        """

    # Operators (fluent form): each is ``rs.<name>(...)(self)``, whose docstring says what it
    # asks upstream for and when it cancels. Each returns a new cold publisher; nothing is
    # subscribed until the result is.

    def map(self, function: Callable[[T_co], R]) -> Publisher[R]:
        """Each element through ``function`` (`reactive_streams.map`); demand and cancel pass
        through. A raise cancels upstream and becomes ``on_error``; a ``None`` result is a
        ``NullElementError`` (§2.13)."""
        return _apply("map", self, function)

    def filter(self, predicate: Callable[[T_co], object]) -> Publisher[T_co]:
        """The elements for which ``predicate`` is true (`reactive_streams.filter`); each dropped
        one is requested again upstream, so downstream demand is met exactly (§1.1)."""
        return _apply("filter", self, predicate)

    def take(self, count: int) -> Publisher[T_co]:
        """The first ``count`` elements, then cancel upstream and complete; never asks upstream
        for more than ``count`` in all (`reactive_streams.take`)."""
        return _apply("take", self, count)

    def skip(self, count: int) -> Publisher[T_co]:
        """Drop the first ``count`` elements; the first request upstream is raised by ``count``
        (`reactive_streams.skip`)."""
        return _apply("skip", self, count)

    def batch(self, size: int) -> Publisher[list[T_co]]:
        """Lists of ``size`` elements (the last may be shorter); ``request(n)`` asks upstream for
        ``n * size`` (`reactive_streams.batch`)."""
        return _apply("batch", self, size)

    def flat_map(
        self, function: Callable[[T_co], Publisher[R]], concurrency: int = 16, prefetch: int = 32
    ) -> Publisher[R]:
        """Each element to a publisher, their elements merged: at most ``concurrency`` inner
        publishers at once, each buffering at most ``prefetch`` (`reactive_streams.flat_map`)."""
        return _apply("flat_map", self, function, concurrency, prefetch)

    def concat_map(self, function: Callable[[T_co], Publisher[R]], prefetch: int = 32) -> Publisher[R]:
        """Each element to a publisher, their elements one publisher after another; upstream is
        asked for one element at a time (`reactive_streams.concat_map`)."""
        return _apply("concat_map", self, function, prefetch)

    @overload
    def scan(self: Publisher[T], accumulator: Callable[[T, T], T]) -> Publisher[T]: ...
    @overload
    def scan(self, accumulator: Callable[[R, T_co], R], initial: R) -> Publisher[R]: ...
    def scan(self, accumulator: Callable[[Any, Any], Any], initial: Any = MISSING) -> Publisher[Any]:
        """The running values of ``accumulator``, as ``itertools.accumulate`` (``initial``
        first, when given); one value per element (`reactive_streams.scan`)."""
        return _apply("scan", self, accumulator, initial)

    def take_while(self, predicate: Callable[[T_co], object]) -> Publisher[T_co]:
        """The elements up to the first for which ``predicate`` is false; upstream is cancelled
        there (`reactive_streams.take_while`)."""
        return _apply("take_while", self, predicate)

    def skip_while(self, predicate: Callable[[T_co], object]) -> Publisher[T_co]:
        """The elements from the first for which ``predicate`` is false; each skipped one is
        requested again (`reactive_streams.skip_while`)."""
        return _apply("skip_while", self, predicate)

    def distinct_until_changed(self, key: Callable[[T_co], object] | None = None) -> Publisher[T_co]:
        """Each element whose key differs from the previous one's; each dropped one is requested
        again (`reactive_streams.distinct_until_changed`)."""
        return _apply("distinct_until_changed", self, key)

    def start_with(self, *values: R) -> Publisher[T_co | R]:
        """``values`` first, then this publisher's elements (`reactive_streams.start_with`)."""
        return _apply("start_with", self, *values)

    def end_with(self, *values: R) -> Publisher[T_co | R]:
        """This publisher's elements, then ``values`` (`reactive_streams.end_with`)."""
        return _apply("end_with", self, *values)

    def prepend(self, *publishers: Publisher[R]) -> Publisher[T_co | R]:
        """``publishers``' elements in turn, then this one's (`reactive_streams.prepend`)."""
        return _apply("prepend", self, *publishers)

    def append(self, *publishers: Publisher[R]) -> Publisher[T_co | R]:
        """This publisher's elements, then ``publishers``' in turn (`reactive_streams.append`)."""
        return _apply("append", self, *publishers)

    def default_if_empty(self, *values: R) -> Publisher[T_co | R]:
        """This publisher's elements, or ``values`` if it has none
        (`reactive_streams.default_if_empty`)."""
        return _apply("default_if_empty", self, *values)

    def switch_if_empty(self, publisher: Publisher[R]) -> Publisher[T_co | R]:
        """This publisher's elements, or ``publisher``'s if it has none
        (`reactive_streams.switch_if_empty`)."""
        return _apply("switch_if_empty", self, publisher)

    def tap(
        self,
        on_next: Callable[[T_co], object] | None = None,
        on_error: Callable[[BaseException], object] | None = None,
        on_complete: Callable[[], object] | None = None,
        on_request: Callable[[int], object] | None = None,
        on_cancel: Callable[[], object] | None = None,
    ) -> Publisher[T_co]:
        """The stream unchanged, each signal shown to its callback first (`reactive_streams.tap`)."""
        return _apply("tap", self, on_next, on_error, on_complete, on_request, on_cancel)

    # Aggregates: one element, then completion.

    @overload
    def reduce(self: Publisher[T], function: Callable[[T, T], T]) -> Publisher[T]: ...
    @overload
    def reduce(self, function: Callable[[R, T_co], R], initial: R) -> Publisher[R]: ...
    def reduce(self, function: Callable[[Any, Any], Any], initial: Any = MISSING) -> Publisher[Any]:
        """The elements folded into one, as ``functools.reduce``; asks upstream in chunks and
        holds only the accumulator (`reactive_streams.reduce`)."""
        return _apply("reduce", self, function, initial)

    def count(self) -> Publisher[int]:
        """How many elements there were (`reactive_streams.count`)."""
        return _apply("count", self)

    @overload
    def sum(self) -> Publisher[T_co | int]: ...
    @overload
    def sum(self, start: R) -> Publisher[T_co | R]: ...
    def sum(self, start: Any = 0) -> Publisher[Any]:
        """``start`` plus every element, as the builtin ``sum`` (`reactive_streams.sum`)."""
        return _apply("sum", self, start)

    @overload
    def min(self, *, key: Callable[[T_co], Any] | None = None) -> Publisher[T_co]: ...
    @overload
    def min(self, *, key: Callable[[T_co], Any] | None = None, default: D) -> Publisher[T_co | D]: ...
    def min(self, *, key: Callable[[Any], Any] | None = None, default: Any = MISSING) -> Publisher[Any]:
        """The smallest element, as the builtin ``min`` (`reactive_streams.min`)."""
        return _apply("min", self, key=key, default=default)

    @overload
    def max(self, *, key: Callable[[T_co], Any] | None = None) -> Publisher[T_co]: ...
    @overload
    def max(self, *, key: Callable[[T_co], Any] | None = None, default: D) -> Publisher[T_co | D]: ...
    def max(self, *, key: Callable[[Any], Any] | None = None, default: Any = MISSING) -> Publisher[Any]:
        """The largest element, as the builtin ``max`` (`reactive_streams.max`)."""
        return _apply("max", self, key=key, default=default)

    def average(self) -> Publisher[float]:
        """The mean of the elements (`reactive_streams.average`)."""
        return _apply("average", self)

    def all(self, predicate: Callable[[T_co], object] | None = None) -> Publisher[bool]:
        """Whether every element passes ``predicate``; upstream is cancelled at the first that
        does not (`reactive_streams.all`)."""
        return _apply("all", self, predicate)

    def some(self, predicate: Callable[[T_co], object] | None = None) -> Publisher[bool]:
        """Whether some element passes ``predicate``; upstream is cancelled at the first that
        does (`reactive_streams.some`)."""
        return _apply("some", self, predicate)

    def contains(self, value: object) -> Publisher[bool]:
        """Whether an element equals ``value``; upstream is cancelled at it
        (`reactive_streams.contains`)."""
        return _apply("contains", self, value)

    @overload
    def element_at(self, index: int) -> Publisher[T_co]: ...
    @overload
    def element_at(self, index: int, *, default: D) -> Publisher[T_co | D]: ...
    def element_at(self, index: int, *, default: Any = MISSING) -> Publisher[Any]:
        """The element at ``index``; asks upstream for exactly ``index + 1``
        (`reactive_streams.element_at`)."""
        return _apply("element_at", self, index, default=default)

    @overload
    def first(self, predicate: Callable[[T_co], object] | None = None) -> Publisher[T_co]: ...
    @overload
    def first(
        self, predicate: Callable[[T_co], object] | None = None, *, default: D
    ) -> Publisher[T_co | D]: ...
    def first(
        self, predicate: Callable[[Any], object] | None = None, *, default: Any = MISSING
    ) -> Publisher[Any]:
        """The first element (that passes ``predicate``); without one, asks upstream for 1 and
        cancels it after (`reactive_streams.first`)."""
        return _apply("first", self, predicate, default=default)

    @overload
    def last(self) -> Publisher[T_co]: ...
    @overload
    def last(self, *, default: D) -> Publisher[T_co | D]: ...
    def last(self, *, default: Any = MISSING) -> Publisher[Any]:
        """The last element (`reactive_streams.last`)."""
        return _apply("last", self, default=default)

    def to_list(self) -> Publisher[list[T_co]]:
        """Every element in one list (`reactive_streams.to_list`)."""
        return _apply("to_list", self)

    # Combining.

    @overload
    def zip_with(self, p2: Publisher[B], /, *, prefetch: int = 1024) -> Publisher[tuple[T_co, B]]: ...
    @overload
    def zip_with(
        self, p2: Publisher[B], p3: Publisher[C], /, *, prefetch: int = 1024
    ) -> Publisher[tuple[T_co, B, C]]: ...
    @overload
    def zip_with(self, *others: Publisher[Any], prefetch: int = 1024) -> Publisher[tuple[Any, ...]]: ...
    def zip_with(self, *others: Publisher[Any], prefetch: int = 1024) -> Publisher[tuple[Any, ...]]:
        """Tuples of this publisher's elements and ``others``', in lockstep
        (`reactive_streams.zip_with`)."""
        return _apply("zip_with", self, *others, prefetch=prefetch)

    def concat_with(self, *others: Publisher[T]) -> Publisher[T_co | T]:
        """This publisher's elements, then each of ``others`` in turn
        (`reactive_streams.concat_with`)."""
        return _apply("concat_with", self, *others)

    def merge_with(self, *others: Publisher[T]) -> Publisher[T_co | T]:
        """This publisher's elements interleaved with those of ``others``
        (`reactive_streams.merge_with`)."""
        return _apply("merge_with", self, *others)

    # Errors.

    def catch(self, handler: Callable[[BaseException], Publisher[R]]) -> Publisher[T_co | R]:
        """After an error, ``handler(error)``'s publisher goes on, asked for the demand still
        outstanding (`reactive_streams.catch`)."""
        return _apply("catch", self, handler)

    def on_error_return(self, value: R | Callable[[BaseException], R]) -> Publisher[T_co | R]:
        """After an error, one last element (``value``, or ``value(error)``), then completion
        (`reactive_streams.on_error_return`)."""
        return _apply("on_error_return", self, value)

    def retry(
        self,
        times: int | None,
        *,
        when: Callable[[BaseException], object] | None = None,
        backoff: float | None = None,
        max_backoff: float | None = None,
        jitter: float = 0.5,
        scheduler: Any = None,
    ) -> Publisher[T_co]:
        """After an error, subscribe again (at most ``times`` times), asking for the demand still
        outstanding, never again for what was delivered; with ``backoff``, after a growing wait
        (`reactive_streams.retry`)."""
        kwargs: dict[str, Any] = {"when": when}
        if backoff is not None:
            kwargs.update(backoff=backoff, max_backoff=max_backoff, jitter=jitter, scheduler=scheduler)
        return _apply("retry", self, times, **kwargs)

    # Time and threads.

    def subscribe_on(self, scheduler: Any) -> Publisher[T_co]:
        """Subscribed, and asked for more, on ``scheduler`` (`reactive_streams.subscribe_on`)."""
        return _apply("subscribe_on", self, scheduler)

    def publish_on(self, scheduler: Any, prefetch: int = 4096) -> Publisher[T_co]:
        """The subscriber's signals on ``scheduler``, through a queue of at most ``prefetch``
        (`reactive_streams.publish_on`)."""
        return _apply("publish_on", self, scheduler, prefetch)

    def delay(self, duration: float, *, scheduler: Any = None) -> Publisher[T_co]:
        """Each element ``duration`` seconds later, in order (`reactive_streams.delay`)."""
        return _apply("delay", self, duration, scheduler=scheduler)

    def delay_subscription(self, duration: float, *, scheduler: Any = None) -> Publisher[T_co]:
        """The source subscribed ``duration`` seconds later (`reactive_streams.delay_subscription`)."""
        return _apply("delay_subscription", self, duration, scheduler=scheduler)

    def timeout(
        self, duration: float, fallback: Publisher[R] | None = None, *, scheduler: Any = None
    ) -> Publisher[T_co | R]:
        """`StreamTimeoutError`, or ``fallback``, if no element comes within ``duration`` seconds
        (`reactive_streams.timeout`)."""
        return _apply("timeout", self, duration, fallback, scheduler=scheduler)

    def buffer(self, size: int, timeout: float, *, scheduler: Any = None) -> Publisher[list[T_co]]:
        """Lists of up to ``size``, each sent when full or ``timeout`` seconds after its first
        element; never an error for lack of demand (`reactive_streams.buffer`)."""
        return _apply("buffer", self, size, timeout, scheduler=scheduler)

    def sample(self, period: float, *, scheduler: Any = None) -> Publisher[T_co]:
        """The newest element of each ``period`` (`reactive_streams.sample`)."""
        return _apply("sample", self, period, scheduler=scheduler)

    def throttle_first(self, period: float, *, scheduler: Any = None) -> Publisher[T_co]:
        """An element, then none for ``period`` seconds (`reactive_streams.throttle_first`)."""
        return _apply("throttle_first", self, period, scheduler=scheduler)

    def debounce(self, period: float, *, scheduler: Any = None) -> Publisher[T_co]:
        """An element once ``period`` seconds pass with no newer one (`reactive_streams.debounce`)."""
        return _apply("debounce", self, period, scheduler=scheduler)

    # Hot sources.

    def on_backpressure_buffer(
        self, capacity: int, overflow: str = "error", *, on_dropped: Callable[[Any], object] | None = None
    ) -> Publisher[T_co]:
        """Everything asked of upstream; at most ``capacity`` held for the subscriber, and
        ``overflow`` deciding when full (`reactive_streams.on_backpressure_buffer`)."""
        return _apply("on_backpressure_buffer", self, capacity, overflow, on_dropped=on_dropped)

    def on_backpressure_drop(self, on_dropped: Callable[[Any], object] | None = None) -> Publisher[T_co]:
        """Everything asked of upstream; what the subscriber has not asked for is dropped
        (`reactive_streams.on_backpressure_drop`)."""
        return _apply("on_backpressure_drop", self, on_dropped)

    def on_backpressure_latest(self) -> Publisher[T_co]:
        """Everything asked of upstream; the subscriber gets the newest when it asks
        (`reactive_streams.on_backpressure_latest`)."""
        return _apply("on_backpressure_latest", self)

    # Many subscribers.

    def publish(self, prefetch: int = 256) -> ConnectablePublisher[T_co]:
        """One subscription to this publisher for many subscribers, once connected
        (`reactive_streams.publish`)."""
        result: ConnectablePublisher[T_co] = apply("publish", self, prefetch)
        return result

    def replay(self, n: int, prefetch: int = 256) -> ConnectablePublisher[T_co]:
        """As `publish`; each subscriber first gets the last ``n`` (`reactive_streams.replay`)."""
        result: ConnectablePublisher[T_co] = apply("replay", self, n, prefetch)
        return result

    def share(self, prefetch: int = 256) -> Publisher[T_co]:
        """``publish(prefetch).ref_count(1)`` (`reactive_streams.share`)."""
        return _apply("share", self, prefetch)

    # Composition and consumption.

    @overload
    def pipe(self: Publisher[A], op1: Callable[[Publisher[A]], Publisher[B]], /) -> Publisher[B]: ...
    @overload
    def pipe(
        self: Publisher[A],
        op1: Callable[[Publisher[A]], Publisher[B]],
        op2: Callable[[Publisher[B]], Publisher[C]],
        /,
    ) -> Publisher[C]: ...
    @overload
    def pipe(
        self: Publisher[A],
        op1: Callable[[Publisher[A]], Publisher[B]],
        op2: Callable[[Publisher[B]], Publisher[C]],
        op3: Callable[[Publisher[C]], Publisher[D]],
        /,
    ) -> Publisher[D]: ...
    @overload
    def pipe(
        self: Publisher[A],
        op1: Callable[[Publisher[A]], Publisher[B]],
        op2: Callable[[Publisher[B]], Publisher[C]],
        op3: Callable[[Publisher[C]], Publisher[D]],
        op4: Callable[[Publisher[D]], Publisher[E]],
        /,
    ) -> Publisher[E]: ...
    @overload
    def pipe(self, *operators: Callable[[Publisher[Any]], Publisher[Any]]) -> Publisher[Any]: ...
    def pipe(self, *operators: Callable[[Publisher[Any]], Publisher[Any]]) -> Publisher[Any]:
        """This publisher through each operator in turn (`reactive_streams.pipe`)."""
        result: Publisher[Any] = call("pipe", self, *operators)
        return result

    def iterate(self, prefetch: int = 1024) -> Iterator[T_co]:
        """Shorthand for `reactive_streams.iterate` (a blocking iterator)."""
        result: Iterator[T_co] = call("iterate", self, prefetch)
        return result

    def aiterate(self, prefetch: int = 1024) -> AsyncIterator[T_co]:
        """Shorthand for `reactive_streams.aiterate` (an asyncio iterator)."""
        result: AsyncIterator[T_co] = call("aiterate", self, prefetch)
        return result


class Connection:
    """A connection of a `ConnectablePublisher`, from its ``connect()``: ``cancel()`` (or leaving
    its ``with`` block) cancels the source; subscribers still joined get what they asked for of
    what is held, then a `ReactiveStreamsError` saying the connection was cancelled."""

    __slots__ = ("_cancel",)

    def __init__(self, cancel: Callable[[], None]) -> None:
        self._cancel = cancel

    def cancel(self) -> None:
        """Cancel the source (§3.5); idempotent, thread-safe."""
        self._cancel()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


class ConnectablePublisher(Publisher[T_co]):
    """A publisher that subscribes its source once, for all its subscribers, when connected
    (`reactive_streams.publish`, `reactive_streams.replay`).

    A subscriber joins the current connection (§1.9: ``on_subscribe`` first); after the source
    has ended, the ended connection stays current, so a late subscriber gets its end (and, for
    `replay`, what it keeps first) until `connect` starts a new one.
    """

    __slots__ = ()

    @abstractmethod
    def connect(self) -> Connection:
        """Subscribe the source for the subscribers joined and to come, if not yet (a connection
        whose source has ended is replaced by a new one); its `Connection` cancels it."""

    @abstractmethod
    def auto_connect(self, n: int = 1) -> Publisher[T_co]:
        """This publisher, connected when the ``n``-th subscriber has joined (``n == 0``: now).
        It stays connected: nothing cancels the source but its own end."""

    @abstractmethod
    def ref_count(self, n: int = 1) -> Publisher[T_co]:
        """This publisher, connected when ``n`` subscribers have joined, and cancelled when none
        is left (each has cancelled or had its end); a subscriber that comes after that joins a
        new connection, which subscribes the source again."""


class Processor(Subscriber[T_contra], Publisher[R_co], Generic[T_contra, R_co]):
    """A processing stage: a `Subscriber` of ``T`` and a `Publisher` of ``R``, bound by the
    rules of both (§4.1). It either propagates ``on_error`` at once or, recovering from it,
    considers its upstream subscription cancelled (§4.2)."""

    __slots__ = ()
