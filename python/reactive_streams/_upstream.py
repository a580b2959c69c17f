"""`SerialUpstream`: an operator's calls to its upstream subscription, made one at a time.

An operator asks upstream for more from more than one thread: the downstream's ``request``
thread, and the thread its upstream signals on (a replenishing request inside ``on_next``, a
cancel once the answer is known). §2.7 wants those calls serial, so each one only records what
it wants (demand added, cancel) and signals an inline `Drain`, whose pass makes the calls; a
call recorded while a pass runs is made by that pass's thread as soon as the call under way
returns. A request made inside ``on_next`` of a synchronous upstream therefore never recurses
(§3.3).
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
        """Take the subscription; what was recorded before it arrived is made now (a cancel
        recorded first cancels it at once)."""
        with self.lock:
            self._subscription = subscription
            run = self._drain.signal_locked()
        if run:
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
        """Cancel the subscription, once (§3.7); requests not yet made are dropped."""
        with self.lock:
            if self._cancel:
                return
            self._cancel = True
            run = self._drain.signal_locked()
        if run:
            self._drain.passes()

    @property
    def cancelled(self) -> bool:
        return self._cancel

    def _calls(self) -> None:
        """One drain pass: the cancel, or the demand not yet asked for."""
        with self.lock:
            subscription = self._subscription
            if subscription is None:
                return  # not yet subscribed, or cancelled already: nothing to call
            cancel = self._cancel
            if cancel:
                self._subscription = None  # §3.13: nothing more to ask of it
                n = 0
            else:
                n = self._unrequested.outstanding
                self._unrequested.outstanding = 0
        if cancel:
            subscription.cancel()
        elif n:
            subscription.request(n)
