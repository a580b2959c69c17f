"""The TCK judges the data plane's paths (issue 21), on every backend: rows (``Object[]`` and
``Map`` in Java, tuples and dicts in Python) and Arrow batches (``VectorSchemaRoot`` in Java,
``pyarrow.RecordBatch`` in Python), both ways.

Publishers: a JVM publisher of rows or batches, seen from Python (``from_jvm``) and handed back
(``to_jvm``), and Python publishers of tuples, dicts and record batches (``to_jvm``). The TCK's
subscribers are Java ones, so every class crosses both ways or Python -> JVM. Each class's
``after_run`` checks that its path was taken (rows in batches of 16 or more cross as Arrow:
``arrowBatches()`` counts them going to Python, ``arrowBatchesFromPython()`` coming back; smaller
batches are pickled) and that the Arrow allocators are back at 0 bytes.

Subscribers (whitebox): a Python subscriber, seen from Java (``subscriber_to_jvm``), fed the
elements the TCK creates, here JVM rows and roots: they arrive as tuples, dicts and record batches,
and the probe reports the JVM element each stands for. The TCK sends them one or two at a time, so
rows cross pickled here, never as Arrow (which starts at 16); batches cross as Arrow whatever
their number.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

import reactive_streams as rs
from reactive_streams.tck import PublisherVerification, SubscriberWhiteboxVerification, WhiteboxProbe

from ..jvm.kit import Kit, assert_arrow_sources_released
from .test_core_publishers import Naturals, failed
from .test_core_subscribers import Keep

pyarrow = pytest.importorskip("pyarrow")

ROWS_PER_BATCH = 4  # rows in each Arrow batch the publishers here emit


def helpers(bridge: Any) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing


def arrow_counts(bridge: Any) -> tuple[int, int]:
    """Arrow batches of rows sent to Python, Arrow payloads received from Python."""
    runtime = bridge.runtime
    return int(runtime.arrowBatches()), int(runtime.arrowBatchesFromPython())


def eventually(condition: Callable[[], bool], what: str, seconds: float = 20.0) -> None:
    """Wait until ``condition()`` holds, or fail saying ``what`` did not happen."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds:.0f} s of the run's end: {what}"
        time.sleep(0.01)


def allocator_empty(runtime: Any) -> Callable[[], bool]:
    """Whether the runtime's Arrow allocator is at 0 bytes, garbage collected first: on JPype a
    batch shares the JVM's buffers (C Data), given back when Python collects it."""

    def empty() -> bool:
        gc.collect()
        return int(runtime.arrowAllocatedBytes()) == 0

    return empty


def expect_type(kind: type) -> Any:
    """An identity map that fails the stream if an element arrives as anything but ``kind``."""

    def check(item: Any) -> Any:
        if type(item) is not kind:
            raise TypeError(f"expected a {kind.__qualname__}, got {type(item).__qualname__}: {item!r}")
        return item

    return check


def warm_up(bridge: Any) -> None:
    """Arrow's first use loads its classes, most of a second in a JVM (more on a loaded machine),
    which the TCK would count against a test's timeout: an IPC stream written and read on each
    side first, from a factory method, where the TCK does not time."""
    helpers(bridge).ArrowSources.warmUp()
    sink = pyarrow.BufferOutputStream()
    batch = record_batch(0)
    with pyarrow.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    pyarrow.ipc.open_stream(sink.getvalue()).read_all()


def in_sixteens(rows: rs.Publisher[Any]) -> rs.Publisher[Any]:
    """``rows``, asked for 16 at a time (a batch of 16 rows is the least that crosses as Arrow)
    and passed on one by one, in order, as their subscriber asks."""
    return rows.batch(16).flat_map(rs.from_iterable, concurrency=1)


