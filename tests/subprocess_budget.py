"""A gate of the suite's own (tests/conftest.py uses it for every test): no test may wait for a
subprocess longer than pytest-timeout gives the whole test.

Why: such a test passes on a quick machine and is killed on a slow one before its subprocess's
own timeout can say what hung. CI failed twice that way: a test running two pipelines of up to
300 s each had 300 s, and a script given 600 s ran in a test of 300 s. Each call is checked
against the test's budget, not against the time left, so the gate says the same on any machine.
Only calls made from the suite's own files, on the test's own thread, are checked: the library's
waits are its own, and a background thread of the suite (the Spark class archive's) outlives tests.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
_SUBPROCESS_FILE = subprocess.__file__


def budget_of(item: pytest.Item) -> float:
    """The seconds pytest-timeout gives ``item``: its ``timeout`` mark, else ``--timeout``, else
    the ini's ``timeout``; 0 for none."""
    marker = item.get_closest_marker("timeout")
    if marker is not None:
        value = marker.args[0] if marker.args else marker.kwargs.get("timeout")
    else:
        value = item.config.getoption("timeout", None)
        if value is None:
            value = item.config.getini("timeout")
    return float(value or 0)


def too_long(timeout: float | None, budget: float) -> str:
    """Why a wait of ``timeout`` seconds does not fit a test of ``budget``, or "" if it does."""
    if timeout is None or budget <= 0 or timeout < budget:
        return ""
    return (
        f"this test waits up to {timeout:g} s for a subprocess, but pytest-timeout gives the whole "
        f"test {budget:g} s: on a slow machine the test is killed first. Give the test "
        "@pytest.mark.timeout(...) that fits every subprocess it waits for, or wait less."
    )


def _caller_in_the_suite() -> str:
    """The suite's file that made the call, past `subprocess`'s own frames; "" if none did."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == _SUBPROCESS_FILE:
        frame = frame.f_back
    if frame is None:
        return ""
    path = Path(frame.f_code.co_filename)
    return f"{path.name}:{frame.f_lineno}" if path.is_relative_to(TESTS) else ""


def _checked(wait: Callable[..., Any], budget: float, position: int) -> Callable[..., Any]:
    """``Popen.communicate`` or ``Popen.wait``, refusing on this thread a timeout the test cannot
    give (``position``: where the timeout is among the positional arguments, ``self`` first)."""
    test_thread = threading.get_ident()

    def checked(*args: Any, **kwargs: Any) -> Any:
        timeout = kwargs.get("timeout", args[position] if len(args) > position else None)
        problem = too_long(timeout, budget) if threading.get_ident() == test_thread else ""
        if problem:
            caller = _caller_in_the_suite()
            if caller:
                pytest.fail(f"{caller}: {problem}", pytrace=False)
        return wait(*args, **kwargs)

    return checked


@pytest.fixture(autouse=True)
def subprocess_waits_fit_the_test(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Every test: its waits for subprocesses (``subprocess.run``, ``Popen.communicate``,
    ``Popen.wait``) must each be shorter than its pytest-timeout."""
    budget = budget_of(request.node)
    if budget > 0:
        monkeypatch.setattr(
            subprocess.Popen, "communicate", _checked(subprocess.Popen.communicate, budget, 2)
        )
        monkeypatch.setattr(subprocess.Popen, "wait", _checked(subprocess.Popen.wait, budget, 1))
    yield
