"""Python's end of the bridge's data channel (the Java ``DataChannel``), on the Py4J backends.

Py4J carries a ``byte[]`` as base64 text, at about 20 MB/s. Beside it, one loopback socket
per bridge carries large batches as raw bytes, framed as a stream id (int64), a length
(int32), little-endian, and the batch. The JVM writes a stream's frame and then calls that
stream's `PythonSink.onNextFrame` over Py4J, which takes the frame from here: the call keeps
the signals in order and brings the demand back, as before; only the bytes move here.

One reader thread per bridge reads frames as they come and keeps each until its call takes
it. A stream's drain waits for its call, so at most one frame per stream is held: no more than
the JVM's drain threads at once, each within the outstanding demand.
"""

from __future__ import annotations

import logging
import secrets
import socket
import struct
import threading
from typing import Any

from ._errors import BridgeClosedError

__all__ = ["DataChannel"]

logger = logging.getLogger("reactive_streams.jvm")

_HEADER = struct.Struct("<qi")
SECRET_BYTES = 32
ACCEPT_TIMEOUT_MILLIS = 10_000
ACCEPTED = b"\x01"


class DataChannel:
    """One bridge's data socket, Python's reading end: `connect` it, `take` frames, `close`."""

    def __init__(self, sock: socket.socket) -> None:
        self._socket = sock
        self._frames: dict[int, bytearray] = {}
        self._arrived = threading.Condition()
        self._ended: str | None = None  # why no more frames will come
        self.taken = 0  # frames delivered: a statistic, for tests and benchmarks
        self._reader = threading.Thread(target=self._read_frames, name="rs-bridge-data", daemon=True)
        self._reader.start()

    @classmethod
    def connect(cls, runtime: Any, java_bytes: Any) -> DataChannel:
        """Asks the JVM side (a ``BridgeRuntime``) to listen on a loopback port, connects to it
        and presents a new secret, as PySpark's ``local_connect_and_auth`` does; raises
        `BridgeClosedError` if the JVM does not accept it."""
        secret = secrets.token_bytes(SECRET_BYTES)
        port = int(runtime.openDataChannel(java_bytes(secret)))
        sock = socket.create_connection(("127.0.0.1", port), timeout=ACCEPT_TIMEOUT_MILLIS / 1000)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(secret)
            if not runtime.acceptDataChannel(ACCEPT_TIMEOUT_MILLIS):
                raise BridgeClosedError("the JVM did not accept the bridge's data channel")
            if _read_exactly(sock, 1) != ACCEPTED:
                raise BridgeClosedError("the bridge's data channel was not confirmed by the JVM")
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        return cls(sock)

    @property
    def open(self) -> bool:
        return self._ended is None

    def take(self, stream_id: int) -> bytearray:
        """The frame the JVM wrote for ``stream_id`` before its call; waits for it to arrive.
        Raises `BridgeClosedError` if the channel ends first."""
        with self._arrived:
            while True:
                frame = self._frames.pop(stream_id, None)
                if frame is not None:
                    self.taken += 1
                    return frame
                if self._ended is not None:
                    raise BridgeClosedError(f"the bridge's data channel closed: {self._ended}")
                self._arrived.wait()

    @property
    def held(self) -> int:
        """Frames arrived and not yet taken."""
        with self._arrived:
            return len(self._frames)

    def close(self) -> None:
        """Close the socket and stop the reader (the JVM closes its end with the runtime)."""
        self._end("the bridge was closed")
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # not connected any more
        self._socket.close()
        if self._reader is not threading.current_thread():
            self._reader.join(timeout=10)

    def _read_frames(self) -> None:
        header = bytearray(_HEADER.size)
        try:
            while True:
                if not _read_into(self._socket, memoryview(header)):
                    self._end("the JVM closed it")
                    return
                stream_id, length = _HEADER.unpack(header)
                if length < 1:
                    raise ValueError(f"a frame of {length} bytes for stream {stream_id}")
                frame = bytearray(length)
                if not _read_into(self._socket, memoryview(frame)):
                    self._end("the JVM closed it within a frame")
                    return
                with self._arrived:
                    self._frames[stream_id] = frame
                    self._arrived.notify_all()
        except (OSError, ValueError) as exc:
            if self._ended is None:
                logger.warning("the bridge's data channel failed: %s", exc)
            self._end(str(exc))

    def _end(self, reason: str) -> None:
        with self._arrived:
            if self._ended is None:
                self._ended = reason
            self._frames.clear()
            self._arrived.notify_all()


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