class _ArrowPublisher(PublisherVerification):
    """A publisher verification whose path crosses as Arrow: ``after_run`` checks that Arrow
    batches went to Python (``to_python``) and came from Python (``from_python``) during the run,
    and that the bridge's allocator is back at 0 bytes."""

    to_python: ClassVar[bool] = True
    from_python: ClassVar[bool] = True
    # 2 s for each expected signal on every backend (JPype's default is 1 s): a batch of 16 rows
    # takes the pool's encoding and the C Data import on its way, and a fresh-clone CI run with a
    # load average near 10 once waited past 1 s in §3.12's test; 3,500 runs of that test's
    # scenario with four busy loops beside it took 0.22 s at most, none stalled.
    timeout_ms: ClassVar[int | None] = 2000
    _before: tuple[int, int] | None = None

    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        if self._before is None:  # the first call, before any test of the class waits
            warm_up(self.bridge)
            self._before = arrow_counts(self.bridge)
        return self.publisher(elements)

    def publisher(self, elements: int) -> rs.Publisher[Any]:
        raise NotImplementedError

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        jvm = self.bridge.jvm
        error = jvm.java.lang.IllegalStateException("failed JVM publisher")
        return self.bridge.from_jvm(jvm.reactor.core.publisher.Flux.error(error))

    def after_run(self) -> None:
        before = self._before
        assert before is not None, "the TCK made no publisher"
        # §3.17's test ends (and cancels) while its burst may still be on its way: the first
        # Arrow batch a JVM decodes takes it most of a second to load Arrow's classes.
        if self.to_python:
            eventually(lambda: arrow_counts(self.bridge)[0] > before[0], "rows crossed to Python as Arrow")
        if self.from_python and arrow_counts(self.bridge)[1] == before[1]:
            self._cross_from_python()
        runtime = self.bridge.runtime
        eventually(allocator_empty(runtime), "the bridge's Arrow allocator back at 0")

    def _cross_from_python(self) -> None:
        """Arrow from Python, when the run sent none. The TCK's only test that asks for 16 or
        more at once (§3.17's, 1 then ``Long.MAX_VALUE - 1`` from its ``onNext``) cancels after
        its no-signals timeout, 100 ms: on a loaded machine the cancel may come first, and only
        the one pickled row crosses. So this publisher's rows cross once more, 64 of them to a
        Reactor subscriber that asks for all: as Arrow, or the path is broken."""
        before = arrow_counts(self.bridge)[1]
        flux = Kit(self.bridge).flux_from(self.bridge.to_jvm(self.publisher(64)))
        assert int(flux.count().block()) == 64
        eventually(lambda: arrow_counts(self.bridge)[1] > before, "Arrow crossed from Python")


class _JvmRowsHandedBack(_ArrowPublisher):
    """A Reactor Flux of ``Object[]`` rows, seen from Python as tuples and handed back: they
    arrive as ``Object[]`` again. The three optional multicast tests skip: each subscriber gets
    its own ``Object[]`` instances, and Java's arrays are equal only to themselves.

    The TCK never asks for 16 elements at once but in §3.17's test, whose burst a cancel may
    overtake on a loaded machine: so Python asks the JVM for rows 16 at a time (`in_sixteens`),
    and each test whose publisher has 16 rows or more (§3.12's has 20) takes the Arrow path to
    Python. The way back is as the timing of the flushes has it, so only the first is checked:
    `_PythonRows` takes the way back for sure."""

    from_python = False

    def publisher(self, elements: int) -> rs.Publisher[Any]:
        rows = helpers(self.bridge).Sources.rowRange(elements)
        return in_sixteens(self.bridge.from_jvm(rows).map(expect_type(tuple)))


class TestJvmRowsHandedBackOnJPype(_JvmRowsHandedBack):
    backend = "jpype"


class TestJvmRowsHandedBackOnPy4J(_JvmRowsHandedBack):
    backend = "py4j"


class TestJvmRowsHandedBackOnSpark(_JvmRowsHandedBack):
    backend = "spark"


class _JvmMapRowsHandedBack(_ArrowPublisher):
    """A Reactor Flux of ``HashMap`` rows, seen from Python as dicts and handed back as
    ``HashMap``s, which compare by content: the multicast tests pass. As `_JvmRowsHandedBack`."""

    from_python = False

    def publisher(self, elements: int) -> rs.Publisher[Any]:
        rows = helpers(self.bridge).Sources.mapRowRange(elements)
        return in_sixteens(self.bridge.from_jvm(rows).map(expect_type(dict)))


class TestJvmMapRowsHandedBackOnJPype(_JvmMapRowsHandedBack):
    backend = "jpype"


class TestJvmMapRowsHandedBackOnPy4J(_JvmMapRowsHandedBack):
    backend = "py4j"


class TestJvmMapRowsHandedBackOnSpark(_JvmMapRowsHandedBack):
    backend = "spark"


class _JvmBatchesHandedBack(_ArrowPublisher):
    """A JVM ``Publisher<VectorSchemaRoot>`` (one root refilled for each batch, as Arrow's readers
    do), seen from Python as ``pyarrow.RecordBatch``es and handed back: each arrives as a root
    of its own that the TCK's subscriber owns, closed for it after each test (`close_elements`).
    The multicast tests skip: roots are equal only to themselves."""

    to_python = False  # batches, not rows: the elements' type is the proof
    close_elements = True

    def publisher(self, elements: int) -> rs.Publisher[Any]:
        batches = helpers(self.bridge).ArrowSources.batchRange(elements, ROWS_PER_BATCH)
        return self.bridge.from_jvm(batches).map(expect_type(pyarrow.RecordBatch))

    def after_run(self) -> None:
        super().after_run()
        assert_arrow_sources_released(self.bridge)  # the JVM publishers' roots closed


class TestJvmBatchesHandedBackOnJPype(_JvmBatchesHandedBack):
    backend = "jpype"


class TestJvmBatchesHandedBackOnPy4J(_JvmBatchesHandedBack):
    backend = "py4j"


class TestJvmBatchesHandedBackOnSpark(_JvmBatchesHandedBack):
    backend = "spark"


