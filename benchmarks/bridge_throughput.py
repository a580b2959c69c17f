"""Bridge throughput, in one run, on every backend (issues 3 and 21).

Each scenario against the same work done the old way in the same run ("today": Py4J's calls
and text without the data channel, rows pickled one by one, Python elements pushed one
``on_next`` at a time) and against the ceiling (a bare Python loop calling ``on_next``):

- JVM -> Python longs (a Reactor Flux), one ``on_next`` each, the subscriber requesting 1,024
  at a time: waiting for each request to be met, and with 4,096 outstanding (a subscriber that
  keeps demand ahead, as Reactor's prefetch does);
- JVM -> Python rows ``Object[]{long, double, 12-character string}`` as tuples, one ``on_next``
  each, 1,024 at a time, both ways too;
- JVM -> Python Arrow batches of 8,192 rows (a ``VectorSchemaRoot`` publisher), 16 at a time;
- Python -> JVM longs, tuples of the same rows, and ``pyarrow.RecordBatch``es of 8,192 rows,
  ``from_iterable`` into a Java subscriber with unbounded demand (Reactor's ``count()``; one
  that closes each root for the batches);
- the data channel's bandwidth against a raw loopback socket and Py4J's ``byte[]``.

Also what bounds them, measured in the same run: the channel's bare round trip (a Unix socket
between Python and a Java thread doing nothing else), which a subscriber waiting on each
request pays once per request; the Python side's own work for rows with no JVM at all; the most
elements ever buffered on each side; and the RSS of Python and the JVM over a long run.

    python benchmarks/bridge_throughput.py [--elements N] [--rows N] [--long N] [--skip-spark]
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path
from typing import Any

import reactive_streams as rs
from reactive_streams.jvm import Bridge, BridgeSettings

try:
    from . import _report
except ImportError:
    import _report  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
TEST_JARS = sorted(str(p) for p in (ROOT / "build" / "test-jars").glob("*.jar"))
BATCH = 1024
AHEAD = 4  # batches outstanding, for the subscriber that keeps demand ahead
# The runs of longs and of tuples, and the bare loops, take under half a second each, and this
# machine's CPU flips between a fast phase and one where the same Python work takes 1.5 times as
# long (the bare loop: 7.4 to 11.3 M/s from one process to the next, user CPU per element 1.5x):
# they get more runs, to find the fast phase as the longer Arrow runs do.
QUICK_REPEAT = 10
ARROW_ROWS = 8192
FRAME = 256 * 1024
REQUEST_FRAME = 13 + 8  # a demand frame: the header (id, length, kind), then n
BULK_BYTES = 512 * 1024 * 1024


def _sources(bridge: Bridge) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing.Sources


def _arrow_sources(bridge: Bridge) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing.ArrowSources


def _count(bridge: Bridge, java_publisher: Any) -> int:
    flux = bridge.jvm.reactor.core.publisher.Flux
    return int(
        getattr(flux, "from_" if bridge.backend == "jpype" else "from")(java_publisher).count().block()
    )


def jvm_to_python(
    bridge: Bridge, java_publisher: Any, expected: int, batch: int = BATCH, weigh: Any = None, ahead: int = 1
) -> float:
    """Elements (or what ``weigh`` counts) per second into a subscriber requesting ``batch`` at a
    time, with ``ahead`` batches outstanding."""
    counter = _report.CountingSubscriber(batch, weigh, ahead)
    publisher = bridge.from_jvm(java_publisher)
    start = time.perf_counter()
    publisher.subscribe(counter)
    counter.done.wait()
    elapsed = time.perf_counter() - start
    assert counter.error is None and counter.count == expected, (counter.error, counter.count)
    return expected / elapsed


class _OneByOne(rs.Publisher[Any]):
    """``publisher``'s subscribers as they were before bulk emission: one ``on_next`` per element
    (the subscriber's methods, bound, without its ``on_next_batch``)."""

    def __init__(self, publisher: rs.Publisher[Any]) -> None:
        self._publisher = publisher

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        self._publisher.subscribe(_Bound(subscriber))  # type: ignore[arg-type]


class _Bound:
    def __init__(self, subscriber: rs.Subscriber[Any]) -> None:
        self.on_subscribe = subscriber.on_subscribe
        self.on_next = subscriber.on_next
        self.on_error = subscriber.on_error
        self.on_complete = subscriber.on_complete


def python_to_jvm(bridge: Bridge, items: list[Any], weight: int = 1, one_by_one: bool = False) -> float:
    publisher: rs.Publisher[Any] = rs.from_iterable(items)
    java = bridge.to_jvm(_OneByOne(publisher) if one_by_one else publisher)
    start = time.perf_counter()
    if weight == 1:
        counted = _count(bridge, java)
    else:
        counted = int(_arrow_sources(bridge).countRowsAndClose(java)) // weight
    elapsed = time.perf_counter() - start
    assert counted == len(items), (counted, len(items))
    return len(items) * weight / elapsed


def best(runs: int, measure: Any, warm_up: int = 6) -> float:
    """The best of ``runs`` measurements, after ``warm_up`` unmeasured ones (the JVM compiles a
    path only after it has run it a while: the first runs of a stream go at a third of the rate,
    and the Arrow paths (rows both ways, Python's pushes) settle only after 5 or 6 runs)."""
    for _ in range(warm_up):
        measure()
    result = 0.0
    for _ in range(runs):
        gc.collect()
        result = max(result, measure())
    return result


def round_trip_seconds(bridge: Bridge, trips: int = 5000) -> float:
    """Seconds per round trip between Python and a Java thread on a bare Unix socket, the data
    channel's transport: a demand frame's bytes one way, a frame of 1,024 longs back, and no work
    on either side. A subscriber that waits for each ``request(1024)`` to be met pays one per
    1,024 elements, beyond its own ``on_next`` calls."""
    import os
    import socket
    import tempfile

    request, reply = REQUEST_FRAME, 13 + 1 + 8 * BATCH
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "echo")
        bridge.jvm.io.github.rspy.bridge.ChannelBench.echo(path, request, reply)
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(path)
            buffer = memoryview(bytearray(reply))
            message = bytes(request)

            def trip(count: int) -> float:
                start = time.perf_counter()
                for _ in range(count):
                    sock.sendall(message)
                    got = 0
                    while got < reply:
                        got += sock.recv_into(buffer[got:])
                return (time.perf_counter() - start) / count

            trip(trips // 5)
            return min(trip(trips) for _ in range(3))


def python_rows_floor(rows: int) -> float:
    """Rows/s of the Python side's own work for JVM rows, with no JVM: decoding 1,024-row Arrow
    batches of the benchmark's rows into tuples and calling ``on_next`` for each."""
    import pyarrow

    from reactive_streams.jvm._arrow import decode_rows

    one = pyarrow.record_batch(_bench_columns(BATCH))
    sink = pyarrow.BufferOutputStream()
    with pyarrow.ipc.new_stream(sink, one.schema) as writer:
        writer.write_batch(one)
    payload = memoryview(b"t" + sink.getvalue().to_pybytes())
    counter = _report.CountingSubscriber(BATCH)
    counter.on_subscribe(_report.NoSubscription())
    batches = rows // BATCH
    start = time.perf_counter()
    for _ in range(batches):
        for item in decode_rows(payload):
            counter.on_next(item)
    return batches * BATCH / (time.perf_counter() - start)


def _bench_columns(rows: int) -> dict[str, list[Any]]:
    """The benchmark's rows (long, double, 12-character string), by column."""
    return {
        "id": list(range(rows)),
        "value": [index / 2 for index in range(rows)],
        "name": [str(100_000_000_000 + index) for index in range(rows)],
    }


def raw_socket_bytes(bridge: Bridge) -> float:
    """Bytes/s of a plain loopback socket, a Java thread writing 256 KiB frames and Python reading
    them with recv_into: what the data channel rides on."""
    import socket

    frames = BULK_BYTES // FRAME
    port = bridge.jvm.io.github.rspy.bridge.ChannelBench.rawSocket(FRAME, frames)
    buffer = memoryview(bytearray(FRAME))
    with socket.create_connection(("127.0.0.1", port)) as sock:
        start = time.perf_counter()
        total = 0
        while total < frames * FRAME:
            n = sock.recv_into(buffer)
            if n == 0:
                break
            total += n
        elapsed = time.perf_counter() - start
    assert total == frames * FRAME
    return total / elapsed


class _Bytes:
    """A data channel stream that counts what its frames bring."""

    def __init__(self, frames: int) -> None:
        import threading

        self.left = frames
        self.total = 0
        self.done = threading.Event()

    def on_frame(self, kind: int, payload: bytes | bytearray) -> None:
        self.total += len(payload)
        self.left -= 1
        if self.left == 0:
            self.done.set()


def channel_bytes(bridge: Bridge) -> float:
    """Bytes/s of the bridge's data channel alone: 256 KiB frames written by a JVM thread, read
    and handed to a stream as any stream's frames."""
    channel = bridge._host.channel
    assert channel is not None
    frames = BULK_BYTES // FRAME
    stream_id = channel.new_id()
    receiver = _Bytes(frames)
    channel.register(stream_id, receiver)
    try:
        start = time.perf_counter()
        bridge.jvm.io.github.rspy.bridge.ChannelBench.pump(bridge.runtime, stream_id, FRAME, frames)
        assert receiver.done.wait(120)
        elapsed = time.perf_counter() - start
    finally:
        channel.unregister(stream_id)
    return receiver.total / elapsed


def py4j_bytes(bridge: Bridge, calls: int = 16) -> float:
    """Bytes/s of Py4J returning a 1 MiB byte[]: the old path's ceiling."""
    bench = bridge.jvm.io.github.rspy.bridge.ChannelBench
    start = time.perf_counter()
    total = sum(len(bench.bytes(1 << 20)) for _ in range(calls))
    return total / (time.perf_counter() - start)


def row(
    backend: str, scenario: str, rate: float, today: float | None, ceiling: float | None, buffered: str = "-"
) -> dict[str, Any]:
    return {
        "backend": backend,
        "scenario": scenario,
        "per second": rate,
        "× today": f"{rate / today:.2f}×" if today else "-",
        "of ceiling": f"{rate / ceiling:.0%}" if ceiling else "-",
        "max buffered JVM/Python": buffered,
    }


class Run:
    """One run of every scenario, its rows, its figures and its verdicts."""

    def __init__(self, args: argparse.Namespace, ceiling: float, rows_floor: float) -> None:
        self.args = args
        self.ceiling = ceiling
        self.rows_floor = rows_floor
        self.rows: list[dict[str, Any]] = [
            row("-", "bare Python loop calling on_next (ceiling)", ceiling, None, ceiling),
            row(
                "-",
                "Python's own work for JVM rows, no JVM: 1,024-row Arrow batches → tuples → on_next",
                rows_floor,
                None,
                ceiling,
            ),
        ]
        self.extra: dict[str, Any] = {
            "elements": args.elements,
            "rows": args.rows,
            "ceiling": ceiling,
            "python_rows_floor": rows_floor,
        }
        self.targets: list[str] = []

    def target(self, text: str, met: bool) -> None:
        self.targets.append(f"{text}: {'met' if met else 'NOT met'}.")

    def backend(self, name: str, bridge: Bridge, old: Bridge) -> None:
        """Every scenario on ``bridge``; "today" on ``old`` (no data channel on the Py4J backends,
        Arrow off, one ``on_next`` per Python element)."""
        args, repeat, n, rows_n = self.args, self.args.repeat, self.args.elements, self.args.rows
        figures: dict[str, float] = {}
        sources = _sources(bridge)

        def buffered() -> str:
            return f"{int(bridge.runtime.maxQueued()):,} / {bridge.max_buffered:,}"

        # JVM -> Python longs
        if name != "jpype":
            figures["round_trip_s"] = round_trip_seconds(bridge)
            figures["stop_and_wait_ceiling"] = BATCH / (BATCH / self.ceiling + figures["round_trip_s"])
            self.rows.append(
                row(
                    name,
                    f"ceiling of a subscriber waiting on each request(1024): bare on_next + a bare "
                    f"round trip on the channel's socket ({figures['round_trip_s'] * 1e6:.0f} µs)",
                    figures["stop_and_wait_ceiling"],
                    None,
                    self.ceiling,
                )
            )
        quick = max(repeat, QUICK_REPEAT)
        figures["longs_jvm_to_python"] = best(quick, lambda: jvm_to_python(bridge, sources.longs(n), n))
        figures["longs_jvm_to_python_today"] = best(
            max(1, repeat // 2), lambda: jvm_to_python(old, _sources(old).longs(n), n)
        )
        self.rows.append(
            row(
                name,
                "JVM → Python longs, one on_next each, request(1024)",
                figures["longs_jvm_to_python"],
                figures["longs_jvm_to_python_today"],
                self.ceiling,
                buffered(),
            )
        )
        figures["longs_jvm_to_python_ahead"] = best(
            quick, lambda: jvm_to_python(bridge, sources.longs(n), n, ahead=AHEAD)
        )
        self.rows.append(
            row(
                name,
                "JVM → Python longs, one on_next each, request(1024) with 4,096 outstanding",
                figures["longs_jvm_to_python_ahead"],
                figures["longs_jvm_to_python_today"],
                self.ceiling,
                buffered(),
            )
        )
        # JVM -> Python rows as tuples
        figures["rows_jvm_to_python"] = best(
            quick, lambda: jvm_to_python(bridge, sources.benchRows(rows_n), rows_n)
        )
        figures["rows_jvm_to_python_ahead"] = best(
            quick, lambda: jvm_to_python(bridge, sources.benchRows(rows_n), rows_n, ahead=AHEAD)
        )
        _arrow_off(old)
        figures["rows_jvm_to_python_today"] = best(
            max(1, repeat // 2), lambda: jvm_to_python(old, _sources(old).benchRows(rows_n), rows_n)
        )
        self.rows.append(
            row(
                name,
                "JVM → Python rows (long, double, str) as tuples, one on_next each",
                figures["rows_jvm_to_python"],
                figures["rows_jvm_to_python_today"],
                self.ceiling,
                buffered(),
            )
        )
        self.rows.append(
            row(
                name,
                "JVM → Python rows as tuples, one on_next each, request(1024) with 4,096 outstanding",
                figures["rows_jvm_to_python_ahead"],
                figures["rows_jvm_to_python_today"],
                self.ceiling,
                buffered(),
            )
        )
        # JVM -> Python Arrow batches
        batches = max(1, args.arrow_rows // ARROW_ROWS)
        figures["arrow_jvm_to_python"] = best(
            repeat,
            lambda: jvm_to_python(
                bridge,
                _arrow_sources(bridge).sameRoot(batches, ARROW_ROWS),
                batches * ARROW_ROWS,
                16,
                lambda batch: batch.num_rows,
            ),
        )
        self.rows.append(
            row(
                name,
                f"JVM → Python Arrow batches of {ARROW_ROWS:,} rows (rows/s)",
                figures["arrow_jvm_to_python"],
                figures["rows_jvm_to_python_today"],
                None,
            )
        )
        # Python -> JVM longs
        longs = list(range(n))
        figures["longs_python_to_jvm"] = best(quick, lambda: python_to_jvm(bridge, longs))
        figures["longs_python_to_jvm_today"] = best(
            max(1, repeat // 2), lambda: python_to_jvm(old, longs, one_by_one=True)
        )
        self.rows.append(
            row(
                name,
                "Python → JVM longs, from_iterable → count()",
                figures["longs_python_to_jvm"],
                figures["longs_python_to_jvm_today"],
                self.ceiling,
                buffered(),
            )
        )
        # Python -> JVM tuples
        tuples = [(index, index / 2, str(100_000_000_000 + index)) for index in range(rows_n)]
        figures["tuples_python_to_jvm"] = best(quick, lambda: python_to_jvm(bridge, tuples))
        figures["tuples_python_to_jvm_today"] = best(
            max(1, repeat // 2), lambda: python_to_jvm(old, tuples, one_by_one=True)
        )
        self.rows.append(
            row(
                name,
                "Python → JVM tuples (long, double, str) → count()",
                figures["tuples_python_to_jvm"],
                figures["tuples_python_to_jvm_today"],
                self.ceiling,
            )
        )
        # Python -> JVM record batches
        import pyarrow

        one = pyarrow.record_batch(_bench_columns(ARROW_ROWS))
        record_batches = [one] * batches
        figures["arrow_python_to_jvm"] = best(
            repeat, lambda: python_to_jvm(bridge, record_batches, ARROW_ROWS)
        )
        self.rows.append(
            row(
                name,
                f"Python → JVM pyarrow.RecordBatch of {ARROW_ROWS:,} rows (rows/s)",
                figures["arrow_python_to_jvm"],
                figures["tuples_python_to_jvm_today"],
                None,
            )
        )
        _arrow_on(old)
        assert int(bridge.runtime.arrowAllocatedBytes()) == 0, (
            "the Arrow allocator holds bytes after the runs"
        )
        self.extra[name] = figures
        self._verdicts(name, figures)

    def _verdicts(self, name: str, f: dict[str, float]) -> None:
        m = 1e6
        if name == "jpype":
            share = f["longs_jvm_to_python"] / self.ceiling
            self.target(f"jpype JVM → Python longs ≥ 70% of the bare loop — {share:.0%}", share >= 0.7)
            arrow_in, arrow_out, goal = f["arrow_jvm_to_python"], f["arrow_python_to_jvm"], 50e6
        else:
            rate, ahead = f["longs_jvm_to_python"], f["longs_jvm_to_python_ahead"]
            self.target(
                f"{name} JVM → Python longs ≥ 8 M/s — {rate / m:.2f} M/s waiting on each request(1024) "
                f"(which a bare round trip of {f['round_trip_s'] * 1e6:.0f} µs caps at "
                f"{f['stop_and_wait_ceiling'] / m:.2f} M/s here), {ahead / m:.2f} M/s with 4,096 outstanding",
                max(rate, ahead) >= 8e6,
            )
            arrow_in, arrow_out, goal = f["arrow_jvm_to_python"], f["arrow_python_to_jvm"], 15e6
        rows, rows_ahead = f["rows_jvm_to_python"], f["rows_jvm_to_python_ahead"]
        self.target(
            f"{name} JVM → Python rows as tuples ≥ 3 M rows/s — {rows / m:.2f} M waiting on each "
            f"request(1024), {rows_ahead / m:.2f} M with 4,096 outstanding (Python's own work for "
            f"them, with no JVM, {self.rows_floor / m:.2f} M)",
            max(rows, rows_ahead) >= 3e6,
        )
        self.target(
            f"{name} JVM → Python Arrow batches ≥ {goal / m:.0f} M rows/s — {arrow_in / m:.1f} M",
            arrow_in >= goal,
        )
        out = f["longs_python_to_jvm"]
        self.target(f"{name} Python → JVM longs ≥ 8 M/s — {out / m:.2f} M/s", out >= 8e6)
        tuples = f["tuples_python_to_jvm"]
        self.target(f"{name} Python → JVM tuples ≥ 2 M rows/s — {tuples / m:.2f} M", tuples >= 2e6)
        self.target(
            f"{name} Python → JVM RecordBatches ≥ {goal / m:.0f} M rows/s — {arrow_out / m:.1f} M",
            arrow_out >= goal,
        )

    def channel(self, name: str, bridge: Bridge) -> None:
        raw = best(self.args.repeat, lambda: raw_socket_bytes(bridge))
        old = best(1, lambda: py4j_bytes(bridge))
        channel = best(self.args.repeat, lambda: channel_bytes(bridge))
        mb = 1e6
        for scenario, rate in (
            ("raw loopback socket, Java thread → recv_into, 256 KiB frames (MB/s)", raw),
            ("Py4J byte[] return value, 1 MiB (MB/s)", old),
            ("the bridge's data channel: 256 KiB frames, JVM → Python (MB/s)", channel),
        ):
            self.rows.append(
                row(name, scenario, rate / mb, old, None) | {"of ceiling": f"{rate / raw:.0%} of raw"}
            )
        self.extra[f"{name}_bytes_per_s"] = {"raw": raw, "py4j": old, "channel": channel}
        self.target(
            f"{name} data channel ≥ 1 GB/s and ≥ 40% of the raw socket — {channel / 1e9:.2f} GB/s, "
            f"{channel / raw:.0%} (Py4J's byte[] {old / 1e6:.0f} MB/s)",
            channel >= 1e9 and channel >= 0.4 * raw,
        )


def _arrow_off(bridge: Bridge) -> None:
    """Rows and batches cross pickled, as before Arrow (between streams)."""
    bridge.runtime.useArrowRows(False)
    bridge._host.arrow = bridge._host.arrow_c_data = False


def _arrow_on(bridge: Bridge) -> None:
    bridge._host.arrow = bool(bridge.runtime.useArrowRows(True))
    bridge._host.arrow_c_data = bool(bridge.runtime.useArrowCData(bridge._host.backend.in_process))


def rss_notes(bridges: dict[str, Bridge], args: argparse.Namespace, extra: dict[str, Any]) -> list[str]:
    """Memory over long runs: after a warm-up (the JVM sizes its heap), the largest RSS during a
    run of half the elements, then during a run of all of them: flat if nothing grows."""
    notes = []
    for name in ("jpype", "py4j"):
        bridge = bridges[name]
        process = bridge.jvm_process
        pids: list[int | str] = ["self"] + ([process.pid] if process is not None else [])
        jvm_to_python(bridge, _sources(bridge).longs(args.long // 10), args.long // 10)
        peaks = []
        for count in (args.long // 2, args.long):
            with _report.RssSampler(*pids) as sampler:
                jvm_to_python(bridge, _sources(bridge).longs(count), count)
            peaks.append(sampler.peak)
        extra[f"{name}_rss_mib"] = [{str(k): v for k, v in p.items()} for p in peaks]
        where = "this process (Python and the in-process JVM)" if name == "jpype" else "Python"
        note = (
            f"{name}: largest RSS of {where} {peaks[0]['self']:.0f} MiB over {args.long // 2:,} longs, "
            f"{peaks[1]['self']:.0f} MiB over {args.long:,}"
        )
        if process is not None:
            note += (
                f"; of the gateway JVM {peaks[0][process.pid]:.0f} MiB, then {peaks[1][process.pid]:.0f} MiB"
            )
        notes.append(note + " (after a warm-up run).")
    return notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=2_000_000, help="longs per run")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows per run, as tuples")
    parser.add_argument("--arrow-rows", type=int, default=4_194_304, help="rows per run, as Arrow batches")
    parser.add_argument("--long", type=int, default=20_000_000, help="longs for the RSS run")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-spark", action="store_true")
    args = parser.parse_args()

    # One backend at a time, JPype's in-process JVM first: a JVM started later for another
    # backend would share the two cores with the measurement.
    run = Run(
        args,
        best(max(args.repeat, QUICK_REPEAT), lambda: _report.bare_loop(args.elements, BATCH)),
        best(max(args.repeat, QUICK_REPEAT), lambda: python_rows_floor(args.rows)),
    )
    bridges: dict[str, Bridge] = {"jpype": Bridge.jpype(TEST_JARS)}
    run.backend("jpype", bridges["jpype"], Bridge.jpype(TEST_JARS))
    bridges["py4j"] = Bridge.py4j(TEST_JARS)
    gateway = bridges["py4j"]._host.backend._gateway  # type: ignore[attr-defined]
    old_py4j = Bridge.py4j_gateway(gateway, BridgeSettings(data_channel=False), name="py4j")
    run.backend("py4j", bridges["py4j"], old_py4j)
    run.channel("py4j", bridges["py4j"])
    old_py4j.close()
    spark = None
    if not args.skip_spark:
        from pyspark.sql import SparkSession

        from reactive_streams import spark as rss

        spark = (
            rss.configure(SparkSession.builder.master("local[2]"), TEST_JARS)
            .config("spark.ui.enabled", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        bridges["spark"] = Bridge.spark(spark)
        with Bridge.spark(spark, data_channel=False) as old_spark:
            run.backend("spark", bridges["spark"], old_spark)
        run.channel("spark", bridges["spark"])
    notes = rss_notes(bridges, args, run.extra)
    for bridge in bridges.values():
        bridge.close()
    if spark is not None:
        spark.stop()
    _report.write(
        "bridge",
        "JVM bridge (issues 3 and 21)",
        run.rows,
        [
            f"{args.elements:,} longs, {args.rows:,} rows as tuples and {args.arrow_rows:,} rows as Arrow "
            f"batches per run, best of {args.repeat} (longs, tuples and the bare "
            f"loops: of {max(args.repeat, QUICK_REPEAT)}; today: of {max(1, args.repeat // 2)}) after 6 "
            "unmeasured runs (the JVM's Arrow paths settle only after 5 or 6). Today: the "
            "same work the old way in the same run — Py4J's calls and text without the data channel, "
            "rows pickled, Python elements pushed one on_next at a time (the Arrow batches compare with "
            "pickled rows). Max buffered: the most elements the JVM side / the Python side ever held for "
            f"one stream; the subscriber's outstanding demand is at most {BATCH:,} (JVM → Python; "
            f"{BATCH * AHEAD:,} where it keeps demand ahead), and "
            "unbounded for count() (Python → JVM), which the bridge's window of 8,192 bounds.",
            *run.targets,
            *notes,
        ],
        run.extra,
    )


if __name__ == "__main__":
    main()
