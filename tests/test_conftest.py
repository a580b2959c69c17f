"""The suite's own plumbing (tests/conftest.py): the wait for Spark Connect's fixed port, the
workers' groups, and Spark's shared classes (tests/spark_share.py)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from .conftest import _port_bindable, wait_for_port


def test_a_port_bound_but_not_listening_counts_as_taken() -> None:
    # A connect probe saw such a port as free, and the next embedded server failed to bind it.
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        assert not _port_bindable(port)
        with pytest.raises(AssertionError, match=rf"port {port} still taken after 0 s"):
            wait_for_port(port, seconds=0.3)
    assert _port_bindable(port)
    wait_for_port(port, seconds=0.3)


def test_the_docs_blocks_that_start_an_embedded_connect_server_share_the_ports_worker() -> None:
    from .conftest import FIXED_PORT_GROUP, worker_group
    from .test_docs import PARTS

    groups = {
        str(part): worker_group(f"tests/test_docs.py::test_page_blocks_run_as_written[{part}]")
        for part in PARTS
    }
    on_the_port = sorted(name for name, group in groups.items() if group == FIXED_PORT_GROUP)
    assert on_the_port and all(name.startswith("docs/spark.md:") for name in on_the_port)
    assert len(set(groups.values())) == len(groups) - len(on_the_port) + 1  # the rest, each apart


def test_groups_are_modules_tck_classes_and_the_ports_tests() -> None:
    from .conftest import FIXED_PORT_GROUP, worker_group

    assert worker_group("tests/test_rules.py::test_x[map]") == "tests/test_rules.py"
    assert worker_group("tests/tck/test_core_publishers.py::TestRange::required_spec101") == (
        "tests/tck/test_core_publishers.py::TestRange"
    )
    assert worker_group("tests/spark/test_connect_close.py::test_y") == FIXED_PORT_GROUP
    assert worker_group(
        "tests/test_setup_quiet.py::test_the_demo_prints_no_stack_trace_and_no_warning[connect]"
    ) == (FIXED_PORT_GROUP)
    assert worker_group(
        "tests/test_setup_quiet.py::test_set_up_prints_one_line_per_step_and_nothing_else"
    ) == ("tests/test_setup_quiet.py")
    # the cluster of namespace hosts: every module of tests/deploy on one worker
    assert worker_group("tests/deploy/test_faults.py::test_z") == "tests/deploy"
    assert worker_group("tests/deploy/test_thin_client.py::test_w[4.1.3]") == "tests/deploy"


@pytest.mark.timeout(300)
def test_a_group_runs_on_one_worker() -> None:
    """Under xdist itself, on two workers: a module's nine tests on one. xdist's own loadgroup
    once applied no group at all under pytest 9, and nothing noticed."""
    import subprocess
    import sys

    from .conftest import ROOT

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-v",
            "-p",
            "no:cacheprovider",
            "tests/test_iterable.py",
            "tests/test_conftest.py::test_groups_are_modules_tck_classes_and_the_ports_tests",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    ran = re.findall(r"^\[(gw\d+)\] .*PASSED tests/test_iterable\.py::", done.stdout, flags=re.M)
    assert len(ran) == 9 and len(set(ran)) == 1, done.stdout


_SPARK_DRIVER = """
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
jvm = spark.sparkContext._jvm
print(jvm.java.lang.System.getProperty("java.vm.info"))
print(list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()))
print(jvm.java.lang.System.getProperty("java.io.tmpdir"))
spark.stop()
"""


@pytest.mark.timeout(600)
def test_the_suites_spark_drivers_map_sparks_classes_from_the_shared_archive() -> None:
    from .spark_share import OPTION, archive_path

    handed = os.environ.get("SPARK_SUBMIT_OPTS")
    if handed is not None and OPTION not in handed:
        pytest.skip(f"SPARK_SUBMIT_OPTS is the user's own: {handed}")
    archive = archive_path()
    assert handed is not None and handed.split()[0] == f"{OPTION}{archive}"
    deadline = time.monotonic() + 400  # a first run makes it in the background
    while not archive.exists():
        assert time.monotonic() < deadline, f"{archive} not made: see {archive.with_suffix('.log')}"
        time.sleep(1)
    done = subprocess.run([sys.executable, "-c", _SPARK_DRIVER], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    vm_info, arguments, java_tmp = done.stdout.splitlines()[-3:]
    assert f"{OPTION}{archive}" in arguments
    # ./run-tests gives the suite a temporary folder of its own (TMPDIR): the drivers' files go there too
    assert java_tmp == os.environ.get("TMPDIR", "/tmp"), arguments
    # "sharing" only when the archive mapped: a class path or jar that differs turns it all off
    assert "sharing" in vm_info


def test_steady_waits_for_a_value_to_hold_still_and_fails_loudly_if_it_never_does() -> None:
    """What the snapshots of shared state rest on (issue 48, item 4): a count earlier tests'
    streams still change is read once it has held still, not at once; one that never does
    fails, naming it, rather than giving whatever it was at the deadline."""
    import itertools

    from .support import steady

    ending = iter([5, 4, 3, 2, 1])  # streams of earlier tests ending one by one
    last = [5]

    def settling() -> int:
        last[0] = next(ending, last[0])
        return last[0]

    assert steady(settling, "the count", quiet=0.2) == 1  # read at once, it would have been 5
    ticking = itertools.count()
    with pytest.raises(AssertionError, match="the ticking count never held still"):
        steady(lambda: next(ticking), "the ticking count", quiet=0.2, within=0.5)


def test_a_skip_outside_the_tck_is_unexpected_unless_listed_with_why() -> None:
    """The skip gate (issue 48, item 5): the TCK's skips are its plugin's to pin; any other skip,
    a module-level ``importorskip`` too, fails the run unless tests/expected_skips.json lists it
    (tests/MUTATIONS.md: a run on xdist with one of each exited 1, naming both)."""
    from . import skip_gate

    skips = {
        "tests/tck/test_x.py::TestX::optional_spec104": "the TCK's",
        "tests/jvm/test_arrow.py": "could not import 'pyarrow'",
        "tests/test_packaging.py::test_the_wheel": "Skipped: tomllib",
        "tests/spark/test_connect_tck.py::TestJvmPublisherOverSparkConnect::untested_spec304": "the TCK's",
    }
    tck = skip_gate.tck_classes()
    assert "tests/spark/test_connect_tck.py::TestJvmPublisherOverSparkConnect" in tck  # the TCK's, elsewhere
    unexpected = {k: v for k, v in skips.items() if v != "the TCK's"}
    assert skip_gate.unexpected(skips, {}, tck) == unexpected
    assert skip_gate.unexpected(skips, {"tests/jvm/": "no pyarrow on purpose"}, tck) == {
        "tests/test_packaging.py::test_the_wheel": "Skipped: tomllib"
    }
    message = skip_gate.message(skip_gate.unexpected(skips, {}, tck))
    assert "2 test(s) skipped outside the TCK" in message and "tests/jvm/test_arrow.py: could not" in message
    assert skip_gate.expected() == {}, "every skip outside the TCK is listed with why, or none is"


@pytest.mark.timeout(20)
def test_a_subprocess_given_as_long_as_its_whole_test_fails_the_test_at_once() -> None:
    # Each way a test waits for a subprocess; none of them starts waiting.
    child = [sys.executable, "-c", "import time; time.sleep(60)"]
    started = time.monotonic()
    with pytest.raises(
        pytest.fail.Exception,
        match=r"test_conftest\.py:\d+: this test waits up to 20 s .* gives the whole test 20 s",
    ):
        subprocess.run(child, timeout=20)
    for wait in ("communicate", "wait"):
        with subprocess.Popen(child) as process:
            try:
                with pytest.raises(pytest.fail.Exception, match="waits up to 60 s"):
                    getattr(process, wait)(timeout=60)
                with pytest.raises(pytest.fail.Exception, match="waits up to 30 s"):
                    getattr(process, wait)(None, 30) if wait == "communicate" else process.wait(30)
            finally:
                process.kill()
    assert time.monotonic() - started < 10  # refused before waiting


@pytest.mark.timeout(20)
def test_a_subprocess_that_fits_its_test_runs_and_other_threads_are_not_checked() -> None:
    done = subprocess.run([sys.executable, "-c", "print('ran')"], capture_output=True, text=True, timeout=19)
    assert done.stdout == "ran\n"
    with subprocess.Popen([sys.executable, "-c", "pass"]) as process:
        assert process.wait(timeout=19.5) == 0
    # The suite's background threads (the Spark class archive's) are not the test's own.
    outcome: list[object] = []
    thread = threading.Thread(
        target=lambda: outcome.append(subprocess.run([sys.executable, "-c", "pass"], timeout=600))
    )
    thread.start()
    thread.join(30)
    assert [getattr(done, "returncode", done) for done in outcome] == [0]


def test_a_tests_budget_is_its_mark_else_the_option_else_the_ini(request: pytest.FixtureRequest) -> None:
    from .subprocess_budget import budget_of, too_long

    assert budget_of(request.node) == float(
        request.config.getoption("timeout") or request.config.getini("timeout")
    )
    assert too_long(None, 300) == "" and too_long(299.9, 300) == "" and too_long(5, 0) == ""
    assert "waits up to 300 s" in too_long(300, 300)
