"""The checked-in skip expectation: the TCK reports a failing optional test as a skip, so each
class's skips are compared with tests/tck/expected_skips.json (the plugin's opt-in ini option)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reactive_streams.tck import _expected_skips
from reactive_streams.tck._names import TEST_NAMES

from ..conftest import ROOT
from .test_verdicts import SPEC101, run_pytest

UNTESTED = sorted(n for n in TEST_NAMES["publisher"] if n.startswith("untested_"))
SPEC104 = "optional_spec104_mustSignalOnErrorWhenFails"
KEY = "tests/x.py::TestX"


def expectation(tmp_path: Path, entries: dict[str, object]) -> str:
    path = tmp_path / "expected_skips.json"
    path.write_text(json.dumps(entries))
    return str(path)


def test_one_skip_more_fails_naming_it_with_the_tcks_reason(tmp_path: Path) -> None:
    path = expectation(tmp_path, {KEY: UNTESTED})
    problem = _expected_skips.compare(path, KEY, {*UNTESTED, SPEC104}, {SPEC104: "§1.4 it failed"})
    assert problem is not None
    assert "1 TCK test(s) skipped that expected_skips.json does not expect" in problem
    assert f"{SPEC104}: §1.4 it failed" in problem


def test_one_skip_fewer_asks_for_the_file_to_be_updated(tmp_path: Path) -> None:
    path = expectation(tmp_path, {KEY: [*UNTESTED, SPEC104]})
    problem = _expected_skips.compare(path, KEY, set(UNTESTED), {})
    assert problem is not None and "no longer skip: update the file" in problem and SPEC104 in problem


def test_the_same_skips_pass_and_may_skip_goes_either_way(tmp_path: Path) -> None:
    path = expectation(tmp_path, {KEY: {"why": "timing", "skips": UNTESTED, "may_skip": [SPEC104]}})
    assert _expected_skips.compare(path, KEY, set(UNTESTED), {}) is None
    assert _expected_skips.compare(path, KEY, {*UNTESTED, SPEC104}, {}) is None


def test_a_class_missing_from_the_file_fails_giving_its_entry(tmp_path: Path) -> None:
    problem = _expected_skips.compare(expectation(tmp_path, {}), KEY, {SPEC104}, {})
    assert problem is not None and json.dumps({KEY: [SPEC104]}) in problem


def test_writing_keeps_other_classes_and_what_may_skip(tmp_path: Path) -> None:
    other = "tests/y.py::TestY"
    path = expectation(
        tmp_path, {other: ["a"], KEY: {"why": "timing", "skips": ["b"], "may_skip": [SPEC104]}}
    )
    _expected_skips.write(path, {KEY: ["c", SPEC104]})
    assert json.loads(Path(path).read_text()) == {
        KEY: {"why": "timing", "skips": ["c"], "may_skip": [SPEC104]},
        other: ["a"],
    }


def test_the_checked_in_file_names_only_real_tests() -> None:
    known = {name for names in TEST_NAMES.values() for name in names}
    for key, entry in _expected_skips.load(str(ROOT / "tests" / "tck" / "expected_skips.json")).items():
        assert (ROOT / key.split("::")[0]).exists(), key
        assert entry.skips | entry.may_skip <= known, key


@pytest.mark.timeout(660)  # a child pytest, given up to 600 s
def test_a_run_fails_when_skips_differ_and_says_how(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nreactive_streams_tck_expected_skips = expected.json\n")
    (tmp_path / "expected.json").write_text(
        json.dumps(
            {
                # No failed publisher: its tests skip, one of them optional (the regression case).
                "test_generated.py::TestWithoutFailedPublisher": UNTESTED,
                # Lists a test that passes: the file is out of date.
                "test_generated.py::TestGood": [*UNTESTED, SPEC101],
            }
        )
    )
    result = run_pytest(
        tmp_path,
        """
        import reactive_streams as rs
        from reactive_streams.tck import PublisherVerification
        from tests.tck.test_core_publishers import failed, source

        class TestWithoutFailedPublisher(PublisherVerification):
            def create_publisher(self, elements):
                return rs.from_iterable(source(elements))

        class TestGood(TestWithoutFailedPublisher):
            def create_failed_publisher(self):
                return failed()
        """,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "FAILED test_generated.py::TestWithoutFailedPublisher::skips_as_expected" in out, out
    assert "FAILED test_generated.py::TestGood::skips_as_expected" in out, out
    assert "skipped that expected.json does not expect" in out and f"  {SPEC104}: §1.4 " in out
    assert "lists as skipped no longer skip: update the file" in out and f"  {SPEC101}\n" in out
