"""Batches on the wire: one ``bytes`` per batch, led by a tag (see the Java ``Codec``).

``q``: little-endian int64s (every element an int that fits), ``d``: float64s, ``P``: a pickle
of a list (Pyrolite reads and writes it on the JVM side; dates, times and UUIDs as `_values`
makes them), ``A``: rows as Arrow, ``B``: Arrow record batches (see `_arrow`). A JVM pickle may
hold references to JVM objects with no Python equivalent, as persistent ids: indexes in the list
of references that crosses beside it.
Arrays decode in C, which matters: this is the bridge's hot path.
"""

from __future__ import annotations

import io
import pickle
import sys
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from ._arrow import RowBatch, decode_batches, decode_rows, encode_batches, encode_rows, is_record_batch_type
from ._values import reducers

__all__ = ["Batch", "decode", "decode_batch", "encode", "encode_elements"]

PICKLE_PROTOCOL = 3  # bytes as BINBYTES, which Pyrolite turns into byte[]
_SWAP = sys.byteorder != "little"


class _JvmUnpickler(pickle.Unpickler):
    """Reads Pyrolite's pickles: a Java ``byte[]`` (pickled as ``bytearray``) becomes ``bytes``,
    and a persistent id the reference at that index of ``references``."""

    def __init__(self, file: io.BytesIO, references: Sequence[Any] = ()) -> None:
        super().__init__(file)
        self._references = references

    def find_class(self, module: str, name: str) -> Any:
        if name == "bytearray" and module in ("__builtin__", "builtins"):
            return _bytes_of_latin1
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        if type(pid) is not int or not 0 <= pid < len(self._references):
            raise pickle.UnpicklingError(f"a reference {pid!r} the batch does not hold")
        return self._references[pid]


class _JvmPickler(pickle.Pickler):
    """Pickles for Pyrolite: dates, times and UUIDs as Java's own (`_values`)."""

    dispatch_table = reducers()


def _bytes_of_latin1(text: str = "", encoding: str = "latin-1") -> bytes:
    return text.encode(encoding)


class Batch(Protocol):
    """What a batch from the JVM is to its delivery: its length, and its elements, once."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...


def decode(payload: Any) -> Sequence[Any]:
    """A batch from the JVM (bytes-like): a list, or for numbers an ``array``."""
    batch = decode_batch(payload)
    return list(batch) if isinstance(batch, RowBatch) else batch  # type: ignore[return-value]


def decode_batch(payload: Any, references: Sequence[Any] = ()) -> Batch:
    """`decode`'s batch as delivery takes it: for numbers an ``array``, for rows a `RowBatch`
    (their elements made one by one as they are iterated, which is all delivery does).
    ``references``: the JVM objects a pickle's persistent ids name."""
    view = memoryview(payload)
    tag = view[0]
    if tag == 0x71 or tag == 0x64:  # 'q', 'd'
        values = array("q" if tag == 0x71 else "d")
        values.frombytes(view[1:])
        if _SWAP:
            values.byteswap()
        return values
    if tag == 0x41:  # 'A': rows as Arrow
        return decode_rows(view[1:])
    if tag == 0x42:  # 'B': Arrow record batches
        return decode_batches(view[1:])
    if tag != 0x50:  # 'P'
        raise ValueError(f"unknown batch tag {tag!r} from the JVM")
    return _JvmUnpickler(io.BytesIO(view[1:]), references).load()  # type: ignore[no-any-return]


def encode(batch: list[Any], kinds: set[type] | None = None) -> bytes:
    """A batch of values as bytes for the JVM; raises (``pickle.PicklingError``, ``TypeError``)
    if an element is not a value. ``kinds``: the set of its elements' types, if known."""
    if kinds is None:
        kinds = set(map(type, batch))
    if kinds == {int}:
        try:
            values = array("q", batch)
        except OverflowError:
            pass  # beyond 64 bits: the pickle carries them as BigInteger
        else:
            return b"q" + _little_endian(values)
    elif kinds == {float}:
        return b"d" + _little_endian(array("d", batch))
    out = io.BytesIO()
    out.write(b"P")
    _JvmPickler(out, PICKLE_PROTOCOL).dump(batch)
    return out.getvalue()


def encode_elements(batch: list[Any]) -> bytes:
    """A batch of elements as the bridge's tagged bytes, for another channel than the bridge's own
    (Spark Connect's pushes): rows as Arrow when they fit (tuples of one width, or dicts of the
    same keys, of plain values), ``pyarrow.RecordBatch``es as Arrow IPC (all of the batch's
    elements, or none: ``TypeError``), anything else as `encode` makes it."""
    kinds = set(map(type, batch))
    if any(map(is_record_batch_type, kinds)):
        if not all(map(is_record_batch_type, kinds)):
            raise TypeError(
                "a batch of elements holds pyarrow.RecordBatches and other values: it may hold one kind"
            )
        return encode_batches(batch)
    if kinds == {tuple} or kinds == {dict}:
        arrow = encode_rows(batch, kinds)
        if arrow is not None:
            return arrow
    return encode(batch, kinds)


def _little_endian(values: array[Any]) -> bytes:
    if _SWAP:
        values.byteswap()
    return values.tobytes()
