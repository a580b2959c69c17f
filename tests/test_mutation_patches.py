"""The planted bugs of tests/mutations/ (see tests/MUTATIONS.md) still apply to today's code: a
patch that no longer applies plants nothing, and `tests/mutations/run.py` would only call it
STALE when someone runs it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PATCHES = sorted((ROOT / "tests" / "mutations").glob("*.patch"))


def test_there_are_planted_bugs() -> None:
    assert len(PATCHES) >= 20


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to check the patches")
@pytest.mark.parametrize("patch", PATCHES, ids=[patch.stem for patch in PATCHES])
def test_each_planted_bug_applies_to_todays_code(patch: Path) -> None:
    result = subprocess.run(
        ["git", "apply", "--check", str(patch)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, (
        f"{patch.name} no longer applies: refresh it and run it again (tests/MUTATIONS.md)\n{result.stderr}"
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to search the tracked files")
def test_no_planted_bug_is_left_in_the_code() -> None:
    """Each plant marks its line with the marker below; one committed by mistake would ship the bug."""
    marker = "PLANT" + "ED"  # not this file's own match
    result = subprocess.run(
        ["git", "grep", "-l", marker, "--", ".", ":(exclude)tests/mutations/*.patch"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout == "", f"a planted bug is in the code: {result.stdout.split()}"
