"""Arrow on the Python side (the Java ``ArrowRows``): a batch of JVM rows arrives as one Arrow
record batch in Arrow's IPC stream format, and leaves here as tuples (from ``Object[]``) or
dicts (from ``Map``), the types the pickled path gives; JVM ``VectorSchemaRoot``s arrive as
``pyarrow.RecordBatch``es. pyarrow is optional: without it the
JVM is told to pickle rows as before."""

from __future__ import annotations

import importlib.util
import struct
from typing import Any

__all__ = ["available", "decode_batches", "decode_rows"]

TUPLES = 0x74  # 't'
DICTS = 0x64  # 'd'


def available() -> bool:
    """Whether pyarrow can be imported here."""
    return importlib.util.find_spec("pyarrow") is not None


def decode_rows(view: memoryview) -> list[Any]:
    """The rows of a tagged Arrow batch (``view`` after its ``A`` tag: the kind, then the stream)."""
    import pyarrow

    kind = view[0]
    with pyarrow.ipc.open_stream(pyarrow.py_buffer(view[1:])) as reader:
        batch = reader.read_next_batch()
    columns = [column.to_pylist() for column in batch.columns]
    if kind == TUPLES:
        return list(zip(*columns, strict=True))
    if kind != DICTS:
        raise ValueError(f"unknown kind of Arrow rows {kind!r} from the JVM")
    names = batch.schema.names
    return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]


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
