"""A streaming query restarted from its checkpoint after Spark's own Connect server was
restarted (`sbin/stop-connect-server.sh`, then the start command of docs/deploy.md): the
client's new session registers its source again, the query resumes at the committed offsets,
and Parquet holds every row once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import thin_client_process, wait_for_file

HERE = Path(__file__).resolve().parent

pytestmark = [pytest.mark.jvm, pytest.mark.timeout(900)]


def test_a_query_resumes_at_its_committed_offsets_after_the_connect_server_restarts(
    cluster: Any, tmp_path: Path
) -> None:
    process = thin_client_process(cluster, HERE / "restart_script.py", cluster.connect_url(), str(tmp_path))
    try:
        wait_for_file(tmp_path / "ready", 300, process)
        cluster.restart_connect()
        (tmp_path / "restarted").write_text("")
        out, err = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err[-4000:]
    outcome = json.loads(out.strip().splitlines()[-1])
    assert outcome["exception"] is None, outcome
    committed = outcome["committed_before"]
    assert len(committed) >= 3 and committed == list(range(len(committed))), outcome
    # The first batch after the restart is the one after the last committed (or the planned
    # one that was not), and starts where the checkpoint's offsets log says that one ended.
    first = outcome["first_batch_again"]
    assert first == committed[-1] + 1, outcome
    logged = (tmp_path / "ck" / "offsets" / str(first - 1)).read_text().splitlines()
    assert json.loads(logged[-1]) == outcome["start_offset_again"], (logged, outcome)
    assert outcome["missing"] == 0 and outcome["repeated"] == [] and outcome["rows"] == 2 * 3000, outcome
