#!/usr/bin/env bash
# The Java unit tests (jvm/src/test/java/**/*Test.java, TestNG), ./run-tests' `== JVM unit tests`
# step: `gradle :jvm:unitTest` with its output kept in build/jvm-unit-tests.log, one summary line
# when they pass, the whole output and a non-zero status when one fails. Gradle skips the task
# when neither the sources nor the classpath changed since it last passed; the line says so.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p build
log=build/jvm-unit-tests.log
results=jvm/build/testng/testng-results.xml
if ! gradle --no-daemon --console=plain :jvm:unitTest >"$log" 2>&1; then
    cat "$log"
    echo "JVM unit tests: FAILED (the output above; TestNG's report is in jvm/build/testng)"
    exit 1
fi
summary=$(grep -o -m1 '<testng-results [^>]*>' "$results" || true)
count() { printf '%s' "$summary" | sed -n "s/.* $1=\"\([0-9]*\)\".*/\1/p"; }
if grep -q ':jvm:unitTest UP-TO-DATE' "$log"; then
    state="unchanged since they last passed"
else
    state="run"
fi
echo "JVM unit tests: $(count passed) of $(count total) passed, $(count failed) failed, $(count skipped) skipped ($state)"
