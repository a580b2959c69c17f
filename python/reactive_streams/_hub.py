"""The hub of one multicast connection: the source's subscriber, one list of what came from it,
each subscriber's place in it (a cursor), and the one drain that sends each what it asked for.

The hub's drain sends each subscriber what it has asked for (§1.1, §1.3) and drops what every
subscriber has had, keeping the last ``history`` (for `replay`). Completion reaches a subscriber
after everything; an error, once what it asked for has gone out (what it has not asked for is
dropped, so an error never waits for demand). The source is asked for ``prefetch`` at first and
then for as much as the slowest subscriber has taken, so the list never holds more than
``prefetch`` elements beyond the slowest (plus ``history``): a stalled subscriber stops the
source, and nothing is buffered without bound.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ._api import Publisher, Subscriber, Subscription
from ._demand import Demand, Drain
from ._errors import ReactiveStreamsError
from ._gauges import StreamState, name_of, register, state_of
from ._operators import DISCARD
from ._rules import (
    duplicate_subscribe_error,
    log_subscriber_failure,
    require_not_none,
    signal_or_cancel,
    signal_terminal,
)
from ._upstream import SerialUpstream

__all__ = ["Hub"]

T = TypeVar("T")


class Member(Subscription):
    """One subscriber of a hub: its place in the hub's list, and its demand."""

    __slots__ = ("cancelled", "cursor", "demand", "done", "error", "hub", "left", "subscriber")

    def __init__(self, hub: Hub[Any], subscriber: Subscriber[Any], left: Callable[[], None] | None) -> None:
        self.hub, self.subscriber, self.left = hub, subscriber, left
        self.cursor = 0
        self.demand = Demand()
        self.error: BaseException | None = None  # §3.9, signalled by the drain
        self.done = False  # cancelled, or given its end by a pass
        self.cancelled = False

    def request(self, n: int) -> None:
        """Add ``n`` to this subscriber's demand (§3.8, §3.17); the hub's drain sends (§3.3)."""
        self.hub.requested(self, n)

    def cancel(self) -> None:
        """Leave the hub (§3.5, §3.13): what it held for this subscriber alone is dropped."""
        self.hub.leave(self)


