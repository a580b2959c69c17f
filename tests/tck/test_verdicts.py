"""The TCK must catch broken publishers, and the Python names of its tests must be the jar's."""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge
from reactive_streams.tck import BridgePool, PublisherVerification, TckRun, run_verification
from reactive_streams.tck._names import TEST_NAMES


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
