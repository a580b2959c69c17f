"""``python -m reactive_streams.tck``: a table, a summary, JUnit XML, and exit status 1 on failure."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from ..conftest import ROOT


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reactive_streams.tck", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_good_publisher_passes_with_exit_status_0(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    result = run_cli("tests.tck.factories:good", "--kind", "publisher", "--junit-xml", str(report))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule" in result.stdout.splitlines()[0] and "outcome" in result.stdout.splitlines()[0]
    assert (
        "§3.9" in result.stdout
        and "required_spec309_requestZeroMustSignalIllegalArgumentException" in result.stdout
    )
    summary = result.stdout.strip().splitlines()[-1]
    assert summary.startswith("passed:") and "31 passed, 0 failed, 7 skipped" in summary
    suite = ET.parse(report).getroot()
    assert suite.get("tests") == "38" and suite.get("failures") == "0" and suite.get("skipped") == "7"
    assert len(suite.findall("testcase")) == 38


def test_a_publisher_emitting_too_much_fails_with_exit_status_1(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    result = run_cli(
        "tests.tck.factories:one_too_many",
        "--kind",
        "publisher",
        "--tests",
        "required_spec302_mustAllowSynchronousRequestCallsFromOnNextAndOnSubscribe",
        "--junit-xml",
        str(report),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("FAILED:")
    failure = ET.parse(report).getroot().find("testcase/failure")
    assert failure is not None and "§1.1" in (failure.get("message") or "")


def test_a_factory_returning_a_non_publisher_fails_clearly() -> None:
    result = run_cli(
        "tests.tck.factories:not_a_publisher",
        "--kind",
        "publisher",
        "--tests",
        "required_createPublisher1MustProduceAStreamOfExactly1Element",
    )
    assert result.returncode == 1
    assert "to_jvm() needs a reactive_streams.Publisher" in result.stdout


def test_bad_arguments_exit_with_status_2() -> None:
    missing = run_cli("no_such_module:factory", "--kind", "publisher")
    assert missing.returncode == 2 and "cannot import" in missing.stderr
    malformed = run_cli("no-colon", "--kind", "publisher")
    assert malformed.returncode == 2 and "module:factory" in malformed.stderr
    unknown = run_cli("tests.tck.factories:good", "--kind", "publisher", "--tests", "not_a_test")
    assert unknown.returncode == 2 and "not_a_test" in unknown.stderr
    kind = run_cli("tests.tck.factories:good", "--kind", "sideways")
    assert kind.returncode == 2 and "invalid choice" in kind.stderr
