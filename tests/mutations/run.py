"""Plants each bug of tests/mutations/*.patch in a scratch copy of the project and runs the tests
that must catch it: a gate kept honest (tests/MUTATIONS.md lists them, and what catches each).

Each patch starts with free text before its diff (``git apply`` skips it), with one line
``Caught by: <pytest node id or path> ...`` naming what must fail, or ``Caught by: JVM unit tests
(SomeTest.method, ...)`` for a plant only the Java unit tests can see. For each patch the runner:

1. runs the named pytest tests on the checkout as it is: they must pass there, or their failing
   says nothing of the plant (BASELINE FAILS);
2. copies the checkout (its tracked and untracked, not ignored files) into a temporary folder,
   makes it a git repository of its own and applies the patch there (STALE if it does not apply);
3. rebuilds the jars with Gradle when the patch touches Java, Scala or Gradle files and runs the
   Java unit tests there (``gradle :jvm:unitTest``), noting which methods fail, else copies the
   built jars;
4. runs the named tests against the copy (``PYTHONPATH`` puts its ``python/`` first). CAUGHT
   when every named test (or Java method) fails, SURVIVED when none does, STALE when only some
   do, NO VERDICT when pytest ends in a collection, usage or internal error.

    .venv/bin/python tests/mutations/run.py [NAME ...] [--tests PATH ...] [--keep]

``--tests`` runs other tests instead of the named ones, stopping at the first failure (to find
what catches a new plant; no baseline run). Exit status 1 unless every verdict is CAUGHT. Not
part of ./run-tests: each Java plant rebuilds the jars (a minute or two) and some plants need
the Spark tests.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATCHES = Path(__file__).resolve().parent
BUILT = ["python/reactive_streams/_jars", "build/test-jars"]


def caught_by(patch: Path) -> tuple[list[str], list[str]]:
    """What the patch's ``Caught by:`` lines name: pytest node ids, or, after ``JVM unit tests``,
    the Java unit test methods (``SerialLaneTest.someMethod``) of a plant only they can see."""
    match = re.search(r"^Caught by:(.*(?:\n[ \t]+\S.*)*)", patch.read_text(), flags=re.MULTILINE)
    if not match:
        raise SystemExit(f"{patch.name}: no 'Caught by:' line")
    text = match[1].strip()
    if text.startswith("JVM unit tests"):
        methods = re.findall(r"\b\w+Test\.(\w+)", text)
        if not methods:
            raise SystemExit(f"{patch.name}: 'Caught by: JVM unit tests' names no Class.method")
        return [], methods
    return text.split(), []


def touched(patch: Path) -> list[str]:
    return re.findall(r"^\+\+\+ b/(\S+)", patch.read_text(), flags=re.MULTILINE)


def copy_checkout(target: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (item.decode() for item in listed)):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    # A repository of its own, so that `git apply` patches it even inside another work tree.
    subprocess.run(["git", "init", "-q"], cwd=target, check=True)


def build_jars(copy: Path, patch: Path) -> list[str] | None:
    """Builds the copy's jars. Returns the Java unit test methods that failed in that build (it
    runs them), or None when the patch touches no JVM source and the built jars are copied."""
    if not any(path.endswith((".java", ".scala", ".gradle")) for path in touched(patch)):
        for name in BUILT:
            shutil.copytree(ROOT / name, copy / name)
        return None
    import pyspark

    print(f"  rebuilding the jars (gradle pythonJars) for {', '.join(touched(patch))}", flush=True)
    gradle = ["gradle", "--no-daemon", "--quiet", "--console=plain"]
    gradle.append(f"-PsparkJars={Path(pyspark.__file__).parent / 'jars'}")
    built = subprocess.run([*gradle, "pythonJars"], cwd=copy, capture_output=True, text=True)
    if built.returncode != 0:
        raise SystemExit(f"the planted copy does not build:\n{built.stderr[-3000:]}")
    unit = subprocess.run([*gradle, ":jvm:unitTest"], cwd=copy, capture_output=True, text=True)
    if unit.returncode == 0:
        return []
    results = copy / "jvm" / "build" / "testng" / "testng-results.xml"
    if "':jvm:unitTest'" not in unit.stderr or not results.exists():
        raise SystemExit(f"the planted copy's JVM unit tests do not run:\n{unit.stderr[-3000:]}")
    return re.findall(r'<test-method [^>]*name="(\w+)"[^>]*status="FAIL"', results.read_text())


def run_pytest(where: Path, tests: list[str], stop_early: bool, env: dict[str, str]) -> tuple[int, list[str]]:
    """pytest's exit status on ``tests`` and the node ids it reports failed or in error."""
    command = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", "--timeout", "300"]
    if stop_early:
        command.append("-x")  # looking for what catches it: the first failure will do
    began = time.monotonic()
    done = subprocess.run([*command, *tests], cwd=where, env=env, capture_output=True, text=True)
    summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    print(f"  pytest exit {done.returncode} in {time.monotonic() - began:.0f} s: {summary}", flush=True)
    outcomes = ("FAILED tests/", "ERROR tests/")  # not a captured log line at ERROR level
    failed = [line.split()[1] for line in done.stdout.splitlines() if line.startswith(outcomes)]
    return done.returncode, failed


