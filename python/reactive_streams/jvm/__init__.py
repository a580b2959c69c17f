"""The JVM bridge: Python ⇄ ``org.reactivestreams`` (and ``java.util.concurrent.Flow``) over
Spark's Py4J gateway, a standalone Py4J gateway, or JPype.

    from reactive_streams.jvm import Bridge
    with Bridge.jpype(classpath=["reactor-core.jar"]) as bridge:
        flux = bridge.jvm.reactor.core.publisher.Flux.range(0, 1000)
        for x in bridge.from_jvm(flux).iterate():
            ...
"""

from ._bridge import Bridge as Bridge
from ._classpath import ClasspathLike as ClasspathLike
from ._classpath import classpath_entries as classpath_entries
from ._codec import decode as decode_values
from ._codec import encode as encode_values
from ._codec import encode_elements as encode_elements
from ._errors import BridgeClosedError as BridgeClosedError
from ._errors import JvmTypeError as JvmTypeError
from ._errors import JvmValueError as JvmValueError
from ._errors import error_from_java as error_from_java
from ._jars import bridge_classpath as bridge_classpath
from ._members import java_member as java_member
from ._settings import BridgeSettings as BridgeSettings
from ._spark_gateway import require_library_jars as require_library_jars
from ._view import JvmClassNotFoundError as JvmClassNotFoundError

__all__ = [
    "Bridge",
    "BridgeClosedError",
    "BridgeSettings",
    "ClasspathLike",
    "JvmClassNotFoundError",
    "JvmTypeError",
    "JvmValueError",
    "bridge_classpath",
    "classpath_entries",
    "decode_values",
    "encode_elements",
    "encode_values",
    "error_from_java",
    "java_member",
    "require_library_jars",
]
