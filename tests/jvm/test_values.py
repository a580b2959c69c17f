"""What crosses by value, and as what."""

from __future__ import annotations

from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge

from ..support import Spy, wait_for
from .kit import Kit

VALUES: list[tuple[Any, str]] = [
    (True, "java.lang.Boolean"),
    (7, "java.lang.Integer"),
    (2**40, "java.lang.Long"),
    (2**70, "java.math.BigInteger"),
    (1.5, "java.lang.Double"),
    ("text ✓", "java.lang.String"),
    (b"\x00\xffbytes", "[B"),
    ([1, [2, "x"]], "java.util.ArrayList"),
    ((1, "two"), "[Ljava.lang.Object;"),
    ({"a": 1, "b": [None]}, "java.util.HashMap"),
]


def test_python_values_arrive_in_java_as_java_values(bridge: Bridge) -> None:
    kit = Kit(bridge)
    java_items = kit.flux_from(bridge.to_jvm(rs.from_iterable([v for v, _ in VALUES]))).collectList().block()
    classes = [str(name) for name in kit.jvm.io.github.rspy.bridge.testing.Types.classNames(java_items)]
    assert classes == [cls for _, cls in VALUES]


def test_values_round_trip_through_the_jvm_unchanged(bridge: Bridge) -> None:
    values = [v for v, _ in VALUES]
    kit = Kit(bridge)
    through_java = kit.flux_from(bridge.to_jvm(rs.from_iterable(values)))
    assert list(bridge.from_jvm(through_java).iterate()) == values


def test_a_jvm_object_goes_to_python_and_back_as_the_same_object(bridge: Bridge) -> None:
    kit = Kit(bridge)
    original = kit.jvm.java.util.ArrayList()
    original.add(kit.jvm.java.lang.StringBuilder("x"))  # not a value: the list crosses as a reference
    marker = kit.jvm.java.lang.Thread.currentThread()
    from_java = list(bridge.from_jvm(kit.Flux.just(marker)).iterate())
    back = kit.flux_from(bridge.to_jvm(rs.from_iterable(from_java))).collectList().block()
    assert back.get(0).equals(marker)


def test_an_element_that_cannot_cross_fails_the_java_stream_clearly(bridge: Bridge) -> None:
    kit = Kit(bridge)
    subscriber = kit.recorder_of(rs.from_iterable([1, object()]), 10)
    assert subscriber.awaitDone(10_000)
    assert "cannot cross to the JVM" in str(subscriber.errorMessage())


class _PicklingFails:
    """A value inside a list whose pickling raises what the codec does not expect."""

    def __reduce__(self) -> Any:
        raise ValueError("this element cannot be pickled")


def test_a_batch_this_side_cannot_make_fails_the_java_stream_instead_of_hanging_it(bridge: Bridge) -> None:
    kit = Kit(bridge)
    spy = Spy(rs.from_iterable([[1], [_PicklingFails()]]))
    subscriber = kit.recorder_of(spy, 10)
    assert subscriber.awaitDone(10_000)  # it hung here: the Java side was never told
    assert "this element cannot be pickled" in str(subscriber.errorMessage())
    assert spy.cancels == 1  # and the Python publisher was cancelled
    wait_for(lambda: kit.live_adapters() == 0, "both ends ended")


@pytest.mark.parametrize("count", [1, 8192, 8193, 50_000])
def test_batches_are_split_and_joined_at_any_size(bridge: Bridge, count: int) -> None:
    kit = Kit(bridge)
    assert list(bridge.from_jvm(kit.Flux.range(0, count)).iterate(prefetch=10_000)) == list(range(count))
    total = kit.flux_from(bridge.to_jvm(rs.from_iterable(range(count)))).count().block()
    assert int(total) == count
