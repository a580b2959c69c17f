"""One reading thread for many streams, handed on when a delivery stalls: the kit under the
bridge's data channel and the Spark Connect reply path.

A `FrameReader` reads frames, each for one stream (its key), from one source (a socket, a gRPC
call), and delivers each itself to the receiver registered for its key: no thread hop per
frame. A stream's frames are delivered one at a time and in order (§1.3); a frame for a stream
whose delivery is under way on another thread waits for that thread. If one delivery takes
longer than ``stall_seconds`` (a subscriber blocking in ``on_next``), a watchdog hands the
reading to a new thread, so that no stream waits for another's subscriber; the stuck thread ends
when its delivery returns. So the threads are one reader, one watchdog, and one for each
delivery stalled at the moment.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["FrameReader"]

logger = logging.getLogger("reactive_streams")

K = TypeVar("K", bound=Hashable)
F = TypeVar("F")

#: A delivery this long hands the reading to another thread.
STALL_SECONDS = 0.02


class _Stream(Generic[F]):
    __slots__ = ("busy", "deliver", "frames", "lock")

    def __init__(self, deliver: Callable[[F], None]) -> None:
        self.deliver = deliver
        self.frames: deque[F] = deque()
        self.busy = False  # a thread is delivering its frames
        self.lock = threading.Lock()


class FrameReader(Generic[K, F]):
    """Reads ``(key, frame)`` pairs with ``read`` (None at the end of the source; an exception
    is its failure) and delivers each frame to the callable `register`-ed for its key; frames
    for other keys are dropped (a stream that ended: §2.8). ``on_end`` hears, once, why reading
    stopped: None at the source's end, else the exception ``read`` raised."""

    def __init__(
        self,
        read: Callable[[], tuple[K, F] | None],
        on_end: Callable[[BaseException | None], None],
        *,
        name: str,
        stall_seconds: float = STALL_SECONDS,
    ) -> None:
        self._read = read
        self._on_end = on_end
        self._name = name
        self._stall = stall_seconds
        self._streams: dict[K, _Stream[F]] = {}
        self._state = threading.Lock()  # the reading role, below
        self._reader: threading.Thread | None = None  # the thread that reads now
        self._delivering = False  # the reader is delivering a frame...
        self._deliveries = 0  # ...the how-manieth since the start
        self._threads: set[threading.Thread] = set()  # readers still running
        self._ended = False  # stopped, or the source ended: nothing to watch
        self._end_told = False  # on_end was called
        self._watchdog: threading.Thread | None = None
        self.frames = 0  # frames delivered: a statistic, for tests and benchmarks
        self.takeovers = 0  # readers started because a delivery stalled

    def start(self) -> None:
        with self._state:
            self._start_reader()
        self._watchdog = threading.Thread(target=self._watch, name=f"{self._name}-watch", daemon=True)
        self._watchdog.start()

    def register(self, key: K, deliver: Callable[[F], None]) -> None:
        """Frames for ``key`` go to ``deliver`` from now on."""
        self._streams[key] = _Stream(deliver)

    def unregister(self, key: K) -> None:
        """Late frames for ``key`` are dropped from now on (§2.8)."""
        self._streams.pop(key, None)

    @property
    def registered(self) -> int:
        return len(self._streams)

    @property
    def readers(self) -> int:
        """Reading threads still running: one, plus any stuck in a slow delivery."""
        with self._state:
            return len(self._threads)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop watching, and wait for the threads (the caller has closed the source, so the
        reader is ending; one stuck in a delivery ends when it returns)."""
        with self._state:
            self._ended = True
            threads = [*self._threads, self._watchdog]
        me = threading.current_thread()
        for thread in threads:
            if thread is not None and thread is not me:
                thread.join(timeout)

    def _start_reader(self) -> None:
        """(Under ``_state``.) A new thread takes the reading role."""
        reader = threading.Thread(target=self._read_frames, name=self._name, daemon=True)
        self._reader = reader
        self._delivering = False
        self._threads.add(reader)
        reader.start()

    def _read_frames(self) -> None:
        me = threading.current_thread()
        try:
            while True:
                try:
                    frame = self._read()
                except Exception as exc:
                    self._end(exc)
                    return
                if frame is None:
                    self._end(None)
                    return
                stream = self._streams.get(frame[0])
                if stream is None:
                    continue  # a stream that ended: late frames are dropped (§2.8)
                with self._state:
                    self._delivering = True
                    self._deliveries += 1
                self._deliver(stream, frame[1])
                with self._state:
                    if self._reader is not me:
                        return  # a stalled delivery: another thread reads now
                    self._delivering = False
        finally:
            with self._state:
                self._threads.discard(me)

    def _end(self, error: BaseException | None) -> None:
        with self._state:
            self._ended = True
            if self._end_told:
                return
            self._end_told = True
        try:
            self._on_end(error)
        except Exception:
            logger.exception("ending the streams of %s failed", self._name)

    def _deliver(self, stream: _Stream[F], frame: F) -> None:
        """The frame to its stream, on this thread unless another delivers that stream's."""
        with stream.lock:
            stream.frames.append(frame)
            if stream.busy:
                return  # its delivering thread takes this one next, in order (§1.3)
            stream.busy = True
        while True:
            with stream.lock:
                if not stream.frames:
                    stream.busy = False
                    return
                frame = stream.frames.popleft()
            try:
                stream.deliver(frame)
            except Exception:
                logger.exception("a frame could not be delivered")
            self.frames += 1

    def _watch(self) -> None:
        """Every ``stall_seconds``: if one delivery has run all that time, another thread reads."""
        seen = -1
        while True:
            time.sleep(self._stall)
            with self._state:
                if self._ended:
                    return
                if self._delivering and self._deliveries == seen:
                    self.takeovers += 1
                    self._start_reader()
                seen = self._deliveries if self._delivering else -1
