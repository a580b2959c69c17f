"""Every Python block of README.md and docs/*.md runs as written.

Each page's blocks run in order, each in a fresh interpreter (as a user pasting it into a new
file would), in one working directory per page whose ``libs/`` folder holds the jars the docs
name (Reactor, RxJava, Pekko: the build's test jars). A comment on the line before a block
changes how it runs: ``<!-- doc-test: save NAME.py -->`` also saves it under that name for
later blocks to import, ``<!-- doc-test: pytest -->`` runs it with pytest instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import ROOT

# docs/tck.md has its own test, which also checks the TCK's verdicts: tests/tck/test_docs_examples.py
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "tck.md")]
_BLOCK = re.compile(r"(?:<!-- doc-test: (?P<marker>[^>]*?) -->\n)?```python\n(?P<code>.*?)```", re.S)


@dataclass
class Block:
    page: Path
    line: int
    code: str
    marker: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    found = []
    for match in _BLOCK.finditer(text):
        line = text.count("\n", 0, match.start("code"))
        found.append(Block(page, line, match.group("code"), match.group("marker") or ""))
    return found


def test_every_page_has_its_blocks_found() -> None:
    assert len(blocks(ROOT / "README.md")) >= 3
    markers = {b.marker.split()[0] for page in PAGES for b in blocks(page) if b.marker}
    assert markers <= {"save", "pytest"}, markers


def _run(block: Block, workdir: Path) -> subprocess.CompletedProcess[str]:
    if block.marker.startswith("save "):
        (workdir / block.marker.split()[1]).write_text(block.code)
    if block.marker == "pytest":
        path = workdir / f"test_doc_{block.line}.py"
        path.write_text(block.code)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path.name]
    else:
        command = [sys.executable, "-c", block.code]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("RS_TCK_CLASSPATH", None)
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.jvm
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
@pytest.mark.timeout(960)  # its subprocess may take 900 s
def test_page_blocks_run_as_written(page: Path, tmp_path: Path, test_jars: list[str]) -> None:
    libs = tmp_path / "libs"
    libs.mkdir()
    for jar in (ROOT / "build" / "test-jars").glob("*.jar"):
        (libs / jar.name).symlink_to(jar)
    for block in blocks(page):
        result = _run(block, tmp_path)
        assert result.returncode == 0, (
            f"{block.where}: the block exited {result.returncode}\n--- stdout\n{result.stdout[-3000:]}"
            f"\n--- stderr\n{result.stderr[-6000:]}"
        )
