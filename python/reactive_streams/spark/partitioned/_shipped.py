"""What Spark ships to its Python workers for `register_source`, `register_sink` and
`map_partitions`: a data source, its reader or writer, and ``mapInArrow``'s function, all made of
this module's classes and functions, which unpickle with PySpark alone.

Spark pickles them with cloudpickle where they are made (the client, the driver's planner
worker) and unpickles them in other Python workers (the driver's, the executors'). This module
is pickled by value (``register_pickle_by_value``), and imports nothing of this library at its
top, so unpickling needs no ``reactive_streams``: a worker without it fails the task with
`library_not_shipped`'s message, which says what to ship, when the task first runs, not with
cloudpickle's ``ModuleNotFoundError`` while Spark unpickles the task. What the user gave (a
factory, a processor's factory) travels as cloudpickle's bytes inside, read once the library is
found. The work itself is done by the library's modules, imported as it starts.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

from pyspark import cloudpickle
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
)

__all__ = ["library_not_shipped", "partition_function", "sink_class", "source_class"]

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]

_SHIP = (
    "ship it to the workers with pyarrow: an environment packed with them (venv-pack), in "
    "spark.archives=env.tar.gz#environment with PYSPARK_PYTHON=./environment/bin/python, or "
    "install reactive-streams-py[arrow] into the workers' Python (docs/deploy.md, "
    '"Shipping Python to the workers")'
)


def library_not_shipped(where: str, error: ImportError) -> str:
    """What a worker without this library says: where, which Python, what to ship."""
    return (
        f"{where}: this worker's Python ({sys.executable}, Python {sys.version.split()[0]}) cannot "
        f"import reactive_streams ({error}): {_SHIP}"
    )


def _library(module: str, where: str) -> Any:
    """The library's ``module``, or a RuntimeError saying what to ship."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is None or exc.name.split(".")[0] != "reactive_streams":
            raise
        raise RuntimeError(library_not_shipped(where, exc)) from None


# -- register_source ------------------------------------------------------------------------


class ShippedSource(DataSource):
    """The data source `register_source` registers a subclass of: its name, schema (JSON) and
    the source's arguments (`_source.SourceSpec`, pickled)."""

    _name: str
    _schema_json: str
    _spec: bytes

    @classmethod
    def name(cls) -> str:
        return cls._name

    def schema(self) -> Any:
        from pyspark.sql.types import StructType

        return StructType.fromJson(json.loads(self._schema_json))

    def streamReader(self, schema: Any) -> Any:
        return _reader_class()(type(self)._name, type(self)._spec, self.options, schema)


def _reader_class() -> type:
    """`ReaderMethods` as a stream reader of the PySpark that runs it (the server's, not the
    client's that registered the source: one before 4.2 has no Trigger.AvailableNow)."""
    try:
        from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
    except ImportError:
        bases: tuple[type, ...] = (ReaderMethods, DataSourceStreamReader)
    else:
        bases = (ReaderMethods, DataSourceStreamReader, SupportsTriggerAvailableNow)
    return type("ShippedReader", bases, {"__module__": ReaderMethods.__module__})


class ReaderMethods:
    """The source's reader: each call is the library's reader's (`_source.source_reader`),
    made on the first call in each worker and not pickled with this one."""

    def __init__(self, name: str, spec: bytes, options: Any, schema: Any) -> None:
        self._name, self._spec, self._options, self._schema = name, spec, options, schema
        self._reader: Any = None

    def _real(self) -> Any:
        if self._reader is None:
            where = f"source {self._name!r}"
            source = _library("reactive_streams.spark.partitioned._source", where)
            self._reader = source.source_reader(self._spec, self._options, self._schema)
        return self._reader

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_reader": None}

    def initialOffset(self) -> Any:
        return self._real().initialOffset()

    def getDefaultReadLimit(self) -> Any:
        return self._real().getDefaultReadLimit()

    def latestOffset(self, start: Any, limit: Any) -> Any:
        return self._real().latestOffset(start, limit)

    def prepareForTriggerAvailableNow(self) -> None:
        self._real().prepareForTriggerAvailableNow()

    def reportLatestOffset(self) -> Any:
        return self._real().reportLatestOffset()

    def partitions(self, start: Any, end: Any) -> Any:
        return self._real().partitions(start, end)

    def read(self, partition: Any) -> Any:
        return self._real().read(partition)

    def commit(self, end: Any) -> None:
        self._real().commit(end)

    def stop(self) -> None:
        if self._reader is not None:
            self._reader.stop()


