"""One bridge per SparkSession: every ``reactive_streams.spark`` function shares it, so calling
them a thousand times adds no threads, and the bridge closes with the session."""

from __future__ import annotations

import re
import threading
from collections import Counter
from typing import Any

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.spark import _session

from .kit import SPARK_ELASTIC_POOLS, settled


def jvm_thread_groups(spark: Any) -> Counter[str]:
    """The JVM's live threads by name, numbers dropped."""
    infos = spark._jvm.java.lang.management.ManagementFactory.getThreadMXBean().dumpAllThreads(False, False)
    return Counter(re.sub(r"\d+", "#", info.getThreadName()) for info in infos)


def without_elastic_pools(groups: Counter[str]) -> Counter[str]:
    elastic = {pool + "-#" for pool in SPARK_ELASTIC_POOLS}
    return Counter({name: n for name, n in groups.items() if name not in elastic})


def spark_listeners(spark: Any) -> int:
    return int(spark.sparkContext._jsc.sc().listenerBus().listeners().size())


def test_every_function_uses_the_sessions_one_bridge(spark_session: Any) -> None:
    shared = rss.bridge(spark_session)

    assert rss.bridge(spark_session) is shared
    flux = shared.jvm.reactor.core.publisher.Flux
    df = rss.dataframe_from_publisher(spark_session, flux.range(0, 3), "value long")
    assert sorted(r.value for r in df.collect()) == [0, 1, 2]
    assert rss.bridge(spark_session) is shared and not shared.closed


def test_threads_and_listeners_stay_flat_over_a_thousand_conversions(spark_session: Any) -> None:
    spark = spark_session
    flux = rss.bridge(spark).jvm.reactor.core.publisher.Flux

    def convert(i: int) -> Any:
        if i % 2:
            return rss.dataframe_from_publisher(spark, flux.range(i, 3), "value long")
        return rss.dataframe_from_publisher(spark, rs.from_iterable([(i, "x")]), "id long, s string")

    for i in range(20):  # warm-up: pools and the callback server reach their working size
        convert(i)
    python_before, jvm_before = threading.active_count(), without_elastic_pools(jvm_thread_groups(spark))
    listeners_before = spark_listeners(spark)
    shared = rss.bridge(spark)  # shared with the worker's other tests: their streams are not ours
    live_before = settled(lambda: shared.live_streams, 0, seconds=5)

    for i in range(1000):
        df = convert(i)
    assert df.count() == 3

    assert settled(threading.active_count, python_before + 2) <= python_before + 2
    limit = jvm_before.total() + 8
    assert settled(lambda: without_elastic_pools(jvm_thread_groups(spark)).total(), limit) <= limit, (
        f"JVM threads grown: {without_elastic_pools(jvm_thread_groups(spark)) - jvm_before}"
    )
    for pool, cap in SPARK_ELASTIC_POOLS.items():
        assert jvm_thread_groups(spark)[pool + "-#"] <= cap
    assert spark_listeners(spark) == listeners_before
    # the last count's stream ends on the bridge's own thread, a moment after count() returns
    assert rss.bridge(spark) is shared
    assert settled(lambda: shared.live_streams, live_before) <= live_before, sorted(
        map(repr, shared._host._live)
    )


def test_a_closed_shared_bridge_is_replaced_and_leaves_no_listener(spark_session: Any) -> None:
    spark = spark_session
    first = rss.bridge(spark)  # the session's, made now if no earlier test made it
    listeners = spark_listeners(spark)

    first.close()
    second = rss.bridge(spark)

    assert second is not first and not second.closed
    assert spark_listeners(spark) == listeners  # the closed bridge removed its own
    assert _session._bridges[spark] is second
