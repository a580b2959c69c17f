#!/usr/bin/env bash
# pyarrow is optional (the `arrow` extra, which `spark` includes): the bridge's Arrow tests
# (tests/jvm/test_arrow.py, and test_arrow_columns.py for the dates, times, decimals and UUIDs
# pyarrow reads and writes, on JPype and on the standalone Py4J gateway) against the oldest
# pyarrow the extra allows, on the lowest Python of .ci/pythons, and against the newest pyarrow
# PyPI has for the highest. Each runs in a fresh virtual environment holding the wheel with its
# `arrow` extra, that exact pyarrow (a wheel, never a source build), py4j and JPype from the
# index and the test tools at scripts/dev-constraints.txt's versions, from outside the source
# tree so that the installed copy is imported. A version that cannot be installed, a pyarrow
# other than the one asked for, a test skipped or failed: each fails the check, loudly.
# Usage: scripts/check-pyarrow.sh [WHEEL] (default: builds one from this checkout with
# `pip wheel`, as scripts/check-wheel.sh does). Needs the test jars in build/test-jars (which
# ./run-tests builds) and PyPI. .ci/run runs it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
python=${PYTHON:-python3}
constraints="$root/scripts/dev-constraints.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/find-python.sh
source scripts/find-python.sh

say() { printf '[check-pyarrow] %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

# The floor, as pyproject.toml's `arrow` extra states it: exactly `arrow = ["pyarrow>=X"]`.
floor=$(sed -n -E 's/^arrow = \["pyarrow>=([0-9][0-9.]*)"\]$/\1/p' pyproject.toml)
[ -n "$floor" ] || fail "pyproject.toml has no line arrow = [\"pyarrow>=X\"] to read the oldest pyarrow from"
ls build/test-jars/*.jar >/dev/null 2>&1 || fail "build/test-jars is empty: run ./run-tests (or scripts/setup.sh) first"

if [ $# -gt 0 ]; then
    wheel=$(realpath "$1")
else
    say "building the wheel: pip wheel --no-deps ."
    "$python" -m pip wheel -q --no-deps -w "$work/dist" . >"$work/build.log" 2>&1 \
        || { cat "$work/build.log" >&2; fail "the wheel did not build (log above)"; }
    wheel=$(echo "$work"/dist/*.whl)
fi
[ -f "$wheel" ] || fail "no wheel at $wheel"

mapfile -t pythons < <(ci_pythons | sort -V)
[ ${#pythons[@]} -gt 0 ] || fail ".ci/pythons names no Python"
lowest=${pythons[0]}
highest=${pythons[-1]}

# check LABEL PYTHON_VERSION PYARROW_VERSION ("" for the newest PyPI has for that Python)
check() {
    local label=$1 version=$2 wanted=$3 interpreter venv start
    start=$SECONDS
    interpreter=$(find_python "$version") \
        || fail "no Python $version (no python$version on PATH, none in pyenv): pyarrow $label is NOT TESTED"
    venv="$work/venv-$label"
    "$interpreter" -m venv "$venv"
    "$venv/bin/python" -m pip install -q -c "$constraints" --upgrade pip
    if [ -z "$wanted" ]; then
        # pip's own answer for this interpreter, wheels only: the first version it lists.
        wanted=$("$venv/bin/python" -m pip index versions pyarrow --only-binary=:all: 2>/dev/null \
            | sed -n -E '1s/^pyarrow \(([0-9][0-9.]*)\)$/\1/p')
        [ -n "$wanted" ] || fail "could not ask PyPI for the newest pyarrow for Python $version"
    fi
    say "pyarrow $wanted ($label) on Python $version: installing the wheel[arrow] into a fresh virtual environment"
    "$venv/bin/python" -m pip install -q -c "$constraints" --only-binary pyarrow \
        "$wheel[arrow]" "pyarrow==$wanted" pytest pytest-timeout \
        || fail "pyarrow $wanted ($label) could not be installed on Python $version (above): NOT TESTED"
    local installed
    installed=$("$venv/bin/python" -c 'import pyarrow; print(pyarrow.__version__)') \
        || fail "pyarrow $wanted was installed but does not import on Python $version (above)"
    [ "$installed" = "$wanted" ] || fail "asked for pyarrow $wanted on Python $version, got $installed"

    # From a folder outside the source tree, against the wheel's reactive_streams.
    local junit="$work/junit-$label.xml"
    (cd "$work" && "$venv/bin/python" "$root/scripts/pytest-installed.py" "$root" --junitxml "$junit" \
        "$root/tests/jvm/test_arrow.py" "$root/tests/jvm/test_arrow_columns.py" -k "not spark") \
        || fail "pyarrow $wanted ($label) on Python $version: the Arrow tests failed (above)"
    "$venv/bin/python" - "$junit" <<'EOF' || fail "pyarrow $wanted ($label) on Python $version: Arrow tests missing"
import sys
import xml.etree.ElementTree as ET

suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert suite is not None
counts = {key: int(suite.get(key, "0")) for key in ("tests", "skipped", "failures", "errors")}
if counts["skipped"] or counts["tests"] < 40:
    sys.exit(f"the Arrow tests must all run on JPype and Py4J: {counts}")
print(f"[check-pyarrow] {counts['tests']} Arrow tests passed on JPype and Py4J", file=sys.stderr)
EOF
    say "pyarrow $wanted ($label) on Python $version: passed in $((SECONDS - start)) s"
}

check oldest "$lowest" "$floor"
check newest "$highest" ""
say "ok: pyarrow $floor (the oldest the arrow extra allows) on Python $lowest, and PyPI's newest on Python $highest"