def source_class(name: str, schema_json: str, spec: bytes) -> type:
    """The `ShippedSource` registered as ``name``."""
    return _named(name, ShippedSource, _name=name, _schema_json=schema_json, _spec=spec)


# -- register_sink --------------------------------------------------------------------------


class ShippedSink(DataSource):
    """The data source `register_sink` registers a subclass of: its name and the sink's
    arguments (`_sink.SinkSpec`, pickled)."""

    _name: str
    _spec: bytes

    @classmethod
    def name(cls) -> str:
        return cls._name

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        return ShippedStreamWriter(type(self)._name, type(self)._spec, schema.json())

    def writer(self, schema: Any, overwrite: bool) -> Any:
        return ShippedWriter(type(self)._name, type(self)._spec, schema.json())


def _write(name: str, spec: bytes, schema_json: str, rows: Iterator[Any]) -> Any:
    sink = _library("reactive_streams.spark.partitioned._sink", f"sink {name!r}")
    return sink.write_task(spec, schema_json, rows)


class ShippedStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, name: str, spec: bytes, schema_json: str) -> None:
        self._name, self._spec, self._schema_json = name, spec, schema_json

    def write(self, iterator: Iterator[Any]) -> Any:
        return _write(self._name, self._spec, self._schema_json, iterator)

    def commit(self, messages: list[Any], batchId: int) -> None:
        # Each task's subscriber has finished; nothing is staged in the driver. What the tasks
        # report goes to the query's figures (rss.sink_progress), on the driver's host: never
        # at the batch's cost, so a driver's Python without the library only loses them.
        try:
            figures = _library("reactive_streams.spark.partitioned._sink_figures", f"sink {self._name!r}")
        except RuntimeError as exc:
            logging.getLogger("reactive_streams.spark").warning("no figures of batch %d: %s", batchId, exc)
            return
        figures.record_commit(self._name, messages, batchId)

    def abort(self, messages: list[Any], batchId: int) -> None:
        pass  # a subscriber's writes are its own: the (partition, batch_id) key lets it redo them


class ShippedWriter(DataSourceArrowWriter):
    def __init__(self, name: str, spec: bytes, schema_json: str) -> None:
        self._name, self._spec, self._schema_json = name, spec, schema_json

    def write(self, iterator: Iterator[Any]) -> Any:
        return _write(self._name, self._spec, self._schema_json, iterator)


def sink_class(name: str, spec: bytes) -> type:
    """The `ShippedSink` registered as ``name``."""
    return _named(name, ShippedSink, _name=name, _spec=spec)


# -- map_partitions -------------------------------------------------------------------------


def partition_function(spec: bytes, out_json: str, rows: bool, prefetch: int) -> Callable[[Any], Any]:
    """``mapInArrow``'s function: the library's `_processor.run_partition` over a task's batches."""

    def run(inputs: Iterator[Any]) -> Iterator[Any]:
        processor = _library("reactive_streams.spark.partitioned._processor", "map_partitions")
        return processor.run_partition(spec, inputs, out_json, rows, prefetch)  # type: ignore[no-any-return]

    return run


def _named(name: str, base: type, **attributes: Any) -> type:
    """A subclass of ``base`` named for ``name``, holding ``attributes``."""
    safe = "".join(c if c.isalnum() else "_" for c in name)
    return type(f"{base.__name__}_{safe}", (base,), {"__module__": base.__module__, **attributes})
