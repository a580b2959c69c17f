"""``Verification.after_run``: a class's own checks after its TCK run, as one more item."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .test_verdicts import run_pytest


@pytest.mark.timeout(660)  # a child pytest, given up to 600 s
def test_after_run_is_one_more_item_that_fails_with_what_it_raises(tmp_path: Path) -> None:
    result = run_pytest(
        tmp_path,
        """
        from reactive_streams.tck import SubscriberWhiteboxVerification
        from tests.tck.test_core_subscribers import Keep

        class TestCounting(SubscriberWhiteboxVerification):
            made = 0

            def create_subscriber(self, probe):
                self.made += 1
                return probe.wrap(Keep(batch=4))

        class TestFailing(TestCounting):
            def after_run(self):
                assert self.made == 0, f"the run made {self.made} subscribers"

        class TestPassing(TestCounting):
            def after_run(self):
                assert self.made > 1
        """,
        "-rA",
        "test_generated.py::TestCounting",
        "test_generated.py::TestFailing::after_run",  # alone: the class runs every test for it
        "test_generated.py::TestPassing",
    )
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "TestCounting::after_run" not in out  # no override, no item
    assert "FAILED test_generated.py::TestFailing::after_run" in out, out
    made = re.search(r"the run made (\d+) subscribers", out)
    assert made is not None and int(made[1]) > 10, out  # after the whole class ran, on the same instance
    assert "PASSED test_generated.py::TestPassing::after_run" in out, out
    assert "TestFailing: whitebox on jpype, 27 tests" in out, out
