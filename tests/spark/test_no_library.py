"""A Python worker without this library: each partitioned path fails with the library's message,
which says what to ship, not cloudpickle's ModuleNotFoundError while Spark unpickles the task
(what a cluster whose workers' Python lacks it showed: docs/deploy.md, "Shipping Python")."""

from __future__ import annotations

from pathlib import Path

import pytest

from .kit import run_script

SHIP = (
    "cannot import reactive_streams (No module named 'reactive_streams'): ship it to the workers with "
    "pyarrow: an environment packed with them (venv-pack), in spark.archives=env.tar.gz#environment "
    "with PYSPARK_PYTHON=./environment/bin/python"
)


@pytest.mark.timeout(360)
def test_a_worker_without_the_library_says_what_to_ship(tmp_path: Path) -> None:
    outcome, _ = run_script("no_library_script.py", [str(tmp_path)], timeout=300)
    for path, where in [
        ("source", "source 'numbers': this worker's Python ("),
        ("sink", "sink 'counted': this worker's Python ("),
        ("map_partitions", "map_partitions: this worker's Python ("),
    ]:
        error = outcome[path]
        assert where in error and SHIP in error, (path, error[-3000:])
        assert "cloudpickle" not in error and "pickle.loads" not in error, (path, error[-3000:])
