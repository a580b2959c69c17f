"""What `register_source`, `register_sink` and `map_partitions` share: checking a name, a
schema and what must be pickled to the executors, and pickling it."""

from __future__ import annotations

from typing import Any

from ..._errors import ReactiveStreamsError
from ..._rules import describe
from .._checks import is_connect
from .._connect import reach_server

__all__ = [
    "check_name",
    "check_picklable",
    "in_query_function",
    "parse_schema",
    "pickled",
    "reached",
]

#: Spark's error for a call that analyses a plan inside a pipeline's query function.
_IN_QUERY_FUNCTION = "ATTEMPT_ANALYSIS_IN_PIPELINE_QUERY_FUNCTION"


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
            schema = _parsed_by_server(spark, schema, caller)
        else:
            from pyspark.sql.types import _parse_datatype_string

            schema = _parse_datatype_string(schema)
    if not isinstance(schema, StructType):
        raise TypeError(f"{caller}: schema must be a StructType or a DDL string, got {describe(schema)}")
    return schema


def _parsed_by_server(spark: Any, ddl: str, caller: str) -> Any:
    try:
        return spark._parse_ddl(ddl)
    except Exception as exc:
        if not in_query_function(exc):
            raise
        raise ReactiveStreamsError(
            f"{caller}: the schema {ddl!r} is a DDL string, which only the server can parse, and a "
            "pipeline's query function may not ask it: pass a StructType, made outside the function "
            f"(at the top of the file: SCHEMA = StructType.fromDDL({ddl!r}))"
        ) from None


def in_query_function(error: BaseException) -> bool:
    """Whether ``error`` is Spark's refusal of a call that analyses a plan inside a pipeline's
    query function (a ``@dp.table`` or ``@dp.append_flow`` function)."""
    return _IN_QUERY_FUNCTION in str(error)


def pickled(value: Any) -> bytes:
    """``value`` as Spark's cloudpickle pickles it: what a shipped data source or function holds
    of the user's (`_shipped`), read in the workers once this library is found there."""
    from pyspark import cloudpickle

    return cloudpickle.dumps(value)  # type: ignore[no-untyped-call,no-any-return]


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
