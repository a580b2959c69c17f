"""The operators' types: ``mypy --strict`` infers the element type through fluent chains and
through `pipe` (tests/typing/chains.py holds the chains, each with ``assert_type``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT

CHAINS = ROOT / "tests" / "typing" / "chains.py"


@pytest.mark.timeout(360)  # mypy, given up to 300 s
def test_mypy_infers_the_element_type_through_chains() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(CHAINS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in 1 source file" in done.stdout
