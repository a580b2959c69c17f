"""The JPype backend: the process's own JVM, in-process."""

from __future__ import annotations

import ctypes
import faulthandler
import logging
import os
import threading
from pathlib import Path
from typing import Any

from .._errors import ReactiveStreamsError
from ._backend import Backend, JavaInterface
from ._errors import python_error_parts
from ._jars import ARROW_JVM_OPTIONS, BRIDGE_CLASS, arrow_classpath, bridge_classpath
from ._settings import BridgeSettings

__all__ = ["JPypeBackend"]

logger = logging.getLogger("reactive_streams.jvm")


class JPypeBackend(Backend):
    """JPype's in-process JVM. Java calls Python proxies on its own threads, holding the GIL."""

    name = "jpype"
    in_process = True

    @classmethod
    def join(cls, classpath: list[str]) -> JPypeBackend:
        import jpype

        if not jpype.isJVMStarted():
            _stop_faulthandler_for_the_jvm()
            jpype.startJVM(
                *ARROW_JVM_OPTIONS,
                classpath=[*bridge_classpath(), *arrow_classpath(), *classpath],
                convertStrings=False,
            )
        else:
            loaded = {
                str(Path(p).resolve())
                for p in str(jpype.java.lang.System.getProperty("java.class.path")).split(os.pathsep)
                if p
            }
            missing = [p for p in classpath if str(Path(p).resolve()) not in loaded]
            try:
                jpype.JClass(BRIDGE_CLASS)
            except Exception:
                missing = [*bridge_classpath(), *missing]
            if missing:
                raise ReactiveStreamsError(
                    "this process's JVM is already running without "
                    + ", ".join(missing)
                    + " on its classpath, and JPype cannot add to it; start it with "
                    "reactive_streams.jvm.bridge_classpath() and your jars (or call Bridge.jpype() first)"
                )
        return cls()

    @property
    def jvm(self) -> Any:
        return _PackageView()

    def is_package(self, value: Any) -> bool:
        import jpype

        return isinstance(value, jpype.JPackage)

    def new_runtime(self, settings: BridgeSettings) -> Any:
        import jpype

        runtime = jpype.JClass(BRIDGE_CLASS)(settings.max_batch, settings.window, settings.threads)
        runtime.lingerMicros(settings.linger_micros)
        runtime.keepPythonThreadStates(self.proxy(_ThreadStates(), JavaInterface.PYTHON_THREAD_STATES))
        runtime.callPythonFromOneThreadAtATime()  # in one process, the GIL admits one anyway
        return runtime

    def proxy(self, obj: Any, interface: str) -> Any:
        import jpype

        return jpype.JProxy(interface, inst=obj)

    def bytes_of(self, payload: Any) -> bytes | bytearray:
        return memoryview(payload)  # type: ignore[return-value]  # zero-copy; pickle reads it

    def java_bytes(self, data: bytes) -> Any:
        import jpype

        return jpype.JArray(jpype.JByte)(data)  # a buffer copy; the implicit conversion is per byte

    def list_of(self, array: Any) -> list[Any]:
        return list(array)

    def long_array(self, values: list[int]) -> Any:
        """A Java ``long[]`` of ``values``."""
        import jpype

        return jpype.JArray(jpype.JLong)(values)

    def object_array(self, items: list[Any]) -> Any:
        import jpype

        return jpype.JArray(jpype.JObject)(items)

    def is_jvm_object(self, value: Any) -> bool:
        import jpype

        return isinstance(value, jpype.JObject)

    def box(self, value: Any) -> Any:
        import jpype

        if type(value) is int:
            boxed = "java.lang.Integer" if -(2**31) <= value < 2**31 else "java.lang.Long"
            if -(2**63) <= value < 2**63:
                return jpype.JObject(value, jpype.JClass(boxed))
        return value

    def error_for_java(self, exc: BaseException) -> BaseException:
        import jpype

        _, name, message, text, _ = python_error_parts(exc)
        error: BaseException = jpype.JClass("io.github.rspy.bridge.PythonException")(name, message, text)
        return error  # JPype raises Java exceptions from Python as themselves

    def call_failed(self, exc: BaseException) -> bool:
        import jpype

        return not jpype.isJVMStarted()

    def close(self) -> None:
        pass  # the JVM stays: JPype cannot start another in this process


def _stop_faulthandler_for_the_jvm() -> None:
    """Turn Python's ``faulthandler`` off before the JVM starts in this process.

    HotSpot takes SIGSEGV for its own work (safepoint polls, implicit null checks), so it must
    own that signal. ``faulthandler.disable()`` puts back the handlers that were there when it
    was enabled: enabled before the JVM (as pytest's built-in plugin does) and disabled after,
    it leaves SIGSEGV at the default, and the next safepoint (the JVM's shutdown, at exit)
    kills the process with no message. Off first, the later ``disable()`` does nothing.
    """
    if faulthandler.is_enabled():
        faulthandler.disable()
        logger.info(
            "faulthandler disabled: the JVM starting in this process handles SIGSEGV itself "
            "(enable it again only while the JVM runs, never across its start)"
        )


class _ThreadStates:
    """Implements ``io.github.rspy.bridge.PythonThreadStates``: a JVM drain thread keeps one
    Python thread state from its start to its end, instead of one made and torn down around
    each call into Python (JPype's way for a thread Python did not start).

    ``keep`` runs inside a call from that thread, when JPype's ``PyGILState_Ensure`` has made
    its state: one more ``PyGILState_Ensure`` keeps the state's count above zero after the call
    returns, so JPype's ``PyGILState_Release`` releases the GIL but leaves the state. ``drop``
    gives that count back, so the state goes with the call that drops it.
    """

    def __init__(self) -> None:
        self._kept = threading.local()

    def keep(self) -> None:
        if getattr(self._kept, "state", None) is None:
            self._kept.state = ctypes.pythonapi.PyGILState_Ensure()

    def drop(self) -> None:
        state = getattr(self._kept, "state", None)
        if state is not None:
            del self._kept.state
            ctypes.pythonapi.PyGILState_Release(state)


class _PackageView:
    """``bridge.jvm.java.lang.System``, as ``spark._jvm``."""

    def __getattr__(self, name: str) -> Any:
        import jpype

        return jpype.JPackage(name)
