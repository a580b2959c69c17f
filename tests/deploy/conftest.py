"""The deployment tests' cluster: hosts made of network namespaces, a standalone Spark master and
two workers and Spark's own Connect server on hosts of their own (scripts/netns_cluster.py). One
cluster for the session, on one xdist worker (tests/conftest.py's `worker_group`: the hosts'
names are fixed, and a second worker making the cluster would first remove the first's), made
by the first test that needs it and removed at the end, or by the next run if this one is killed.
Where namespaces cannot be made (not root, no ``ip``), the tests skip and say why."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def kit() -> Any:
    """scripts/netns_cluster.py, loaded as a module (scripts/ is not a package)."""
    name = "netns_cluster"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "netns_cluster.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def cluster() -> Iterator[Any]:
    netns_cluster = kit()
    reason = netns_cluster.available()
    if reason is not None:
        pytest.skip(f"no cluster of namespace hosts here: {reason}")
    support = ROOT / "build" / "test-jars" / "reactive-streams-py-spark-test-support.jar"
    with netns_cluster.Cluster(
        connect_jars=[str(support)],
        connect_confs={"spark.rspy.connect.registrars": "io.github.rspy.spark.testing.ConnectTestStreams"},
    ) as made:
        yield made


def thin_client_process(cluster: Any, script: Path, *args: str) -> subprocess.Popen[str]:
    """``script`` with ``args`` in a `pyspark-client` 4.2.0 thin client on the client host,
    started (its output piped): for a test that acts on the cluster while the client runs."""
    netns_cluster = kit()
    client = netns_cluster.thin_client("4.2.0")
    return subprocess.Popen(
        cluster.command("client", [str(client), str(script), *args]),
        env=netns_cluster.thin_environment(client),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_file(path: Path, seconds: float, process: subprocess.Popen[str]) -> None:
    """Until ``path`` exists (a step the client reached); fails, with its output, if the client
    ends first or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            out, err = process.communicate(timeout=30) if process.poll() is None else process.communicate()
            pytest.fail(f"no {path.name} from the client (exit {process.returncode}):\n{out}\n{err[-4000:]}")
        time.sleep(0.1)
