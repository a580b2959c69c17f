"""Checks of the arguments every time-based operator takes: seconds and ``scheduler=``."""

from __future__ import annotations

from ._rules import describe
from ._schedulers import ImmediateScheduler, Scheduler, default_scheduler

__all__ = ["scheduler_arg", "seconds_arg"]


def seconds_arg(value: object, what: str, *, positive: bool = False) -> float:
    """``value`` as float seconds: a real number, >= 0 (> 0 if ``positive``); else a clear error."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise TypeError(f"{what} needs a number of seconds, got {describe(value)}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{what} needs seconds {'> 0' if positive else '>= 0'}, got {value}")
    if value == float("inf"):
        raise ValueError(f"{what} needs a finite number of seconds, got {value}")
    return float(value)


def scheduler_arg(value: object, what: str, *, waits: bool = True) -> Scheduler:
    """``value`` if it is a `Scheduler` (one that can wait, if ``waits``: not the immediate
    one), `default_scheduler` for None; else a clear error."""
    if value is None:
        return default_scheduler()
    if not isinstance(value, Scheduler):
        raise TypeError(f"{what} needs a reactive_streams.Scheduler, got {describe(value)}")
    if waits and isinstance(value, ImmediateScheduler):
        raise ValueError(
            f"{what}: the immediate scheduler cannot wait; use a ThreadPoolScheduler, an "
            "AsyncioScheduler, or a VirtualTimeScheduler in tests"
        )
    return value
