"""Helpers that several adapters share to keep the same rules the same way."""

from __future__ import annotations

import logging
from typing import Any

from ._demand import MAX_DEMAND, add_capped, check_request
from ._errors import IllegalDemandError, NullElementError, ReactiveStreamsError

__all__ = [
    "MAX_DEMAND",
    "add_demand",
    "checked_demand",
    "duplicate_subscribe_error",
    "log_subscriber_failure",
    "require_not_none",
]

logger = logging.getLogger("reactive_streams")


def add_demand(current: int, n: int) -> int:
    """Sum two demands, capped at ``MAX_DEMAND`` (§3.8, §3.17)."""
    return add_capped(current, n)


def checked_demand(n: Any) -> int | IllegalDemandError:
    """Return ``n`` as a positive int, or the §3.9 error to signal through ``on_error`` (§3.16)."""
    return check_request(n)


def require_not_none(value: object, what: str, rule: str) -> None:
    """Raise ``NullElementError`` naming the rule when ``value`` is ``None`` (§1.9, §2.13)."""
    if value is None:
        raise NullElementError(f"{rule}: {what} must not be None")


def duplicate_subscribe_error() -> ReactiveStreamsError:
    """What a multicast publisher signals to a subscriber that subscribes while subscribed: its
    existing subscription fails with this, and no second one is made (§1.10, §2.12), as
    ``java.util.concurrent.SubmissionPublisher`` does (an ``IllegalStateException`` there)."""
    return ReactiveStreamsError(
        "§2.12: this subscriber subscribed again while already subscribed (§1.10); its existing "
        "subscription is failed and no second one is made"
    )


def log_subscriber_failure(subscriber: object, method: str, exc: BaseException) -> None:
    """Raise a §2.13 violation "in a fashion adequate for the runtime": log it with its traceback."""
    logger.error(
        "§2.13: %s.%s raised %s; its subscription is cancelled and it gets no further signal",
        type(subscriber).__name__,
        method,
        type(exc).__name__,
        exc_info=exc,
    )


def signal_terminal(subscriber: Any, error: BaseException | None) -> None:
    """Signal ``on_complete`` (``error`` None) or ``on_error``; a subscriber that raises from it
    is logged, never raised to the caller (§2.13)."""
    try:
        if error is None:
            subscriber.on_complete()
        else:
            subscriber.on_error(error)
    except Exception as exc:
        log_subscriber_failure(subscriber, "on_complete" if error is None else "on_error", exc)
