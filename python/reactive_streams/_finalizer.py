"""Work that garbage collection asks for (a dropped iterator's cancel, a released JVM handle),
done on a thread of its own.

A finalizer runs on whatever thread the collector interrupts, in the middle of whatever that
thread was doing: holding a publisher's lock, or reading a reply from its Py4J connection. A
cancel run there could deadlock on the lock, or write a command into the half-read reply
("reentrant call inside BufferedReader"), so finalizers only enqueue. ``SimpleQueue.put`` is
safe to call from finalizers; the worker is started by ``start()``, outside any finalizer.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from queue import SimpleQueue

__all__ = ["defer", "start"]

logger = logging.getLogger("reactive_streams")

_tasks: SimpleQueue[Callable[[], None]] = SimpleQueue()
_worker: threading.Thread | None = None
_start_lock = threading.Lock()


def start() -> None:
    """Start the worker if it is not running; call it where a finalizer is registered."""
    global _worker
    if _worker is not None:
        return
    with _start_lock:
        if _worker is None:
            worker = threading.Thread(target=_run, name="rs-finalizer", daemon=True)
            worker.start()
            _worker = worker


def defer(task: Callable[[], None]) -> None:
    """Run ``task`` on the finalizer thread; safe from ``__del__`` and weakref callbacks."""
    _tasks.put(task)


def _run() -> None:
    while True:
        task = _tasks.get()
        try:
            task()
        except Exception:
            logger.exception("a cancel or release requested by garbage collection failed")
        del task  # drop what it holds before waiting for the next


def _forget_worker() -> None:
    global _worker, _tasks, _start_lock
    _worker = None  # a forked child has no threads; its first start() makes one
    _tasks = SimpleQueue()
    _start_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_worker)
