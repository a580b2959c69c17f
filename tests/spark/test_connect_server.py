"""ConnectServer and ``python -m reactive_streams.spark.connect_server``: real Spark Connect
servers on ephemeral loopback ports, one at a time (each costs 10 to 60 s to start), and the
confs ``connect_confs``/``configure`` give a Connect server."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams.spark._configure import (
    CONNECT_COMMAND_PLUGIN,
    CONNECT_SERVER_PLUGIN,
    CONNECT_STATUS_PLUGIN,
    configure,
    connect_confs,
)
from reactive_streams.spark.connect_server import ConnectServer

from ..conftest import ROOT
from ..support import Probe, Spy

COMMAND_CLASSES = "spark.connect.extensions.command.classes"
STATUS_CLASSES = "spark.connect.extensions.getStatus.classes"
URL = re.compile(r"^sc://localhost:(\d+)/;token=[0-9a-f]{32}$")
START = 300  # seconds a test that starts a server may take (start-up is slow on a loaded machine)


def processes() -> dict[int, tuple[str, int, int, str]]:
    """Every process: pid -> (state, parent pid, process group, command line)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, ppid, pgrp = text[text.rindex(")") + 2 :].split()[:3]
        found[int(stat.parent.name)] = (state, int(ppid), int(pgrp), command)
    return found


def group(pgid: int) -> list[int]:
    """The live (not zombie) processes of a process group."""
    return [pid for pid, (state, _, pgrp, _) in processes().items() if pgrp == pgid and state != "Z"]


def with_name(name: str) -> list[int]:
    return [pid for pid, (state, _, _, command) in processes().items() if name in command and state != "Z"]


def listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp* shows them) of sockets listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, _, state = line.split()[1:4]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1, as IPv4 and IPv4-mapped IPv6


@pytest.fixture
def clean_client_env() -> Iterator[None]:
    """A Connect client sets SPARK_CONNECT_MODE_ENABLED for the process (which would turn the
    classic session's tests, and the child processes they start, to Connect): removed again
    after the test. And no token comes from the environment: only the URL's."""
    names = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_CONNECT_AUTHENTICATE_TOKEN", "SPARK_REMOTE")
    saved = {name: os.environ.pop(name) for name in names if name in os.environ}
    yield
    for name in names:
        os.environ.pop(name, None)
    os.environ.update(saved)


# -- confs, without a server ---------------------------------------------------------------------


def test_connect_confs_name_the_jars_and_the_plugins() -> None:
    confs = connect_confs()
    assert set(confs) == {"spark.jars", "spark.plugins", COMMAND_CLASSES, STATUS_CLASSES}
    assert confs["spark.plugins"] == CONNECT_SERVER_PLUGIN == "io.github.rspy.spark.connect.ServerPlugin"
    assert (
        confs[COMMAND_CLASSES] == CONNECT_COMMAND_PLUGIN == "io.github.rspy.spark.connect.RspyCommandPlugin"
    )
    assert confs[STATUS_CLASSES] == CONNECT_STATUS_PLUGIN == "io.github.rspy.spark.connect.RspyStatusPlugin"
    jars = confs["spark.jars"].split(",")
    assert {Path(j).name for j in jars} >= {"reactive-streams-py-bridge.jar", "reactive-streams-py-spark.jar"}
    with pytest.raises(rs.ReactiveStreamsError, match=r"^extra_jars entry does not exist: "):
        connect_confs("/no/such.jar")


def test_configure_gives_an_embedded_connect_server_the_plugins(clean_client_env: None) -> None:
    builder = SparkSession.Builder().remote("local[2]").config(COMMAND_CLASSES, "com.example.Mine")
    assert builder._options["spark.remote"] == "local[2]"  # where PySpark keeps it
    options = configure(configure(builder))._options  # twice: nothing twice
    assert options[COMMAND_CLASSES] == f"com.example.Mine,{CONNECT_COMMAND_PLUGIN}"
    assert options[STATUS_CLASSES] == CONNECT_STATUS_PLUGIN
    assert options["spark.jars"] == connect_confs()["spark.jars"]
    # spark.api.mode=connect with a master starts an embedded server too
    options = configure(
        SparkSession.Builder().master("local[1]").config("spark.api.mode", "connect")
    )._options
    assert options[COMMAND_CLASSES] == CONNECT_COMMAND_PLUGIN
    # a classic session gets the jars only, as before
    assert set(configure(SparkSession.Builder().master("local[1]"))._options) == {
        "spark.master",
        "spark.jars",
    }