class _Rows:
    """Tuples ``(i, f"row {i}")``, afresh for each iteration; endless for 2**63-1."""

    def __init__(self, elements: int, make: Any) -> None:
        self._numbers = range(elements) if elements < rs.MAX_DEMAND else Naturals()
        self._make = make

    def __iter__(self) -> Any:
        return map(self._make, self._numbers)


def row(i: int) -> tuple[int, str]:
    return (i, f"row {i}")


def dict_row(i: int) -> dict[str, Any]:
    return {"id": i, "name": f"row {i}"}


def record_batch(i: int) -> Any:
    ids = list(range(i * ROWS_PER_BATCH, (i + 1) * ROWS_PER_BATCH))
    return pyarrow.record_batch({"id": ids, "name": [f"row {n}" for n in ids]})


class _PythonRows(_ArrowPublisher):
    """A Python publisher of rows (``from_iterable``), seen from Java: tuples arrive as
    ``Object[]`` (the multicast tests skip, as for JVM rows), dicts as ``HashMap``s. (Python's
    record batches cross in `_JvmBatchesHandedBack`, each one as Arrow.)"""

    to_python = False
    make: ClassVar[Any] = staticmethod(row)

    def publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(_Rows(elements, self.make))

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        return failed()


class TestPythonTuplesOnJPype(_PythonRows):
    backend = "jpype"


class TestPythonTuplesOnPy4J(_PythonRows):
    backend = "py4j"


class TestPythonTuplesOnSpark(_PythonRows):
    backend = "spark"


class TestPythonDictsOnJPype(_PythonRows):
    backend = "jpype"
    make = staticmethod(dict_row)


class TestPythonDictsOnPy4J(_PythonRows):
    backend = "py4j"
    make = staticmethod(dict_row)


class TestPythonDictsOnSpark(_PythonRows):
    backend = "spark"
    make = staticmethod(dict_row)


class _RowsSubscriber(SubscriberWhiteboxVerification):
    """A Python subscriber fed JVM rows: ``Object[]`` for even elements, ``HashMap`` for odd
    ones, which arrive as tuples and dicts; the probe reports the JVM row each came from, found
    by its Python value (a row that arrived changed is found nowhere, and fails its test)."""

    def __init__(self) -> None:
        self.created: dict[Any, Any] = {}  # the Python value of each element -> the JVM element

    def create_element(self, element: int) -> Any:
        sources = helpers(self.bridge).Sources
        java = sources.row(element) if element % 2 == 0 else sources.mapRow(element)
        self.created[_key(row(element) if element % 2 == 0 else dict_row(element))] = java
        return java

    def create_subscriber(self, probe: WhiteboxProbe) -> rs.Subscriber[Any]:
        return probe.wrap(Keep(batch=4), report=lambda item: self.created[_key(item)])

    def after_run(self) -> None:
        assert self.created, "the TCK created no element"
        self.created.clear()  # the JVM elements, released


def _key(item: Any) -> Any:
    return ("dict", tuple(sorted(item.items()))) if type(item) is dict else item


class TestRowsSubscriberOnJPype(_RowsSubscriber):
    backend = "jpype"


class TestRowsSubscriberOnPy4J(_RowsSubscriber):
    backend = "py4j"


class TestRowsSubscriberOnSpark(_RowsSubscriber):
    backend = "spark"


class _BatchesSubscriber(_RowsSubscriber):
    """A Python subscriber fed JVM ``VectorSchemaRoot``s, which arrive as ``pyarrow.RecordBatch``es
    (copied as they are sent); the probe reports the root each came from, found by its rows.
    The roots are the TCK's, made here: ``after_run`` closes them and checks both allocators."""

    def create_element(self, element: int) -> Any:
        root = helpers(self.bridge).ArrowSources.batch(element * ROWS_PER_BATCH, ROWS_PER_BATCH)
        self.created[_batch_key(record_batch(element))] = root  # each test starts again at 0
        self.roots.append(root)
        return root

    def create_subscriber(self, probe: WhiteboxProbe) -> rs.Subscriber[Any]:
        return probe.wrap(Keep(batch=4), report=lambda batch: self.created[_batch_key(batch)])

    def __init__(self) -> None:
        super().__init__()
        self.roots: list[Any] = []  # every root made, to close

    def after_run(self) -> None:
        for root in self.roots:
            root.close()
        self.roots.clear()
        super().after_run()
        assert_arrow_sources_released(self.bridge)
        runtime = self.bridge.runtime
        eventually(allocator_empty(runtime), "the bridge's Arrow allocator back at 0")


def _batch_key(batch: Any) -> Any:
    if not isinstance(batch, pyarrow.RecordBatch):
        raise TypeError(f"expected a pyarrow.RecordBatch, got {type(batch).__qualname__}")
    return tuple(batch.schema.names), tuple(tuple(column.to_pylist()) for column in batch.columns)


class TestBatchesSubscriberOnJPype(_BatchesSubscriber):
    backend = "jpype"


class TestBatchesSubscriberOnPy4J(_BatchesSubscriber):
    backend = "py4j"


class TestBatchesSubscriberOnSpark(_BatchesSubscriber):
    backend = "spark"
