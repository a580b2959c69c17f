#!/usr/bin/env bash
# Idempotent set-up shared by ./run-demo and ./run-tests: Gradle (Debian's package) if missing,
# a virtual environment in .venv with the project installed (editable, with its dev extras, the
# dev tools pinned by scripts/dev-constraints.txt),
# and the Gradle build that puts the jars in place. Each step is skipped when its inputs have
# not changed since it last succeeded, so a second run takes a second or two.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

say() { printf '[setup] %s\n' "$*" >&2; }
digest() { sha256sum "$@" | sha256sum | cut -c1-16; }

# 1. Java and Gradle. Gradle comes from Debian (4.4.1; the wrapper cannot download here).
if ! command -v java >/dev/null 2>&1; then
    say "no java on PATH: install a JDK 17 first"; exit 1
fi
if ! command -v gradle >/dev/null 2>&1; then
    say "installing Debian's gradle package"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq gradle >/dev/null
fi

# 1b. The deployment tests' TLS proxy (tests/deploy, docs/deploy.md): Debian's nginx and openssl.
# Those tests make network namespaces, which needs root: elsewhere they skip, and this step too.
if [ "$(id -u)" -eq 0 ] && ! { command -v nginx && command -v openssl; } >/dev/null 2>&1; then
    say "installing Debian's nginx-light and openssl (the deployment tests' TLS proxy)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light openssl >/dev/null \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends nginx-light openssl >/dev/null; }
fi

# 1c. A headless browser for the test that reads Spark's UI as a user sees it (tests/browser.py):
# Debian's chromium-headless-shell, driven over its DevTools pipe.
if ! command -v chromium-headless-shell >/dev/null 2>&1; then
    say "installing Debian's chromium-headless-shell (the Spark UI test's browser)"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends chromium-headless-shell \
        >/dev/null 2>&1 || { $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            $sudo_cmd apt-get install -y -qq --no-install-recommends chromium-headless-shell >/dev/null; }
fi

# 2. The virtual environment and the project's Python dependencies.
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    "$python" -m venv .venv
fi
# The dev tools at the exact versions of scripts/dev-constraints.txt (the runtime dependencies
# keep pyproject.toml's ranges); a change to either file reinstalls.
pip_stamp=".venv/.installed-$(digest pyproject.toml scripts/dev-constraints.txt)"
if [ ! -f "$pip_stamp" ]; then
    say "installing the project and its dev dependencies into .venv"
    .venv/bin/python -m pip install -q -c scripts/dev-constraints.txt --upgrade pip
    .venv/bin/python -m pip install -q -c scripts/dev-constraints.txt -e '.[dev]'
    rm -f .venv/.installed-*
    touch "$pip_stamp"
fi

# 3. The JVM side, when its sources or build files changed (or the outputs are missing). The
# digest of the Gradle inputs is build_backend/jvm_jars.py's, the one a wheel build checks: after
# this build, `pip wheel .` packs the jars in place instead of running Gradle again. It builds
# the jars only: the Java unit tests are a step of ./run-tests (scripts/jvm-tests.sh).
gradle_stamp="build/.gradle-$(.venv/bin/python build_backend/jvm_jars.py digest)"
if [ ! -f "$gradle_stamp" ] || [ ! -d python/reactive_streams/_jars ] || [ ! -d build/test-jars ]; then
    say "building the JVM side (gradle pythonJars)"
    spark_jars=$(.venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
    gradle --no-daemon --quiet --console=plain -PsparkJars="$spark_jars" pythonJars 2>&1 \
        | { grep -v -E '^(openjdk version|OpenJDK )' || true; } >&2
    mkdir -p build
    rm -f build/.gradle-*
    .venv/bin/python build_backend/jvm_jars.py mark-built
    touch "$gradle_stamp"
fi
export PATH="$root/.venv/bin:$PATH"
