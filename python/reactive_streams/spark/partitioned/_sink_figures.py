"""A partitioned sink's figures: what its write tasks handed to their subscribers and how long
the subscribers held them, summed by the streaming write's commit on the driver.

Spark asks only JVM sinks for metrics (``ReportsSinkMetrics``); a Python data source's commit
runs in a Python worker that the driver's JVM starts, with no way to the user's process or to
the query's progress. So the commit writes them to a file of the driver's host, one a query
(`figures_path`), read back by `rss.sink_progress` (classic: in the driver's own process; Spark
Connect: the server plugin's ``sink_progress`` op reads the same file, by the same rule).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

__all__ = ["figures_path", "read_figures", "record_commit"]

_log = logging.getLogger("reactive_streams.spark")

FOLDER = "reactive-streams-sinks-{uid}"
"""The figures' folder in the driver's temporary folder (``TMPDIR``, ``TEMP``, ``TMP``, else
``/tmp``; the JVM's ``SinkFigures`` finds it by the same rule), one a user, readable by it only."""


def figures_path(query_id: str) -> Path:
    """The file of the query ``query_id``'s figures on this host."""
    try:
        canonical = str(uuid.UUID(query_id))
    except (TypeError, ValueError):
        canonical = None
    if canonical != query_id:  # no path of the caller's making
        raise ValueError(f"a query id is a UUID in its canonical form, got {query_id!r}")
    return Path(tempfile.gettempdir()) / FOLDER.format(uid=os.getuid()) / f"{query_id}.json"


def record_commit(name: str, messages: list[Any], batch_id: int) -> None:
    """Add a committed micro-batch's tasks (their `SinkCommit`s) to its query's figures. Never
    fails the commit: a figure that cannot be written is logged and lost."""
    commits = [m for m in messages if getattr(m, "query_id", None)]
    if not commits:
        return  # a batch write, or tasks of a library too old to say
    path = figures_path(commits[0].query_id)
    try:
        before = read_figures(commits[0].query_id) or {}
        rows = sum(m.delivered for m in commits)
        waited = max(m.wait_ms for m in commits)
        figures = {
            "queryId": commits[0].query_id,
            "sink": name,
            "batchId": batch_id,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z",
            "lastBatchRows": rows,
            "lastBatchTasks": len(commits),
            "lastBatchWaitMs": waited,
            "lastBatchTaskWaitMs": sum(m.wait_ms for m in commits),
            "deliveredRows": int(before.get("deliveredRows", 0)) + rows,
            "totalWaitMs": int(before.get("totalWaitMs", 0)) + waited,
            "batches": int(before.get("batches", 0)) + 1,
        }
        _write_whole(path, json.dumps(figures, sort_keys=True))
    except (OSError, ValueError) as exc:
        _log.warning("sink %r: the figures of batch %d were not written to %s: %s", name, batch_id, path, exc)


def read_figures(query_id: str) -> dict[str, Any] | None:
    """The figures of query ``query_id`` written on this host, or None if none were."""
    try:
        return json.loads(figures_path(query_id).read_text())  # type: ignore[no-any-return]
    except FileNotFoundError:
        return None


def _write_whole(path: Path, text: str) -> None:
    """``text`` into ``path`` at once (a reader sees the old file or the new), in a folder of
    this user's only: one another user made first is refused."""
    folder = path.parent
    folder.mkdir(mode=0o700, exist_ok=True)
    if folder.stat().st_uid != os.getuid():
        raise OSError(f"{folder} belongs to another user")
    fd, staged = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(staged, path)
    except BaseException:
        Path(staged).unlink(missing_ok=True)
        raise
