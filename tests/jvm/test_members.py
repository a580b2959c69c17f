"""`java_member`: a Java member named by a Python keyword (Reactor's ``Flux.from``), reached
the same way on every backend."""

from __future__ import annotations

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge, java_member


def test_flux_from_on_every_backend(bridge: Bridge) -> None:
    Flux = bridge.jvm.reactor.core.publisher.Flux
    flux = java_member(Flux, "from")(bridge.to_jvm(rs.from_iterable([1, 2, 3])))
    assert list(flux.collectList().block()) == [1, 2, 3]


def test_members_of_objects_and_fields(bridge: Bridge) -> None:
    flux = bridge.jvm.reactor.core.publisher.Flux.range(0, 3)
    doubled = java_member(flux, "take")(2)
    assert list(java_member(doubled, "collectList")().block()) == [0, 1]
    assert java_member(bridge.jvm.java.lang.Integer, "MAX_VALUE") == 2**31 - 1


def test_a_missing_member_names_the_class(bridge: Bridge) -> None:
    Flux = bridge.jvm.reactor.core.publisher.Flux
    with pytest.raises(
        AttributeError, match=r"^reactor\.core\.publisher\.Flux has no member 'nope' \(nor 'nope_'\)$"
    ):
        java_member(Flux, "nope")
    with pytest.raises(AttributeError, match=r"^reactor\.core\.publisher\.FluxRange has no member 'nope'"):
        java_member(Flux.range(0, 3), "nope")


def test_a_class_missing_from_the_classpath_is_named(py4j_bridge: Bridge) -> None:
    with pytest.raises(
        AttributeError,
        match=r"^neither com\.example\.Missing nor any name it starts with is a class on the JVM",
    ):
        java_member(py4j_bridge.jvm.com.example.Missing, "from")
