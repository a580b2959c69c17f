"""`./run-tests` is a gate: each of its checks, when it fails, fails the script.

Each case copies the checked tree into a temporary folder, plants one defect, and runs the real
`run-tests` there (its set-up replaced by one that puts this environment's tools on PATH, so no
second virtual environment or Gradle build is made). The JVM unit tests' step runs the real
Gradle only in the case that plants a failing Java test (a minute: it compiles the Java side);
the other copies have a stand-in for Gradle whose tests pass. A lint error once went green because the
checks ran inside an `a && b` list, which `set -e` does not stop for: these cases are why that
cannot come back. The planted defects are listed in tests/MUTATIONS.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ["python", "tests", "benchmarks", "examples", "build_backend"]
STEPS = ["== ruff check", "== ruff format --check", "== mypy --strict", "== JVM unit tests", "== pytest"]
# What the JVM unit tests' step needs of the tree: Gradle's build files and the Java projects.
JVM_TREE = ["build.gradle", "settings.gradle", "jvm", "tck-runner", "spark"]
# Gradle's stand-in in the copies whose plant is not Java: the JVM step passes at once, as
# `gradle :jvm:unitTest` does when nothing changed since the tests last passed.
GRADLE_STUB = """#!/usr/bin/env bash
mkdir -p jvm/build/testng
echo '<testng-results ignored="0" total="1" passed="1" failed="0" skipped="0">' \\
    > jvm/build/testng/testng-results.xml
echo ':jvm:unitTest UP-TO-DATE'
"""

# name: (file to add, its text, the step that must fail, what that step prints about it)
PLANTS = {
    "ruff check": (
        "python/reactive_streams/_planted.py",
        '"""Planted: an unused import."""\n\nimport os\n',
        "== ruff check",
        "F401",
    ),
    "ruff format": (
        "python/reactive_streams/_planted.py",
        '"""Planted: lint-clean, not formatted."""\n\nVALUES = [1,2]\n',
        "== ruff format --check",
        "would be reformatted",
    ),
    "mypy": (
        "python/reactive_streams/_planted.py",
        '"""Planted: a type error."""\n\n\ndef planted() -> int:\n    return "one"\n',
        "== mypy --strict",
        "Incompatible return value type",
    ),
    "JVM unit tests": (
        "jvm/src/test/java/io/github/rspy/bridge/PlantedTest.java",
        "package io.github.rspy.bridge;\n\n"
        "public class PlantedTest {\n"
        "    @org.testng.annotations.Test\n"
        "    public void planted() {\n"
        "        org.testng.Assert.assertEquals(1 + 1, 3);\n"
        "    }\n"
        "}\n",
        "== JVM unit tests",
        "FAILED: io.github.rspy.bridge.PlantedTest.planted",
    ),
    "pytest": (
        "tests/test_planted.py",
        '"""Planted: a failing test."""\n\n\ndef test_planted() -> None:\n    assert sum([1, 1]) == 3\n',
        "== pytest",
        "1 failed",
    ),
}


def copy_of_the_tree(target: Path, java: bool = False) -> Path:
    """The files `run-tests` checks, and `run-tests` itself, with a set-up that installs nothing.
    With ``java`` the Java projects too, for the real Gradle; without, Gradle's stand-in."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_jars", ".mypy_cache", ".ruff_cache", "build")
    for name in CHECKED + (JVM_TREE if java else []):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, target / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, target / name)
    shutil.copy2(ROOT / "pyproject.toml", target / "pyproject.toml")
    shutil.copy2(ROOT / "run-tests", target / "run-tests")
    shutil.copytree(ROOT / "scripts", target / "scripts", ignore=ignore)  # linted and type-checked too
    path = [str(Path(sys.executable).parent)]
    if not java:
        stub = target / "stub-bin" / "gradle"
        stub.parent.mkdir()
        stub.write_text(GRADLE_STUB)
        stub.chmod(0o755)
        path.insert(0, str(stub.parent))
    (target / "scripts" / "setup.sh").write_text(f'export PATH="{":".join(path)}:$PATH"\n')
    return target


def run_tests(tree: Path, *pytest_args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["RS_TEST_WORKERS"] = "0"  # one process: the planted test alone
    return subprocess.run(
        ["bash", str(tree / "run-tests"), "-p", "no:cacheprovider", *pytest_args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.timeout(300)
@pytest.mark.parametrize("plant", list(PLANTS))
def test_a_planted_defect_fails_run_tests_at_its_own_step(tmp_path: Path, plant: str) -> None:
    path, text, failing_step, message = PLANTS[plant]
    tree = copy_of_the_tree(tmp_path, java=plant == "JVM unit tests")
    (tree / path).write_text(text)
    # --collect-only: should a broken gate reach pytest after a lint plant, it runs no test.
    done = run_tests(tree, "tests/test_planted.py" if plant == "pytest" else "--collect-only")
    output = done.stdout + done.stderr
    assert done.returncode != 0, f"run-tests passed with a planted {plant} defect:\n{output}"
    assert message in output, output
    later = STEPS[STEPS.index(failing_step) + 1 :]
    assert failing_step in output and not any(step in output for step in later), output


@pytest.mark.timeout(300)
def test_the_unplanted_copy_passes(tmp_path: Path) -> None:
    """The control: the same copy without a defect passes, so the failures above are the plants'."""
    tree = copy_of_the_tree(tmp_path)
    (tree / "tests" / "test_planted.py").write_text(
        '"""Planted: a passing test."""\n\n\ndef test_planted() -> None:\n    assert sum([1, 1]) == 2\n'
    )
    done = run_tests(tree, "tests/test_planted.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(step in done.stdout for step in STEPS)


@pytest.mark.timeout(300)
def test_quick_selects_the_core_the_bridge_and_the_tck_on_jpype_only() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "RS_TCK_BACKEND"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--quick", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    selected = [line for line in done.stdout.splitlines() if "::" in line]
    assert any(line.startswith("tests/test_iterate.py::") for line in selected)
    assert any(line.startswith("tests/jvm/test_bridge.py::") and "[jpype" in line for line in selected)
    assert any("OnJPype::" in line for line in selected), "no TCK class on JPype"
    slow = [
        line
        for line in selected
        if line.startswith(("tests/spark/", "tests/test_docs.py", "tests/test_setup_quiet.py"))
        or "[spark" in line
        or "[py4j" in line
        or "-spark" in line
        or "-py4j" in line
        or "OnSpark::" in line
        or "OnPy4J::" in line
    ]
    assert slow == [], slow[:5]
