"""The wheel build's jar step (build_backend/jvm_jars.py): a wheel carries the bridge's jars or
is not built, and the error says why. Gradle and java are stand-in scripts here, on a PATH that
holds nothing else of theirs; scripts/check-wheel.sh builds and runs a real wheel."""

from __future__ import annotations

import importlib.util
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # the test extra installs it there: this module runs on every Python the project supports
    import tomli as tomllib

BACKEND = ROOT / "build_backend"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BACKEND / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def jvm_jars() -> Iterator[ModuleType]:
    saved = sys.modules.get("jvm_jars")
    module = sys.modules["jvm_jars"] = _load("jvm_jars")  # rspy_build imports it by this name
    yield module
    if saved is None:
        sys.modules.pop("jvm_jars", None)
    else:
        sys.modules["jvm_jars"] = saved


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A checkout's Gradle inputs, without the jars."""
    root = tmp_path / "project"
    (root / "jvm" / "src").mkdir(parents=True)
    (root / "build.gradle").write_text("// root\n")
    (root / "settings.gradle").write_text("include 'jvm'\n")
    (root / "jvm" / "src" / "Bridge.java").write_text("class Bridge {}\n")
    return root


def _tool(folder: Path, name: str, body: str | None) -> None:
    """A stand-in executable ``name`` running ``body``, or none if ``body`` is None."""
    path = folder / name
    path.unlink(missing_ok=True)
    if body is not None:
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _env(tmp_path: Path, gradle: str | None, java: bool = True) -> dict[str, str]:
    """A PATH with a stand-in gradle running ``gradle`` (if given) and java (if asked), then the
    system's folders for the shell's own tools, shadowed by the stand-ins."""
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    _tool(tools, "gradle", None if gradle is None else f'echo "$@" > "{tmp_path}/gradle-args"\n{gradle}')
    _tool(tools, "java", "exit 0" if java else None)
    spark = tmp_path / "pyspark-jars"
    spark.mkdir(exist_ok=True)
    (spark / "spark-core_2.13-4.0.0.jar").touch()
    path = str(tools) if gradle is None or not java else os.pathsep.join([str(tools), "/usr/bin", "/bin"])
    return {"PATH": path, "RSPY_SPARK_JARS": str(spark)}


def _make_jars(jvm_jars: ModuleType) -> str:
    """Shell commands that create every expected jar, as Gradle's Sync tasks do."""
    return "\n".join(f'mkdir -p "{Path(j).parent}" && touch "{j}"' for j in jvm_jars.EXPECTED_JARS)


def test_no_gradle_on_path_is_a_clear_error(jvm_jars: ModuleType, project: Path, tmp_path: Path) -> None:
    env = _env(tmp_path, gradle=None)  # java only
    with pytest.raises(jvm_jars.JarsBuildError, match=r"jars are missing and `gradle` is not on PATH") as e:
        jvm_jars.ensure_jars(project, env)
    assert "JDK 17 and Gradle" in str(e.value) and "README.md" in str(e.value)


def test_no_java_is_a_clear_error(jvm_jars: ModuleType, project: Path, tmp_path: Path) -> None:
    env = _env(tmp_path, gradle="exit 0", java=False)
    with pytest.raises(jvm_jars.JarsBuildError, match=r"no `java` on PATH \(nor in \$JAVA_HOME\)"):
        jvm_jars.ensure_jars(project, env)
    assert not (tmp_path / "gradle-args").exists()


def test_without_pyspark_jars_it_says_where_to_find_them(
    jvm_jars: ModuleType, project: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path, gradle="exit 0")
    env["RSPY_SPARK_JARS"] = str(tmp_path)  # no spark-core jar there
    with pytest.raises(jvm_jars.JarsBuildError, match=r"holds no Spark jars"):
        jvm_jars.ensure_jars(project, env)


def test_a_failing_gradle_fails_the_build(jvm_jars: ModuleType, project: Path, tmp_path: Path) -> None:
    with pytest.raises(jvm_jars.JarsBuildError, match=r"failed with exit status 3"):
        jvm_jars.ensure_jars(project, _env(tmp_path, gradle="exit 3"))


def test_a_gradle_run_without_the_jars_fails_the_build(
    jvm_jars: ModuleType, project: Path, tmp_path: Path
) -> None:
    # Jars of an earlier build, stale now: a Gradle run that makes none must not pass them off as new.
    for jar in jvm_jars.EXPECTED_JARS:
        (project / jar).parent.mkdir(parents=True, exist_ok=True)
        (project / jar).touch()
    assert not jvm_jars.is_fresh(project)
    with pytest.raises(
        jvm_jars.JarsBuildError, match=r"Gradle ran but these jars are missing: .*bridge.*tck.*spark"
    ):
        jvm_jars.ensure_jars(project, _env(tmp_path, gradle="exit 0"))
    assert not jvm_jars.is_fresh(project)


