"""Plants each bug of tests/mutations/*.patch in a scratch copy of the project and runs the tests
that must catch it: a gate kept honest (tests/MUTATIONS.md lists them, and what catches each).

Each patch starts with free text before its diff (``git apply`` skips it), with one line
``Caught by: <pytest node id or path> ...`` naming what must fail (or ``Caught by: JVM unit tests
(...)`` for a plant only the Java unit tests can see). For each patch the runner:

1. copies the checkout (its tracked and untracked, not ignored files) into a temporary folder;
2. applies the patch there (a patch that no longer applies is an error: refresh it);
3. rebuilds the jars with Gradle when the patch touches Java or Scala (reporting whether the JVM
   unit tests that build runs caught the plant; if they did, it builds again without them), else
   copies the built ones;
4. runs the named tests against the copy (``PYTHONPATH`` puts its ``python/`` first), and reports
   CAUGHT when every named test fails, SURVIVED when they all pass, STALE when only some fail
   (or the patch no longer applies): the verdict is pytest's alone.

    .venv/bin/python tests/mutations/run.py [NAME ...] [--tests PATH ...] [--keep]

``--tests`` runs other tests instead of the named ones (to find what catches a new plant). Exit
status 1 if any plant survived or failed to apply. Not part of ./run-tests: each Java plant
rebuilds the jars (a minute or two) and some plants need the Spark tests.
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


def caught_by(patch: Path) -> list[str]:
    """The pytest node ids of the patch's ``Caught by:`` lines; none for ``Caught by: JVM unit
    tests (Class.method, ...)``, a plant only the build's Java unit tests can see."""
    match = re.search(r"^Caught by:(.*(?:\n[ \t]+\S.*)*)", patch.read_text(), flags=re.MULTILINE)
    if not match:
        raise SystemExit(f"{patch.name}: no 'Caught by:' line")
    return [] if match[1].strip().startswith("JVM unit tests") else match[1].split()


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


def build_jars(copy: Path, patch: Path) -> str:
    """Builds the copy's jars; returns what the JVM unit tests (run by that build) made of the plant."""
    if not any(path.endswith((".java", ".scala", ".gradle")) for path in touched(patch)):
        for name in BUILT:
            shutil.copytree(ROOT / name, copy / name)
        return "not run (no JVM source planted)"
    import pyspark

    print(f"  rebuilding the jars (gradle pythonJars) for {', '.join(touched(patch))}", flush=True)
    gradle = ["gradle", "--no-daemon", "--quiet", "--console=plain"]
    gradle += [f"-PsparkJars={Path(pyspark.__file__).parent / 'jars'}", "pythonJars"]
    built = subprocess.run(gradle, cwd=copy, capture_output=True, text=True)
    if built.returncode == 0:
        return "passed"
    if "':jvm:unitTest'" not in built.stderr:
        raise SystemExit(f"the planted copy does not build:\n{built.stderr[-3000:]}")
    subprocess.run([*gradle, "-x", ":jvm:unitTest"], cwd=copy, capture_output=True, check=True)
    results = copy / "jvm" / "build" / "testng" / "testng-results.xml"
    failed = re.findall(r'status="FAIL"[^>]*?name="(\w+)"', results.read_text()) if results.exists() else []
    failed = failed or re.findall(r"FAILED: (\S+)", built.stdout + built.stderr)
    return "CAUGHT" + (f" ({', '.join(failed)})" if failed else "")


def plant(patch: Path, tests: list[str] | None, keep: bool) -> str:
    copy = Path(tempfile.mkdtemp(prefix=f"mutant-{patch.stem}-"))
    try:
        copy_checkout(copy)
        applied = subprocess.run(["git", "apply", str(patch)], cwd=copy, capture_output=True, text=True)
        if applied.returncode != 0:
            print(f"  does not apply: {applied.stderr.strip()}")
            return "STALE"
        unit_tests = build_jars(copy, patch)
        print(f"  JVM unit tests: {unit_tests}", flush=True)
        if not (tests or caught_by(patch)):
            return "CAUGHT" if unit_tests.startswith("CAUGHT") else "SURVIVED"
        env = dict(os.environ, PYTHONPATH=str(copy / "python"))
        named = tests or caught_by(patch)
        command = [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "--timeout", "300"]
        if tests:
            command.append("-x")  # looking for what catches it: the first failure will do
        began = time.monotonic()
        done = subprocess.run([*command, *named], cwd=copy, env=env, capture_output=True, text=True)
        summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"  pytest exit {done.returncode} in {time.monotonic() - began:.0f} s: {summary}")
        outcomes = ("FAILED tests/", "ERROR tests/")  # not a captured log line at ERROR level
        failed = [line.split()[1] for line in done.stdout.splitlines() if line.startswith(outcomes)]
        for node in failed:
            print(f"    failed: {node}")
        if done.returncode in (0, 5):
            return "SURVIVED"
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
        print(f"{patch.stem}: {' '.join(args.tests or caught_by(patch))}", flush=True)
        verdicts[patch.stem] = plant(patch, args.tests, args.keep)
        print(f"  {verdicts[patch.stem]}", flush=True)
    print("\n".join(f"{verdict:9} {name}" for name, verdict in verdicts.items()))
    sys.exit(0 if all(v == "CAUGHT" for v in verdicts.values()) else 1)


if __name__ == "__main__":
    main()
