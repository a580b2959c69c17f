"""The four interfaces of the specification, as abstract base classes with snake_case names.

`Publisher` also carries the library's operators in fluent form
(``rs.from_iterable(x).map(f).filter(p)``), so every publisher, including one that comes
from the JVM bridge or a user's own subclass, can be composed the same way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

__all__ = ["Processor", "Publisher", "Subscriber", "Subscription"]

T = TypeVar("T")
R = TypeVar("R")
T_co = TypeVar("T_co", covariant=True)
T_contra = TypeVar("T_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)


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

    # Operators (fluent form). Each one returns a new cold publisher; nothing is subscribed
    # until the result is.

    def map(self, function: Callable[[T_co], R]) -> Publisher[R]:
        """Apply ``function`` to each element. Demand and cancel pass through unchanged.

        An exception from ``function`` cancels upstream and becomes ``on_error``; a ``None``
        result is a §2.13 violation and is signalled as ``NullElementError``.
        """
        from ._operators import MapPublisher

        return MapPublisher(self, function)

    def filter(self, predicate: Callable[[T_co], object]) -> Publisher[T_co]:
        """Keep the elements for which ``predicate`` is true; each dropped one is requested
        again upstream, so downstream demand is met exactly (§1.1)."""
        from ._operators import FilterPublisher

        return FilterPublisher(self, predicate)

    def take(self, count: int) -> Publisher[T_co]:
        """Emit the first ``count`` elements, then cancel upstream and complete.

        Never requests more than ``count`` elements upstream in total.
        """
        from ._counting import TakePublisher

        return TakePublisher(self, count)

    def skip(self, count: int) -> Publisher[T_co]:
        """Drop the first ``count`` elements; the first request upstream is raised by ``count``."""
        from ._counting import SkipPublisher

        return SkipPublisher(self, count)

    def batch(self, size: int) -> Publisher[list[T_co]]:
        """Group elements into lists of ``size`` (the last may be shorter).

        A request for ``n`` lists becomes a request for ``n * size`` elements upstream.
        """
        from ._counting import BatchPublisher

        return BatchPublisher(self, size)

    def flat_map(
        self,
        function: Callable[[T_co], Publisher[R]],
        concurrency: int = 16,
        prefetch: int = 32,
    ) -> Publisher[R]:
        """Map each element to a publisher and merge their elements.

        At most ``concurrency`` inner publishers are subscribed at once (upstream is asked for
        one element per free slot), and each inner one buffers at most ``prefetch`` elements.
        """
        from ._flat_map import FlatMapPublisher

        return FlatMapPublisher(self, function, concurrency, prefetch)

    def concat_with(self, *others: Publisher[T]) -> Publisher[T_co | T]:
        """This publisher's elements, then each of ``others`` in turn (see `concat`)."""
        from ._flat_map import concat

        return concat(self, *others)

    def merge_with(self, *others: Publisher[T]) -> Publisher[T_co | T]:
        """This publisher's elements interleaved with those of ``others`` (see `merge`)."""
        from ._flat_map import merge

        return merge(self, *others)

    def iterate(self, prefetch: int = 1024) -> Iterator[T_co]:
        """Shorthand for `reactive_streams.iterate` (a blocking iterator)."""
        from ._iterate import iterate

        return iterate(self, prefetch)

    def aiterate(self, prefetch: int = 1024) -> AsyncIterator[T_co]:
        """Shorthand for `reactive_streams.aiterate` (an asyncio iterator)."""
        from ._aiterate import aiterate

        return aiterate(self, prefetch)


class Processor(Subscriber[T_contra], Publisher[R_co], Generic[T_contra, R_co]):
    """A processing stage: a `Subscriber` of ``T`` and a `Publisher` of ``R``, bound by the
    rules of both (§4.1). It either propagates ``on_error`` at once or, recovering from it,
    considers its upstream subscription cancelled (§4.2)."""

    __slots__ = ()
