"""A thin client on a host of its own: `pyspark-client` (no `pyspark`, no jars, no Java on
PATH), this library's wheel and pyarrow, against Spark's own Connect server (started with
`start-connect-server.sh` and `rss.connect_confs()`) on another host, its executors on two more:
every Connect feature of the library, through the TLS proxy in front of the server, with its
token. The newest `pyspark-client` and one older minor, against the installed PySpark's server
(Spark Connect keeps older clients working)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import kit

HERE = Path(__file__).resolve().parent
CLIENTS = ["4.2.0", "4.1.3"]  # the newest pyspark-client on the index, and the minor before it

pytestmark = [pytest.mark.jvm, pytest.mark.timeout(900)]


@pytest.mark.parametrize("version", CLIENTS)
def test_a_thin_client_runs_every_connect_feature_from_its_own_host(
    cluster: Any, version: str, tmp_path: Path
) -> None:
    netns_cluster = kit()
    client = netns_cluster.thin_client(version)
    done = cluster.run(
        "client",
        [str(client), str(HERE / "thin_client_script.py"), cluster.connect_url(), str(tmp_path)],
        timeout=600,
        env=netns_cluster.thin_environment(client),
    )
    assert done.returncode == 0, done.stderr[-6000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["java"] is None and outcome["java_home"] is None and not outcome["pyspark_jars"]
    assert outcome["dataframe_rows"] == 1000 and outcome["publisher_from_dataframe"]
    assert outcome["jvm_publisher"]
    assert outcome["driver_streaming"]
    demand = outcome["driver_demand"]
    assert demand["largest_request"] <= 2_000 and demand["max_buffered"] <= 2_000, demand
    assert demand["requested_here"] == demand["requested_there"] >= 5_000, demand
    # A partitioned source -> map_partitions -> a partitioned sink, and -> Parquet: each element
    # once, made and processed in the executors of both worker hosts
    hosts = [netns_cluster.address("worker1"), netns_cluster.address("worker2")]
    for target in ("sink", "parquet"):
        assert outcome["partitioned"][target] == {"each_once": True, "made_on": hosts, "processed_on": hosts}
    assert outcome["jvm_factory"] == [3000, 3000]
    # Through the TLS proxy with the token, the library's own channel too (not the client's)
    assert cluster.connect_url().startswith(
        f"sc://{netns_cluster.address('connect')}:{netns_cluster.PROXY_PORT}/;token="
    )
    assert outcome["own_channel_fell_back"] == [] and outcome["first_check_failed"] == []
    assert outcome["bridge_modules_loaded"] == []  # installed (base dependencies), never loaded
