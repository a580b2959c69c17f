"""Python shipped to the workers (docs/deploy.md, Shipping Python to the workers): an archive of
a virtual environment with pyarrow and the library, made by the page's ``venv-pack`` command,
named by ``spark.archives``; the executors on both worker hosts run the partitioned source with
that environment's interpreter and library, not the driver's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import kit

HERE = Path(__file__).resolve().parent

pytestmark = [pytest.mark.jvm, pytest.mark.timeout(900)]


def test_the_executors_run_the_python_and_library_the_application_shipped(
    cluster: Any, tmp_path: Path
) -> None:
    netns_cluster = kit()
    archive = netns_cluster.packed_python()
    script = [
        sys.executable,
        str(HERE / "shipped_script.py"),
        cluster.master_url(),
        netns_cluster.address("master"),
    ]
    done = cluster.run(
        "client", [*script, str(archive), str(tmp_path)], timeout=600, env=cluster.environment("client")
    )
    assert done.returncode == 0, done.stderr[-6000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["exception"] is None, outcome
    assert outcome["rows"] == [[p, i] for p in range(4) for i in range(50)]  # each once
    assert outcome["hosts"] == sorted([netns_cluster.address("worker1"), netns_cluster.address("worker2")])
    workers = str(cluster.state)  # each worker's work folder is under the kit's state
    for prefix in outcome["prefixes"]:
        assert prefix.startswith(workers) and prefix.endswith("/environment"), outcome
        assert "/app-" in prefix  # unpacked into the executor's own folder of this application
    assert len(outcome["prefixes"]) >= 2  # one unpacked copy per executor
    for library in outcome["libraries"]:
        assert any(library.startswith(prefix + "/") for prefix in outcome["prefixes"]), outcome
    assert not any(p.startswith(outcome["driver_prefix"]) for p in outcome["prefixes"])
