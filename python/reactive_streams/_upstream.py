"""`SerialUpstream`: an operator's calls to its upstream subscription, made one at a time.

An operator asks upstream for more from more than one thread: the downstream's ``request``
thread, and the thread its upstream signals on (a replenishing request inside ``on_next``). §2.7
wants those calls serial, so each request only records the demand and signals an inline
`Drain`, whose pass makes the call; one recorded while a pass runs is made by that pass's thread
as soon as the call under way returns. A request made inside ``on_next`` of a synchronous
upstream therefore never recurses (§3.3). A cancel is made at once, from whichever thread, as the
relays' are (cancel is thread-safe, §3.5): a synchronous upstream then stops in the middle of
the request that is emitting (§3.12), where a cancel left for the pass would come after it.

A request that finds the drain idle and nothing recorded is that pass itself: it makes its call
with no record and no pass function, then lets the drain go, or runs the passes that requests
made meanwhile signalled (one per list of `buffer`, say, where the record cost 7% of its pace).
And a request made on the thread that is inside the pass's call, to a subscription of the
library's kit (`DrainedSubscription`), is made at once: it is re-entrant, not concurrent (§2.7),
and that subscription's drain is running on this thread, so it only records the demand, which
its running pass sends on, in the same loop (§3.3).
"""

from __future__ import annotations

import logging
import threading

from ._api import Subscription
from ._demand import MAX_DEMAND, Demand, Drain, DrainedSubscription

__all__ = ["SerialUpstream"]

logger = logging.getLogger("reactive_streams")


class SerialUpstream:
    """One upstream subscription, and the requests and the cancel not yet made to it."""

    __slots__ = (
        "__weakref__",
        "_cancel",
        "_drain",
        "_inside",
        "_kit",
        "_subscription",
        "_unrequested",
        "lock",
    )

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._subscription: Subscription | None = None
        self._unrequested = Demand()  # recorded, not yet asked of the subscription
        self._cancel = False
        self._inside: int | None = None  # the thread inside the pass's call, if one is
        self._kit = False  # the subscription is a DrainedSubscription (checked once: an ABC's is slow)
        self._drain = Drain(self._calls, lock=self.lock)

    def set(self, subscription: Subscription) -> None:
        """Take the subscription; what was requested before it arrived is asked for now, and a
        cancel made before cancels it at once."""
        with self.lock:
            cancelled = self._cancel
            if not cancelled:
                self._subscription = subscription
                self._kit = isinstance(subscription, DrainedSubscription)
                run = self._drain.signal_locked()
        if cancelled:
            subscription.cancel()
        elif run:
            self._drain.passes()

    def request(self, n: int) -> None:
        """Ask for ``n`` more (a positive int; the caller checked it, §3.9), summed up to
        2**63-1 with what is not yet asked (§3.17)."""
        drain = self._drain
        with self.lock:
            if self._cancel:
                return  # §3.6
            subscription = self._subscription
            if self._kit and drain.running and self._inside == threading.get_ident():
                reentrant, run = True, False  # see the module
            else:
                reentrant = False
                if subscription is None or drain.running or self._unrequested.outstanding:
                    subscription = None
                    self._unrequested.add(n)
                run = drain.signal_locked()
        if subscription is not None:
            self._call(subscription, n)
            if reentrant or not drain.release():
                return
        if run:
            drain.passes()

    def _call(self, subscription: Subscription, n: int) -> None:
        """The request, by the drain's pass (or re-entrant inside it), on this thread."""
        inside, self._inside = self._inside, threading.get_ident()  # written only by the pass's thread
        try:
            subscription.request(min(n, MAX_DEMAND))  # §3.17
        except Exception:  # as a pass that raised: logged, and the drain goes on
            logger.exception("a request upstream raised; the drain goes on")
        finally:
            self._inside = inside

    def cancel(self) -> None:
        """Cancel the subscription, at once and once (§3.7); requests not yet made are dropped."""
        with self.lock:
            if self._cancel:
                return
            self._cancel = True
            subscription, self._subscription = self._subscription, None  # §3.13
        if subscription is not None:
            subscription.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancel

    def _calls(self) -> None:
        """One drain pass: the demand not yet asked for."""
        with self.lock:
            subscription = self._subscription
            if subscription is None:
                return  # not yet subscribed, or cancelled: nothing to ask
            n = self._unrequested.outstanding
            self._unrequested.outstanding = 0
        if n:
            self._call(subscription, n)