def test_configure_refuses_a_builder_for_a_running_server(clean_client_env: None) -> None:
    builder = SparkSession.Builder().remote("sc://localhost:15002/;token=s3cr3t")
    with pytest.raises(rs.ReactiveStreamsError) as refused:
        configure(builder)
    message = str(refused.value)
    assert "cannot add jars to a running Spark Connect server (sc://localhost:15002)" in message
    assert "python -m reactive_streams.spark.connect_server" in message and "connect_confs()" in message
    assert "s3cr3t" not in message
    assert "spark.jars" not in builder._options


# -- servers that do not start --------------------------------------------------------------------


def test_bad_arguments_are_refused_before_anything_starts() -> None:
    with pytest.raises(rs.ReactiveStreamsError, match=r"^extra_jars entry does not exist: /no/such\.jar"):
        ConnectServer.start(extra_jars="/no/such.jar")
    with pytest.raises(
        ValueError, match=r"conf must not set spark\.connect\.grpc\.binding\.port: use .* port"
    ):
        ConnectServer.start(conf={"spark.connect.grpc.binding.port": "15002"})
    with pytest.raises(ValueError, match="port must be"):
        ConnectServer.start(70000)


@pytest.mark.timeout(120)
def test_a_server_that_exits_at_start_up_fails_with_its_log() -> None:
    name = f"rspy-bad-{uuid.uuid4().hex[:8]}"
    with pytest.raises(rs.ReactiveStreamsError) as failed:
        ConnectServer.start(conf={"spark.app.name": name, "spark.driver.memory": "lots"})
    assert str(failed.value).startswith("the Spark Connect server exited during start-up (exit code 1); ")
    assert "Invalid maximum heap size: -Xmxlots" in str(failed.value)
    assert not with_name(name)


@pytest.mark.timeout(120)
def test_a_server_not_ready_in_time_is_killed(tmp_path: Path) -> None:
    name = f"rspy-slow-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "server.log"
    log.write_text("Spark Connect server started at: 127.0.0.1:1 (an old run's line, not this one's)\n")
    started = time.monotonic()
    with pytest.raises(rs.ReactiveStreamsError, match=r"^the Spark Connect server did not start within 1 s"):
        ConnectServer.start(conf={"spark.app.name": name}, ready_timeout=1, log=log)
    assert time.monotonic() - started < 10
    assert not with_name(name)
    assert log.read_text().startswith("Spark Connect server started at")  # appended to, and kept


