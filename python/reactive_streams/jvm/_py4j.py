"""The Py4J backend: Spark's own gateway, or a standalone gateway JVM the bridge starts."""

from __future__ import annotations

import logging
import os
import secrets
import socket
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Callable
from typing import Any

from .._errors import ReactiveStreamsError
from ._backend import Backend
from ._channel import DataChannel
from ._jars import ARROW_JVM_OPTIONS, BRIDGE_CLASS, arrow_classpath, bridge_classpath
from ._settings import BridgeSettings

__all__ = ["Py4JBackend"]

logger = logging.getLogger("reactive_streams.jvm")

STARTUP_TIMEOUT = 60.0  # seconds for a standalone JVM to print its port


class Py4JBackend(Backend):
    """A Py4J gateway (pinned-thread ``ClientServer``, as PySpark's) with its callback server."""

    def __init__(
        self, name: str, gateway: Any, process: subprocess.Popen[bytes] | None = None, *, owned: bool = True
    ) -> None:
        self.name = name
        self._gateway = gateway
        self._owned = owned
        self._process = process
        self._closing = False
        self._death_callbacks: list[Callable[[str], None]] = []
        self._proxy_classes: dict[str, type[_Proxy]] = {}
        self._watcher: threading.Thread | None = None
        if process is not None:
            self._watcher = threading.Thread(target=self._watch, name="rs-bridge-jvm-watch", daemon=True)
            self._watcher.start()

    @classmethod
    def on_gateway(cls, gateway: Any, name: str) -> Py4JBackend:
        """A gateway someone else owns (PySpark's): closing the backend leaves it running. Its
        callback server must be started."""
        backend = cls(name, gateway, owned=False)
        backend._require_bridge_class(
            f"the bridge jars are not on the classpath of the JVM behind this {name} gateway: add "
            "reactive_streams.jvm.bridge_classpath() to it before it starts (for Spark, build the "
            "session with reactive_streams.spark.configure(SparkSession.builder))"
        )
        return backend

    @classmethod
    def standalone(cls, classpath: list[str], java: str, jvm_options: list[str]) -> Py4JBackend:
        from py4j.clientserver import ClientServer, JavaParameters, PythonParameters
        from py4j.java_gateway import find_jar_path

        py4j_jar = find_jar_path()
        if not py4j_jar:
            raise ReactiveStreamsError("the py4j package's jar was not found; reinstall py4j")
        jars = [*bridge_classpath(), *arrow_classpath(), py4j_jar, *classpath]
        secret = secrets.token_urlsafe(32)
        stderr = tempfile.TemporaryFile()
        command = [
            java,
            *ARROW_JVM_OPTIONS,
            *jvm_options,
            "-cp",
            os.pathsep.join(jars),
            "io.github.rspy.bridge.GatewayMain",
        ]
        try:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        except OSError as exc:
            stderr.close()
            raise ReactiveStreamsError(f"cannot start the JVM ({java!r}): {exc}") from exc
        try:
            port = _read_port(process, secret, stderr)
            gateway = ClientServer(
                java_parameters=JavaParameters(port=port, auth_token=secret, auto_convert=True),
                python_parameters=PythonParameters(port=0, eager_load=False),
            )
            _start_callback_server(gateway)
        except BaseException:
            process.kill()
            process.wait()
            raise
        finally:
            stderr.close()
        _STANDALONE_CLIENTS.add(gateway._gateway_client)
        _guard_against_sparks_handler()
        backend = cls("py4j", gateway, process)
        backend._require_bridge_class("the standalone JVM cannot load the bridge classes")
        return backend

    def _require_bridge_class(self, message: str) -> None:
        from py4j.java_gateway import JavaClass

        found = self._gateway.jvm
        for part in BRIDGE_CLASS.split("."):
            found = getattr(found, part)
        if not isinstance(found, JavaClass):
            raise ReactiveStreamsError(message)

    @property
    def jvm(self) -> Any:
        if self._process is not None:
            _guard_against_sparks_handler()  # a SparkSession started since may have replaced it
        return self._gateway.jvm

    def is_package(self, value: Any) -> bool:
        from py4j.java_gateway import JavaPackage

        return isinstance(value, JavaPackage)

    def new_runtime(self, settings: BridgeSettings) -> Any:
        from py4j.java_gateway import JavaObject

        runtime = self._gateway.jvm.io.github.rspy.bridge.BridgeRuntime(
            settings.max_batch, settings.window, settings.threads
        )
        runtime.lingerMicros(settings.linger_micros)
        server = JavaObject("GATEWAY_SERVER", self._gateway._gateway_client)
        runtime.usePy4JClient(server.getCallbackClient())  # drain threads close their connections
        return runtime

    def open_data_channel(self, runtime: Any) -> DataChannel | None:
        return DataChannel.connect(runtime, self.java_bytes)

    def proxy(self, obj: Any, interface: str) -> Any:
        kind = self._proxy_classes.get(interface)
        if kind is None:
            kind = self._proxy_classes[interface] = _proxy_class(interface)
        return kind(obj)

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        return self._process

    def bytes_of(self, payload: Any) -> bytes | bytearray:
        return payload  # type: ignore[no-any-return]

    def java_bytes(self, data: bytes) -> Any:
        return data  # Py4J passes bytes by value

    def list_of(self, array: Any) -> list[Any]:
        return list(array)

    def object_array(self, items: list[Any]) -> Any:
        array = self._gateway.new_array(self._gateway.jvm.java.lang.Object, len(items))
        for index, item in enumerate(items):
            array[index] = item
        return array

    def is_jvm_object(self, value: Any) -> bool:
        from py4j.java_gateway import JavaObject

        return isinstance(value, JavaObject)

    def on_death(self, callback: Callable[[str], None]) -> None:
        self._death_callbacks.append(callback)

    def call_failed(self, exc: BaseException) -> bool:
        from py4j.protocol import Py4JNetworkError

        if isinstance(exc, Py4JNetworkError):
            return True
        return self._process is not None and self._process.poll() is not None

    def close(self) -> None:
        if not self._owned or self._closing:
            return  # its owner closes the gateway (PySpark); or closed already
        self._closing = True
        # The JVM goes first: Py4J's shutdown closes sockets that its reader threads hold
        # locked while they wait, and with the JVM alive it can block there for good. With the
        # JVM gone those readers see end-of-stream and let go.
        process = self._process
        if process is not None:
            try:
                if process.stdin is not None:
                    process.stdin.close()  # GatewayMain exits when stdin closes
                process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        stopper = threading.Thread(target=self._shutdown_gateway, name="rs-bridge-gateway-close", daemon=True)
        stopper.start()
        stopper.join(timeout=10)
        if self._watcher is not None and self._watcher is not threading.current_thread():
            self._watcher.join(timeout=10)

    def _shutdown_gateway(self) -> None:
        # Py4J closes a connection's stream before its socket, and the stream's lock is held by
        # the thread reading from it: shut the sockets down first, so those readers wake up.
        server = self._gateway.__dict__.get("_callback_server")
        for connection in list(getattr(server, "connections", ())):
            sock = getattr(connection, "socket", None)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        try:
            self._gateway.shutdown(raise_exception=False)
        except Exception:
            logger.debug("shutting the gateway down failed", exc_info=True)

    def _watch(self) -> None:
        assert self._process is not None
        code = self._process.wait()
        if self._closing:
            return
        for callback in self._death_callbacks:
            try:
                callback(f"the gateway JVM exited with code {code}")
            except Exception:
                logger.exception("handling the JVM's death failed")


