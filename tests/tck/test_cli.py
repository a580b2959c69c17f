"""``python -m reactive_streams.tck``: a table, a summary, JUnit XML, and exit status 1 on failure."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from reactive_streams.tck._names import TEST_NAMES

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(660)  # each runs the command line, given up to 600 s


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "reactive_streams.tck", *args],
        cwd=cwd,
        env=env,
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
    assert "SLF4J" not in result.stderr  # TestNG's SLF4J finds the no-op binding


def test_a_publisher_emitting_too_much_fails_with_exit_status_1(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    spec101 = "required_spec101_subscriptionRequestMustResultInTheCorrectNumberOfProducedElements"
    result = run_cli(
        "tests.tck.factories:one_too_many",
        "--kind",
        "publisher",
        "--tests",
        f"required_spec302_mustAllowSynchronousRequestCallsFromOnNextAndOnSubscribe,{spec101}",
        "--junit-xml",
        str(report),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith("FAILED:")
    failures = {
        case.get("name"): case.find("failure") for case in ET.parse(report).getroot().findall("testcase")
    }
    assert all(f is not None and "§1.1" in (f.get("message") or "") for f in failures.values())
    # The TCK's own message only says what it waited for; the bridge's diagnosis follows it,
    # in the XML and in the table.
    diagnosis = "bridge saw: §1.1: the Python publisher emitted 2 elements, more than the 1 requested"
    message = failures[spec101].get("message") or ""  # type: ignore[union-attr]
    assert "produced no element after first `request`" in message and diagnosis in message
    row = next(line for line in result.stdout.splitlines() if spec101 in line)
    assert "produced no element" in row and diagnosis in row


def test_skip_reasons_name_the_factorys_hooks() -> None:
    result = run_cli(
        "tests.tck.factories:limited",
        "--kind",
        "publisher",
        "--tests",
        "required_createPublisher3*,required_spec109_mayReject*",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {line.split()[1]: line for line in result.stdout.splitlines()[1:-1]}
    failed = rows[
        "required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejectionMustTriggerOnErrorAfterOnSubscribe"
    ]
    assert "skipped" in failed
    assert "implement factory.failed (TCK: PublisherVerification#createFailedPublisher)" in failed
    limit = rows["required_createPublisher3MustProduceAStreamOfExactly3Elements"]
    assert "skipped" in limit
    assert "higher than supported by given producer: 2 (see factory.max_elements_from_publisher)" in limit


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


def test_an_unknown_test_name_lists_the_close_ones() -> None:
    result = run_cli("tests.tck.factories:good", "--kind", "publisher", "--tests", "spec309")
    assert result.returncode == 2 and result.stdout == ""
    assert "no publisher test is named 'spec309'" in result.stderr
    listed = set(re.findall(r"^  (\S+)$", result.stderr, re.MULTILINE))
    assert listed == {n for n in TEST_NAMES["publisher"] if "spec309" in n}
    assert "--tests '*spec309*'" in result.stderr and "--list-tests --kind publisher" in result.stderr


def test_tests_are_chosen_by_exact_name_or_glob(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    result = run_cli(
        "tests.tck.factories:good",
        "--kind",
        "publisher",
        "--tests",
        "required_spec309_*,required_spec102_maySignalLessThanRequestedAndTerminateSubscription",
        "--junit-xml",
        str(report),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    names = {case.get("name") for case in ET.parse(report).getroot().findall("testcase")}
    assert names == {
        "required_spec309_requestNegativeNumberMustSignalIllegalArgumentException",
        "required_spec309_requestZeroMustSignalIllegalArgumentException",
        "required_spec102_maySignalLessThanRequestedAndTerminateSubscription",
    }


def test_list_tests_prints_every_upstream_name_with_its_rule() -> None:
    for kind, names in TEST_NAMES.items():
        result = run_cli("--list-tests", "--kind", kind)
        assert result.returncode == 0, result.stderr
        rows = [line.split() for line in result.stdout.splitlines()]
        assert [name for _, name in rows] == list(names)
        if kind == "publisher":
            assert ["§3.9", "required_spec309_requestZeroMustSignalIllegalArgumentException"] in rows
            assert ["-", "required_createPublisher1MustProduceAStreamOfExactly1Element"] in rows


def test_a_timeout_that_is_not_positive_is_refused() -> None:
    for value in ("0", "-5", "soon"):
        result = run_cli("tests.tck.factories:good", "--kind", "publisher", "--timeout-ms", value)
        assert result.returncode == 2, value
        assert "argument --timeout-ms:" in result.stderr
    assert (
        "must be a positive number of milliseconds, not 0"
        in run_cli("tests.tck.factories:good", "--kind", "publisher", "--timeout-ms", "0").stderr
    )


def test_help_gives_the_factory_signature_of_every_kind() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for signature in (
        "publisher  factory(elements: int) -> Publisher",
        "whitebox   factory(probe: WhiteboxProbe) -> Subscriber",
        "blackbox   factory() -> Subscriber",
        "processor  factory(buffer_size: int) -> Processor",
        "factory.failed() -> Publisher",
        "--list-tests",
    ):
        assert signature in result.stdout, signature


def test_the_help_example_runs_as_written(tmp_path: Path) -> None:
    help_text = run_cli("--help").stdout
    example = help_text.split("example, mypkg/tck.py:\n", 1)[1]
    code, command = example.split("  $ ", 1)
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tck.py").write_text("\n".join(line[2:] for line in code.splitlines()) + "\n")
    args = command.split()[3:]  # after "python -m reactive_streams.tck"
    assert args[:3] == ["mypkg.tck:numbers", "--kind", "publisher"]
    result = run_cli(*args, "--tests", "required_spec109_*,optional_spec104_*", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed, 0 failed, 0 skipped" in result.stdout.splitlines()[-1]
    assert (tmp_path / "tck.xml").exists()
