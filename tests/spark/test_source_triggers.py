"""The ``reactive-streams`` source under each trigger, with ``processAllAvailable``, across
restarts, and with bad options: what a micro-batch takes, when a query ends, what a restart
keeps."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.spark._streaming import FORMAT

from ..support import OnRequest
from .kit import TIMEOUT, Source, count, jvm_publisher, read, table_name, to_memory


def wait_for_stats(
    spark: Any, publisher: str, condition: Callable[[dict[str, int]], bool], what: str
) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition(rss.stream_stats(spark, publisher)):
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.02)


def wait_committed(checkpoint: Path, batch: int) -> None:
    """Until Spark has written batch ``batch`` to the checkpoint's commit log."""
    deadline = time.monotonic() + TIMEOUT
    while not (checkpoint / "commits" / str(batch)).exists():
        if time.monotonic() > deadline:
            pytest.fail(f"batch {batch} was never committed")
        time.sleep(0.02)


def source_metrics(query: Any) -> dict[str, str]:
    return dict(query.lastProgress["sources"][0]["metrics"])


class Collect:
    """A ``foreachBatch`` function that keeps every batch's values, in order."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self._lock = threading.Lock()

    def __call__(self, df: Any, batch_id: int) -> None:
        values = [r.value for r in df.orderBy("value").collect()]
        with self._lock:
            self.batches.append(values)

    @property
    def values(self) -> list[int]:
        with self._lock:
            return [v for batch in self.batches for v in batch]


def to_batches(df: Any, collect: Collect, checkpoint: Path, started: list[Any], trigger: Any = None) -> Any:
    writer = df.writeStream.foreachBatch(collect).option("checkpointLocation", str(checkpoint))
    if trigger is not None:
        writer = writer.trigger(**trigger)
    query = writer.start()
    started.append(query)
    return query


@pytest.fixture
def collected(source: Source, started: list[Any], tmp_path: Path) -> Callable[..., tuple[Any, Collect]]:
    """``collected(publisher, trigger, **read_options)``: a ``foreachBatch`` query, with
    ``trigger``, of ``source(publisher, **read_options)``, and what it collects."""

    def start(publisher: Any, trigger: dict[str, Any], **options: Any) -> tuple[Any, Collect]:
        collect = Collect()
        return to_batches(source(publisher, **options), collect, tmp_path, started, trigger), collect

    return start


# processAllAvailable and what the source reports.


@pytest.mark.parametrize("kind", ["python", "jvm"])
def test_one_process_all_available_takes_everything_the_publisher_has_ready(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path, kind: str
) -> None:
    spark, publisher, table = spark_session, name("ready"), table_name()
    if kind == "python":
        register = rs.from_iterable([(i,) for i in range(25)])
    else:
        register = jvm_publisher(spark, 25)
    rss.register_publisher(spark, publisher, register)
    query = to_memory(read(spark, publisher, "value LONG", max_records=10), table, tmp_path, started)

    query.processAllAvailable()

    assert count(spark, table) == 25  # not 10: the source waited for what the publisher had ready
    assert sorted(r.value for r in spark.table(table).collect()) == list(range(25))


def test_a_completed_publisher_shows_as_exhausted(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("finite"), table_name()
    rss.register_publisher(spark, publisher, rs.from_iterable(range(12)))
    query = to_memory(read(spark, publisher, "value LONG", max_records=5), table, tmp_path, started)

    query.processAllAvailable()
    query.processAllAvailable()  # one more trigger reports on the last batch's end

    metrics = source_metrics(query)
    assert metrics["publisherCompleted"] == "true" and metrics["exhausted"] == "true", metrics
    assert rss.input_exhausted(query)
    assert count(spark, table) == 12 and query.isActive  # the query itself goes on until stopped


def test_input_is_not_exhausted_while_the_publisher_has_not_completed(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher, table = spark_session, name("endless"), table_name()
    with rs.SubmissionPublisher() as hot:
        rss.register_publisher(spark, publisher, hot)
        query = to_memory(read(spark, publisher, "value LONG", max_records=5), table, tmp_path, started)
        assert not rss.input_exhausted(query)  # no progress yet, or not completed
        wait_for_stats(spark, publisher, lambda s: s["requested"] > 0, "the source to subscribe")
        for i in range(7):
            hot.submit(i)
        query.processAllAvailable()
        assert count(spark, table) == 7 and not rss.input_exhausted(query)


def test_input_exhausted_refuses_a_query_without_a_reactive_streams_source(
    spark_session: Any, started: list[Any], tmp_path: Path
) -> None:
    query = (
        spark_session.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", 5)
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path))
        .start()
    )
    started.append(query)
    deadline = time.monotonic() + TIMEOUT
    while not query.lastProgress and time.monotonic() < deadline:  # rate-micro-batch never runs dry
        time.sleep(0.05)
    with pytest.raises(rs.ReactiveStreamsError, match=r"reads no reactive-streams source.*RatePerMicro"):
        rss.input_exhausted(query)
    with pytest.raises(TypeError, match="StreamingQuery"):
        rss.input_exhausted("not a query")


def test_the_latest_offset_reports_what_is_held_beyond_a_trigger(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher = spark_session, name("ahead")
    rss.register_publisher(spark, publisher, rs.from_iterable(range(1000)))
    df = read(spark, publisher, "value LONG", max_records=10, prefetch=2)
    collect = Collect()
    query = to_batches(df, collect, tmp_path, started, {"processingTime": "1 hour"})

    wait_for_stats(spark, publisher, lambda s: s["elements"] == 30, "the source to hold 3 batches' worth")
    deadline = time.monotonic() + TIMEOUT
    while query.lastProgress is None:
        assert time.monotonic() < deadline, "the query reported no progress"
        time.sleep(0.02)

    source = query.lastProgress["sources"][0]
    assert (source["startOffset"], source["endOffset"]) in [(None, "10"), ("null", "10"), ("0", "10")]
    assert int(source["latestOffset"]) >= 10 and collect.values == list(range(10))
    assert rss.stream_stats(spark, publisher)["max_buffered"] <= 30


# Triggers.


def test_available_now_takes_everything_up_to_completion_in_bounded_batches_then_stops(
    collected: Callable[..., tuple[Any, Collect]],
) -> None:
    query, collect = collected(rs.from_iterable(range(25)), {"availableNow": True}, max_records=10)

    assert query.awaitTermination(TIMEOUT), "an AvailableNow query stops by itself"

    assert query.exception() is None
    assert collect.values == list(range(25))
    assert [len(b) for b in collect.batches] == [10, 10, 5]


def test_a_publisher_slow_to_start_still_fills_its_first_batch(
    collected: Callable[..., tuple[Any, Collect]],
) -> None:
    """The first element comes after the source's usual wait for a batch (500 ms) has passed:
    the rest of the first batch still gets that wait, from the first element on (CI once saw a
    first batch of 1 row on a loaded machine)."""
    late = rs.delay_subscription(1.0)(rs.from_iterable(range(25)))

    query, collect = collected(late, {"availableNow": True}, max_records=10)

    assert query.awaitTermination(TIMEOUT)
    assert query.exception() is None and collect.values == list(range(25))
    assert [len(b) for b in collect.batches] == [10, 10, 5]


def test_available_now_stops_when_the_publisher_has_nothing_ready(
    collected: Callable[..., tuple[Any, Collect]],
) -> None:
    never = OnRequest(lambda subscriber, n: None)  # emits nothing and never ends: nothing ready
    publisher = rs.concat(rs.from_iterable(range(7)), never)

    query, collect = collected(publisher, {"availableNow": True}, max_records=5)

    assert query.awaitTermination(TIMEOUT), "the query stops once nothing more is ready"
    assert query.exception() is None and collect.values == list(range(7))


def test_trigger_once_runs_one_batch_of_what_is_ready_within_the_bound(
    collected: Callable[..., tuple[Any, Collect]],
) -> None:
    query, collect = collected(rs.from_iterable(range(100)), {"once": True}, max_records=10, prefetch=1)

    assert query.awaitTermination(TIMEOUT)
    assert collect.batches == [list(range(20))]  # all that was ready: the bound, 10 × (1 + 1)


def test_a_processing_time_trigger_takes_bounded_batches(
    collected: Callable[..., tuple[Any, Collect]],
) -> None:
    trigger = {"processingTime": "100 milliseconds"}
    query, collect = collected(rs.from_iterable(range(30)), trigger, max_records=10)
    deadline = time.monotonic() + TIMEOUT
    while len(collect.values) < 30 and time.monotonic() < deadline:
        time.sleep(0.05)

    assert collect.values == list(range(30))
    assert all(len(b) <= 10 for b in collect.batches)
    query.stop()


def test_a_continuous_trigger_is_refused_naming_the_triggers_that_work(
    spark_session: Any, name: Callable[[str], str], tmp_path: Path
) -> None:
    spark, publisher = spark_session, name("continuous")
    rss.register_publisher(spark, publisher, rs.from_iterable(range(3)))
    writer = (
        read(spark, publisher, "value LONG")
        .writeStream.format("console")
        .option("checkpointLocation", str(tmp_path))
        .trigger(continuous="1 second")
    )

    with pytest.raises(Exception, match="micro-batch queries only") as refused:
        writer.start()

    assert "Trigger.AvailableNow" in str(refused.value) and "Trigger.ProcessingTime" in str(refused.value)
    assert not spark.streams.active or all(q.name is None for q in spark.streams.active)


# Restarts.


def test_a_stop_and_restart_on_the_same_checkpoint_lose_nothing_and_repeat_nothing(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher = spark_session, name("restart")
    rss.register_publisher(spark, publisher, rs.from_iterable(iter(range(100))))  # hot: an iterator
    df = read(spark, publisher, "value LONG", max_records=10, prefetch=2)
    first = Collect()
    run = to_batches(df, first, tmp_path, started, {"processingTime": "1 hour"})
    wait_for_stats(spark, publisher, lambda s: s["elements"] == 30, "the first batch and two prefetched")
    wait_committed(tmp_path, 0)
    run.stop()  # 20 elements were received and never planned
    assert rss.stream_stats(spark, publisher)["parked"] == 30  # with the last planned batch

    second = Collect()
    rerun = to_batches(df, second, tmp_path, started)
    deadline = time.monotonic() + TIMEOUT
    while len(first.values) + len(second.values) < 100 and time.monotonic() < deadline:
        rerun.processAllAvailable()

    assert first.values == list(range(10))
    assert second.values == list(range(10, 100))  # the kept 20 first, then the rest, once each
    assert rss.stream_stats(spark, publisher)["parked"] == 0


def test_a_restart_that_finds_a_planned_batch_gone_fails_clearly_or_counts_it(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path
) -> None:
    spark, publisher = spark_session, name("lost")
    rss.register_publisher(spark, publisher, rs.from_iterable(iter(range(100))))
    df = read(spark, publisher, "value LONG", max_records=10, prefetch=0)
    first = Collect()
    run = to_batches(df, first, tmp_path, started, {"processingTime": "1 hour"})
    wait_committed(tmp_path, 0)
    run.stop()
    for written in ("0", ".0.crc"):  # batch 0 is planned again on restart...
        (tmp_path / "commits" / written).unlink()
    rss.unregister(spark, publisher)  # ...by a driver that never received its elements
    rss.register_publisher(spark, publisher, rs.from_iterable(iter(range(100, 200))))

    failing = to_batches(df, Collect(), tmp_path, started)
    with pytest.raises(StreamingQueryException, match=r"elements 0\.\.9 of a micro-batch planned before"):
        assert not failing.awaitTermination(TIMEOUT)

    going_on = Collect()
    lenient = read(spark, publisher, "value LONG", max_records=10, prefetch=0, fail_on_data_loss=False)
    rerun = to_batches(lenient, going_on, tmp_path, started)
    rerun.processAllAvailable()
    assert going_on.batches[0] == [] and going_on.values[:10] == list(range(100, 110))
    assert int(source_metrics(rerun)["lostElements"]) == 10


# Bad options.


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (
            "maxRecordsPerTrigger",
            "0",
            "maxRecordsPerTrigger of the reactive-streams source must be an integer",
        ),
        ("maxRecordsPerTrigger", "-5", "got '-5'"),
        ("maxRecordsPerTrigger", "many", "got 'many'"),
        (
            "prefetch",
            "-1",
            "option prefetch of the reactive-streams source must be an integer in \\[0, 16\\]",
        ),
        ("failOnDataLoss", "maybe", "failOnDataLoss of the reactive-streams source must be true or false"),
        ("maxRecordPerTrigger", "10", "has no option 'maxRecordPerTrigger'; its options are"),
    ],
)
def test_a_bad_option_fails_load_naming_it(
    spark_session: Any, name: Callable[[str], str], option: str, value: str, message: str
) -> None:
    spark, publisher = spark_session, name("options")
    rss.register_publisher(spark, publisher, rs.from_iterable([1]))
    reader = spark.readStream.format(FORMAT).option("publisher", publisher).option(option, value)

    with pytest.raises(Exception, match=message):
        reader.schema("value LONG").load()


@pytest.fixture
def quiet_bridge(spark_session: Any) -> Iterator[Any]:
    """The session's bridge, checked to hold no more live streams after the test than before."""
    shared = rss.bridge(spark_session)
    before = (shared.live_streams, int(shared.runtime.liveAdapters()))
    yield shared
    deadline = time.monotonic() + TIMEOUT
    while (shared.live_streams, int(shared.runtime.liveAdapters())) != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (shared.live_streams, int(shared.runtime.liveAdapters())) == before


