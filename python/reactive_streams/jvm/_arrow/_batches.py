"""Arrow record batches as elements on the Python side (the Java ``ArrowBatches`` and
``ArrowCData``): JVM ``VectorSchemaRoot``s arrive as ``pyarrow.RecordBatch``es, and
``pyarrow.RecordBatch``es leave for the JVM, either as IPC streams in bytes or, in one process
(JPype), through the C Data Interface with no copy. Also the one IPC writer that rows (`_rows`)
and rows against a schema (`_schema`) share."""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Sequence
from typing import Any

__all__ = [
    "ExportedBatches",
    "decode_batches",
    "encode_batches",
    "import_c_batches",
    "ipc_stream",
    "is_record_batch",
    "is_record_batch_type",
]


def decode_batches(view: memoryview) -> list[Any]:
    """JVM Arrow batches (``view`` after its ``B`` tag: each batch's IPC stream led by its
    int32 length) as ``pyarrow.RecordBatch``es, which read the bytes in place."""
    import pyarrow

    batches = []
    at = 0
    while at < len(view):
        (length,) = struct.unpack_from("<i", view, at)
        at += 4
        with pyarrow.ipc.open_stream(pyarrow.py_buffer(view[at : at + length])) as reader:
            batches.append(reader.read_next_batch())
        at += length
    return batches


def is_record_batch_type(kind: type) -> bool:
    """Whether ``kind`` is ``pyarrow.RecordBatch`` (without importing pyarrow to ask)."""
    return kind.__name__ == "RecordBatch" and kind.__module__.startswith("pyarrow")


def is_record_batch(item: Any) -> bool:
    return is_record_batch_type(type(item))


def encode_batches(batch: list[Any]) -> bytes:
    """``pyarrow.RecordBatch``es for the JVM: ``B``, then each one's IPC stream led by its length."""
    parts = [b"B"]
    for record_batch in batch:
        stream = ipc_stream(record_batch)
        parts.append(struct.pack("<i", len(stream)))
        parts.append(stream)
    return b"".join(parts)


def ipc_stream(record_batch: Any) -> bytes:
    """One ``pyarrow.RecordBatch`` as an Arrow IPC stream (its schema, the batch, the end)."""
    import pyarrow

    sink = pyarrow.BufferOutputStream()
    with pyarrow.ipc.new_stream(sink, record_batch.schema) as writer:
        writer.write_batch(record_batch)
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


# The C Data Interface's structs (arrow/c/abi.h): their sizes, and where their release callback is.
_ARRAY_BYTES, _ARRAY_RELEASE = 80, 64
_SCHEMA_BYTES, _SCHEMA_RELEASE = 72, 56
_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def import_c_batches(addresses: Sequence[int]) -> list[Any]:
    """Record batches the JVM exported through the C Data Interface (each one's array and schema
    address, in turn), as ``pyarrow.RecordBatch``es sharing the JVM's buffers, which go back to
    the JVM when the batches are collected."""
    import pyarrow

    import_c = pyarrow.RecordBatch._import_from_c
    return [import_c(addresses[at], addresses[at + 1]) for at in range(0, len(addresses), 2)]


class ExportedBatches:
    """``pyarrow.RecordBatch``es exported through the C Data Interface into structs of this
    object's, for the JVM to import during the call it is given to; `close` then releases any
    struct the JVM did not import (its buffers come back) and frees them all."""

    def __init__(self, batches: Sequence[Any]) -> None:
        self._structs: list[tuple[Any, int]] = []
        self.addresses: list[int] = []
        for batch in batches:
            array = ctypes.create_string_buffer(_ARRAY_BYTES)
            schema = ctypes.create_string_buffer(_SCHEMA_BYTES)
            self._structs += [(array, _ARRAY_RELEASE), (schema, _SCHEMA_RELEASE)]
            batch._export_to_c(ctypes.addressof(array), ctypes.addressof(schema))
            self.addresses += [ctypes.addressof(array), ctypes.addressof(schema)]

    def __enter__(self) -> ExportedBatches:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        for memory, release_at in self._structs:
            release = ctypes.c_void_p.from_buffer(memory, release_at).value
            if release:  # not imported (moved) by the JVM: release it here
                _RELEASE(release)(ctypes.addressof(memory))
        self._structs.clear()
