"""What the bridge needs of a backend (Py4J, JPype); one module implements each."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._settings import BridgeSettings

__all__ = ["Backend"]


class Backend(ABC):
    """One JVM connection. Implementations hold no module-level state."""

    name: str

    @property
    @abstractmethod
    def jvm(self) -> Any:
        """A package view of the JVM, as ``spark._jvm``."""

    @abstractmethod
    def new_runtime(self, settings: BridgeSettings) -> Any:
        """A new ``io.github.rspy.bridge.BridgeRuntime``."""

    @abstractmethod
    def proxy(self, obj: Any, interface: str) -> Any:
        """``obj`` as an implementation of the Java ``interface``, to pass to Java."""

    @abstractmethod
    def bytes_of(self, payload: Any) -> bytes | bytearray:
        """A Java ``byte[]`` argument as Python bytes."""

    @abstractmethod
    def java_bytes(self, data: bytes) -> Any:
        """``data`` as an argument for a Java ``byte[]`` parameter."""

    @abstractmethod
    def list_of(self, array: Any) -> list[Any]:
        """A Java ``Object[]`` argument as a Python list."""

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
        """Release what this backend owns (a JVM it started, sockets, threads)."""
