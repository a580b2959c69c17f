"""The executor that asynchronous publishers and subscribers use unless given one."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Executor, ThreadPoolExecutor

__all__ = ["default_executor"]

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def default_executor() -> Executor:
    """A shared thread pool, created on first use (``reactive-streams-N`` threads).

    Work on it is done in bounded slices that reschedule themselves, so one busy stream
    cannot starve the others; at interpreter exit the pool refuses new slices and streams
    still running end with an error.
    """
    global _executor
    with _lock:
        if _executor is None:
            workers = min(32, (os.cpu_count() or 1) + 4)
            _executor = ThreadPoolExecutor(workers, thread_name_prefix="reactive-streams")
        return _executor
