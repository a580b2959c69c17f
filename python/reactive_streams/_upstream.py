"""`SerialUpstream`: an operator's calls to its upstream subscription, made one at a time.

An operator asks upstream for more from more than one thread: the downstream's ``request``
thread, and the thread its upstream signals on (a replenishing request inside ``on_next``). §2.7
wants those calls serial, so each request only records the demand and signals an inline
`Drain`, whose pass makes the call; one recorded while a pass runs is made by that pass's thread
as soon as the call under way returns. A request made inside ``on_next`` of a synchronous
upstream therefore never recurses (§3.3). A cancel is made at once, from whichever thread, as the
relays' are (cancel is thread-safe, §3.5): a synchronous upstream then stops in the middle of
the request that is emitting (§3.12), where a cancel left for the pass would come after it.
"""

from __future__ import annotations

import threading

from ._api import Subscription
from ._demand import Demand, Drain

__all__ = ["SerialUpstream"]


class SerialUpstream:
    """One upstream subscription, and the requests and the cancel not yet made to it."""

    __slots__ = ("__weakref__", "_cancel", "_drain", "_subscription", "_unrequested", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._subscription: Subscription | None = None
        self._unrequested = Demand()  # recorded, not yet asked of the subscription
        self._cancel = False
        self._drain = Drain(self._calls, lock=self.lock)

    def set(self, subscription: Subscription) -> None:
        """Take the subscription; what was requested before it arrived is asked for now, and a
        cancel made before cancels it at once."""
        with self.lock:
            cancelled = self._cancel
            if not cancelled:
                self._subscription = subscription
                run = self._drain.signal_locked()
        if cancelled:
            subscription.cancel()
        elif run:
            self._drain.passes()

    def request(self, n: int) -> None:
        """Ask for ``n`` more (a positive int; the caller checked it, §3.9), summed up to
        2**63-1 with what is not yet asked (§3.17)."""
        with self.lock:
            if self._cancel:
                return  # §3.6
            self._unrequested.add(n)
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

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
            subscription.request(n)
