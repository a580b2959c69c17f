"""Every Python block of docs/tck.md runs as written: the verification classes pass the TCK under
pytest (Reactor's jar on the TCK's classpath, as the page says), and the command line's
factories pass it through ``python -m reactive_streams.tck`` as the page runs them."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from ..conftest import ROOT
from .test_cli import run_cli
from .test_verdicts import run_pytest

pytestmark = pytest.mark.timeout(660)  # child processes, given up to 600 s each

PAGE = (ROOT / "docs" / "tck.md").read_text()
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE, re.MULTILINE | re.DOTALL)
VERIFICATIONS = [b for b in BLOCKS if re.search(r"^class Test\w+\(", b, re.MULTILINE)]
(FACTORIES,) = [b for b in BLOCKS if b not in VERIFICATIONS]
RUN = re.compile(r"^(\w+): (\w+)(?: \(Flow\))? on (\w+), (\d+) tests in [\d.]+ s: (\d+) passed, (\d+) failed")


def reactor_jars() -> list[str]:
    jars = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("reactor-core-*.jar"))
    if not jars:
        pytest.fail("build/test-jars has no reactor-core: run `gradle pythonJars` (./run-tests does)")
    return jars


def test_the_page_has_its_blocks() -> None:
    assert len(VERIFICATIONS) == 4
    assert "self.bridge.from_jvm(" in VERIFICATIONS[1]


@pytest.mark.parametrize(
    "block", VERIFICATIONS, ids=["python-publisher", "jvm-publisher", "subscribers", "record-batches"]
)
def test_each_verification_block_passes_the_tck(tmp_path: Path, block: str) -> None:
    result = run_pytest(tmp_path, block, "-rA", env={"RS_TCK_CLASSPATH": os.pathsep.join(reactor_jars())})
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    runs = {m.group(1): m.groups()[1:] for m in map(RUN.match, result.stdout.splitlines()) if m}
    classes = re.findall(r"^class (Test\w+)\(", block, re.MULTILINE)
    assert sorted(runs) == sorted(classes), out
    assert all(failed == "0" for *_, failed in runs.values())
    if "TestMyPublisher" in runs:  # as the page says: 31 pass, 7 skip
        assert runs["TestMyPublisher"] == ("publisher", "jpype", "38", "31", "0")
    if "TestRecordBatches" in runs:  # as the page says: 28 pass, 10 skip, after_run passes
        assert runs["TestRecordBatches"] == ("publisher", "jpype", "38", "28", "0")
        assert "PASSED test_generated.py::TestRecordBatches::after_run" in out, out
    if "TestReactorRangeOnPy4J" in runs:
        assert runs["TestReactorRangeOnPy4J"][1] == "py4j"


def test_the_command_line_factories_pass_the_tck(tmp_path: Path) -> None:
    (tmp_path / "mytck.py").write_text(FACTORIES)
    commands = re.findall(r"^python -m reactive_streams\.tck (mytck:.*)$", PAGE, re.MULTILINE)
    assert len(commands) == 2
    others = [["mytck:keeper", "--kind", "whitebox"], ["mytck:blind_keeper", "--kind", "blackbox"]]
    for args in [*map(shlex.split, commands), *others]:
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.splitlines()[-1].startswith("passed:")
        assert " 0 failed" in result.stdout.splitlines()[-1]
    assert (tmp_path / "tck.xml").exists()
