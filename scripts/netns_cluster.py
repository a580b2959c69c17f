"""A Spark cluster of separate hosts on one Linux machine, for the tests and for trying the
library as it is deployed: each host a network namespace with an address and a loopback of its
own, joined by a bridge in a namespace of its own on the private test subnet 10.213.7.0/24.
Nothing reaches another host by 127.0.0.1, and the machine's own network is not touched: no
address, route or rule outside the namespaces this makes, all named ``rsc-*``.

Hosts (``HOSTS``): ``master`` runs Spark's standalone Master, ``worker1`` and ``worker2`` a
Worker each (Spark's own classes, ``bin/spark-class``, from the installed PySpark), ``connect``
Spark Connect started with Spark's own ``sbin/start-connect-server.sh`` against that master, with
the confs ``reactive_streams.spark.connect_confs()`` gives (as docs/deploy.md tells a user), and
``client`` runs nothing: clients are started there. The Connect server listens on its own host's
loopback and asks for a token (``SPARK_CONNECT_AUTHENTICATE_TOKEN``); clients reach it through
nginx on the same host, which terminates TLS with a certificate of a test CA the kit makes
(`Cluster.connect_url` gives the URL with the token, `thin_environment` the CA).

    python scripts/netns_cluster.py up [--no-connect] | status | down

``up`` removes what an earlier run left (namespaces, processes), makes the hosts and starts the
servers, waiting until the workers have registered and the Connect server answers; ``down``
stops every process in the namespaces and removes them and the state folder
(``build/netns-cluster``: logs, pids, work folders, the test CA and the token). Needs root,
iproute2's ``ip``, and, for the Connect server's proxy, nginx and openssl.

`Cluster` is the same from Python (the tests' fixture is a thin layer over it), with the faults a
network makes: `Cluster.cut` takes a host's link down (its packets vanish, nobody gets a reset),
`Cluster.mend` brings it back, `Cluster.kill_host` ends every process of a host and cuts it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPLOY_DOC = ROOT / "docs" / "deploy.md"
STATE = ROOT / "build" / "netns-cluster"
THIN_CLIENTS = ROOT / "build" / "thin-clients"
SHIPPED = ROOT / "build" / "shipped-python"
PREFIX = "rsc-"
SWITCH = PREFIX + "net"  # the namespace that holds the bridge
SUBNET = "10.213.7"
HOSTS = {"master": 10, "worker1": 11, "worker2": 12, "connect": 20, "client": 30}
MASTER_PORT = 7077
MASTER_UI = 8080
CONNECT_PORT = 15002  # the server's, on its host's loopback
PROXY_PORT = 15443  # nginx's, TLS, on the host's address: what clients reach
IP = shutil.which("ip") or "/usr/sbin/ip"  # by path: a thin client's PATH holds its own bin alone


class ClusterError(RuntimeError):
    """The kit could not make, start or remove the cluster; the message says which step."""


def address(host: str) -> str:
    """The host's address on the test subnet."""
    return f"{SUBNET}.{HOSTS[host]}"


def namespace(host: str) -> str:
    return PREFIX + host