def plant(patch: Path, tests: list[str] | None, keep: bool) -> str:
    named, methods = (tests, []) if tests else caught_by(patch)
    if named and not tests:
        # The named tests pass without the plant, or their failure says nothing about it.
        status, failed = run_pytest(ROOT, named, False, dict(os.environ))
        if status != 0:
            print(f"  the named tests fail without the plant: {' '.join(failed)}")
            return "BASELINE FAILS"
    copy = Path(tempfile.mkdtemp(prefix=f"mutant-{patch.stem}-"))
    try:
        copy_checkout(copy)
        applied = subprocess.run(["git", "apply", str(patch)], cwd=copy, capture_output=True, text=True)
        if applied.returncode != 0:
            print(f"  does not apply: {applied.stderr.strip()}")
            return "STALE"
        unit_failed = build_jars(copy, patch)
        if unit_failed is None:
            print("  JVM unit tests: not run (no JVM source planted)")
        else:
            print(f"  JVM unit tests: {'failed ' + ', '.join(unit_failed) if unit_failed else 'passed'}")
        if methods:  # a plant only the Java unit tests see: each method named must have failed
            missed = [m for m in methods if m not in (unit_failed or [])]
            if missed:
                print(f"  named in the patch but passed: {' '.join(missed)}")
            return "CAUGHT" if unit_failed and not missed else "SURVIVED" if not unit_failed else "STALE"
        env = dict(os.environ, PYTHONPATH=str(copy / "python"))
        status, failed = run_pytest(copy, named, bool(tests), env)
        for node in failed:
            print(f"    failed: {node}")
        if status in (0, 5):
            return "SURVIVED"
        if status != 1 or not failed:  # a collection, usage or internal error is no verdict
            return "NO VERDICT"
        if not tests:  # every test the patch names must catch it, or the record is stale
            missed = [n for n in named if not any(f == n or f.startswith(n + "[") for f in failed)]
            if missed:
                print(f"  named in the patch but passed: {' '.join(missed)}")
                return "STALE"
        return "CAUGHT"
    finally:
        if keep:
            print(f"  kept: {copy}")
        else:
            shutil.rmtree(copy, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="patch names (default: every patch)")
    parser.add_argument("--tests", nargs="+", help="run these tests instead of the patch's own")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies")
    args = parser.parse_args()
    patches = sorted(PATCHES.glob("*.patch"))
    if args.names:
        by_name = {p.stem: p for p in patches}
        unknown = [n for n in args.names if n not in by_name]
        if unknown:
            parser.error(f"no such patch: {unknown}; there are {sorted(by_name)}")
        patches = [by_name[n] for n in args.names]
    verdicts: dict[str, str] = {}
    for patch in patches:
        named, methods = caught_by(patch)
        print(f"{patch.stem}: {' '.join(args.tests or named or methods)}", flush=True)
        verdicts[patch.stem] = plant(patch, args.tests, args.keep)
        print(f"  {verdicts[patch.stem]}", flush=True)
    print("\n".join(f"{verdict:14} {name}" for name, verdict in verdicts.items()))
    sys.exit(0 if all(v == "CAUGHT" for v in verdicts.values()) else 1)


if __name__ == "__main__":
    main()
