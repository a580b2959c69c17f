"""What a live stream holds and on whom it waits (issue 47): `StreamState`, made on demand from
counts its holder keeps anyway (requested, handed on, held), so watching costs the stream
nothing per element. Holders register themselves; `describe_streams` lists the live ones.

Who waits on whom: a stream holding elements waits on its *consumer* (they are ready, it has
not taken them); one holding none with demand outstanding waits on its *producer*; one with no
demand outstanding waits on its consumer to ask (§3.1: only a request lets elements come).
"""

from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass
from typing import Literal, Protocol

from ._demand import MAX_DEMAND

__all__ = ["StreamState", "describe_streams", "name_of", "register", "state_of"]

PRODUCER: Literal["producer"] = "producer"
CONSUMER: Literal["consumer"] = "consumer"


@dataclass(frozen=True)
class StreamState:
    """One live stream, as `describe_streams` or ``Bridge.describe()`` see it.

    Attributes:
        kind: what holds the stream: ``"iterate"``, ``"aiterate"``, ``"publish_on"``,
            ``"share"``, ``"from_jvm"``, ``"to_jvm"``.
        name: which stream (its publisher, or the bridge's stream id).
        outstanding: demand signalled upstream and not yet met (§3.17: capped at
            ``MAX_DEMAND``).
        held: elements arrived and not yet handed on to the consumer.
        delivered: elements handed on so far.
        waiting_on: ``"producer"`` (demand outstanding, nothing held) or ``"consumer"``
            (elements held, or no demand outstanding): the side a stuck stream waits for.
        waiting_since: when that wait began (``time.time()``): the consumer's last take, or,
            for a consumer blocked in `iterate`, when it found nothing to take.
        waiting_seconds: how long it had waited when it was described (by the monotonic
            clock: a change of the wall clock does not change it).
    """

    kind: str
    name: str
    outstanding: int
    held: int
    delivered: int
    waiting_on: Literal["producer", "consumer"]
    waiting_since: float
    waiting_seconds: float


class Gauged(Protocol):
    def stream_state(self) -> StreamState | None:
        """Its state now; None once it has ended."""


# Wall-clock time of a monotonic instant: fixed once, so that one wait's `waiting_since` is the
# same number each time it is described.
_WALL_OFFSET = time.time() - time.monotonic()
_lock = threading.Lock()
_live: weakref.WeakSet[Gauged] = weakref.WeakSet()


def register(holder: Gauged) -> None:
    """Lists ``holder`` in `describe_streams` until it ends or is collected."""
    with _lock:
        _live.add(holder)


def describe_streams() -> list[StreamState]:
    """Every live ``iterate``/``aiterate``, ``publish_on`` and ``share`` stream of this process:
    what it holds, the demand outstanding, and on whom it waits since when (a stuck stream names
    its side). The bridge's streams: ``Bridge.describe()``."""
    with _lock:
        holders = list(_live)
    states = (holder.stream_state() for holder in holders)
    return [state for state in states if state is not None]


def name_of(publisher: object) -> str:
    """A publisher's name in a `StreamState`: its class, and its id to tell two apart."""
    return f"{type(publisher).__qualname__} at {id(publisher):#x}"


def state_of(kind: str, name: str, *, requested: int, delivered: int, held: int, since: float) -> StreamState:
    """The state of a stream that asked upstream for ``requested`` in all, handed on
    ``delivered`` and holds ``held``; ``since``: ``time.monotonic()`` of the consumer's last
    take (or of when it began to wait for the producer)."""
    # Unbounded demand (§3.17) stays unbounded: what arrived does not use it up.
    outstanding = MAX_DEMAND if requested >= MAX_DEMAND else max(0, requested - delivered - held)
    side = CONSUMER if held or not outstanding else PRODUCER
    waited = max(0.0, time.monotonic() - since)
    return StreamState(kind, name, outstanding, held, delivered, side, since + _WALL_OFFSET, waited)