def available() -> str | None:
    """Why the kit cannot run here (not root, no ``ip``, no namespaces), or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    for tool, package in (("nginx", "nginx-light"), ("openssl", "openssl")):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (Debian's {package}: the Connect server's TLS proxy)"
    probe = f"{PREFIX}probe-{os.getpid()}"
    made = subprocess.run([IP, "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip()}"
    subprocess.run([IP, "netns", "delete", probe], capture_output=True)
    return None


def _ip(*args: str) -> None:
    done = subprocess.run([IP, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise ClusterError(f"`ip {' '.join(args)}` failed: {done.stderr.strip()}")


def _namespaces() -> list[str]:
    listed = subprocess.run([IP, "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(PREFIX)]


def _pids(ns: str) -> list[int]:
    listed = subprocess.run([IP, "netns", "pids", ns], capture_output=True, text=True).stdout
    return [int(pid) for pid in listed.split()]


_DOC_COMMAND = re.compile(r"<!-- deploy-command: ([\w-]+) -->\n```bash\n(.*?)```", re.DOTALL)


def doc_commands() -> dict[str, str]:
    """The commands docs/deploy.md gives a user, by name: the kit runs these, as written there
    (with its hosts' addresses in their variables), so that the page is what is tested."""
    commands = dict(_DOC_COMMAND.findall(DEPLOY_DOC.read_text()))
    missing = {
        "master",
        "worker",
        "connect-server",
        "connect-server-stop",
        "thin-client",
        "test-ca",
        "tls-proxy",
        "pack-python",
        "pipeline-run",
    }
    missing -= commands.keys()
    if missing:
        raise ClusterError(f"docs/deploy.md gives no command named {sorted(missing)}")
    return commands


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class Cluster:
    """The hosts and their servers (see the module's doc). Use as a context manager, or
    `up` then `down`."""

    def __init__(
        self,
        state: Path = STATE,
        connect: bool = True,
        python: str = sys.executable,
        connect_jars: Sequence[str] = (),
        connect_confs: dict[str, str] | None = None,
    ) -> None:
        """``connect_jars`` and ``connect_confs``: more for the Connect server (a registrar's
        jar and ``spark.rspy.connect.registrars``, say), beside the library's own. The server's
        tables (a pipeline's) go to its folder, removed with the hosts."""
        self.state = state
        self.connect = connect
        self.python = python
        self.connect_jars = list(connect_jars)
        warehouse = {"spark.sql.warehouse.dir": str(state / "connect" / "warehouse")}
        self.connect_confs = {**warehouse, **(connect_confs or {})}

    # Hosts and links.

    def make_hosts(self) -> None:
        _ip("netns", "add", SWITCH)
        _ip("-n", SWITCH, "link", "add", "br0", "type", "bridge")
        _ip("-n", SWITCH, "link", "set", "br0", "up")
        for host in HOSTS:
            ns, inner, outer = namespace(host), f"{PREFIX}{host}-a", f"{PREFIX}{host}-b"
            _ip("netns", "add", ns)
            _ip("link", "add", inner, "type", "veth", "peer", "name", outer)
            _ip("link", "set", inner, "netns", ns)
            _ip("link", "set", outer, "netns", SWITCH)
            _ip("-n", ns, "link", "set", inner, "name", "eth0")
            _ip("-n", ns, "addr", "add", f"{address(host)}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", SWITCH, "link", "set", outer, "master", "br0")
            _ip("-n", SWITCH, "link", "set", outer, "up")

    def cut(self, host: str) -> None:
        """The host's link down at the switch: its packets vanish, and nobody gets a reset."""
        _ip("-n", SWITCH, "link", "set", f"{PREFIX}{host}-b", "down")

    def mend(self, host: str) -> None:
        _ip("-n", SWITCH, "link", "set", f"{PREFIX}{host}-b", "up")

    def kill_host(self, host: str) -> None:
        """Every process of the host killed (SIGKILL) and its link cut: a machine gone."""
        self.cut(host)
        for pid in _pids(namespace(host)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def revive(self, host: str) -> None:
        """A worker host that `kill_host` took down back: its link up and its Worker started
        again, registered with the master (on a new port: the master drops the old at its own
        timeout)."""
        self.mend(host)
        self.start(host, "worker", ["bash", "-c", doc_commands()["worker"]])
        log = self.state / host / "worker.log"
        registered = lambda: "Successfully registered with master" in log.read_text(errors="replace")  # noqa: E731
        _wait(registered, 180, f"{host}'s worker to register again", self.state / host)

    # Processes.

    def command(self, host: str, argv: Sequence[str]) -> list[str]:
        """``argv`` run on ``host``."""
        return [IP, "netns", "exec", namespace(host), *argv]

    def environment(self, host: str) -> dict[str, str]:
        """What a Spark process on ``host`` needs: its address as the one it binds and gives."""
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_LOCAL_IP=address(host),
            SPARK_LOCAL_HOSTNAME=address(host),
            SPARK_LOG_DIR=str(self.state / host / "logs"),
            SPARK_PID_DIR=str(self.state / host),
            SPARK_WORKER_DIR=str(self.state / host / "work"),
            PYSPARK_PYTHON=self.python,
            PYSPARK_DRIVER_PYTHON=self.python,
            PATH=f"{Path(self.python).parent}{os.pathsep}{env.get('PATH', '')}",  # `python` is ours
            # docs/deploy.md's variables
            MASTER_HOST=address("master"),
            WORKER_HOST=address(host),
            CONNECT_HOST=address("connect"),
            WORK_DIR=str(self.state / host / "work"),
            EXTRA_JARS=" ".join(self.connect_jars),
            EXTRA_CONFS=" ".join(f"--conf {key}={value}" for key, value in self.connect_confs.items()),
            TLS_DIR=str(self.state / "tls"),
            PROXY_DIR=str(self.state / host / "proxy"),
        )
        if self.token_file.exists():
            env["CONNECT_TOKEN"] = self.token
        return env

    def start(self, host: str, name: str, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """A long-running process on ``host``, its output in ``<state>/<host>/<name>.log``."""
        folder = self.state / host
        (folder / "logs").mkdir(parents=True, exist_ok=True)
        log = open(folder / f"{name}.log", "wb")
        process = subprocess.Popen(
            self.command(host, argv),
            env=self.environment(host),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        (folder / f"{name}.pid").write_text(str(process.pid))
        return process

    def run(
        self, host: str, argv: Sequence[str], timeout: float = 300, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``argv`` on ``host``, to its end, its output captured; ``env`` replaces the host's
        Spark environment (`environment`)."""
        return subprocess.run(
            self.command(host, argv),
            env=env if env is not None else self.environment(host),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def reachable(self, host: str, port: int, source: str = "client", at: str | None = None) -> bool:
        """Whether ``source`` can open a TCP connection to ``host:port`` (``at``: to that
        address rather than the host's, say ``source``'s own loopback)."""
        probe = (
            "import socket,sys\n"
            f"s=socket.socket(); s.settimeout(2)\n"
            f"sys.exit(s.connect_ex(({at or address(host)!r}, {port})))"
        )
        return self.run(source, [self.python, "-c", probe], timeout=10).returncode == 0

    def alive_workers(self) -> int:
        """How many workers the master lists ALIVE (its web UI's JSON, asked from the client host)."""
        ask = (
            "import json,urllib.request\n"
            f"url = 'http://{address('master')}:{MASTER_UI}/json/'\n"
            "print(json.load(urllib.request.urlopen(url, timeout=3))['aliveworkers'])"
        )
        done = self.run("client", [self.python, "-c", ask], timeout=15)
        return int(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else 0

    def master_url(self) -> str:
        return f"spark://{address('master')}:{MASTER_PORT}"

    def connect_url(self, token: str | None = "") -> str:
        """The URL a client gives: the proxy's address, with the server's token (``token``:
        another, or None for none)."""
        given = self.token if token == "" else token
        return f"sc://{address('connect')}:{PROXY_PORT}" + ("" if given is None else f"/;token={given}")

    @property
    def token_file(self) -> Path:
        return self.state / "connect" / "token"

    @property
    def token(self) -> str:
        """The Connect server's token (``SPARK_CONNECT_AUTHENTICATE_TOKEN``), made by `up`."""
        return self.token_file.read_text().strip()

    @property
    def certificate_authority(self) -> Path:
        """The test CA that signed the proxy's certificate: what a client trusts."""
        return self.state / "tls" / "ca.pem"

    def start_spark(self) -> None:
        commands = doc_commands()
        self.start("master", "master", ["bash", "-c", commands["master"]])
        master_up = lambda: self.reachable("master", MASTER_PORT)  # noqa: E731
        _wait(master_up, 120, "the master to listen", self.state / "master")
        for worker in ("worker1", "worker2"):
            (self.state / worker / "work").mkdir(parents=True, exist_ok=True)
            self.start(worker, "worker", ["bash", "-c", commands["worker"]])
        _wait(lambda: self.alive_workers() == 2, 180, "both workers to register", self.state)

    def start_connect(self) -> None:
        """Spark's Connect server with a token on its host's loopback, and nginx in front of it
        with TLS: each by docs/deploy.md's command. The token and the test CA are made once,
        and kept when the server starts again (`restart_connect`, `revive_connect`)."""
        commands = doc_commands()
        self.token_file.parent.mkdir(parents=True, exist_ok=True)
        if not self.token_file.exists():
            self.token_file.write_text(secrets.token_urlsafe(24))
            self.token_file.chmod(0o600)
        if not self.certificate_authority.exists():
            _step(["bash", "-c", commands["test-ca"]], "the test CA", self.environment("connect"))
        done = self.run("connect", ["bash", "-c", commands["connect-server"]], timeout=120)
        if done.returncode != 0:
            raise ClusterError(
                f"start-connect-server.sh failed ({done.returncode}): {done.stdout}{done.stderr}"
            )
        listening = lambda: self.reachable("connect", CONNECT_PORT, "connect", "127.0.0.1")  # noqa: E731
        _wait(listening, 180, "the Connect server to listen", self.state / "connect")
        if not self.reachable("connect", PROXY_PORT):
            self.start("connect", "proxy", ["bash", "-c", commands["tls-proxy"]])
            proxying = lambda: self.reachable("connect", PROXY_PORT)  # noqa: E731
            _wait(proxying, 60, "nginx to listen", self.state / "connect")

    def restart_connect(self) -> None:
        """The Connect server stopped by Spark's own ``sbin/stop-connect-server.sh`` and started
        again (the proxy in front of it stays)."""
        done = self.run("connect", ["bash", "-c", doc_commands()["connect-server-stop"]], timeout=120)
        if done.returncode != 0:
            raise ClusterError(
                f"stop-connect-server.sh failed ({done.returncode}): {done.stdout}{done.stderr}"
            )
        stopped = lambda: not self.reachable("connect", CONNECT_PORT, "connect", "127.0.0.1")  # noqa: E731
        _wait(stopped, 60, "the Connect server to stop", self.state / "connect")
        self.start_connect()

    def revive_connect(self) -> None:
        """The Connect server's host that `kill_host` took down back: its link up, the server and
        its proxy started again."""
        self.mend("connect")
        self.start_connect()

    # The whole.

    def up(self) -> Cluster:
        reason = available()
        if reason is not None:
            raise ClusterError(f"cannot make the cluster's hosts: {reason}")
        self.down()
        self.state.mkdir(parents=True)
        try:
            self.make_hosts()
            self.start_spark()
            if self.connect:
                self.start_connect()
        except BaseException:
            self.down()
            raise
        return self

    def down(self) -> None:
        """Every process in the kit's namespaces ended, the namespaces and the state removed;
        idempotent, and it cleans up after a run that was killed."""
        spaces = _namespaces()
        for ns in spaces:
            for pid in _pids(ns):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for ns in spaces:
            deadline = time.monotonic() + 10
            while _pids(ns) and time.monotonic() < deadline:
                time.sleep(0.1)
            subprocess.run([IP, "netns", "delete", ns], capture_output=True)
        shutil.rmtree(self.state, ignore_errors=True)

    def status(self) -> dict[str, object]:
        spaces = set(_namespaces())
        hosts = {
            host: {
                "address": address(host),
                "up": namespace(host) in spaces,
                "processes": len(_pids(namespace(host))) if namespace(host) in spaces else 0,
            }
            for host in HOSTS
        }
        made = all(h["up"] for h in hosts.values())
        return {
            "hosts": hosts,
            "master": self.master_url() if made and self.reachable("master", MASTER_PORT) else None,
            "workers": self.alive_workers() if made else 0,
            "connect": self.connect_url() if made and self.reachable("connect", PROXY_PORT) else None,
        }

    def __enter__(self) -> Cluster:
        return self.up()

    def __exit__(self, *exc_info: object) -> None:
        self.down()


def thin_client(version: str, python: str = sys.executable) -> Path:
    """The Python of a virtual environment with ``pyspark-client==version`` (Spark Connect's
    client alone: no ``pyspark``, no jars), pyarrow and this checkout's wheel, made by
    docs/deploy.md's command once under ``build/thin-clients``; the wheel is rebuilt (``pip
    wheel``) once a process and reinstalled if it changed."""
    venv = THIN_CLIENTS / version
    client = venv / "bin" / "python"
    marker = venv / "wheel-installed"
    wheel = _checkout_wheel(python)
    if not marker.exists():
        shutil.rmtree(venv, ignore_errors=True)
        env = dict(os.environ, VENV=str(venv), PYSPARK_CLIENT=version, LIBRARY=str(wheel))
        env["PATH"] = f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}"  # `python` is ours
        _step(["bash", "-c", doc_commands()["thin-client"]], f"pyspark-client {version}'s environment", env)
    elif marker.read_text() != str(wheel):
        _step(
            [str(client), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", str(wheel)],
            "the wheel",
        )
    marker.write_text(str(wheel))
    return client


def packed_python(python: str = sys.executable) -> Path:
    """An archive of a virtual environment with pyarrow and this checkout's wheel, made by
    docs/deploy.md's ``pack-python`` command (``venv-pack``) under ``build/shipped-python``,
    once a process: what an application ships to its executors with ``spark.archives``."""
    wheel = _checkout_wheel(python)
    folder = SHIPPED / wheel.parent.name
    archive = folder / "env.tar.gz"
    if not archive.exists():
        shutil.rmtree(SHIPPED, ignore_errors=True)
        folder.mkdir(parents=True)
        env = dict(os.environ, VENV=str(folder / "env"), LIBRARY=str(wheel), ARCHIVE=str(archive))
        env["PATH"] = f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}"  # `python` is ours
        _step(["bash", "-c", doc_commands()["pack-python"]], "the shipped Python's archive", env)
    return archive


_WHEELS: dict[str, Path] = {}


def _checkout_wheel(python: str) -> Path:
    """This checkout's wheel, built (``pip wheel``) once a process."""
    if python not in _WHEELS:
        for stale in THIN_CLIENTS.glob("wheel-*"):
            shutil.rmtree(stale, ignore_errors=True)
        wheels = THIN_CLIENTS / f"wheel-{os.getpid()}"
        _step(
            [python, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
            "this checkout's wheel",
        )
        (_WHEELS[python],) = wheels.glob("*.whl")
    return _WHEELS[python]


def thin_environment(client: Path, trusted: Path | None = STATE / "tls" / "ca.pem") -> dict[str, str]:
    """A thin client's environment: its own ``bin`` alone on PATH (no ``java``), no JAVA_HOME or
    SPARK_HOME, and gRPC trusting ``trusted`` alone (the kit's test CA; None: the machine's)."""
    env = {k: v for k, v in os.environ.items() if k not in {"JAVA_HOME", "SPARK_HOME", "PYTHONPATH"}}
    env["PATH"] = str(client.parent)
    env.pop("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", None)
    if trusted is not None:
        env["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] = str(trusted)
    return env


def _step(argv: Sequence[str], what: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise ClusterError(f"could not make {what}: {done.stdout[-2000:]}{done.stderr[-2000:]}")


def _wait(ready: object, seconds: float, what: str, logs: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():  # type: ignore[operator]
            return
        time.sleep(0.5)
    tails = []
    for log in sorted(logs.rglob("*.log")) + sorted(logs.rglob("*.out")):
        tails.append(f"--- {log}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-20:]))
    raise ClusterError(f"waited {seconds:.0f} s for {what}; the logs end:\n" + "\n".join(tails))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["up", "down", "status"])
    parser.add_argument("--no-connect", action="store_true", help="no Spark Connect server")
    args = parser.parse_args()
    cluster = Cluster(connect=not args.no_connect)
    if args.action == "up":
        cluster.up()
        print(json.dumps(cluster.status(), indent=2))
    elif args.action == "down":
        cluster.down()
    else:
        print(json.dumps(cluster.status(), indent=2))


if __name__ == "__main__":
    main()
