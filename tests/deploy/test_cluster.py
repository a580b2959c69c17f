"""The cluster of namespace hosts (scripts/netns_cluster.py) and what runs on it: each host its
own address, nothing crossing by loopback, and the library's partitioned source on two worker
hosts, its rows made on both, each exactly once."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import kit

HERE = Path(__file__).resolve().parent

pytestmark = [pytest.mark.jvm, pytest.mark.timeout(900)]


def test_each_host_has_its_own_address_and_nothing_crosses_by_loopback(cluster: Any) -> None:
    """The client reaches the master at its address, and no host reaches it at 127.0.0.1: not
    the other hosts (each has a loopback of its own), nor the master's own (it binds its
    address, as a master other hosts reach must)."""
    status = cluster.status()
    assert status["workers"] == 2 and status["master"] == cluster.master_url()
    assert status["connect"] == cluster.connect_url()
    assert cluster.reachable("master", 7077)
    loopback = (
        "import socket,sys; s=socket.socket(); s.settimeout(2); sys.exit(s.connect_ex(('127.0.0.1', 7077)))"
    )
    for host in ("client", "worker1", "connect"):
        assert cluster.run(host, [sys.executable, "-c", loopback]).returncode != 0, host
    # and not the master's own: it binds its address only
    assert cluster.run("master", [sys.executable, "-c", loopback]).returncode != 0


def test_a_partitioned_source_runs_on_both_worker_hosts_each_row_once(cluster: Any, tmp_path: Path) -> None:
    """Classic PySpark, the driver on the client host and `--master spark://`: the source's
    partitions run in the executors of both worker hosts (each row says which), and Parquet
    holds each of its rows exactly once."""
    done = cluster.run(
        "client",
        [
            sys.executable,
            str(HERE / "partitioned_script.py"),
            cluster.master_url(),
            kit().address("master"),
            str(tmp_path),
        ],
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["ended"] and outcome["exception"] is None
    assert outcome["rows"] == [[p, i] for p in range(4) for i in range(400)]
    assert outcome["hosts"] == [kit().address("worker1"), kit().address("worker2")]
    assert outcome["executors"] == 2


def test_the_connect_server_started_as_the_docs_say_has_loaded_the_plugin(cluster: Any) -> None:
    """docs/deploy.md's start-connect-server.sh command, run on the server's host: the line the
    page tells a user to look for is in the server's log."""
    logs = "".join(p.read_text(errors="replace") for p in (cluster.state / "connect" / "logs").glob("*.out"))
    assert (
        "INFO DriverPluginContainer: Initialized driver component for plugin "
        "io.github.rspy.spark.connect.ServerPlugin." in logs
    )
