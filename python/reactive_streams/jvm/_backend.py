"""What the bridge needs of a backend (Py4J, JPype), one module implementing each, and the
Java interfaces that Python objects implement for the bridge, by name."""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Final

from ._channel import DataChannel
from ._settings import BridgeSettings

__all__ = ["Backend", "JavaInterface"]


class JavaInterface:
    """The bridge's Java interfaces that Python implements; `Backend.proxy` makes the proxies.
    (The TCK passes its own: ``io.github.rspy.tck.TckFactory`` and ``PythonPuppet``.)"""

    PYTHON_SINK: Final = "io.github.rspy.bridge.PythonSink"
    """Called by ``ToPythonSubscriber``; implemented by `PythonSink`."""
    PYTHON_SOURCE: Final = "io.github.rspy.bridge.PythonSource"
    """Called by ``FromPythonPublisher.Handle``; implemented by `PythonSource`."""
    PYTHON_PUBLISHER_FACTORY: Final = "io.github.rspy.bridge.PythonPublisherFactory"
    """Called by ``FromPythonPublisher``; implemented by `PythonPublisherFactory`."""
    CLOSE_LISTENER: Final = "io.github.rspy.bridge.BridgeRuntime$CloseListener"
    """Called by ``BridgeRuntime.close(reason)``; implemented by the bridge's close listener."""
    PYTHON_THREAD_STATES: Final = "io.github.rspy.bridge.PythonThreadStates"
    """Called by each drain thread as it starts and ends, on JPype; implemented in `_jpype`."""


class Backend(ABC):
    """One JVM connection. Implementations hold no module-level state."""

    name: str
    in_process = False
    """Whether the JVM shares this process (JPype): Arrow batches then cross through the C Data
    Interface, their buffers shared."""

    @property
    @abstractmethod
    def jvm(self) -> Any:
        """A package view of the JVM, as ``spark._jvm``."""

    def is_package(self, value: Any) -> bool:
        """Whether ``value``, from the `jvm` view, is a package (on Py4J, also a name that is
        no class)."""
        return False

    @abstractmethod
    def new_runtime(self, settings: BridgeSettings) -> Any:
        """A new ``io.github.rspy.bridge.BridgeRuntime``."""

    @abstractmethod
    def proxy(self, obj: Any, interface: str) -> Any:
        """``obj`` as an implementation of the Java ``interface`` (a `JavaInterface` name, or
        another interface's), to pass to Java. Java calls ``obj``'s methods by their Java names,
        and the proxy holds ``obj`` for as long as Java holds the proxy."""

    def open_data_channel(self, runtime: Any) -> DataChannel | None:
        """The bridge's data channel beside the backend's calls, if it needs one (Py4J's
        text protocol does; an in-process JVM does not)."""
        return None

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The JVM's process, if this backend started it."""
        return None

    @abstractmethod
    def bytes_of(self, payload: Any) -> bytes | bytearray:
        """A Java ``byte[]`` argument as Python bytes."""

    @abstractmethod
    def java_bytes(self, data: bytes) -> Any:
        """``data`` as an argument for a Java ``byte[]`` parameter."""

    @abstractmethod
    def list_of(self, array: Any) -> list[Any]:
        """A Java ``Object[]`` argument as a Python list."""

    def long_array(self, values: list[int]) -> Any:
        """A Java ``long[]`` of ``values`` (the in-process backend's, for C Data addresses)."""
        raise NotImplementedError(f"the {self.name} backend passes no long[]")

    @abstractmethod
    def object_array(self, items: list[Any]) -> Any:
        """A Java ``Object[]`` holding ``items`` (JVM references or values)."""

    @abstractmethod
    def is_jvm_object(self, value: Any) -> bool:
        """Whether ``value`` is a reference to a JVM object."""

    def on_death(self, callback: Callable[[str], None]) -> None:  # noqa: B027 - optional hook
        """Call ``callback(reason)`` once if the JVM dies (backends that can tell)."""

    def box(self, value: Any) -> Any:
        """``value`` as an argument for a Java ``Object`` parameter, boxed as the bridge's codec
        boxes it (an int as Integer when it fits in 32 bits, else Long), so that values compare
        equal in Java however they crossed. Py4J does this itself."""
        return value

    def error_for_java(self, exc: BaseException) -> BaseException:
        """What to raise from a Python method Java called, so that Java sees ``exc`` with its
        Python type, message and traceback (Py4J does this itself)."""
        return exc

    @abstractmethod
    def call_failed(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by a call into the JVM, means the JVM or gateway is gone."""

    @abstractmethod
    def close(self) -> None:
        """Release what this backend owns (a JVM it started, sockets, threads). Idempotent."""
