"""The TCK must catch broken publishers, and the Python names of its tests must be the jar's."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, ClassVar

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge
from reactive_streams.tck import BridgePool, PublisherVerification, TckRun, run_verification
from reactive_streams.tck.__main__ import write_junit_xml
from reactive_streams.tck._names import TEST_NAMES
from reactive_streams.tck._plugin import write_report

from ..conftest import ROOT

SPEC101 = "required_spec101_subscriptionRequestMustResultInTheCorrectNumberOfProducedElements"
SPEC109_FAILED = (
    "required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejection"
    "MustTriggerOnErrorAfterOnSubscribe"
)
#: What the bridge reports when a Python publisher emits 2 elements for a request(1).
DIAGNOSIS = "bridge saw: §1.1: the Python publisher emitted 2 elements, more than the 1 requested"


@pytest.fixture(scope="module")
def tck_bridge() -> Any:
    pool = BridgePool()
    yield pool.get("jpype")
    pool.close()


class OneTooMany(rs.Publisher[int]):
    """Emits one element more than requested, the first time it is asked (§1.1 broken)."""

    def subscribe(self, subscriber: rs.Subscriber[int]) -> None:
        counter = itertools.count()

        class S(rs.Subscription):
            extra = 1

            def request(self, n: int) -> None:
                for _ in range(n + self.extra):
                    subscriber.on_next(next(counter))
                self.extra = 0

            def cancel(self) -> None:
                pass

        subscriber.on_subscribe(S())


class IgnoresCancel(rs.Publisher[int]):
    """Respects demand but ignores cancel: it keeps its subscriber, and keeps serving requests."""

    subscribers: ClassVar[list[rs.Subscriber[int]]] = []

    def subscribe(self, subscriber: rs.Subscriber[int]) -> None:
        IgnoresCancel.subscribers.append(subscriber)  # never let go
        counter = itertools.count()

        class S(rs.Subscription):
            def request(self, n: int) -> None:
                for _ in range(min(n, 10_000)):
                    subscriber.on_next(next(counter))

            def cancel(self) -> None:
                pass  # broken: §3.12, §3.13

        subscriber.on_subscribe(S())


def verify(publisher_type: type[rs.Publisher[Any]], bridge: Bridge, tests: list[str]) -> TckRun:
    class Broken(PublisherVerification):
        def create_publisher(self, elements: int) -> rs.Publisher[Any]:
            return publisher_type()

    return run_verification(Broken(), bridge, tests)


def outcomes(run: TckRun) -> dict[str, str]:
    return {r.name: r.outcome for r in run.results}


def test_the_tck_fails_a_publisher_that_emits_more_than_requested(tck_bridge: Bridge) -> None:
    tests = [
        "required_createPublisher3MustProduceAStreamOfExactly3Elements",
        "required_spec302_mustAllowSynchronousRequestCallsFromOnNextAndOnSubscribe",
        "required_spec303_mustNotAllowUnboundedRecursion",
    ]
    run = verify(OneTooMany, tck_bridge, tests)
    assert outcomes(run) == dict.fromkeys(tests, "failed")
    assert (
        "§1.1"
        in outcomes_messages(run)["required_spec302_mustAllowSynchronousRequestCallsFromOnNextAndOnSubscribe"]
    )


def outcomes_messages(run: TckRun) -> dict[str, str]:
    return {r.name: r.message for r in run.results}


def test_the_bridges_diagnosis_follows_the_tcks_message_in_every_report(
    tck_bridge: Bridge, tmp_path: Path
) -> None:
    run = verify(OneTooMany, tck_bridge, [SPEC101])
    (result,) = run.results
    # The TCK fails on what it waited for; why it never came is the bridge's §1.1 check.
    assert result.outcome == "failed"
    assert "produced no element after first `request`" in result.message
    assert DIAGNOSIS in result.cause.splitlines()
    assert result.reason.startswith(result.message.splitlines()[0]) and DIAGNOSIS in result.reason

    report = tmp_path / "report.md"
    write_report([run], str(report))
    (row,) = [line for line in report.read_text().splitlines() if f"`{SPEC101}`" in line]
    assert "produced no element" in row and DIAGNOSIS in row

    junit = tmp_path / "junit.xml"
    write_junit_xml(run, str(junit), "broken")
    failure = ET.parse(junit).getroot().find("testcase/failure")
    assert failure is not None and DIAGNOSIS in (failure.get("message") or "")


def run_pytest(
    tmp_path: Path, source: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """pytest, in a child process, on a test module holding ``source`` (the TCK plugin collects
    its verification classes); the project's root is importable, ``env`` added."""
    (tmp_path / "test_generated.py").write_text(textwrap.dedent(source))
    env = {
        **os.environ,
        **(env or {}),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.timeout(660)  # a child pytest, given up to 600 s
def test_pytest_failures_and_skips_say_what_the_bridge_saw_and_name_python_hooks(tmp_path: Path) -> None:
    result = run_pytest(
        tmp_path,
        """
        from reactive_streams.tck import PublisherVerification
        from tests.tck.test_verdicts import OneTooMany

        class TestOneTooMany(PublisherVerification):
            def create_publisher(self, elements):
                return OneTooMany()
        """,
        "-s",  # the JVM's own output too: SLF4J must find its no-op binding and say nothing
        "-rs",
        "-k",
        "spec101 or spec109_mayReject",
    )
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "1 failed, 1 skipped" in out
    assert f"TCK failure: §1.1 {SPEC101}" in out and DIAGNOSIS in out
    assert "implement create_failed_publisher() (TCK: PublisherVerification#createFailedPublisher)" in out
    assert "SLF4J" not in out


def test_the_tck_fails_a_publisher_that_ignores_cancel(tck_bridge: Bridge) -> None:
    name = "required_spec313_cancelMustMakeThePublisherEventuallyDropAllReferencesToTheSubscriber"
    run = verify(IgnoresCancel, tck_bridge, [name])
    assert outcomes(run) == {name: "failed"}
    assert "did not drop reference" in run.results[0].message
    IgnoresCancel.subscribers.clear()


@pytest.mark.parametrize("kind", sorted(TEST_NAMES))
@pytest.mark.parametrize("flow", [False, True])
def test_test_names_match_the_tck_jar(tck_bridge: Bridge, kind: str, flow: bool) -> None:
    names = str(tck_bridge.jvm.io.github.rspy.tck.TckRunner.testNames(kind, flow)).split(",")
    assert tuple(names) == TEST_NAMES[kind]
    assert len(names) == {"publisher": 38, "whitebox": 27, "blackbox": 26, "processor": 68}[kind]


class Limited(PublisherVerification):
    """A good publisher that declares at most 2 elements, and implements no failed publisher."""

    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(range(elements))

    def max_elements_from_publisher(self) -> int:
        return 2


def test_skip_reasons_name_the_python_hooks(tck_bridge: Bridge) -> None:
    tests = ["required_createPublisher3MustProduceAStreamOfExactly3Elements", SPEC109_FAILED]
    run = run_verification(Limited(), tck_bridge, tests)
    assert outcomes(run) == dict.fromkeys(tests, "skipped")
    messages = outcomes_messages(run)
    assert messages[SPEC109_FAILED] == (
        "Skipping because no error state Publisher provided, and the test requires it. Please "
        "implement create_failed_publisher() (TCK: PublisherVerification#createFailedPublisher) "
        "to run this test."
    )
    assert messages[tests[0]] == (
        "Unable to run this test, as required elements nr: 3 is higher than supported by given "
        "producer: 2 (see max_elements_from_publisher())"
    )
