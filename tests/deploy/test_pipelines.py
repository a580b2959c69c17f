"""A Declarative Pipeline run from a thin client on its own host, against Spark's own Connect
server (through the TLS proxy, with the token) and its executors on the two worker hosts:
examples/pipeline/ as it stands, run twice with docs/deploy.md's command, each element landing
once. The same example runs on one host in tests/spark/test_pipelines.py."""

from __future__ import annotations

import collections
import glob
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT, kit

pytestmark = [pytest.mark.jvm, pytest.mark.timeout(900)]

TABLES = """
import json, sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
print(json.dumps({t: [list(r) for r in spark.table(t).collect()] for t in sys.argv[2:]}))
spark.stop()
"""


def test_the_example_pipeline_runs_twice_from_a_thin_client(cluster: Any, tmp_path: Path) -> None:
    netns_cluster = kit()
    client = netns_cluster.thin_client("4.2.0")
    example = tmp_path / "pipeline"  # a folder every host sees (one machine's disk)
    shutil.copytree(ROOT / "examples" / "pipeline", example, ignore=shutil.ignore_patterns("__pycache__"))
    env = {
        **netns_cluster.thin_environment(client),
        "VENV": str(client.parent.parent),
        "PIPELINE": str(example),
        "CONNECT_URL": cluster.connect_url(),
    }
    command = ["/bin/bash", "-c", netns_cluster.doc_commands()["pipeline-run"]]  # PATH: the client's bin
    for added in (500, 300):
        subprocess.run([sys.executable, "add_orders.py", str(added)], cwd=example, check=True, timeout=60)
        done = cluster.run("client", command, timeout=600, env=env)
        output = done.stdout + done.stderr
        assert done.returncode == 0 and "Run is COMPLETED." in output, output[-6000:]
        assert "UNKNOWN_RESPONSE" not in output

    script = tmp_path / "tables.py"
    script.write_text(TABLES)
    asked = cluster.run(
        "client",
        [str(client), str(script), cluster.connect_url(), "orders_raw", "orders_doubled", "jvm_offsets"],
        timeout=300,
        env=netns_cluster.thin_environment(client),
    )
    assert asked.returncode == 0, asked.stderr[-4000:]
    tables = json.loads(asked.stdout.strip().splitlines()[-1])
    expected = [(p, i) for p in range(2) for i in range(800)]
    for name in ("orders_raw", "orders_doubled"):
        assert sorted((p, i) for p, i, _ in tables[name]) == expected, name
    jvm = tables["jvm_offsets"]  # made in the executors' JVMs on the worker hosts
    assert sorted((p, o) for p, o, _ in jvm) == [(p, o) for p in range(3) for o in range(1000)]
    assert len({pid for _, _, pid in jvm}) == 2  # the two executors, one on each worker host
    audited = [
        (p, i)
        for file in glob.glob(f"{example}/audit/*.json")
        for p, i, _ in json.loads(Path(file).read_text())
    ]
    assert not [k for k, n in collections.Counter(audited).items() if n > 1]
    assert sorted(audited) == expected
