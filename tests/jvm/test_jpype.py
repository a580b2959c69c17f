"""What only the in-process backend does: each JVM drain thread keeps one Python thread state for
its life (`_jpype._ThreadStates`, Java's ``PythonThreadStates``), rather than one made and torn
down around every call into Python, which costs each batch a trip through the interpreter's
thread list and, on JPype 1.7, leaked a Python type per batch."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import WAIT

BATCH = 16
BATCHES = 1_000


class ThreadStateWatcher(rs.Subscriber[Any]):
    """Requests ``BATCH`` at a time (so each batch is a call into Python), and notes each time an
    element finds its thread's `threading.local` empty: a new Python thread state."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.fresh_states: list[int] = []  # the OS thread of each new Python thread state
        self.count = 0
        self.done = threading.Event()
        self.error: BaseException | None = None

    def on_subscribe(self, subscription: rs.Subscription) -> None:
        self.subscription = subscription
        subscription.request(BATCH)

    def on_next(self, item: Any) -> None:
        if not getattr(self.local, "seen", False):
            self.local.seen = True
            self.fresh_states.append(threading.get_native_id())
        self.count += 1
        if self.count % BATCH == 0:
            self.subscription.request(BATCH)

    def on_error(self, exc: BaseException) -> None:
        self.error = exc
        self.done.set()

    def on_complete(self) -> None:
        self.done.set()


def stream_batches(bridge: Bridge) -> ThreadStateWatcher:
    watcher = ThreadStateWatcher()
    bridge.from_jvm(bridge.jvm.io.github.rspy.bridge.testing.Sources.longs(BATCH * BATCHES)).subscribe(
        watcher
    )
    assert watcher.done.wait(WAIT) and watcher.error is None
    assert watcher.count == BATCH * BATCHES
    return watcher


def test_each_drain_thread_keeps_one_python_thread_state_for_a_thousand_batches(jpype_bridge: Bridge) -> None:
    watcher = stream_batches(jpype_bridge)
    # Each drain thread's first call makes its state; later batches on that thread find it.
    assert len(watcher.fresh_states) == len(set(watcher.fresh_states)), watcher.fresh_states[:20]
    assert len(watcher.fresh_states) <= jpype_bridge.settings.threads


def test_a_thousand_batches_leave_no_python_type_behind(jpype_bridge: Bridge) -> None:
    stream_batches(jpype_bridge)  # the drain threads are started and their states made
    gc.collect()
    before = sum(isinstance(o, type) for o in gc.get_objects())
    stream_batches(jpype_bridge)
    gc.collect()
    after = sum(isinstance(o, type) for o in gc.get_objects())
    assert after - before < 10, f"{after - before} new Python types after {BATCHES} batches"


SIGSEGV_AFTER_FAULTHANDLER = r"""
import ctypes, faulthandler, signal, sys
faulthandler.enable()  # as pytest's faulthandler plugin does before any test runs
import reactive_streams as rs
from reactive_streams.jvm import Bridge
with Bridge.jpype() as bridge:
    elements = bridge.from_jvm(bridge.to_jvm(rs.from_iterable(range(1000))))
    assert list(rs.iterate(elements)) == list(range(1000))
faulthandler.disable()  # as the plugin does at the end: puts back what enable() found
action = ctypes.create_string_buffer(1024)  # struct sigaction; its first field is the handler
libc = ctypes.CDLL(None, use_errno=True)
assert libc.sigaction(signal.SIGSEGV, None, action) == 0, ctypes.get_errno()
print(ctypes.c_void_p.from_buffer(action).value or 0)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signal handlers")
def test_the_jvm_keeps_its_sigsegv_handler_when_faulthandler_was_on_before_it_started() -> None:
    # HotSpot services safepoints through SIGSEGV; faulthandler enabled before the JVM and
    # disabled after it would leave SIG_DFL there, and the JVM's shutdown at exit would then
    # kill the process (-11, no output), as it did once to a README example run by pytest.
    child = subprocess.run(
        [sys.executable, "-c", SIGSEGV_AFTER_FAULTHANDLER], capture_output=True, text=True, timeout=WAIT
    )
    assert child.returncode == 0, child.stderr
    assert int(child.stdout.split()[-1]) != 0, "SIGSEGV is back at SIG_DFL under the running JVM"