def test_a_publisher_failing_mid_stream_stops_the_query_and_leaves_nothing_behind(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path, quiet_bridge: Any
) -> None:
    spark, publisher, table = spark_session, name("failing"), table_name()

    def elements() -> Iterator[int]:
        yield from range(15)
        raise ValueError("element 15 could not be made")

    rss.register_publisher(spark, publisher, rs.from_iterable(elements()))
    query = to_memory(read(spark, publisher, "value LONG", max_records=10), table, tmp_path, started)

    with pytest.raises(StreamingQueryException, match="element 15 could not be made"):
        assert not query.awaitTermination(TIMEOUT)
    assert count(spark, table) == 15


def test_an_element_that_does_not_fit_cancels_the_publisher(
    spark_session: Any, name: Callable[[str], str], started: list[Any], tmp_path: Path, quiet_bridge: Any
) -> None:
    spark, publisher, table = spark_session, name("misfit"), table_name()
    cancelled = threading.Event()

    class Endless(rs.Publisher[Any]):
        def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
            inner = rs.from_iterable(iter(lambda: "not a number", None))

            class Watch(rs.Subscriber[Any]):
                def on_subscribe(self, subscription: rs.Subscription) -> None:
                    class Watched(rs.Subscription):
                        def request(self, n: int) -> None:
                            subscription.request(n)

                        def cancel(self) -> None:
                            cancelled.set()
                            subscription.cancel()

                    subscriber.on_subscribe(Watched())

                def on_next(self, item: Any) -> None:
                    subscriber.on_next(item)

                def on_error(self, exc: BaseException) -> None:
                    subscriber.on_error(exc)

                def on_complete(self) -> None:
                    subscriber.on_complete()

            inner.subscribe(Watch())

    rss.register_publisher(spark, publisher, Endless())
    query = to_memory(read(spark, publisher, "value LONG"), table, tmp_path, started)

    with pytest.raises(StreamingQueryException, match="element at offset 0: column 'value' \\(bigint\\)"):
        assert not query.awaitTermination(TIMEOUT)
    assert cancelled.wait(TIMEOUT)