def test_gradle_builds_the_jars_once_until_an_input_changes(
    jvm_jars: ModuleType, project: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path, gradle=_make_jars(jvm_jars))
    assert not jvm_jars.is_fresh(project)
    jvm_jars.ensure_jars(project, env)
    args = (tmp_path / "gradle-args").read_text().split()
    assert f"-PsparkJars={tmp_path / 'pyspark-jars'}" in args
    assert args[-3:] == [":jvm:pythonJars", ":tck-runner:pythonJars", ":spark:pythonJars"]
    assert jvm_jars.is_fresh(project)

    # Fresh: no Gradle needed, not even on PATH.
    (tmp_path / "gradle-args").unlink()
    jvm_jars.ensure_jars(project, _env(tmp_path, gradle=None))

    # A changed source makes them stale: Gradle runs again (or the build says it cannot).
    (project / "jvm" / "src" / "Bridge.java").write_text("class Bridge { int x; }\n")
    assert not jvm_jars.is_fresh(project)
    with pytest.raises(jvm_jars.JarsBuildError, match=r"stale \(their Gradle inputs changed\)"):
        jvm_jars.ensure_jars(project, _env(tmp_path, gradle=None))
    jvm_jars.ensure_jars(project, _env(tmp_path, gradle=_make_jars(jvm_jars)))
    assert (tmp_path / "gradle-args").exists() and jvm_jars.is_fresh(project)


def test_build_outputs_are_not_inputs(jvm_jars: ModuleType, project: Path) -> None:
    before = jvm_jars.inputs_digest(project)
    (project / "jvm" / "build" / "libs").mkdir(parents=True)
    (project / "jvm" / "build" / "libs" / "bridge.jar").write_bytes(b"jar")
    assert jvm_jars.inputs_digest(project) == before
    (project / "jvm" / "src" / "Other.java").write_text("class Other {}\n")
    assert jvm_jars.inputs_digest(project) != before


def test_pyspark_is_a_build_requirement_only_when_gradle_must_run(
    jvm_jars: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("setuptools.build_meta")
    rspy_build = _load("rspy_build")
    monkeypatch.setattr(rspy_build._setuptools, "get_requires_for_build_wheel", lambda settings=None: [])
    monkeypatch.delenv("RSPY_SPARK_JARS", raising=False)
    monkeypatch.setattr(jvm_jars, "is_fresh", lambda root=None: False)
    assert rspy_build.get_requires_for_build_wheel() == ["pyspark>=4.0"]
    monkeypatch.setenv("RSPY_SPARK_JARS", "/opt/pyspark/jars")
    assert rspy_build.get_requires_for_build_wheel() == []
    monkeypatch.delenv("RSPY_SPARK_JARS")
    monkeypatch.setattr(jvm_jars, "is_fresh", lambda root=None: True)
    assert rspy_build.get_requires_for_build_wheel() == []


def test_a_wheel_build_empties_what_an_earlier_build_staged(
    jvm_jars: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # setuptools never empties build/lib: a module moved since (jvm/_arrow.py) would ship again.
    pytest.importorskip("setuptools.build_meta")
    rspy_build = _load("rspy_build")
    stale = tmp_path / "build" / "lib" / "reactive_streams" / "jvm" / "_arrow.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    staged_when_built: list[bool] = []

    def build_wheel(*args: object) -> str:
        staged_when_built.append(stale.exists())
        return "reactive_streams_py-0-py3-none-any.whl"

    monkeypatch.setattr(jvm_jars, "ROOT", tmp_path)
    monkeypatch.setattr(jvm_jars, "ensure_jars", lambda: None)
    monkeypatch.setattr(rspy_build._setuptools, "build_wheel", build_wheel)
    assert rspy_build.build_wheel(str(tmp_path / "dist")) == "reactive_streams_py-0-py3-none-any.whl"
    assert staged_when_built == [False]


def test_the_expected_jars_are_the_ones_gradle_makes_and_the_wheel_packs(jvm_jars: ModuleType) -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = package_data["reactive_streams"]
    *ours, arrow = jvm_jars.EXPECTED_JARS
    for jar, project in zip(ours, ["jvm", "tck-runner", "spark"], strict=True):
        gradle = (ROOT / project / "build.gradle").read_text()
        base_name = re.search(r"^jar \{\s*baseName = '([^']+)'", gradle, re.M)
        assert base_name is not None and jar.name == f"{base_name[1]}.jar"
    arrow_version = re.search(r"arrow\s*:\s*'([^']+)'", (ROOT / "build.gradle").read_text())
    assert arrow_version is not None and arrow.name == f"arrow-vector-{arrow_version[1]}.jar"
    for jar in jvm_jars.EXPECTED_JARS:
        in_package = jar.relative_to(Path("python", "reactive_streams")).as_posix()
        assert any(Path(in_package).match(p) and in_package.count("/") == p.count("/") for p in patterns)
