#!/usr/bin/env bash
# The wheel as a user gets it: builds it from this checkout with `pip wheel` (an isolated build
# through build_backend/rspy_build.py: Gradle runs unless the jars in place are fresh), fails on
# a warning from the build, checks the wheel carries the bridge's jars, installs it with no
# extras into a fresh virtual environment (py4j and jpype1 from the index), and from outside the
# source tree runs one JPype and one standalone-Py4J round trip. Cleans up after itself.
# Usage: scripts/check-wheel.sh (PYTHON=python3.12 to choose the interpreter). .ci/run runs it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
python=${PYTHON:-python3}
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
say "built $(basename "$work"/dist/*.whl) in $((SECONDS - start)) s"
# Any warning of the build's, except setuptools' note that byte-compiling is off
# (PYTHONDONTWRITEBYTECODE) and pip's about running as root.
if grep -E '[A-Za-z]*Warning\b|warning:' "$work/build.log" \
    | grep -v -E 'byte-compiling is disabled|Running pip as the .root. user' >"$work/warnings"; then
    cat "$work/warnings" >&2
    fail "the build printed warnings (above)"
fi

# 2. What the wheel carries.
"$python" - "$work"/dist/*.whl <<'EOF' || fail "the wheel lacks the bridge's jars"
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

# 3. A fresh environment with the wheel and its dependencies only.
say "installing it into a fresh virtual environment"
start=$SECONDS
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$work"/dist/*.whl
say "installed in $((SECONDS - start)) s"

# 4. Round trips, from a folder outside the source tree so that the installed copy is imported.
say "round trips: Bridge.jpype() and Bridge.py4j()"
start=$SECONDS
cd "$work"
"$work/venv/bin/python" - "$root" <<'EOF' || fail "the installed wheel does not work (above)"
import sys
from pathlib import Path

import reactive_streams as rs
from reactive_streams.jvm import Bridge, bridge_classpath
from reactive_streams.tck import tck_classpath

package = Path(rs.__file__).resolve().parent
if Path(sys.argv[1]).resolve() in package.parents:
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
    print(f"[check-wheel] {name}: 100 elements Python -> JVM -> Python, as sent", file=sys.stderr)
EOF
say "round trips in $((SECONDS - start)) s"
say "ok"
