"""A local Spark Connect server that serves this library's clients, as a child process.

``python -m reactive_streams.spark.connect_server [--port P] [--master M] [--jars J,...]
[--conf k=v ...]`` starts one, prints the URL a client passes to
``SparkSession.builder.remote(url)`` and serves until SIGINT or SIGTERM. `ConnectServer.start`
does the same from Python, as a context manager.

The server is PySpark's own (``bin/spark-submit --class ...SparkConnectServer``, as
``sbin/start-connect-server.sh`` runs it, but in the foreground), with `connect_confs`: the
bridge's jars and the Connect plugins. It listens on 127.0.0.1 only and, by default, asks for a
bearer token, which the URL carries (``sc://localhost:P/;token=T``; the client sends it over
gRPC's local credentials when the host is ``localhost``). POSIX only.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType

from .._errors import ReactiveStreamsError
from ..jvm import ClasspathLike
from ._configure import connect_confs, merge_confs

__all__ = ["SERVER_CLASS", "ConnectServer", "main"]

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
"""The class ``spark-submit`` runs (``sbin/start-connect-server.sh``'s)."""

_READY = re.compile(rb"Spark Connect server started at: ?\S*?:(\d+)")
_TOKEN_ENV = "SPARK_CONNECT_AUTHENTICATE_TOKEN"
#: Confs the server's place and access depend on: set through `ConnectServer.start`'s arguments.
_OWN_CONFS = {
    "spark.master": "master",
    "spark.connect.grpc.binding.address": "nothing (the server listens on 127.0.0.1)",
    "spark.connect.grpc.binding.port": "port",
    "spark.connect.authenticate.token": "token",
    "spark.rspy.connect.owner": "nothing (the server watches the process that started it)",
}
_OWNER_CONF = "spark.rspy.connect.owner"
_DEFAULTS = {"spark.app.name": "reactive-streams Connect server", "spark.ui.enabled": "false"}
#: On a local master the driver's own ports (RPC, block manager) listen on loopback too.
_LOCAL_DRIVER = {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"}
#: Variables that make spark-submit or PySpark think they are a Connect client.
_CLIENT_ENV = ("SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_API_MODE")
_TAIL = 25  # log lines an error carries


def _pyspark_home() -> Path:
    try:
        import pyspark
    except ImportError as exc:
        raise ReactiveStreamsError(
            "a Spark Connect server needs PySpark (pip install 'reactive-streams-py[spark]')"
        ) from exc
    return Path(pyspark.__file__).resolve().parent


class ConnectServer:
    """A Spark Connect server running as a child process (in its own process group), stopped by
    `stop`, at the end of its ``with`` block, or when this Python process exits normally; and,
    if it ends otherwise (a signal, SIGKILL included), by the server itself within 5 seconds:
    this process holds the other end of the server's stdin, which the system closes then, and
    the server's plugin (`CONNECT_SERVER_PLUGIN`) exits at its end. A process forked from this
    one (``multiprocessing``'s fork) holds it too, and keeps the server until it ends as well.

    Start one with `ConnectServer.start`; connect with
    ``SparkSession.builder.remote(server.url).create()``.

    Attributes:
        port: the port it listens on (127.0.0.1 only).
        pid: the server's process id, also its process group's.
        token: the bearer token it asks for, or None.
        log_path: the file that receives its output (stdout and stderr). A file `start` made
            itself is deleted when the server stops.
    """

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        port: int,
        token: str | None,
        log_path: Path,
        own_log: bool,
    ) -> None:
        """Internal: use `ConnectServer.start`."""
        self._process = process
        self.port = port
        self.pid = process.pid
        self.token = token
        self.log_path = log_path
        self._own_log = own_log
        self._lock = threading.Lock()
        self._ended = False
        atexit.register(self._at_exit)

    @classmethod
    def start(
        cls,
        port: int = 0,
        *,
        master: str = "local[2]",
        extra_jars: ClasspathLike = (),
        conf: Mapping[str, str] | None = None,
        token: bool | str = True,
        ready_timeout: float = 180.0,
        log: str | os.PathLike[str] | None = None,
    ) -> ConnectServer:
        """Start a server and wait until it accepts clients (about 10 s on an idle machine,
        up to a minute on a loaded one).

        The server gets `connect_confs` (``extra_jars`` included) merged into ``conf``
        (``spark.jars`` and the extension classes keep the entries ``conf`` has), and
        ``spark.ui.enabled=false`` unless ``conf`` says otherwise. On a ``local`` master the
        driver listens on 127.0.0.1 as well. Python workers (UDFs) run this interpreter unless
        ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` says otherwise. ``conf`` is on the
        server's command line, visible to other local users; the token is passed in its
        environment, not there.

        The Spark that runs is PySpark's installation (``SPARK_HOME`` is set to it), the
        version the bridge's jar is built against. Readiness is the server's INFO log line
        "Spark Connect server started at" (a log4j2 configuration in ``SPARK_CONF_DIR`` that
        hides it makes `start` time out).

        Args:
            port: the port on 127.0.0.1; 0 lets the system pick a free one. A port in use is
                an error (Spark would otherwise move to the next one).
            master: the server's Spark master.
            extra_jars: more jars for the server (see `spark_classpath`): the publishers and
                subscribers its clients ask for by name.
            conf: more Spark confs. The master, binding address, port and token come from the
                other arguments.
            token: True (default) makes a random bearer token that clients must send (the
                `url` carries it); a string is that token; False lets any local user connect.
            ready_timeout: seconds to wait for the server; then it is killed.
            log: a file to append the server's output to; by default a temporary file,
                deleted when the server stops.

        Raises:
            ReactiveStreamsError: the server exited during start-up or did not start in
                ``ready_timeout`` seconds (the message ends with its log's last lines), PySpark
                is missing, or an ``extra_jars`` entry is bad.
            ValueError: ``conf`` sets one of the confs the arguments own, or ``port`` is out
                of range.
        """
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be 0 (any free port) or 1..65535, got {port}")
        user_conf = dict(conf or {})
        for key, argument in _OWN_CONFS.items():
            if key in user_conf:
                raise ValueError(f"conf must not set {key}: use the argument {argument} of start()")
        home = _pyspark_home()
        confs = merge_confs({**_DEFAULTS, **user_conf}, connect_confs(extra_jars))
        if master.startswith("local"):
            confs = {**_LOCAL_DRIVER, **confs}
        confs.update(
            {
                "spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.connect.grpc.binding.port": str(port),
                "spark.connect.grpc.port.maxRetries": "0",
                _OWNER_CONF: "stdin",  # the server ends when this process does (ServerPlugin)
            }
        )
        secret = secrets.token_hex(16) if token is True else (token or None)
        env = {k: v for k, v in os.environ.items() if k not in (*_CLIENT_ENV, _TOKEN_ENV)}
        env.update(SPARK_HOME=str(home), SPARK_CONNECT_MODE="0")
        if secret is not None:
            env[_TOKEN_ENV] = secret
        if "spark.pyspark.python" not in confs:
            env.setdefault("PYSPARK_PYTHON", sys.executable)
        command = [str(home / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--master", master]
        for key, value in confs.items():
            command += ["--conf", f"{key}={value}"]

        if log is None:
            fd, name = tempfile.mkstemp(prefix="rspy-connect-", suffix=".log")
            log_path, own_log, out = Path(name), True, os.fdopen(fd, "ab")
        else:
            log_path, own_log, out = Path(log), False, open(log, "ab")
        with out:
            offset = out.seek(0, os.SEEK_END)
            try:
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.PIPE,  # never written: its end tells the server this process ended
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,  # its own process group: stop() ends spark-submit's tree
                )
            except OSError as exc:
                if own_log:
                    log_path.unlink()
                raise ReactiveStreamsError(f"cannot run spark-submit ({command[0]}): {exc}") from exc
        server = cls(process, port, secret, log_path, own_log)
        try:
            server._await_ready(offset, ready_timeout)
        except BaseException:
            server.kill()
            raise
        return server

    def _await_ready(self, offset: int, timeout: float) -> None:
        """Read the log from ``offset`` until the server says it started; sets `port` and
        `url` from that line (the port the system picked for port 0)."""
        deadline = time.monotonic() + timeout
        seen = b""
        with open(self.log_path, "rb") as log:
            log.seek(offset)
            while True:
                seen = seen[-4096:] + log.read()
                ready = _READY.search(seen)
                if ready is not None:
                    self.port = int(ready.group(1))
                    return
                status = self._status()
                if status is not None:
                    raise ReactiveStreamsError(
                        f"the Spark Connect server exited during start-up ({status}); {self._tail(offset)}"
                    )
                if time.monotonic() > deadline:
                    raise ReactiveStreamsError(
                        f"the Spark Connect server did not start within {timeout:g} s "
                        f"(no 'Spark Connect server started at' in its log); {self._tail(offset)}"
                    )
                time.sleep(0.2)

    def _tail(self, offset: int) -> str:
        """The log from ``offset``: its first error (Spark's ``ERROR`` line and the exception
        under it) and its last lines."""
        where = "" if self._own_log else f" ({self.log_path})"
        try:
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                lines = log.read().decode("utf-8", "replace").splitlines()
        except OSError as exc:
            return f"its log{where} cannot be read: {exc}"
        first = next((i for i, line in enumerate(lines) if " ERROR " in line), None)
        excerpt = ""
        if first is not None and first < len(lines) - _TAIL:
            excerpt = "its first error:\n" + "\n".join(lines[first : first + 3]) + "\n"
        return f"{excerpt}the last lines of its log{where}:\n" + "\n".join(lines[-_TAIL:])

    @property
    def url(self) -> str:
        """What a client passes to ``SparkSession.builder.remote``: ``sc://localhost:P``, with
        ``/;token=T`` when the server asks for a token. The host must stay ``localhost``: with a
        token, PySpark's client uses TLS for any other host, and gRPC's local credentials
        (plain TCP on loopback) for this one."""
        return f"sc://localhost:{self.port}" + ("" if self.token is None else f"/;token={self.token}")

    @property
    def running(self) -> bool:
        """Whether the server's process is alive (a process that exited but was not yet
        reaped counts as not running)."""
        return not self._ended and self._status() is None

    def _status(self) -> str | None:
        """None while the process lives, else how it ended; it is not reaped (WNOWAIT), so its
        pid keeps naming its process group until `_end`."""
        try:
            ended = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped by someone else
            return "ended"
        if ended is None:
            return None
        if ended.si_code == os.CLD_EXITED:
            return f"exit code {ended.si_status}"
        return f"signal {ended.si_status}"

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the server: SIGTERM to its process group (Spark stops its context and
        sessions), then SIGKILL after ``timeout`` seconds, and to anything of the group left
        behind. Returns once the server's process group has ended; does nothing the second time."""
        self._end(signal.SIGTERM, timeout)

    def kill(self) -> None:
        """Kill the server and its process group at once (SIGKILL), as a crash would; does
        nothing if it has already ended."""
        self._end(signal.SIGKILL, 0.0)

    def _end(self, first: signal.Signals, timeout: float) -> None:
        with self._lock:
            if self._ended:
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, first)
            deadline = time.monotonic() + timeout
            while self.running and time.monotonic() < deadline:
                time.sleep(0.05)
            # The leader is a zombie (WNOWAIT) or alive, so the group id still names our group.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            self._process.wait()
            # The rest of the group (spark-class's launcher JVM, when it is killed mid-start) may
            # still be dying: a killed JVM takes a moment to give back its memory. Wait for it.
            deadline = time.monotonic() + 10.0
            while time.monotonic() < deadline:
                try:
                    os.killpg(self.pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.02)
            if self._process.stdin is not None:
                self._process.stdin.close()
            self._ended = True
            atexit.unregister(self._at_exit)
            if self._own_log:
                with contextlib.suppress(OSError):
                    self.log_path.unlink()

    def _at_exit(self) -> None:
        self.stop(timeout=5.0)

    def __enter__(self) -> ConnectServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "ended"
        return f"<ConnectServer sc://localhost:{self.port} pid={self.pid} {state}>"


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM is handled as Ctrl-C; either stops the server once (further ones are ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def _conf_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--conf takes key=value, got {text!r}")
    return key, value


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reactive_streams.spark.connect_server``: start a server, print its URL on
    stdout (one line), serve until SIGINT or SIGTERM, then stop it. Returns the exit status:
    0 after a signal, 1 if the server failed to start or died."""
    parser = argparse.ArgumentParser(
        prog="python -m reactive_streams.spark.connect_server",
        description="Start a local Spark Connect server with reactive-streams' jars and plugins; "
        "print its URL (for SparkSession.builder.remote) and serve until SIGINT or SIGTERM.",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: any free one)")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument("--jars", default="", help="more jars, comma-separated (folders and globs too)")
    parser.add_argument(
        "--conf", type=_conf_pair, action="append", default=[], metavar="KEY=VALUE", help="a Spark conf"
    )
    parser.add_argument("--no-token", action="store_true", help="accept clients without a token")
    parser.add_argument("--log", help="append the server's log to this file (default: a temporary file)")
    parser.add_argument("--ready-timeout", type=float, default=180.0, help="seconds to wait (default 180)")
    args = parser.parse_args(argv)

    previous = {s: signal.signal(s, _interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with ConnectServer.start(
            args.port,
            master=args.master,
            extra_jars=[j for j in args.jars.split(",") if j],
            conf=dict(args.conf),
            token=not args.no_token,
            ready_timeout=args.ready_timeout,
            log=args.log,
        ) as server:
            print(server.url, flush=True)
            print(f"Spark Connect server: pid {server.pid}, log {server.log_path}", file=sys.stderr)
            while server.running:
                time.sleep(0.5)
            print(f"error: the Spark Connect server exited; {server._tail(0)}", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        return 0
    except (ReactiveStreamsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
