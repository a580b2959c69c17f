"""Python's end of the bridge's data channel (the Java ``DataChannel``), on the Py4J backends.

Py4J carries a ``byte[]`` as base64 text, at about 20 MB/s, and each call is a round trip of
its text protocol. Beside it, one socket per bridge (a Unix domain socket where there are,
else loopback TCP), authenticated with a secret of the bridge's, carries the streams' signals
and batches as frames: a stream id (int64), a length (int32), a kind (one byte), little-endian,
and the payload.

JVM → Python, every signal of a stream is a frame (`SUBSCRIBE`, `NEXT`, `OBJECTS`, `ERROR`,
`COMPLETE`), delivered in order to the stream's `Receiver`; its demand and cancel go back as
frames (`REQUEST`, `CANCEL`), which the JVM's reader hands to the stream without waiting.
Python → JVM, a publisher's large batch goes as a `PUSH` frame, which the Py4J call after it
takes: the call keeps it in order with the other calls.

One thread reads (a `FrameReader`). It delivers each frame itself, a stream's frames one at a
time and in order (§1.3), and hands the reading to a new thread when a delivery stalls (a
subscriber blocking in ``on_next``), so that no stream waits for another's subscriber. The JVM
sends only what was requested, so nothing here holds more than the outstanding demand.
"""

from __future__ import annotations

import itertools
import logging
import os
import secrets
import shutil
import socket
import struct
import tempfile
import threading
from typing import Any, Protocol

from .._frames import FrameReader
from ._errors import BridgeClosedError

__all__ = ["DataChannel", "Receiver"]

logger = logging.getLogger("reactive_streams.jvm")

HEADER = struct.Struct("<qiB")
SECRET_BYTES = 32
ACCEPT_TIMEOUT_MILLIS = 10_000
ACCEPTED = b"\x01"
# JVM -> Python
SUBSCRIBE, NEXT, OBJECTS, ERROR, COMPLETE = b"SNOEC"
# Python -> JVM
REQUEST, CANCEL, PUSH = b"RXP"
_DEMAND = struct.Struct("<q")
_READ_AHEAD = 256 * 1024


class Receiver(Protocol):
    """One stream's Python end: gets its frames, one at a time and in order."""

    def on_frame(self, kind: int, payload: bytes | bytearray) -> None:
        """Handle one frame; an exception is logged and ends nothing else."""


class DataChannel:
    """One bridge's data socket, Python's end: `connect` it, `register` streams, `send`, `close`."""

    def __init__(self, sock: socket.socket) -> None:
        self._socket = sock
        self._send_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._ended: str | None = None  # why no more frames will come
        self._closing = False  # the bridge is closing: the JVM's end may go first
        self._end_lock = threading.Lock()
        self._buffer = bytearray(_READ_AHEAD)  # read ahead; only the reader touches these three
        self._start = 0
        self._end = 0
        self.sent = 0  # batches pushed to the JVM: a statistic, for tests and benchmarks
        self._frames: FrameReader[int, tuple[int, bytes | bytearray]] = FrameReader(
            self._next_frame, self._reading_ended, name="rs-bridge-data"
        )
        self._frames.start()

    @classmethod
    def connect(cls, runtime: Any, java_bytes: Any) -> DataChannel:
        """Asks the JVM side (a ``BridgeRuntime``) to listen, connects to it and presents a new
        secret, as PySpark's ``local_connect_and_auth`` does: on a Unix domain socket in a
        directory of its own (mode 0700) where this Python has them, else on a loopback port.
        Raises `BridgeClosedError` if the JVM does not accept it."""
        secret = secrets.token_bytes(SECRET_BYTES)
        if hasattr(socket, "AF_UNIX"):
            try:
                return cls(_connect_unix(runtime, java_bytes(secret), secret))
            except OSError as exc:  # a JVM that cannot see this machine's files, say
                logger.info("no Unix domain socket for the data channel (%s): loopback TCP instead", exc)
        port = int(runtime.openDataChannel(java_bytes(secret)))
        sock = socket.create_connection(("127.0.0.1", port), timeout=ACCEPT_TIMEOUT_MILLIS / 1000)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(_authenticate(sock, runtime, secret))

    @property
    def open(self) -> bool:
        return self._ended is None

    @property
    def address(self) -> Any:
        """Where the JVM listened: the Unix domain socket's path (gone now), or (host, port)."""
        try:
            return self._socket.getpeername()
        except OSError:
            return None

    @property
    def readers(self) -> int:
        """Reading threads still running: one, plus any stuck in a slow delivery."""
        return self._frames.readers

    @property
    def frames(self) -> int:
        """Frames delivered: a statistic, for tests and benchmarks."""
        return self._frames.frames

    @property
    def takeovers(self) -> int:
        """Readers started because a delivery stalled."""
        return self._frames.takeovers

    def new_id(self) -> int:
        """A stream id, unique on this channel."""
        return next(self._ids)

    def register(self, stream_id: int, receiver: Receiver) -> None:
        """Frames for ``stream_id`` go to ``receiver`` from now on."""
        on_frame = receiver.on_frame
        self._frames.register(stream_id, lambda frame: on_frame(*frame))

    def unregister(self, stream_id: int) -> None:
        """Late frames for ``stream_id`` are dropped from now on (§2.8)."""
        self._frames.unregister(stream_id)

    @property
    def registered(self) -> int:
        return self._frames.registered

    def send(self, stream_id: int, kind: int, payload: bytes = b"") -> None:
        """Write one frame, whole (writers take turns); raises `BridgeClosedError` if the
        channel is closed or broken."""
        header = HEADER.pack(stream_id, len(payload), kind)
        with self._send_lock:
            if self._ended is not None:
                raise BridgeClosedError(f"the bridge's data channel closed: {self._ended}")
            try:
                if len(payload) < 4096:
                    self._socket.sendall(header + payload)
                else:
                    _send_parts(self._socket, header, payload)
            except OSError as exc:
                raise BridgeClosedError(f"the bridge's data channel failed: {exc}") from exc

    def push(self, stream_id: int, payload: bytes) -> None:
        """A Python publisher's batch, for the Py4J call that takes it (``Handle.pushFrame``)."""
        self.send(stream_id, PUSH, payload)
        self.sent += 1

    def request(self, stream_id: int, n: int) -> None:
        """Demand for a JVM → Python stream (n <= 0 is passed on, for Java's §3.9 error)."""
        self.send(stream_id, REQUEST, _DEMAND.pack(min(max(n, -1), 2**63 - 1)))

    def cancel(self, stream_id: int) -> None:
        self.send(stream_id, CANCEL)

    def expect_close(self) -> None:
        """The bridge is closing: the JVM closes its end with the runtime, before this end is
        closed, and may reset the connection under the reader (a frame of Python's unread there).
        That is the close, not a failure: the reader's end is no longer logged as one."""
        self._closing = True

    def close(self) -> None:
        """Close the socket and stop the threads (the JVM closes its end with the runtime)."""
        self._finish("the bridge was closed")
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # not connected any more
        self._socket.close()
        self._frames.stop()  # readers stuck in a subscriber end when it returns

    def _reading_ended(self, error: BaseException | None) -> None:
        if error is None:
            self._finish("the JVM closed it")
            return
        if self._ended is None and not self._closing:
            logger.warning("the bridge's data channel failed: %s", error)
        self._finish(str(error))

    def _next_frame(self) -> tuple[int, tuple[int, bytes | bytearray]] | None:
        """The next frame (stream id, (kind, payload)), read ahead in large pieces; None at the end."""
        if not self._fill(HEADER.size):
            return None
        stream_id, length, kind = HEADER.unpack_from(self._buffer, self._start)
        if length < 0:
            raise ValueError(f"a frame of {length} bytes for stream {stream_id}")
        self._start += HEADER.size
        if length > len(self._buffer):  # larger than the read-ahead: into bytes of its own
            payload = bytearray(length)
            have = self._end - self._start
            payload[:have] = self._buffer[self._start : self._end]
            self._start = self._end = 0
            if not _read_into(self._socket, memoryview(payload)[have:]):
                return None
            return stream_id, (kind, payload)
        if not self._fill(length):
            return None
        at = self._start
        self._start += length
        return stream_id, (
            kind,
            bytes(memoryview(self._buffer)[at : at + length]),
        )  # Arrow may keep it: a copy

    def _fill(self, size: int) -> bool:
        """At least ``size`` unread bytes in the buffer; False at the end of the stream."""
        if self._end - self._start >= size:
            return True
        if self._start:
            have = self._end - self._start
            self._buffer[:have] = self._buffer[self._start : self._end]
            self._start, self._end = 0, have
        view = memoryview(self._buffer)
        while self._end < size:
            n = self._socket.recv_into(view[self._end :])
            if n == 0:
                return False
            self._end += n
        return True

    def _finish(self, reason: str) -> None:
        with self._end_lock:
            if self._ended is None:
                self._ended = reason


