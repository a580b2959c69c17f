"""The wire's protobuf messages (``Call``, ``Elements``), as spark/src/main/proto/rspy_connect.proto
defines them: classes built at first use from the descriptor set the Gradle build generates
from that file and puts in the Spark connectors' jar, with the ``protobuf`` runtime that PySpark
Connect needs (no generated Python, so no generated code tied to one runtime version)."""

from __future__ import annotations

import threading
import zipfile
from typing import Any

from ..._errors import ReactiveStreamsError
from .._configure import spark_connector_jars

__all__ = ["message"]

#: Where the build puts the descriptor set in the Spark connectors' jar.
DESCRIPTOR = "io/github/rspy/spark/connect/wire.binpb"
PACKAGE = "io.github.rspy.connect"

_lock = threading.Lock()
_classes: dict[str, Any] = {}


def message(name: str) -> Any:
    """The class of the wire's message ``name`` (``Call``, ``Elements``)."""
    made = _classes.get(name)
    if made is None:
        with _lock:
            if not _classes:
                _classes.update(_build())
            made = _classes[name]
    return made


def _build() -> dict[str, Any]:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    data = None
    for jar in spark_connector_jars():
        with zipfile.ZipFile(jar) as archive:
            if DESCRIPTOR in archive.namelist():
                data = archive.read(DESCRIPTOR)
                break
    if data is None:
        raise ReactiveStreamsError(
            f"the Spark connectors jar has no {DESCRIPTOR}: rebuild it (`source scripts/setup.sh`)"
        )
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        pool.Add(file)
    found = {}
    for name in ("Call", "Elements"):
        found[name] = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
    return found
