#!/usr/bin/env bash
# Mutation testing of the pure-Python core with mutmut (pinned in scripts/dev-constraints.txt):
# each mutant (an operator flipped, a constant changed, a call dropped) must make a test of the
# core fail. Not part of ./run-tests or CI: a module takes minutes to an hour. The hand-made plants
# of tests/MUTATIONS.md are the gate; this measures how much more the tests would miss.
#
# mutmut imports the mutated copy from src/ (or the project root), so this stages the package as
# src/reactive_streams with the tests in a scratch folder, runs there, and prints the survivors
# with their diffs. Record the score per module in tests/MUTATIONS.md.
# Usage: scripts/mutation-score.sh [MODULE ...] (default: _demand _iterate _aiterate _operators)
#        KEEP=1 keeps the scratch folder (its path is printed) for `mutmut browse` there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
source scripts/setup.sh
python -m pip install -q -c scripts/dev-constraints.txt mutmut

modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(_demand _iterate _aiterate _operators)
work=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
cp -r python/reactive_streams "$work/src/"
cp -r tests "$work/tests"
cp pyproject.toml "$work/"
# mutmut 3.8.1 resets its call-tracking context variable out of order around our generators
# (`iterate`'s pieces) and fails its stats run with a LookupError: let that reset be lenient.
cat >>"$work/tests/conftest.py" <<'PY'


try:  # added by scripts/mutation-score.sh
    from mutmut.core import MutmutCallStack

    _strict_reset = MutmutCallStack.__dict__["reset"].__func__

    def _lenient_reset(cls: type, token: Any) -> None:
        try:
            _strict_reset(cls, token)
        except (LookupError, ValueError, RuntimeError):
            pass

    MutmutCallStack.reset = classmethod(_lenient_reset)  # type: ignore[method-assign,assignment]
except ImportError:
    pass
PY

# The core's tests (no JVM: each mutant runs in a forked process, where a JVM cannot follow).
core_tests=()
for test in tests/test_*.py; do
    case "$(basename "$test")" in
        test_docs.py | test_packaging.py | test_run_tests.py | test_metadata.py | test_layout.py \
            | test_mutation_patches.py | test_exported_members.py | test_conftest.py \
            | test_setup_quiet.py) ;;
        *) core_tests+=("\"$test\"") ;;
    esac
done
only=()
for module in "${modules[@]}"; do
    only+=("\"src/reactive_streams/$module.py\"")
done
{
    echo
    echo "[tool.mutmut]"
    echo 'source_paths = ["src/reactive_streams"]'
    echo "only_mutate = [$(IFS=,; echo "${only[*]}")]"
    echo "pytest_add_cli_args_test_selection = [$(IFS=,; echo "${core_tests[*]}")]"
    # A mutant that hangs is cut by pytest-timeout in 30 s (the core's tests take at most 2 s, 10 s traced),
    # not by the suite's 300 s or the tests' own 60 s guards.
    echo 'pytest_add_cli_args = ["-p", "no:cacheprovider", "-n", "0", "-q", "-x", "--timeout", "30"]'
} >>"$work/pyproject.toml"

cd "$work"
[ -z "${KEEP:-}" ] || echo "[mutation-score] working in $work" >&2
mutmut run --max-children "${RS_MUTATION_CHILDREN:-4}" >"$work/run.log" 2>&1 || {
    tail -40 "$work/run.log" >&2
    exit 1
}
# Per module: killed (a test failed), timed out (counted as killed: the mutant hung), and the
# rest, with each survivor's diff.
mutmut results --all true >"$work/results.txt" 2>&1 || true
python - "$work/results.txt" "${modules[@]}" <<'EOF'
import re
import sys
from collections import Counter

path, modules = sys.argv[1], sys.argv[2:]
by_module: dict[str, Counter[str]] = {m: Counter() for m in modules}
survivors: list[str] = []
for line in open(path):
    found = re.match(r"\s*reactive_streams\.(\w+)\.(\S+): (.+)$", line)
    if not found or found.group(1) not in by_module:
        continue
    module, name, status = found.groups()
    by_module[module][status.strip()] += 1
    if status.strip() == "survived":
        survivors.append(f"reactive_streams.{module}.{name}")
print("| module | mutants | killed | timed out | survived | other | score |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for module, counts in by_module.items():
    total = sum(counts.values())
    killed, timeout, survived = counts["killed"], counts["timeout"], counts["survived"]
    other = total - killed - timeout - survived
    score = f"{100 * (killed + timeout) / total:.0f}%" if total else "-"
    print(f"| `{module}` | {total} | {killed} | {timeout} | {survived} | {other} | {score} |")
print()
print("\n".join(survivors))
EOF
for mutant in $(awk '/: survived$/ {sub(":", "", $1); print $1}' "$work/results.txt"); do
    echo
    mutmut show "$mutant" 2>/dev/null || true
done
