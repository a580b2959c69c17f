"""Faults that loopback cannot make, on the cluster of namespace hosts: a client whose link
goes down (its packets vanish, nobody gets a reset) sees its streams end within the documented
time, and starts again once the link is back; a worker host lost mid-batch has its tasks rerun
on the other, each row once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from reactive_streams.spark._connect._wire import KEEPALIVE_EVERY, LOST_AFTER

from .conftest import kit, thin_client_process, wait_for_file

HERE = Path(__file__).resolve().parent
SLACK = 2.0  # the watchdog's own tick and two busy cores

pytestmark = [pytest.mark.jvm, pytest.mark.timeout(900)]


def _streams_lost(
    cluster: Any, tmp_path: Path, lose: Any, restore: Any
) -> tuple[dict[str, Any], float, float]:
    """partition_script.py's streams open on the client host; ``lose()`` (a link cut, a host
    killed) once they flow, ``restore()`` once the client saw them end. The outcome, when the
    loss was made, and when the server's log named the lost client (0 if it never did)."""
    process = thin_client_process(cluster, HERE / "partition_script.py", cluster.connect_url(), str(tmp_path))
    server_noticed = 0.0
    try:
        wait_for_file(tmp_path / "ready", 180, process)
        lost_at = time.time()
        lose()
        try:
            wait_for_file(tmp_path / "lost", 120, process)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not server_noticed:
                server_log = sorted((cluster.state / "connect" / "logs").glob("*.out"))
                if any("ClientLostException" in p.read_text(errors="replace") for p in server_log):
                    server_noticed = time.time() - lost_at
                time.sleep(0.5)
        finally:
            restore()
        (tmp_path / "mended").write_text("")
        out, err = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err[-4000:]
    return json.loads(out.strip().splitlines()[-1]), lost_at, server_noticed


def test_a_client_cut_off_from_the_server_sees_its_streams_end_and_starts_again(
    cluster: Any, tmp_path: Path
) -> None:
    """The client's link down mid-stream: the subscriber of a JVM publisher gets
    `on_error(ConnectionLostError)` and the publisher a server query reads is cancelled, both
    within `LOST_AFTER` (5 s) of silence; the server's query fails with `ClientLostException`
    within its idle timeout; the client's threads of those streams end; with the link back, a
    new session streams."""
    outcome, cut_at, server_noticed = _streams_lost(
        cluster, tmp_path, lambda: cluster.cut("client"), lambda: cluster.mend("client")
    )
    assert outcome["ended"] and outcome["error"] == "ConnectionLostError", outcome
    assert outcome["cancelled"], outcome
    detected = outcome["error_at"] - cut_at
    cancelled = outcome["cancelled_at"] - cut_at
    print(
        f"cut off: on_error after {detected:.1f} s, cancel after {cancelled:.1f} s, "
        f"server {server_noticed:.1f} s; threads at the loss {outcome['threads_at_loss']}"
    )
    assert LOST_AFTER - KEEPALIVE_EVERY <= detected <= LOST_AFTER + SLACK, outcome
    assert cancelled <= LOST_AFTER + SLACK, outcome
    assert 0 < server_noticed <= 10 + 5 + SLACK  # idleTimeout, the lease's check, and the poll here
    assert outcome["threads_left"] == [], outcome
    assert outcome["again"]


def test_the_connect_servers_host_lost_ends_the_clients_streams_and_leaves_no_thread(
    cluster: Any, tmp_path: Path
) -> None:
    """The Connect server's host gone mid-stream (every process killed, its link cut: no reset
    comes): the client's subscriber gets `ConnectionLostError` and its publisher is cancelled
    within `LOST_AFTER` of silence, as for a cut link; the library's threads of those streams
    end; once the host and its server are back, a new session streams."""
    outcome, lost_at, _ = _streams_lost(
        cluster, tmp_path, lambda: cluster.kill_host("connect"), cluster.revive_connect
    )
    assert outcome["ended"] and outcome["error"] == "ConnectionLostError", outcome
    assert outcome["cancelled"], outcome
    detected = outcome["error_at"] - lost_at
    cancelled = outcome["cancelled_at"] - lost_at
    print(f"server host lost: on_error after {detected:.1f} s, cancel after {cancelled:.1f} s")
    assert LOST_AFTER - KEEPALIVE_EVERY <= detected <= LOST_AFTER + SLACK, outcome
    assert cancelled <= LOST_AFTER + SLACK, outcome
    assert outcome["threads_left"] == [], outcome
    assert outcome["again"]


def test_a_worker_host_lost_mid_batch_has_its_tasks_rerun_on_the_other_each_row_once(
    cluster: Any, tmp_path: Path
) -> None:
    """worker2 killed while its tasks run (every process SIGKILLed, its link cut, so the driver
    hears no reset): after `spark.network.timeout` the driver drops that executor, the tasks rerun
    on worker1's, the query goes on to its end, and Parquet holds each row exactly once; the rows
    made after the loss all come from worker1. worker2 is then brought back for the other tests."""
    victim, survivor = kit().address("worker2"), kit().address("worker1")
    script = [
        sys.executable,
        str(HERE / "partitioned_script.py"),
        cluster.master_url(),
        kit().address("master"),
        str(tmp_path),
        victim,
    ]
    process = subprocess.Popen(
        cluster.command("client", script),
        env=cluster.environment("client"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_file(tmp_path / "victim-busy", 300, process)
        cluster.kill_host("worker2")
        out, err = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        cluster.revive("worker2")
    assert process.returncode == 0, err[-4000:]
    outcome = json.loads(out.strip().splitlines()[-1])
    assert outcome["ended"] and outcome["exception"] is None, outcome
    assert outcome["rows"] == [[p, i] for p in range(4) for i in range(400)]  # each once
    assert outcome["hosts"] == sorted([victim, survivor])
    assert outcome["late_rows_from"] == [survivor]
