"""The wire's protobuf messages (``Call``, ``Status``, ``Elements``), as
spark/src/main/proto/rspy_connect.proto defines them: classes built at first use from the
descriptor set the Gradle build generates from that file and puts in the Spark connectors' jar,
with the ``protobuf`` runtime that PySpark Connect needs (no generated Python, so no generated
code tied to one runtime version)."""

from __future__ import annotations

import threading
import zipfile
from typing import Any

from ..._errors import ReactiveStreamsError
from .._configure import spark_connector_jars

__all__ = ["as_dict", "descriptor_set", "message"]

#: Where the build puts the descriptor set in the Spark connectors' jar.
DESCRIPTOR = "io/github/rspy/spark/connect/wire.binpb"
PACKAGE = "io.github.rspy.connect"

_lock = threading.Lock()
_classes: dict[str, Any] = {}


def message(name: str) -> Any:
    """The class of the wire's message ``name`` (``Call``, ``Status``, ``Elements``)."""
    made = _classes.get(name)
    if made is None:
        with _lock:
            if not _classes:
                _classes.update(_build())
            made = _classes[name]
    return made


def descriptor_set() -> Any:
    """The ``FileDescriptorSet`` of rspy_connect.proto, with its comments, from the Spark
    connectors' jar."""
    from google.protobuf import descriptor_pb2

    for jar in spark_connector_jars():
        with zipfile.ZipFile(jar) as archive:
            if DESCRIPTOR in archive.namelist():
                return descriptor_pb2.FileDescriptorSet.FromString(archive.read(DESCRIPTOR))
    raise ReactiveStreamsError(
        f"the Spark connectors jar has no {DESCRIPTOR}: rebuild it (`source scripts/setup.sh`)"
    )


def _build() -> dict[str, Any]:
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_set().file:
        pool.Add(file)
    found = {}
    for name in ("Call", "Status", "Elements"):
        found[name] = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
    return found


def as_dict(message: Any) -> dict[str, Any]:
    """Every field of ``message`` by its .proto name, so a reader finds each one, set or not:
    an unset field with presence (``optional``, a message) is None, a map a dict, a repeated
    field a list."""
    descriptor = message.DESCRIPTOR
    plan = _plans.get(descriptor)
    if plan is None:
        plan = [(field.name, _kind(field), field.default_value) for field in descriptor.fields]
        _plans[descriptor] = plan
    if not message.ListFields():  # most replies (an ok, a heartbeat): every field at its default
        return {name: _EMPTY[kind](default) for name, kind, default in plan}
    fields: dict[str, Any] = {}
    for name, kind, _ in plan:
        value = getattr(message, name)
        if kind == _PLAIN:
            fields[name] = value
        elif kind == _OPTIONAL:
            fields[name] = value if message.HasField(name) else None
        elif kind == _MESSAGE:
            fields[name] = as_dict(value) if message.HasField(name) else None
        elif kind == _LIST:
            fields[name] = list(value)
        elif kind == _MESSAGES:
            fields[name] = [as_dict(v) for v in value]
        elif kind == _MAP:
            fields[name] = dict(value)
        else:
            fields[name] = {k: as_dict(v) for k, v in value.items()}
    return fields


# How as_dict reads a field; each message's plan is made once (a reply path reads thousands a second).
_PLAIN, _OPTIONAL, _MESSAGE, _LIST, _MESSAGES, _MAP, _MESSAGE_MAP = range(7)
_plans: dict[Any, list[tuple[str, int, Any]]] = {}
# An unset field's value, by its kind: its default, None, or a new empty list or dict.
_EMPTY: list[Any] = [
    lambda default: default,
    lambda _: None,
    lambda _: None,
    lambda _: [],
    lambda _: [],
    lambda _: {},
    lambda _: {},
]


def _kind(field: Any) -> int:
    kind = field.message_type
    if kind is not None and kind.GetOptions().map_entry:
        return _MESSAGE_MAP if kind.fields_by_name["value"].message_type else _MAP
    if field.is_repeated:
        return _MESSAGES if kind else _LIST
    if kind is not None:
        return _MESSAGE
    return _OPTIONAL if field.has_presence else _PLAIN
