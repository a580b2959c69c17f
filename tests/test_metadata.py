"""The project's own files agree with one another: the Python versions claimed and tested, the dev
tools' pins, the changelog. (scripts/check-wheel.sh checks the built wheel's metadata against the
versions it actually tested; these are the quick checks of the sources behind it.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .conftest import ROOT

# Libraries of the test suite that users' own environments decide (pyspark, pyarrow, pandas):
# not dev tools, so not pinned.
NOT_TOOLS = {"pyspark", "pyarrow", "pandas"}


def project() -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return data


def ci_pythons() -> list[str]:
    lines = (ROOT / ".ci" / "pythons").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def pins() -> dict[str, list[str]]:
    """scripts/dev-constraints.txt as {name: [version, ...]}: every line an exact pin, some with
    an environment marker (a tool's last release for an older Python)."""
    found: dict[str, list[str]] = {}
    for line in (ROOT / "scripts" / "dev-constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        pin = Requirement(line)
        (spec,) = pin.specifier or [None]
        assert spec is not None and spec.operator == "==", (
            f"dev-constraints.txt: {line!r} is not name==version"
        )
        found.setdefault(canonicalize_name(pin.name), []).append(spec.version)  # type: ignore[union-attr]
    return found


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_the_classifiers_name_exactly_the_pythons_ci_tests() -> None:
    prefix = "Programming Language :: Python :: 3."
    classified = [c.rsplit(" ", 1)[1] for c in project()["classifiers"] if c.startswith(prefix)]
    assert sorted(classified, key=version_key) == sorted(ci_pythons(), key=version_key)


def test_requires_python_is_the_lowest_python_ci_tests() -> None:
    assert project()["requires-python"] == ">=" + min(ci_pythons(), key=version_key)


def test_every_dev_tool_is_pinned_within_its_range() -> None:
    pinned = pins()
    tools = [Requirement(r) for r in project()["optional-dependencies"]["dev"]]
    tools = [r for r in tools if canonicalize_name(r.name) not in NOT_TOOLS]
    assert {canonicalize_name(r.name) for r in tools} >= {"ruff", "mypy", "pytest", "hypothesis"}
    for tool in tools:
        name = canonicalize_name(tool.name)
        assert name in pinned, f"{tool.name} is a dev tool but scripts/dev-constraints.txt does not pin it"
        for version in pinned[name]:
            assert tool.specifier.contains(version), f"{name}=={version} is outside {tool}"


def test_the_runtime_dependencies_are_not_pinned() -> None:
    """Users pin their own py4j, JPype and PySpark: the constraints file is for our tools only."""
    runtime = [Requirement(r) for r in project()["dependencies"]]
    runtime += [Requirement(r) for r in project()["optional-dependencies"]["spark"]]
    assert not {canonicalize_name(r.name) for r in runtime} & set(pins())
    assert not [r for r in runtime if any(s.operator == "==" for s in r.specifier)]


def test_pyarrow_is_the_arrow_extra_which_spark_includes() -> None:
    """pyarrow stays optional: the `arrow` extra names its floor, which scripts/check-pyarrow.sh
    tests (it reads the line itself); `spark` includes the extra, and the dev and test extras
    ask for the same floor."""
    extras = project()["optional-dependencies"]
    (arrow,) = [Requirement(r) for r in extras["arrow"]]
    assert arrow.name == "pyarrow" and [s.operator for s in arrow.specifier] == [">="]
    assert Requirement("reactive-streams-py[arrow]") in [Requirement(r) for r in extras["spark"]]
    assert "pyarrow" not in [Requirement(r).name for r in project()["dependencies"]]
    for name in ("test", "dev"):
        assert arrow in [Requirement(r) for r in extras[name]], name
    assert (ROOT / ".ci" / "run").read_text().count("scripts/check-pyarrow.sh") == 1


def test_the_changelog_has_the_current_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[?(\d+\.\d+\.\d+)\]?", changelog, flags=re.MULTILINE)
    assert versions, "CHANGELOG.md has no '## X.Y.Z' section"
    assert versions[0] == project()["version"], f"CHANGELOG.md's newest section is {versions[0]}"


def test_the_readme_names_the_pythons_ci_tests() -> None:
    readme = (ROOT / "README.md").read_text()
    pythons = sorted(ci_pythons(), key=version_key)
    assert f"Python {pythons[0]} to {pythons[-1]}" in readme


def test_every_ci_python_is_a_version_string() -> None:
    for version in ci_pythons():
        assert re.fullmatch(r"3\.\d+", version), version
    assert Path(ROOT / ".ci" / "run").read_text().count("check-wheel.sh") == 1
