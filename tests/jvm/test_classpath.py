"""Classpath arguments: a single path is one entry, folders and glob patterns are expanded, and
a missing or broken entry is refused, naming it, before any JVM starts."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

import reactive_streams as rs
from reactive_streams.jvm import classpath_entries


def jar(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    return str(path)


def test_a_single_str_or_path_is_one_entry(tmp_path: Path) -> None:
    one = jar(tmp_path / "one.jar")
    assert classpath_entries(one) == [one]
    assert classpath_entries(Path(one)) == [one]
    assert classpath_entries([one, Path(one)]) == [one]  # each entry once


def test_a_str_may_join_entries_with_the_path_separator(tmp_path: Path) -> None:
    one, two = jar(tmp_path / "one.jar"), jar(tmp_path / "two.jar")
    assert classpath_entries(f"{one}{os.pathsep}{two}") == [one, two]


def test_a_folder_is_itself_and_every_jar_in_it(tmp_path: Path) -> None:
    b, a = jar(tmp_path / "libs" / "b.jar"), jar(tmp_path / "libs" / "a.jar")
    (tmp_path / "libs" / "notes.txt").write_text("not a jar")
    jar(tmp_path / "libs" / "nested" / "c.jar")  # only the folder's own jars
    folder = str(tmp_path / "libs")
    assert classpath_entries(folder) == [folder, a, b]  # the folder holds classes too, for Java
    assert classpath_entries(folder, folders=False) == [a, b]  # spark.jars takes jars only


def test_glob_patterns_match_jars(tmp_path: Path) -> None:
    a, b = jar(tmp_path / "libs" / "a.jar"), jar(tmp_path / "libs" / "b.jar")
    c = jar(tmp_path / "libs" / "nested" / "c.jar")
    (tmp_path / "libs" / "notes.txt").write_text("not a jar")
    libs = tmp_path / "libs"
    assert classpath_entries(str(libs / "*.jar")) == [a, b]
    assert classpath_entries(str(libs / "*")) == [a, b]  # Java's wildcard form
    assert classpath_entries(str(libs / "**" / "*.jar")) == [a, b, c]


def test_a_missing_entry_is_named(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jar")
    with pytest.raises(rs.ReactiveStreamsError, match=f"^classpath entry does not exist: {missing}$"):
        classpath_entries(missing)
    with pytest.raises(rs.ReactiveStreamsError, match=r"entry does not exist: nope\.jar \(relative to /"):
        classpath_entries(["nope.jar"])


def test_a_pattern_matching_no_jar_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a jar")
    with pytest.raises(rs.ReactiveStreamsError, match=r"pattern '.*/\*' matches no \.jar file"):
        classpath_entries(str(tmp_path / "*"))


def test_a_folder_without_jars_is_refused_where_only_jars_go(tmp_path: Path) -> None:
    assert classpath_entries(str(tmp_path)) == [str(tmp_path)]  # a folder of classes, for Java
    with pytest.raises(rs.ReactiveStreamsError, match=r"holds no \.jar file"):
        classpath_entries(str(tmp_path), argument="extra_jars", folders=False)


@pytest.mark.parametrize("content", [b"", b"<html>404 Not Found</html>", b"PK\x03\x04truncated"])
def test_a_file_that_is_not_a_jar_is_named(tmp_path: Path, content: bytes) -> None:
    broken = tmp_path / "broken.jar"
    broken.write_bytes(content)
    message = rf"not a readable jar \(a jar is a zip archive\): {broken}: .*; download or build it again$"
    with pytest.raises(rs.ReactiveStreamsError, match=message):
        classpath_entries([str(broken)])
    (tmp_path / "libs").mkdir()
    (tmp_path / "libs" / "broken.jar").write_bytes(content)
    with pytest.raises(rs.ReactiveStreamsError, match=r"broken\.jar"):
        classpath_entries(str(tmp_path / "libs"))  # found in a folder too


def test_what_is_not_a_path_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"^classpath must be a path .* got int 5$"):
        classpath_entries(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^classpath entries must be paths .* got None$"):
        classpath_entries([None])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="got bytes"):
        classpath_entries(b"x.jar")  # type: ignore[arg-type]
    with pytest.raises(rs.ReactiveStreamsError, match="empty entry"):
        classpath_entries([""])