# The clients of the standalone gateways this process started (see _guard_against_sparks_handler).
_STANDALONE_CLIENTS: weakref.WeakSet[Any] = weakref.WeakSet()


def _guard_against_sparks_handler() -> None:
    """Have calls on a standalone gateway's objects read their answers with Py4J's own
    ``get_return_value``. PySpark replaces it process-wide (``install_exception_handler``, when
    a SparkContext starts) with one that converts every Java exception through the SparkContext's
    gateway, which fails, or misnames, an exception that lives in another JVM."""
    from py4j import java_gateway, protocol

    current = java_gateway.get_return_value
    if getattr(current, "_rs_standalone_guard", False):
        return

    def get_return_value(answer: str, gateway_client: Any, target_id: Any = None, name: Any = None) -> Any:
        if gateway_client in _STANDALONE_CLIENTS:
            return protocol.get_return_value(answer, gateway_client, target_id, name)
        return current(answer, gateway_client, target_id, name)

    get_return_value._rs_standalone_guard = True  # type: ignore[attr-defined]
    java_gateway.get_return_value = get_return_value


class _Proxy:
    """What Py4J's proxy pool holds for Java: it reads ``Java.implements`` (set per interface by
    `_proxy_class`) and calls methods by ``getattr``, which reaches ``target``'s."""

    __slots__ = ("target",)

    def __init__(self, target: Any) -> None:
        self.target = target

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


def _proxy_class(interface: str) -> type[_Proxy]:
    java = type("Java", (), {"implements": (interface,)})
    return type(f"Py4JProxy[{interface}]", (_Proxy,), {"__slots__": (), "Java": java})


def _read_port(process: subprocess.Popen[bytes], secret: str, stderr: Any) -> int:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(secret.encode() + b"\n")
    process.stdin.flush()
    result: list[bytes] = []
    reader = threading.Thread(target=lambda: result.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(STARTUP_TIMEOUT)
    line = result[0].decode(errors="replace").strip() if result else ""
    if not line.startswith("port "):
        process.kill()
        process.wait()
        stderr.seek(0)
        detail = stderr.read().decode(errors="replace").strip()[-2000:]
        raise ReactiveStreamsError(
            f"the gateway JVM did not start (exit code {process.returncode}): {detail or line or 'no output'}"
        )
    return int(line.split()[1])


def _start_callback_server(gateway: Any) -> None:
    """Start the Python side of a pinned-thread gateway and tell Java its port, as PySpark's
    ``ensure_callback_server_started`` does for its own gateway."""
    from py4j.java_gateway import JavaObject

    params = gateway.callback_server_parameters
    params.eager_load = True
    params.daemonize = True
    params.daemonize_connections = True
    params.port = 0
    gateway.start_callback_server(params)
    port = gateway._callback_server.server_socket.getsockname()[1]
    gateway._callback_server.port = port
    gateway._python_proxy_port = port
    server = JavaObject("GATEWAY_SERVER", gateway._gateway_client)
    server.resetCallbackClient(server.getCallbackClient().getAddress(), port)
