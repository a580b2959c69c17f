"""The benchmarks' verdicts: a target is "blocked" only when its bound, measured in the same run,
holds it below the target and the code reaches the target of that bound; any other shortfall is
"NOT met". A verdict that said "blocked" whatever the code did would be a gate that cannot fail.
And what they measure: a warm JVM, its compiler settled before the measured rounds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

pytest.importorskip("pyarrow")

from _report import Warmth, rounds_of
from dict_and_tuple_rows import _tuples_verdict
from working_producer import _blocked


def test_tuples_at_the_target_of_pythons_own_reading_are_met() -> None:
    assert _tuples_verdict(bridge=6.0e6, bound=7.5e6, checked=5.7e6) == "met"


def test_tuples_are_blocked_when_the_checks_hold_python_below_the_target_and_the_bridge_reaches_it() -> None:
    # As 11-30's JPype: the checks leave Python's own reading 76% of the plain one, the bridge 81% of that.
    verdict = _tuples_verdict(bridge=4.6e6, bound=7.5e6, checked=5.7e6)
    assert verdict.startswith("blocked: ") and "76% of it" in verdict and "reaches 81% of that" in verdict


def test_tuples_short_of_the_target_of_the_checked_reading_are_not_met() -> None:
    # 11-30's Py4J: the checks left 75%, and the bridge reached only 67% of that: the code's shortfall.
    verdict = _tuples_verdict(bridge=3.65e6, bound=7.31e6, checked=5.46e6)
    assert verdict.startswith("NOT met: ") and "67% of Python's own reading with the checks" in verdict


def test_tuples_are_not_met_when_the_checks_cost_little_and_the_bridge_falls_short() -> None:
    assert _tuples_verdict(bridge=5.0e6, bound=7.5e6, checked=7.0e6).startswith("NOT met: ")


def test_a_live_producer_is_blocked_only_by_a_machine_below_the_target_that_live_reaches() -> None:
    assert _blocked(machine_share=0.7, of_machine=0.85).startswith("round by round, the cores")
    assert _blocked(machine_share=0.7, of_machine=0.75) == ""  # the code's share: not blocked
    assert _blocked(machine_share=1.0, of_machine=0.79) == ""  # the machine gave enough


class _Compiler(Warmth):
    """A JVM whose compiler works ``busy_rounds`` rounds (a second of compiling each), then rests."""

    def __init__(self, busy_rounds: int, most_rounds: int = 30) -> None:
        self.settled, self.most_rounds = 0.02, most_rounds
        self.busy_rounds = busy_rounds
        self.rounds = 0
        self.ms = 0

    def compiled_ms(self) -> int:
        return self.ms

    def ran_a_round(self) -> None:
        self.rounds += 1
        if self.rounds <= self.busy_rounds:
            self.ms += 1000


def _scenarios(compiler: _Compiler) -> dict[str, Any]:
    return {"only": lambda: (compiler.ran_a_round(), 1.0)[1]}


def test_the_warm_up_goes_on_until_a_round_leaves_the_compiler_settled() -> None:
    compiler = _Compiler(busy_rounds=7)
    rounds = rounds_of(_scenarios(compiler), warm_up=3, repeat=2, warmth=compiler)
    # Rounds 1-7 compiled; the 8th did not: warm from there.
    assert compiler.warm_up_rounds == 8 and compiler.last_warm_up == 0.0
    assert rounds == {"only": [1.0, 1.0]} and compiler.measured == 0.0
    assert "8 unmeasured rounds" in compiler.text() and "(settled: " in compiler.text()


def test_a_warm_up_that_never_settles_stops_at_its_most_rounds_and_says_so() -> None:
    compiler = _Compiler(busy_rounds=1000, most_rounds=6)
    rounds_of(_scenarios(compiler), warm_up=3, repeat=1, warmth=compiler)
    assert compiler.warm_up_rounds == 6 and compiler.last_warm_up > 0.02
    assert "(NOT settled: " in compiler.text() and compiler.measured > 0.02


def test_without_a_jvm_to_watch_the_warm_up_is_its_count() -> None:
    compiler = _Compiler(busy_rounds=1000)
    rounds_of(_scenarios(compiler), warm_up=3, repeat=1)
    assert compiler.rounds == 4  # 3 unmeasured, 1 measured
