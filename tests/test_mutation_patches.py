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


def applied_in(root: Path, patch: Path) -> bool:
    """Whether the tree at ``root`` holds ``patch``'s change: its added lines where its removed
    ones were (``git apply --check --reverse`` succeeds), whatever the patch adds or removes."""
    result = subprocess.run(
        ["git", "apply", "--check", "--reverse", str(patch)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to check the patches")
@pytest.mark.parametrize("patch", PATCHES, ids=[patch.stem for patch in PATCHES])
def test_no_planted_bug_is_applied_in_the_code(patch: Path) -> None:
    """By each patch's own lines, not a marker: a patch that only deletes lines, or whose marker
    is written otherwise, is recognised as well."""
    assert not applied_in(ROOT, patch), f"{patch.name}'s planted bug is in the code: take it out ({patch})"


KINDS = {
    "adds": ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 2\nb += 1  # planted\nc = 3\n"),
    "deletes-only": ("a = 1\nb = 2\nc = 3\nd = 4\n", "a = 1\nc = 3\nd = 4\n"),
    "changes-case": ("a = 1\nok = True\nc = 3\n", "a = 1\nok = true\nc = 3\n"),
}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to check the patches")
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_guard_sees_a_patch_of_each_kind_applied(tmp_path: Path, kind: str) -> None:
    """A patch that adds a line, one that only deletes, one that changes a letter's case: each is
    seen once applied, and not before (a marker finds only the first)."""
    before, after = KINDS[kind]
    (tmp_path / "code.py").write_text(before)
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "code.py").write_text(after)
    diff = subprocess.run(
        ["diff", "-u", "--label", "a/code.py", "--label", "b/code.py", "code.py", "planted/code.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    patch = tmp_path / f"{kind}.patch"
    patch.write_text(diff)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    assert not applied_in(tmp_path, patch)
    subprocess.run(["git", "apply", str(patch)], cwd=tmp_path, check=True)
    assert (tmp_path / "code.py").read_text() == after
    assert applied_in(tmp_path, patch)


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
