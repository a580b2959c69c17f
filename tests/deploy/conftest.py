"""The deployment tests' cluster: hosts made of network namespaces, a standalone Spark master and
two workers and Spark's own Connect server on hosts of their own (scripts/netns_cluster.py). One
cluster for the session, on one xdist worker (tests/conftest.py's `worker_group`: the hosts'
names are fixed, and a second worker making the cluster would first remove the first's), made
by the first test that needs it and removed at the end, or by the next run if this one is killed.
Where namespaces cannot be made (not root, no ``ip``), the tests skip and say why."""

from __future__ import annotations

import importlib.util
import sys
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
