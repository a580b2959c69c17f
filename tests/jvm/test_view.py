"""`bridge.jvm` (`_view.JvmView`): a class that is not on the classpath raises
`JvmClassNotFoundError`, naming the classpath and how to add to it, on every backend. JPype
said ``AttributeError: Java package 'reactor' is not valid``; Py4J took the class for a package
and said ``TypeError: 'JavaPackage' object is not callable``."""

from __future__ import annotations

import os
import re

import pytest

from reactive_streams import ReactiveStreamsError
from reactive_streams.jvm import Bridge, JvmClassNotFoundError, java_member
from reactive_streams.jvm._view import _summary

HOW_TO_ADD = {
    "jpype": r"Bridge\.jpype\(classpath=\[\.\.\.\]\) when the first bridge starts",
    "py4j": r"Bridge\.py4j\(classpath=\[\.\.\.\]\)",
    "spark": r"reactive_streams\.spark\.configure\(SparkSession\.builder, extra_jars=\[\.\.\.\]\)",
}


def test_a_missing_class_names_itself_the_classpath_and_how_to_add_to_it(bridge: Bridge) -> None:
    with pytest.raises(JvmClassNotFoundError) as caught:
        bridge.jvm.com.example.missing.Flux.just(1)  # JPype: at `example`; Py4J: at the call
    error = caught.value
    message = str(error)
    assert error.java_name in message
    if bridge.backend == "jpype":
        assert error.java_name == "com.example"
        assert message.startswith("no class or package com.example on the JVM's classpath. ")
    else:
        assert error.java_name == "com.example.missing.Flux.just"
        assert message.startswith(
            "neither com.example.missing.Flux.just nor any name it starts with is a class on the "
            "JVM's classpath (Py4J took it for a package). "
        )
    assert f"The classpath ({bridge.backend}): " in message
    assert any(entry.endswith("reactive-streams-py-bridge.jar") for entry in error.classpath)
    assert os.path.dirname(error.classpath[0]) in message
    assert len(message) < 2000, "the classpath is summarized, not listed jar by jar"
    assert isinstance(error, ReactiveStreamsError)
    assert re.search(f"To add the jar that holds it, .*{HOW_TO_ADD[bridge.backend]}", message), message


def test_code_that_caught_the_backends_own_errors_still_does(bridge: Bridge) -> None:
    backends_own = AttributeError if bridge.backend == "jpype" else TypeError
    with pytest.raises(backends_own):
        bridge.jvm.com.example.missing.Thing()


def test_spark_names_spark_jars_among_the_classpath(spark_bridge: Bridge, spark_session: object) -> None:
    jars = [j for j in str(spark_session.conf.get("spark.jars", "")).split(",") if j]  # type: ignore[attr-defined]
    with pytest.raises(JvmClassNotFoundError) as caught:
        spark_bridge.jvm.com.example.Missing()
    assert jars and set(jars) <= set(caught.value.classpath)


def test_classes_members_and_packages_are_the_backends_own(bridge: Bridge) -> None:
    assert bridge.jvm.java.lang.Integer.MAX_VALUE == 2**31 - 1
    assert bridge.jvm.java.lang.Integer.parseInt("7") == 7
    assert repr(bridge.jvm.java.lang) == "<JVM package java.lang>"
    assert bridge.jvm.java.util.ArrayList().size() == 0


def test_java_member_of_a_missing_class_raises_the_same_error(bridge: Bridge) -> None:
    with pytest.raises(JvmClassNotFoundError, match="The classpath"):
        java_member(bridge.jvm.com.example.missing.Flux, "from")


def test_a_long_classpath_is_summarized_by_folder() -> None:
    many = [os.path.join("/opt", "spark", "jars", f"lib-{i}.jar") for i in range(200)]
    few = [os.path.join("/home", "me", "app.jar"), os.path.join("/home", "me", "more.jar")]
    summary = _summary([*few, *many])
    assert summary == (f"{few[0]}; {few[1]}; {os.path.join('/opt', 'spark', 'jars')}{os.sep} (200 entries)")
    singles = [os.path.join(f"/d{i}", "x.jar") for i in range(12)]
    assert _summary(singles).endswith("; and 4 more")