def _connect_unix(runtime: Any, java_secret: Any, secret: bytes) -> socket.socket:
    """The channel's socket on a Unix domain socket the JVM listens on in a new private directory,
    which goes once the connection is made (the JVM removes the socket's file)."""
    directory = tempfile.mkdtemp(prefix="rs-bridge-")  # mode 0700: only this user may connect
    try:
        path = os.path.join(directory, "data")
        if len(path.encode()) > 100:  # the limit of a socket's path
            raise OSError(f"the path {path!r} is too long for a Unix domain socket")
        try:
            runtime.openDataChannelAt(java_secret, path)
        except Exception as exc:  # the JVM could not bind there
            raise OSError(str(exc)) from exc
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(ACCEPT_TIMEOUT_MILLIS / 1000)
            sock.connect(path)
        except BaseException:
            sock.close()
            runtime.acceptDataChannel(0)  # stop listening, and remove the file
            raise
        return _authenticate(sock, runtime, secret)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _authenticate(sock: socket.socket, runtime: Any, secret: bytes) -> socket.socket:
    """Presents ``secret`` on ``sock`` and waits for the JVM to accept it; the socket, blocking."""
    try:
        sock.sendall(secret)
        if not runtime.acceptDataChannel(ACCEPT_TIMEOUT_MILLIS):
            raise BridgeClosedError("the JVM did not accept the bridge's data channel")
        if _read_exactly(sock, 1) != ACCEPTED:
            raise BridgeClosedError("the bridge's data channel was not confirmed by the JVM")
        sock.settimeout(None)
    except BaseException:
        sock.close()
        raise
    return sock


def _send_parts(sock: socket.socket, header: bytes, payload: bytes) -> None:
    """``header`` then ``payload``, whole, without joining them (a large payload is not copied)."""
    parts = [memoryview(header), memoryview(payload)]
    while parts:
        sent = sock.sendmsg(parts)
        while parts and sent >= len(parts[0]):
            sent -= len(parts[0])
            parts.pop(0)
        if parts and sent:
            parts[0] = parts[0][sent:]


def _read_into(sock: socket.socket, view: memoryview) -> bool:
    """Fill ``view``; False at the end of the stream."""
    while view:
        n = sock.recv_into(view)
        if n == 0:
            return False
        view = view[n:]
    return True


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    buffer = bytearray(n)
    return bytes(buffer) if _read_into(sock, memoryview(buffer)) else b""
