"""Beyond one host (issue 46, part 9), on the kit's cluster of namespace hosts
(scripts/netns_cluster.py; root): what a second worker host adds, and what crossing a link costs.

- ``scale-out``: classic PySpark, the driver on the client host, a partitioned source of 4
  partitions whose rows each cost some Python work (8 SHA-256 digests) into ``noop``, with one
  executor of one core (``spark.cores.max=1``: one worker host) against two (``2``, spread over
  the two worker hosts, Spark's default). Rows/s over the micro-batch's ``addBatch`` time, best
  of ``--repeat`` after one unmeasured run. The hosts are namespaces of one machine of two
  cores: two executors can at best double the rate, and the driver, the Connect server's idle
  executors and the kernel share those cores.
- ``link``: a thin client's publisher feeding the driver-side source over Spark Connect, through
  the TLS proxy, into ``noop``: the client on a host of its own against the same client on the
  Connect server's host. Rows/s over the query's wall time, best of ``--repeat``.

    sudo .venv/bin/python benchmarks/deploy_cluster.py [--rows N] [--repeat R] [--quick]

``--quick`` prints and writes nothing; otherwise the ``deploy-cluster`` section of RESULTS.md and
``results/deploy-cluster.json`` are written. The kit's cluster is made, and removed at the end.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

try:
    from . import _report
except ImportError:  # run as a script
    import _report  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _kit() -> Any:
    spec = importlib.util.spec_from_file_location("netns_cluster", ROOT / "scripts" / "netns_cluster.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["netns_cluster"] = module
    spec.loader.exec_module(module)
    return module


def _last_json(done: Any, what: str) -> dict[str, Any]:
    if done.returncode != 0:
        raise SystemExit(f"{what} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=None, help="rows per partition (20,000; --quick: 5,000)")
    parser.add_argument("--feed", type=int, default=None, help="rows per feed run (300,000; --quick: 50,000)")
    parser.add_argument("--repeat", type=int, default=None, help="measured runs (3; --quick: 1)")
    parser.add_argument("--quick", action="store_true", help="a cheap check: prints, writes nothing")
    args = parser.parse_args()
    rows = args.rows or (5_000 if args.quick else 20_000)
    feed = args.feed or (50_000 if args.quick else 300_000)
    repeat = args.repeat or (1 if args.quick else 3)

    kit = _kit()
    reason = kit.available()
    if reason is not None:
        raise SystemExit(f"no cluster of namespace hosts here: {reason}")
    rows_out: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    with kit.Cluster() as cluster, tempfile.TemporaryDirectory() as work:
        scale: dict[int, dict[str, Any]] = {}
        for cores in (1, 2):
            script = [sys.executable, str(HERE / "_deploy_partitioned.py"), cluster.master_url(), str(cores)]
            done = cluster.run(
                "client", [*script, str(rows), str(repeat)], timeout=1200, env=cluster.environment("client")
            )
            scale[cores] = _last_json(done, f"the partitioned source on {cores} executor(s)")
        one, two = max(scale[1]["rates"]), max(scale[2]["rates"])
        rows_out += [
            {
                "scenario": "partitioned source, 4 partitions, 1 executor (1 worker host)",
                "rows/s": one,
                "executor hosts": ", ".join(h for h in scale[1]["hosts"] if h != kit.address("client")),
                "÷ one host": "-",
            },
            {
                "scenario": "the same, 2 executors (2 worker hosts)",
                "rows/s": two,
                "executor hosts": ", ".join(h for h in scale[2]["hosts"] if h != kit.address("client")),
                "÷ one host": f"{two / one:.2f}×",
            },
        ]
        client = kit.thin_client("4.2.0")
        feeds: dict[str, float] = {}
        for host in ("connect", "client"):
            folder = Path(work) / host
            folder.mkdir()
            script = [
                str(client),
                str(HERE / "_deploy_feed.py"),
                cluster.connect_url(),
                str(feed),
                str(repeat),
            ]
            done = cluster.run(host, [*script, str(folder)], timeout=1200, env=kit.thin_environment(client))
            feeds[host] = max(_last_json(done, f"the feed from the {host} host")["rates"])
        rows_out += [
            {
                "scenario": "driver-side source fed by a thin client on the Connect server's host",
                "rows/s": feeds["connect"],
                "executor hosts": "-",
                "÷ one host": "-",
            },
            {
                "scenario": "the same client on a host of its own (across the link)",
                "rows/s": feeds["client"],
                "executor hosts": "-",
                "÷ one host": f"{feeds['client'] / feeds['connect']:.2f}× of on the server's host",
            },
        ]
        extra = {"scale_out": scale, "feeds": feeds, "rows_per_partition": rows, "feed_rows": feed}
    for row in rows_out:
        print(" | ".join(f"{v:,.0f}" if isinstance(v, float) else str(v) for v in row.values()))
    if args.quick:
        return
    _report.write(
        "deploy-cluster",
        "Beyond one host: a second worker host, and a link between client and server",
        rows_out,
        [
            "The kit's cluster (scripts/netns_cluster.py): each host a network namespace of this one "
            "machine, joined by a bridge over veth links (no delay added); a standalone master, two "
            "workers (2 cores each), Spark's own Connect server behind nginx with TLS and a token.",
            f"Scale-out: classic PySpark, the driver on the client host; 4 partitions of {rows:,} rows, "
            "each row 8 SHA-256 digests in the executors' Python; rows/s over `addBatch`, best of "
            f"{repeat} after one unmeasured run. Two executors are bound by the machine's two cores, "
            "which the driver and the kernel share: 2× is the ceiling, not the target.",
            f"Link: {feed:,} rows `(long, string)` from a `pyspark-client` 4.2.0 publisher through "
            "`register_publisher` into the driver-side source (maxRecordsPerTrigger 20,000), into "
            f"`noop`; rows/s over the query's wall time, best of {repeat} after one unmeasured run.",
            "What the link costs here: nothing measurable. Both placements run on the same two cores "
            "(every host is a namespace of this machine), and a veth link adds no delay; the ratio "
            "is within the spread of runs on two shared cores. A link with delay could not be made: "
            "this machine's kernel has no `netem` queueing discipline (`tc qdisc add ... netem` says "
            "the kind is unknown). Over a real link each `request(n)` of the source's demand waits "
            "a round trip, which `prefetch` (one micro-batch's worth requested ahead) hides while "
            "the link's bandwidth and round trip let it.",
        ],
        extra,
    )


if __name__ == "__main__":
    main()
