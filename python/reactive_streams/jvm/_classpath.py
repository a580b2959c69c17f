"""Classpath arguments (`Bridge.py4j`, `Bridge.jpype`, ``reactive_streams.spark.configure``),
expanded and checked before any JVM starts, so that a bad one leaves nothing behind and the
error names the entry."""

from __future__ import annotations

import glob
import os
import zipfile
from collections.abc import Iterable
from pathlib import Path

from .._errors import ReactiveStreamsError
from .._rules import describe

__all__ = ["ClasspathLike", "classpath_entries"]

Entry = str | os.PathLike[str]
ClasspathLike = Entry | Iterable[Entry]
"""A path (a ``str`` may join several with ``os.pathsep``, as ``java -cp`` does) or an
iterable of paths."""

_PATTERN = frozenset("*?[")
_JAR_SUFFIXES = (".jar", ".zip")


def classpath_entries(
    classpath: ClasspathLike, *, argument: str = "classpath", folders: bool = True
) -> list[str]:
    """The classpath ``classpath`` stands for, as a list of existing paths, each once.

    Accepted, each entry in turn (a single path is one entry):

    - a jar (or zip) file, checked to be a readable zip archive;
    - a folder: the folder itself (classes and resources, as Java takes it) and every ``*.jar``
      directly in it, in name order; with ``folders=False`` (``spark.jars`` takes jars only)
      just the jars, and a folder without any is refused;
    - a glob pattern (``libs/*.jar``, ``libs/**/*.jar``, or Java's ``libs/*``): the jars it
      matches, in name order; a pattern matching no jar is refused;
    - a ``str`` holding several paths joined by ``os.pathsep`` (``a.jar:b.jar``).

    Raises:
        TypeError: ``classpath`` is neither a path nor an iterable of paths.
        ReactiveStreamsError: an entry is empty, does not exist, matches no jar, or is a file
            that is not a jar (a zip archive).
    """
    if isinstance(classpath, (str, os.PathLike)):
        given: list[object] = [classpath]
    elif isinstance(classpath, (bytes, bytearray)) or not isinstance(classpath, Iterable):
        raise TypeError(
            f"{argument} must be a path (str or os.PathLike) or a list of paths, got {describe(classpath)}"
        )
    else:
        given = list(classpath)
    chosen: dict[str, None] = {}
    for entry in given:
        if not isinstance(entry, (str, os.PathLike)) or isinstance(entry, (bytes, bytearray)):
            raise TypeError(f"{argument} entries must be paths (str or os.PathLike), got {describe(entry)}")
        parts = entry.split(os.pathsep) if isinstance(entry, str) else [os.fspath(entry)]
        for part in parts:
            for path in _expand(part, argument, folders):
                chosen.setdefault(path, None)
    return list(chosen)


def _expand(entry: str, argument: str, folders: bool) -> list[str]:
    if not entry.strip():
        raise ReactiveStreamsError(f"{argument} has an empty entry: give a jar, a folder or a glob pattern")
    if _PATTERN.intersection(entry):
        jars = sorted(p for p in glob.glob(entry, recursive=True) if _is_jar_name(p) and os.path.isfile(p))
        if not jars:
            raise ReactiveStreamsError(f"{argument} pattern {entry!r} matches no .jar file{_where(entry)}")
        for jar in jars:
            _check_jar(jar, argument)
        return jars
    path = Path(entry)
    if not path.exists():
        raise ReactiveStreamsError(f"{argument} entry does not exist: {entry}{_where(entry)}")
    if path.is_dir():
        jars = sorted(str(p) for p in path.iterdir() if _is_jar_name(p.name) and p.is_file())
        if not folders and not jars:
            raise ReactiveStreamsError(
                f"{argument} folder {entry} holds no .jar file (spark.jars takes jars; a folder of "
                "classes cannot be added to it: package them as a jar)"
            )
        for jar in jars:
            _check_jar(jar, argument)
        return [entry, *jars] if folders else jars
    _check_jar(entry, argument)
    return [entry]


def _is_jar_name(name: str) -> bool:
    return name.lower().endswith(_JAR_SUFFIXES)


def _check_jar(path: str, argument: str) -> None:
    """A jar is a zip archive: read its central directory now, rather than let the JVM skip a
    broken one silently (its classes would then be missing, far from here)."""
    try:
        with zipfile.ZipFile(path):
            pass
    except (zipfile.BadZipFile, OSError) as exc:
        raise ReactiveStreamsError(
            f"{argument} entry is not a readable jar (a jar is a zip archive): {path}: {exc}; "
            "download or build it again"
        ) from exc


def _where(entry: str) -> str:
    return "" if os.path.isabs(entry) else f" (relative to {os.getcwd()})"