class Hub(Subscriber[T], Generic[T]):
    """One connection: the source's subscriber, the list, the members and the drain."""

    def __init__(self, source: Publisher[T], prefetch: int, history: int) -> None:
        self._source, self._prefetch, self._history = source, prefetch, history
        self._limit = max(1, prefetch - (prefetch >> 2))  # ask again every 3/4 of prefetch
        self._lock = threading.Lock()
        self._drain = Drain(self._pass, lock=self._lock)
        self._upstream = SerialUpstream()
        self._members: dict[int, Member] = {}  # by id(subscriber), in joining order
        self._items: list[T] = []
        self._base = 0  # the index of _items[0] in the stream
        self._released = 0  # the stream's index up to which the source was asked again
        self._vacated: int | None = None  # where the last member to leave stood
        self._connected = False
        self.disconnected = False
        self.ended = False
        self._terminal: BaseException | None = None
        self._requested_in_all = 0  # for `stream_state`, counted per request
        self._since = time.monotonic()  # the last pass that sent elements
        self._sending: tuple[Member, int] | None = None  # the member in its on_next now, and how many

    def stream_state(self) -> StreamState | None:
        """The connection's state (`describe_streams`): held for its slowest member, the
        source's demand outstanding, and on whom it waits."""
        with self._lock:
            if not self._connected or self.disconnected or (self.ended and not self._members):
                return None
            end = self._base + len(self._items)
            sending = self._sending
            # A member busy with a batch has not taken it yet: its cursor moved before the send.
            slowest = min(
                (
                    member.cursor - (sending[1] if sending is not None and sending[0] is member else 0)
                    for member in self._members.values()
                ),
                default=end,
            )
            return state_of(
                "share",
                name_of(self._source),
                requested=self._requested_in_all,
                delivered=slowest,
                held=end - slowest,
                since=self._since,
            )

    # The members' side.

    def join(self, subscriber: Subscriber[T], left: Callable[[], None] | None) -> bool:
        """Add ``subscriber`` (§1.9); False if it was joined already (§1.10: that subscription
        fails, and no second one is made)."""
        member = Member(self, subscriber, left)
        with self._lock:
            previous = self._members.get(id(subscriber))
            duplicate = previous is not None and previous.subscriber is subscriber
            if previous is not None and duplicate:
                previous.error = duplicate_subscribe_error()  # §1.10, §2.12
            else:
                end = self._base + len(self._items)
                # The first (or only) subscriber gets what is held; others, the last `history`.
                member.cursor = self._base if not self._members else max(self._base, end - self._history)
                self._members[id(subscriber)] = member
            held = self._drain.signal_locked()  # held while on_subscribe runs (§1.3)
        if not duplicate:
            signal_or_cancel(subscriber, "on_subscribe", member, member.cancel)  # §1.9, §2.13
        if held:
            self._drain.passes()
        return not duplicate

    def requested(self, member: Member, n: int) -> None:
        with self._lock:
            if member.done:
                return  # §3.6
            error = member.demand.add(n)
            if error is not None and member.error is None:
                member.error = error  # §3.9: signalled by the drain, to this member alone
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def leave(self, member: Member) -> None:
        with self._lock:
            if member.done:
                return
            member.done = member.cancelled = True
            if self._members.get(id(member.subscriber)) is member:
                del self._members[id(member.subscriber)]
                self._vacated = member.cursor
            member.subscriber = DISCARD  # §3.13
            run = self._drain.signal_locked()  # the slowest may have left: ask the source again
        if run:
            self._drain.passes()
        if member.left is not None:
            member.left()

    # The connection.

    def connect(self) -> None:
        with self._lock:
            if self._connected or self.disconnected:
                return
            self._connected = True
        register(self)
        try:
            self._source.subscribe(self)
        except Exception as exc:  # a publisher that breaks §1.9: signalled, not lost
            self._end(exc)

    def disconnect(self, *, notify: bool) -> None:
        with self._lock:
            if self.disconnected:
                return
            self.disconnected = True
        self._upstream.cancel()
        if notify:
            self._end(ReactiveStreamsError("the connection was cancelled before the source ended"))

    # The source's signals.

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        self._upstream.set(subscription)  # a second one, or one after disconnect, is cancelled
        with self._lock:
            self._requested_in_all += self._prefetch
        self._upstream.request(self._prefetch)

    def on_next(self, item: T) -> None:
        require_not_none(item, "element", "§2.13")
        with self._lock:
            if self.ended:
                return  # §2.8
            self._items.append(item)
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def on_next_batch(self, items: list[T]) -> None:
        with self._lock:
            if self.ended:
                return  # §2.8
            self._items.extend(items)  # its sender checked them (§2.13)
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self._end(exc)

    def on_complete(self) -> None:
        self._end(None)

    def _end(self, error: BaseException | None) -> None:
        with self._lock:
            if self.ended:
                return  # §1.7
            self.ended, self._terminal = True, error
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    # The drain.

    def _pass(self) -> None:
        """One pass: each member what it asked for of the list, or its end; then the list
        trimmed to what some member still needs, and the source asked for what the slowest
        took (§1.1)."""
        sends: list[tuple[Member, list[T] | None, BaseException | None]] = []
        again = False
        with self._lock:
            items, base = self._items, self._base
            end = base + len(items)
            for member in list(self._members.values()):
                if member.error is not None:
                    sends.append((member, None, member.error))
                    self._drop_locked(member)
                    continue
                count = min(member.demand.outstanding, end - member.cursor)
                if count > 0:
                    start = member.cursor - base
                    sends.append((member, items[start : start + count], None))
                    member.cursor += count
                    member.demand.produced(count)
                # Completion after everything; an error once what the member asked for went out.
                if self.ended and (
                    member.cursor == end or (self._terminal is not None and not member.demand.outstanding)
                ):
                    if count > 0:
                        again = True  # the end in the next pass: a §3.9 request made meanwhile wins
                    else:
                        sends.append((member, None, self._terminal))
                        self._drop_locked(member)
        if sends:
            self._since = time.monotonic()
        for member, batch, error in sends:
            subscriber = member.subscriber
            if batch is not None:
                self._sending = (member, len(batch))
                try:
                    self._send(member, subscriber, batch)
                finally:
                    self._sending = None
            else:
                member.subscriber = DISCARD  # §3.13
                signal_terminal(subscriber, error)
                if member.left is not None:
                    member.left()
        with self._lock:
            ask = self._trim_locked()
            if again:
                self._drain.signal_locked()  # this pass is running: it goes round once more
        if ask:
            self._upstream.request(ask)

    def _drop_locked(self, member: Member) -> None:
        member.done = True
        del self._members[id(member.subscriber)]
        self._vacated = member.cursor

    def _send(self, member: Member, subscriber: Subscriber[T], batch: list[T]) -> None:
        on_next_batch = getattr(subscriber, "on_next_batch", None)
        try:
            if on_next_batch is not None:
                on_next_batch(batch)
            else:
                for item in batch:
                    if member.cancelled:
                        return  # §3.12
                    subscriber.on_next(item)
        except Exception as exc:
            member.cancel()  # §2.13
            log_subscriber_failure(subscriber, "on_next" if on_next_batch is None else "on_next_batch", exc)

    def _trim_locked(self) -> int:
        """Drop what no member needs (keeping the last ``history``); how much more to ask for."""
        end = self._base + len(self._items)
        members = self._members
        if members:
            slowest = min(member.cursor for member in members.values())
        elif self._vacated is not None:
            # What the last member to leave had is dropped, but the last `history`: the next
            # subscriber gets what came after, as a late one does, never the whole stream again.
            slowest = self._vacated
        else:
            return 0  # none joined yet: hold what came for the first subscriber
        keep_from = min(slowest, end - self._history)
        if keep_from > self._base:
            del self._items[: keep_from - self._base]
            self._base = keep_from
        if not members:
            return 0  # nobody to pace the source: hold what comes for the next subscriber
        taken = slowest - self._released
        if taken >= self._limit and not self.ended:
            self._released = slowest
            self._requested_in_all += taken
            return taken
        return 0
