#!/usr/bin/env bash
# The wheel as a user gets it, on every Python we claim. Builds it from this checkout with
# `pip wheel` (an isolated build through build_backend/rspy_build.py: Gradle runs unless the jars
# in place are fresh), fails on a warning from the build, checks the wheel carries the bridge's
# jars. Then, for each version in .ci/pythons, installs it with no extras into a fresh virtual
# environment (py4j and jpype1 from the index, the test tools at scripts/dev-constraints.txt's
# versions) and, from outside the source tree, runs one JPype and one standalone-Py4J round trip
# and the core tests against the installed copy. Last, the wheel's "Programming Language ::
# Python :: X.Y" classifiers and Requires-Python must match the versions tested exactly.
# A version with no interpreter fails the check, loudly: never a silent skip. Cleans up after itself.
# Usage: scripts/check-wheel.sh [X.Y ...] (default: .ci/pythons; with versions given, the classifier
# check is left out). PYTHON=... chooses the interpreter that builds the wheel. .ci/run runs it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
python=${PYTHON:-python3}
constraints="$root/scripts/dev-constraints.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { printf '[check-wheel] %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# 1. Build. The verbose log is kept to look for warnings; shown in full if the build fails.
say "building the wheel: pip wheel --no-deps ."
start=$SECONDS
if ! "$python" -m pip wheel --no-deps -v -w "$work/dist" . >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    fail "the wheel did not build (log above)"
fi
wheel=$(echo "$work"/dist/*.whl)
say "built $(basename "$wheel") in $((SECONDS - start)) s"
# Any warning of the build's, except setuptools' note that byte-compiling is off
# (PYTHONDONTWRITEBYTECODE) and pip's about running as root.
if grep -E '[A-Za-z]*Warning\b|warning:' "$work/build.log" \
    | grep -v -E 'byte-compiling is disabled|Running pip as the .root. user' >"$work/warnings"; then
    cat "$work/warnings" >&2
    fail "the build printed warnings (above)"
fi

# 2. What the wheel carries.
"$python" - "$wheel" <<'EOF' || fail "the wheel lacks the bridge's jars"
import sys
import zipfile

names = set(zipfile.ZipFile(sys.argv[1]).namelist())
jars = "reactive_streams/_jars/"
expected = [
    jars + "reactive-streams-py-bridge.jar",
    jars + "reactive-streams-1.0.4.jar",
    jars + "pickle-1.5.jar",
    jars + "tck/reactive-streams-py-tck-runner.jar",
    jars + "tck/reactive-streams-tck-1.0.4.jar",
    jars + "spark/reactive-streams-py-spark.jar",
]
missing = [name for name in expected if name not in names]
if missing:
    sys.exit(f"missing from the wheel: {missing}")
print(f"[check-wheel] the wheel carries {sum(n.endswith('.jar') for n in names)} jars", file=sys.stderr)
EOF

# 3. The interpreters (find_python: pythonX.Y on PATH if it runs, else pyenv's newest X.Y).
# shellcheck source=scripts/find-python.sh
source scripts/find-python.sh

if [ $# -gt 0 ]; then
    versions=("$@")
else
    mapfile -t versions < <(ci_pythons)
fi
core_tests=()
for test in tests/test_*.py; do
    case "$(basename "$test")" in
        # These read the source tree (the docs, the build backend, run-tests, the project's files),
        # or run a dev tool (test_typing.py: mypy, over the source tree's typing chains), or
        # import the source tree's benchmarks (test_benchmark_verdicts.py: they need the arrow extra).
        test_docs.py | test_packaging.py | test_run_tests.py | test_metadata.py | test_conftest.py \
            | test_setup_quiet.py | test_typing.py | test_benchmark_verdicts.py) ;;
        *) core_tests+=("$root/$test") ;;
    esac
done

tested=()
missing=()
for version in "${versions[@]}"; do
    if ! interpreter=$(find_python "$version"); then
        say "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
        say "!!! NO PYTHON $version: no python$version on PATH, none in pyenv. Python $version is NOT TESTED."
        say "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
        missing+=("$version")
        continue
    fi
    actual=$("$interpreter" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    [ "$actual" = "$version" ] || fail "$interpreter is Python $actual, not $version"
    say "Python $version ($interpreter): installing the wheel into a fresh virtual environment"
    start=$SECONDS
    venv="$work/venv-$version"
    "$interpreter" -m venv "$venv"
    "$venv/bin/python" -m pip install -q -c "$constraints" --upgrade pip
    "$venv/bin/python" -m pip install -q -c "$constraints" "$wheel" pytest pytest-timeout hypothesis
    say "Python $version: installed in $((SECONDS - start)) s"
    start=$SECONDS

    # 4. Round trips, from a folder outside the source tree so that the installed copy is imported.
    (cd "$work" && "$venv/bin/python" - "$root" "$version") <<'EOF' \
        || fail "Python $version: the installed wheel does not work (above)"
import sys
from pathlib import Path

import reactive_streams as rs
from reactive_streams.jvm import Bridge, bridge_classpath
from reactive_streams.tck import tck_classpath

root, version = Path(sys.argv[1]).resolve(), sys.argv[2]
package = Path(rs.__file__).resolve().parent
if root in package.parents:
    sys.exit(f"reactive_streams was imported from the source tree ({package}), not the wheel")
for jar in [*bridge_classpath(), *tck_classpath(), *(package / "_jars" / "spark").glob("*.jar")]:
    assert Path(jar).is_relative_to(package), jar

expected = [x * x for x in range(100) if x % 2 == 0]
for name, open_bridge, flow in [("jpype", Bridge.jpype, False), ("py4j", Bridge.py4j, True)]:
    with open_bridge() as bridge:
        # Python -> JVM (an org.reactivestreams or Flow publisher) -> Python.
        java = bridge.to_jvm(rs.from_iterable(range(100)).map(lambda x: x * x), flow=flow)
        got = list(rs.iterate(bridge.from_jvm(java).filter(lambda x: x % 2 == 0), prefetch=16))
        if got != expected:
            sys.exit(f"{name}: the round trip gave {got}")
        assert bridge.backend == name, bridge.backend
    print(f"[check-wheel] Python {version}, {name}: 100 elements Python -> JVM -> Python", file=sys.stderr)
EOF

    # 5. The core tests against the installed copy (scripts/pytest-installed.py).
    (cd "$work" && "$venv/bin/python" "$root/scripts/pytest-installed.py" "$root" "${core_tests[@]}") \
        || fail "Python $version: the core tests failed against the installed wheel (above)"
    say "Python $version: round trips and core tests passed in $((SECONDS - start)) s"
    tested+=("$version")
done

if [ ${#missing[@]} -gt 0 ]; then
    fail "no interpreter for Python ${missing[*]} (above): the package claims it, so CI must test it"
fi

# 6. The classifiers and Requires-Python say exactly what was tested (for the whole list only).
if [ $# -eq 0 ]; then
    "$python" - "$wheel" "${tested[@]}" <<'EOF' || fail "the wheel's metadata does not match the versions tested"
import sys
import zipfile
from email.parser import Parser

wheel, tested = sys.argv[1], sys.argv[2:]
with zipfile.ZipFile(wheel) as archive:
    (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
    metadata = Parser().parsestr(archive.read(name).decode())


def key(version: str) -> tuple[int, ...]:
    return tuple(map(int, version.split(".")))


prefix = "Programming Language :: Python :: 3."
classified = sorted((c.rsplit(" ", 1)[1] for c in metadata.get_all("Classifier", []) if c.startswith(prefix)), key=key)
if classified != sorted(tested, key=key):
    sys.exit(f"[check-wheel] the classifiers name Python {classified}; CI tested {tested}")
lowest = min(tested, key=key)
if metadata["Requires-Python"] != f">={lowest}":
    sys.exit(f"[check-wheel] Requires-Python is {metadata['Requires-Python']!r}; the lowest version tested is {lowest}")
print(f"[check-wheel] the classifiers and Requires-Python match the versions tested: {tested}", file=sys.stderr)
EOF
fi
say "ok: Python ${tested[*]}"
