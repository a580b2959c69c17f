"""Helpers that several adapters share to keep the same rules the same way."""

from __future__ import annotations

import logging
import operator
from typing import Any

from ._errors import IllegalDemandError, NullElementError

__all__ = ["MAX_DEMAND", "add_demand", "checked_demand", "log_subscriber_failure", "require_not_none"]

logger = logging.getLogger("reactive_streams")

#: Java's ``Long.MAX_VALUE``: a demand this large is "effectively unbounded" (§3.17).
MAX_DEMAND = 2**63 - 1


def add_demand(current: int, n: int) -> int:
    """Sum two demands, capped at ``MAX_DEMAND`` (§3.8, §3.17)."""
    total = current + n
    return MAX_DEMAND if total >= MAX_DEMAND else total


def checked_demand(n: Any) -> int | IllegalDemandError:
    """Return ``n`` as a positive int, or the §3.9 error to signal through ``on_error``.

    ``request`` must return normally (§3.16), so a bad argument, including one that is not an
    integer at all, is returned as an error for the caller to signal rather than raised.
    """
    try:
        value = operator.index(n)
    except TypeError:
        return IllegalDemandError(f"§3.9: request(n) needs a positive integer, got {n!r}")
    if isinstance(n, bool) or value <= 0:
        return IllegalDemandError(
            f"§3.9: request(n) must be called with n > 0 (non-positive requests are illegal), got {n!r}"
        )
    return value


def require_not_none(value: object, what: str, rule: str) -> None:
    """Raise ``NullElementError`` naming the rule when ``value`` is ``None`` (§1.9, §2.13)."""
    if value is None:
        raise NullElementError(f"{rule}: {what} must not be None")


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