def test_a_server_is_killed_when_python_exits(tmp_path: Path) -> None:
    """The atexit hook, on a stand-in process (a real server would cost a minute): a child in its
    own process group, as start() makes, is gone when the interpreter exits without stop()."""
    script = (
        "import subprocess, sys\n"
        "from pathlib import Path\n"
        "from reactive_streams.spark.connect_server import ConnectServer\n"
        "child = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
        f"ConnectServer(child, 1, None, Path({str(tmp_path / 'log')!r}), False)\n"
        "print(child.pid, flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert not group(int(done.stdout))


@pytest.mark.timeout(START)
@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_server_stops_within_5_s_of_the_process_that_started_it_dying(
    tmp_path: Path, kill: signal.Signals
) -> None:
    """No atexit runs on either signal: the server sees its stdin end (ServerPlugin) and exits."""
    script = (
        "import time\n"
        "from reactive_streams.spark.connect_server import ConnectServer\n"
        f"server = ConnectServer.start(0, log={str(tmp_path / 'log')!r})\n"
        "print(server.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    server = 0
    try:
        line = _read_line(owner, START - 60)
        assert line.strip().isdigit(), (line, owner.poll())
        server = int(line)
        assert group(server)
        owner.send_signal(kill)
        owner.wait(10)
        died = time.monotonic()
        while group(server) and time.monotonic() - died < 15.0:  # halted 4 s after at the latest
            time.sleep(0.1)
        assert not group(server), f"the server outlived its owner by 15 s ({kill.name})"
        said = (tmp_path / "log").read_text()
        assert "the process that started this Spark Connect server has ended" in said
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        if server and group(server):
            os.killpg(server, signal.SIGKILL)
        assert owner.stdout is not None
        owner.stdout.close()


# -- the command line: a server of its own ---------------------------------------------------------


def _read_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    return process.stdout.readline() if ready else ""


@pytest.mark.timeout(START)
def test_the_command_line_prints_the_url_and_stops_the_server_on_sigterm() -> None:
    command = [sys.executable, "-m", "reactive_streams.spark.connect_server", "--port", "0"]
    cli = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = _read_line(cli, 240)
        assert URL.match(line.strip()), (line, cli.poll())
        port = int(URL.match(line.strip()).group(1))  # type: ignore[union-attr]
        assert listening_addresses(port) <= LOOPBACK and listening_addresses(port)
        (server,) = [pid for pid, (_, ppid, _, _) in processes().items() if ppid == cli.pid]
        assert group(server) == [server]  # spark-submit execs the JVM, in a process group of its own
        cli.send_signal(signal.SIGTERM)
        assert cli.wait(60) == 0
        assert not group(server)
        assert not listening_addresses(port)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
        assert cli.stdout is not None and cli.stderr is not None
        cli.stdout.close()
        cli.stderr.close()


# -- one server, shared by the tests below (the last one kills it) ---------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[ConnectServer]:
    with ConnectServer.start(0) as started:
        yield started


@pytest.mark.timeout(START)
def test_a_client_runs_queries_on_the_server(server: ConnectServer, clean_client_env: None) -> None:
    assert URL.match(server.url) and server.url == f"sc://localhost:{server.port}/;token={server.token}"
    assert server.running and repr(server).endswith(f"pid={server.pid} running>")
    assert listening_addresses(server.port) <= LOOPBACK and listening_addresses(server.port)
    spark = SparkSession.builder.remote(server.url).create()
    try:
        assert type(spark).__module__ == "pyspark.sql.connect.session"
        assert spark.range(5).count() == 5
    finally:
        spark.stop()


@pytest.mark.timeout(120)
def test_a_client_without_the_token_is_refused(server: ConnectServer, clean_client_env: None) -> None:
    spark = SparkSession.builder.remote(f"sc://localhost:{server.port}").create()
    try:
        with pytest.raises(Exception, match=r"UNAUTHENTICATED|No authentication token"):
            spark.range(1).count()
    finally:
        spark.stop()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("token", [";token=not-the-servers", ""])
def test_a_client_the_server_refuses_gets_one_line_that_says_so_from_each_function(
    server: ConnectServer, clean_client_env: None, token: str
) -> None:
    """A wrong token, or none: `register_publisher`, `jvm_publisher` and
    `dataframe_from_publisher` each fail with one line naming the server's refusal and the fix,
    not grpc's repr; the registered publisher is never subscribed."""
    from reactive_streams import spark as rss

    spark = SparkSession.builder.remote(f"sc://localhost:{server.port}/{token}").create()
    refused = (
        r"^the Spark Connect server refused this client: .* \(UNAUTHENTICATED\); give the server's token"
    )
    try:
        source = Spy(rs.from_iterable([1, 2]))
        with pytest.raises(rs.ReactiveStreamsError) as registering:
            rss.register_publisher(spark, "events", source)
        message = str(registering.value)
        assert re.search(refused, message.split(": ", 1)[1]) and "\n" not in message, message
        assert "Rendezvous" not in message and "debug_error_string" not in message
        assert not source.subscribed and source.delivered == 0  # nothing of it ever started
        probe = Probe(initial=3)
        rss.jvm_publisher(spark, "longs", "3").subscribe(probe)
        probe.await_done()
        assert isinstance(probe.error, rs.ReactiveStreamsError) and re.search(refused, str(probe.error))
        assert "\n" not in str(probe.error) and probe.items == []
        with pytest.raises(rs.ReactiveStreamsError, match=refused):
            rss.dataframe_from_publisher(spark, rs.from_iterable([(1,)]), "a long")
    finally:
        spark.stop()


@pytest.mark.timeout(60)
def test_kill_ends_the_server_and_its_process_group(server: ConnectServer) -> None:
    log = server.log_path
    assert log.exists() and group(server.pid)
    server.kill()
    assert not server.running and not group(server.pid) and not log.exists()
    server.stop()  # nothing left to do
    server.kill()
    assert repr(server).endswith("ended>")
