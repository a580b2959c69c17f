"""What `register_source`, `register_sink` and `map_partitions` share: checking a name, a
schema and what must be pickled to the executors, and the data source class holding them."""

from __future__ import annotations

import re
from typing import Any

from ..._rules import describe
from .._checks import is_connect
from .._connect import reach_server

__all__ = ["check_name", "check_picklable", "data_source_class", "parse_schema", "reached"]


def reached(spark: Any) -> None:
    """On Spark Connect, a server that refuses this client, or TLS that fails, raised at once in
    one line (`reach_server`), not after PySpark's own calls have retried for minutes."""
    if is_connect(spark):
        reach_server(spark)


def check_name(name: object, caller: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"{caller}: name must be a non-empty str (the format's name), got {describe(name)}")


def parse_schema(spark: Any, schema: Any, caller: str) -> Any:
    """``schema`` as a ``StructType``: one already, or a DDL string parsed by the session."""
    from pyspark.sql.types import StructType

    if isinstance(schema, str):
        if is_connect(spark):
            reached(spark)
            schema = spark._parse_ddl(schema)
        else:
            from pyspark.sql.types import _parse_datatype_string

            schema = _parse_datatype_string(schema)
    if not isinstance(schema, StructType):
        raise TypeError(f"{caller}: schema must be a StructType or a DDL string, got {describe(schema)}")
    return schema


def check_picklable(caller: str, **functions: Any) -> None:
    """Pickle each function as Spark will (cloudpickle), so that one that cannot go to the
    executors (it holds a lock, a socket, a SparkSession) is named now, not in a task."""
    from pyspark import cloudpickle

    for argument, function in functions.items():
        if function is None:
            continue
        try:
            cloudpickle.dumps(function)  # type: ignore[no-untyped-call]
        except Exception as exc:
            raise TypeError(
                f"{caller}: {argument} must be picklable, to run in Spark's executors: "
                f"{type(exc).__name__}: {exc}"
            ) from exc


def data_source_class(name: str, base: type, **attributes: Any) -> type:
    """A subclass of ``base`` named for ``name`` whose class attributes hold ``attributes``.
    It is made here, not importable by name, so Spark's cloudpickle carries it by value, with
    the user's functions, while ``base`` is imported from this package in the workers."""
    safe = re.sub(r"\W", "_", name)
    return type(
        f"{base.__name__}_{safe}", (base,), {"_name": name, "__module__": base.__module__, **attributes}
    )
