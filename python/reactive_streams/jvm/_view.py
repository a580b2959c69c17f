"""`bridge.jvm`: the backend's package view of the JVM, where a class that is not on the classpath
raises `JvmClassNotFoundError`, naming the classpath and how to add to it.

Without it, JPype says ``AttributeError: Java package 'reactor' is not valid``, and Py4J takes
a missing class for a package and says ``TypeError: 'JavaPackage' object is not callable`` when
it is called; neither names the classpath. Classes, their members and objects are the backend's
own, unwrapped: only packages pass through here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .._errors import ReactiveStreamsError
from ._backend import Backend

__all__ = ["JvmClassNotFoundError", "JvmView"]

#: How to put a jar on the classpath, by backend name (a Py4J gateway of the user's: the default).
_HOW_TO_ADD = {
    "jpype": (
        "pass the jar (or its folder, or a glob pattern) in Bridge.jpype(classpath=[...]) when the first "
        "bridge starts this process's JVM: JPype cannot add to a running JVM"
    ),
    "py4j": "start the bridge with the jar (or its folder, or a glob pattern): Bridge.py4j(classpath=[...])",
    "spark": (
        "build the session with the jar: reactive_streams.spark.configure(SparkSession.builder, "
        "extra_jars=[...]), which adds it to spark.jars (or spark-submit --jars); a running driver "
        "cannot load more"
    ),
}
_HOW_TO_ADD_ELSE = "add the jar to the classpath of the JVM behind this gateway before it starts"
_SHOWN = 8  # classpath groups named in a message; the rest are counted


class JvmClassNotFoundError(ReactiveStreamsError, AttributeError, TypeError):
    """A JVM class (or package) reached through ``bridge.jvm`` that is not on the JVM's
    classpath. The message names the classpath in use and how to add a jar to it.

    It is also an ``AttributeError`` (what JPype raises for a missing package) and a
    ``TypeError`` (what Py4J raises when a missing class, which it takes for a package, is
    called), so code that caught those still does.

    Attributes:
        java_name: the dotted name that is no class (``reactor.core.publisher.Flux``).
        classpath: the JVM's classpath as it reports it (``java.class.path``, and ``spark.jars``
            on Spark), or an empty list if the JVM could not say.
    """

    def __init__(self, java_name: str, message: str, classpath: list[str]) -> None:
        super().__init__(message)
        self.java_name = java_name
        self.classpath = classpath


class JvmView:
    """``bridge.jvm``: ``bridge.jvm.java.lang.System`` is the backend's class."""

    __slots__ = ("_backend", "_root")

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._root = backend.jvm

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)  # Python's protocols (copy, pickle) ask for these
        return _member(self._backend, self._root, name, name)

    def __dir__(self) -> list[str]:
        return list(dir(self._root))

    def __repr__(self) -> str:
        return f"<the JVM's packages ({self._backend.name})>"


class JvmPackage:
    """A package of ``bridge.jvm`` (``bridge.jvm.java.lang``). On Py4J also a name that is no
    class: calling it raises `JvmClassNotFoundError`."""

    __slots__ = ("_backend", "_package", "java_name")

    def __init__(self, backend: Backend, package: Any, java_name: str) -> None:
        self._backend = backend
        self._package = package
        self.java_name = java_name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _member(self._backend, self._package, name, f"{self.java_name}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self.not_found()

    def __dir__(self) -> list[str]:
        return list(dir(self._package))

    def __repr__(self) -> str:
        return f"<JVM package {self.java_name}>"

    def not_found(self) -> JvmClassNotFoundError:
        """The error for using this package as a class (Py4J's guess for a missing class)."""
        return not_found(
            self._backend,
            self.java_name,
            f"neither {self.java_name} nor any name it starts with is a class on the JVM's classpath "
            "(Py4J took it for a package)",
        )


def _member(backend: Backend, parent: Any, name: str, java_name: str) -> Any:
    try:
        found = getattr(parent, name)
    except AttributeError:  # JPype: no such package or class
        raise not_found(
            backend, java_name, f"no class or package {java_name} on the JVM's classpath"
        ) from None
    if backend.is_package(found):
        return JvmPackage(backend, found, java_name)
    return found


def not_found(backend: Backend, java_name: str, what: str) -> JvmClassNotFoundError:
    """A `JvmClassNotFoundError` for ``java_name``: ``what``, the classpath, and how to add to it."""
    classpath = _classpath(backend)
    shown = _summary(classpath) if classpath else "(the JVM did not say)"
    how = _HOW_TO_ADD.get(backend.name, _HOW_TO_ADD_ELSE)
    message = f"{what}. The classpath ({backend.name}): {shown}. To add the jar that holds it, {how}."
    return JvmClassNotFoundError(java_name, message, classpath)


def _classpath(backend: Backend) -> list[str]:
    """The JVM's ``java.class.path``, and on Spark the driver's ``spark.jars``; [] if it cannot say."""
    try:
        jvm = backend.jvm
        entries = str(jvm.java.lang.System.getProperty("java.class.path") or "").split(os.pathsep)
        if backend.name == "spark":
            from pyspark import SparkContext

            context = SparkContext._active_spark_context
            if context is not None:
                entries += str(context.getConf().get("spark.jars", "") or "").split(",")
    except Exception:  # the JVM is gone, or is no Spark driver: the message goes without it
        return []
    return [entry for entry in entries if entry]


def _summary(classpath: list[str]) -> str:
    """The classpath, short: the jars of one folder counted as one entry when there are many."""
    folders: dict[str, list[str]] = {}
    for entry in classpath:
        folders.setdefault(str(Path(entry).parent), []).append(entry)
    groups = []
    for folder, entries in folders.items():
        if len(entries) > 3:
            groups.append(f"{folder}{os.sep} ({len(entries)} entries)")
        else:
            groups.extend(entries)
    if len(groups) > _SHOWN:
        groups = [*groups[:_SHOWN], f"and {len(groups) - _SHOWN} more"]
    return "; ".join(groups)
