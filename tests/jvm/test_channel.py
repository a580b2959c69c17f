"""The data channel (`_channel.DataChannel`, Java's ``DataChannel``): on the Py4J backends the
signals of JVM -> Python streams (and their demand back), and large batches from Python, travel
on one authenticated loopback socket per bridge, beside Py4J."""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge, BridgeClosedError

from ..support import WAIT, Probe, wait_for

PY4J_BACKENDS = ["spark", "py4j"]


@pytest.fixture(params=PY4J_BACKENDS)
def py4j_backend_bridge(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"{request.param}_bridge")


def longs(bridge: Bridge, count: int) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing.Sources.longs(count)


def test_every_signal_of_a_jvm_stream_is_a_frame_and_arrives_exactly(py4j_backend_bridge: Bridge) -> None:
    bridge = py4j_backend_bridge
    channel = bridge._host.channel
    assert channel is not None and bridge.runtime.hasDataChannel()
    for count, prefetch in ((200_000, 200_000), (300, 64), (5, 1)):
        before = channel.frames
        assert list(rs.iterate(bridge.from_jvm(longs(bridge, count)), prefetch=prefetch)) == list(
            range(count)
        )
        # on_subscribe, the batches (at most `prefetch` elements each) and on_complete (counted
        # once its delivery has returned: after the iterator has seen it)
        frames = 2 + -(-count // prefetch)
        wait_for(lambda: channel.frames - before >= frames, f"{frames} frames")  # noqa: B023
    assert channel.registered == 0  # every ended stream left the channel
    assert bridge.runtime.maxQueued() <= bridge.settings.window


def test_python_batches_go_on_the_channel_when_large_and_inline_when_small(
    py4j_backend_bridge: Bridge,
) -> None:
    bridge = py4j_backend_bridge
    channel = bridge._host.channel
    assert channel is not None
    flux = getattr(bridge.jvm.reactor.core.publisher.Flux, "from")
    before = channel.sent
    assert int(flux(bridge.to_jvm(rs.from_iterable(range(100_000)))).count().block()) == 100_000
    assert channel.sent > before  # 8,192 longs are 64 KiB: a frame, then the call that takes it
    before = channel.sent
    small = rs.from_iterable(range(300))
    assert [int(x) for x in flux(bridge.to_jvm(small)).limitRate(64).collectList().block()] == list(
        range(300)
    )
    assert channel.sent == before  # 64 longs are 513 bytes: they go with the Py4J call


def test_values_keep_their_python_types_on_the_channel(py4j_backend_bridge: Bridge) -> None:
    bridge = py4j_backend_bridge
    values = [("row", index, index / 2, None, b"\x00\x01", [index], {"k": index}) for index in range(2_000)]
    channel = bridge._host.channel
    assert channel is not None
    before = channel.sent

    def round_trip(prefetch: int) -> list[Any]:
        return list(rs.iterate(bridge.from_jvm(bridge.to_jvm(rs.from_iterable(values))), prefetch=prefetch))

    on_the_channel = round_trip(2_000)
    assert channel.sent > before
    inline = round_trip(1)  # a batch of one is a few bytes: it goes with the Py4J call
    assert on_the_channel == inline == values
    assert [type(v) for row in on_the_channel for v in row] == [type(v) for row in inline for v in row]


def test_many_streams_share_the_channel_and_each_gets_its_own_frames(py4j_backend_bridge: Bridge) -> None:
    bridge = py4j_backend_bridge
    probes = [Probe(initial=2**63 - 1) for _ in range(16)]
    for index, probe in enumerate(probes):
        bridge.from_jvm(longs(bridge, 20_000 + index)).subscribe(probe)
    for index, probe in enumerate(probes):
        assert probe.done.wait(WAIT) and probe.error is None
        assert probe.items == list(range(20_000 + index))


def test_demand_requested_inside_a_large_batch_leaves_before_the_batch_ends(
    py4j_backend_bridge: Bridge,
) -> None:
    """A subscriber keeping demand ahead (request(1) per on_next on 3,000 outstanding) gets them
    in one frame, or in a few when the JVM sends before it has all 3,000; the demand it requests
    meanwhile reaches the JVM every 1,024 elements of a frame, and after each frame, so the next
    batch is on its way before this one ends. By element 2,500, at least 1,024 have gone back
    however the 3,000 were framed (2,048 when they came as one frame): held to the frame's end,
    none would have."""
    bridge = py4j_backend_bridge
    recording = bridge.jvm.io.github.rspy.bridge.testing.RecordingPublisher(longs(bridge, 10_000))
    seen_mid_frame: list[int] = []

    def on_next(probe: Probe, item: Any) -> None:
        probe.request(1)
        if item == 2_500:  # at least 1,024 elements' demand has been sent by now, however framed
            wait_for(lambda: int(recording.requested()) >= 3_000 + 1_024, "the demand sent mid-frame")
            seen_mid_frame.append(int(recording.requested()))

    probe = Probe(initial=3_000, on_next_hook=on_next)
    bridge.from_jvm(recording).subscribe(probe)
    assert probe.done.wait(WAIT) and probe.error is None and not probe.violations
    assert probe.items == list(range(10_000))
    assert seen_mid_frame and seen_mid_frame[0] < 3_000 + 2_501  # not the whole frame's: exact (§1.1)
    assert int(recording.requested()) <= 10_000 + 3_000


def test_the_jpype_bridge_keeps_its_in_process_path(jpype_bridge: Bridge) -> None:
    assert jpype_bridge._host.channel is None
    assert not jpype_bridge.runtime.hasDataChannel()


# The handshake, against a runtime of its own in the standalone JVM.


@pytest.fixture
def runtime(py4j_bridge: Bridge) -> Any:
    runtime = py4j_bridge.jvm.io.github.rspy.bridge.BridgeRuntime(64, 64, 1)
    yield runtime
    runtime.close()


def accept_in_background(runtime: Any, millis: int) -> Any:
    pool = ThreadPoolExecutor(1)
    future = pool.submit(runtime.acceptDataChannel, millis)
    pool.shutdown(wait=False)
    return future


def test_the_channel_listens_on_loopback_only(runtime: Any) -> None:
    runtime.openDataChannel(secrets.token_bytes(32))
    assert runtime.dataChannelAddress() == "127.0.0.1"


def test_a_connection_without_the_secret_is_refused_and_the_right_one_accepted(runtime: Any) -> None:
    secret = secrets.token_bytes(32)
    port = runtime.openDataChannel(secret)
    intruder = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    intruder.sendall(secrets.token_bytes(32))
    honest = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    honest.sendall(secret)
    try:
        assert accept_in_background(runtime, 10_000).result(WAIT) is True
        assert intruder.recv(1) == b""  # closed unanswered
        assert honest.recv(1) == b"\x01"
        assert runtime.hasDataChannel()
        with pytest.raises(OSError):  # nobody listens any more
            socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()
        runtime.close()
        assert honest.recv(1) == b""  # the channel closes with the runtime
        assert not runtime.hasDataChannel()
    finally:
        intruder.close()
        honest.close()


# Wrong secrets that a check of only part of the secret lets in. A wholly random one is not
# enough: a check of only its first 8 bytes passed every test that sent one.
NEAR_MISSES: dict[str, Callable[[bytes], bytes]] = {
    "last-byte-wrong": lambda s: s[:-1] + bytes([s[-1] ^ 0xFF]),
    "first-half-right-then-garbage": lambda s: s[: len(s) // 2] + bytes(b ^ 0x5A for b in s[len(s) // 2 :]),
    "first-byte-wrong": lambda s: bytes([s[0] ^ 0x01]) + s[1:],
}


@pytest.mark.parametrize("miss", NEAR_MISSES)
def test_a_secret_wrong_in_any_byte_is_refused(runtime: Any, miss: str) -> None:
    secret = secrets.token_bytes(32)
    port = runtime.openDataChannel(secret)
    intruder = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    intruder.sendall(NEAR_MISSES[miss](secret))
    try:
        assert accept_in_background(runtime, 500).result(WAIT) is False
        assert intruder.recv(1) == b""  # closed unanswered, never accepted
        assert not runtime.hasDataChannel()
    finally:
        intruder.close()


def test_a_connection_that_never_presents_the_secret_is_dropped(runtime: Any) -> None:
    port = runtime.openDataChannel(secrets.token_bytes(32))
    silent = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    try:
        assert accept_in_background(runtime, 500).result(WAIT) is False
        assert silent.recv(1) == b""
        assert not runtime.hasDataChannel()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()
    finally:
        silent.close()


def test_a_short_secret_is_refused(runtime: Any) -> None:
    from py4j.protocol import Py4JJavaError

    with pytest.raises(Py4JJavaError, match="at least 16 bytes"):
        runtime.openDataChannel(b"short")


# Its life: it ends with the bridge, and a bridge closed mid-stream ends the stream.


def channel_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("rs-bridge-data")]


def test_closing_the_bridge_closes_the_channel_and_its_thread(spark_session: Any) -> None:
    before = len(channel_threads())
    for _ in range(5):
        with Bridge.spark(spark_session) as bridge:
            channel = bridge._host.channel
            assert channel is not None and channel.open
            assert len(channel_threads()) == before + 2  # its reader and its watchdog
        assert not channel.open
        assert len(channel_threads()) == before
        assert channel._socket.fileno() == -1


def test_a_bridge_closed_mid_stream_ends_the_stream_and_the_channel(spark_session: Any) -> None:
    bridge = Bridge.spark(spark_session)
    endless = bridge.jvm.reactor.core.publisher.Flux.range(0, 2**31 - 1)
    probe = Probe(initial=2**63 - 1)
    bridge.from_jvm(endless).subscribe(probe)
    probe.await_items(100_000)
    bridge.close()
    assert probe.done.wait(WAIT)
    assert isinstance(probe.error, BridgeClosedError)
    assert probe.violations == []
    assert not bridge._host.channel.open  # type: ignore[union-attr]
    assert bridge.runtime.liveAdapters() == 0


def test_the_runtime_closed_from_the_jvm_side_ends_the_stream(spark_session: Any) -> None:
    bridge = Bridge.spark(spark_session)
    try:
        endless = bridge.jvm.reactor.core.publisher.Flux.range(0, 2**31 - 1)
        probe = Probe(initial=2**63 - 1)
        bridge.from_jvm(endless).subscribe(probe)
        probe.await_items(100_000)
        bridge.runtime.close("the test closed it")
        assert probe.done.wait(WAIT)
        assert isinstance(probe.error, BridgeClosedError)
    finally:
        bridge.close()


def test_a_channel_whose_jvm_reader_fails_ends_every_stream_instead_of_hanging(spark_session: Any) -> None:
    bridge = Bridge.spark(spark_session)
    try:
        Flux = bridge.jvm.reactor.core.publisher.Flux
        probes = [Probe(initial=10) for _ in range(3)]
        for probe in probes:
            bridge.from_jvm(Flux.range(0, 2**31 - 1)).subscribe(probe)
        for probe in probes:
            probe.await_items(10)
        channel = bridge._host.channel
        assert channel is not None
        channel.send(1, ord("Z"), b"abc")  # no such kind: Python's frames can no longer be read
        for probe in probes:  # their demand could never reach the JVM again
            assert probe.done.wait(WAIT), "a stream hung"
            assert isinstance(probe.error, BridgeClosedError), probe.error
            assert "the bridge's data channel failed" in str(probe.error)
            assert probe.items == list(range(10)) and probe.violations == []
        assert bridge.closed and bridge.live_streams == 0
        wait_for(lambda: int(bridge.runtime.liveAdapters()) == 0, "the JVM side to end its streams")
        with pytest.raises(BridgeClosedError, match="closed"):
            bridge.from_jvm(Flux.range(0, 3))
    finally:
        bridge.close()


def test_rows_that_fit_no_schema_in_part_of_a_stream_cross_with_the_codec_in_order(
    py4j_backend_bridge: Bridge,
) -> None:
    bridge = py4j_backend_bridge
    pytest.importorskip("pyarrow")
    rows = [(index, str(index) if 300 <= index < 310 else index / 2) for index in range(1024)]
    back = list(rs.iterate(bridge.from_jvm(bridge.to_jvm(rs.from_iterable(rows))), prefetch=1024))
    assert back == rows
    assert [type(value) for row in back for value in row] == [type(value) for row in rows for value in row]


def test_a_bridge_without_its_data_channel_keeps_everything_on_py4j(spark_session: Any) -> None:
    with Bridge.spark(spark_session, data_channel=False) as bridge:
        assert bridge._host.channel is None and not bridge.runtime.hasDataChannel()
        values = [("row", index, index / 2) for index in range(20_000)]
        back = list(rs.iterate(bridge.from_jvm(bridge.to_jvm(rs.from_iterable(values))), prefetch=4096))
        assert back == values


def test_data_channel_must_be_a_bool() -> None:
    from reactive_streams.jvm import BridgeSettings

    with pytest.raises(TypeError, match="data_channel must be a bool, got 'yes'"):
        BridgeSettings(data_channel="yes")  # type: ignore[arg-type]


# Where there are Unix domain sockets, the channel is one, in a directory of its own.


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix domain sockets here")
def test_the_channel_is_a_unix_domain_socket_whose_file_is_gone_once_connected(py4j_bridge: Bridge) -> None:
    import os

    channel = py4j_bridge._host.channel
    assert channel is not None and channel._socket.family == socket.AF_UNIX
    path = channel.address
    assert os.path.basename(os.path.dirname(path)).startswith("rs-bridge-")
    assert not os.path.exists(os.path.dirname(path))  # the file and its directory are gone


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix domain sockets here")
def test_the_unix_socket_refuses_a_connection_without_the_secret(runtime: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "data")
    secret = secrets.token_bytes(32)
    runtime.openDataChannelAt(secret, path)
    assert runtime.dataChannelAddress() == path
    intruder = socket.socket(socket.AF_UNIX)
    intruder.connect(path)
    intruder.sendall(secrets.token_bytes(32))
    honest = socket.socket(socket.AF_UNIX)
    honest.connect(path)
    honest.sendall(secret)
    try:
        assert accept_in_background(runtime, 10_000).result(WAIT) is True
        intruder.settimeout(WAIT)
        honest.settimeout(WAIT)
        assert intruder.recv(1) == b""  # closed unanswered
        assert honest.recv(1) == b"\x01"
        assert not (tmp_path / "data").exists()  # nobody can connect any more
    finally:
        intruder.close()
        honest.close()


def test_without_unix_sockets_the_channel_is_loopback_tcp(
    spark_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reactive_streams.jvm import _channel

    def refused(*args: object) -> socket.socket:
        raise OSError("no Unix domain sockets in this test")

    monkeypatch.setattr(_channel, "_connect_unix", refused)
    with Bridge.spark(spark_session) as bridge:
        channel = bridge._host.channel
        assert channel is not None and channel._socket.family == socket.AF_INET
        assert channel._socket.getpeername()[0] == "127.0.0.1"
        assert list(rs.iterate(bridge.from_jvm(longs(bridge, 50_000)), prefetch=4096)) == list(range(50_000))


def test_a_bridge_closed_after_its_streams_logs_no_channel_failure(
    py4j_bridge: Bridge, caplog: pytest.LogCaptureFixture
) -> None:
    """Closing a bridge closes the JVM's end of the channel first, which may reset the
    connection under Python's reader (a frame of Python's still unread there): that is the
    close, not a failure, and nothing is logged (CI's check-wheel once printed "the bridge's
    data channel failed: [Errno 104] Connection reset by peer" after a round trip like these)."""
    gateway = py4j_bridge._host.backend._gateway
    expected = [x * x for x in range(100) if x % 2 == 0]
    with caplog.at_level("WARNING", logger="reactive_streams"):
        for _ in range(30):
            with Bridge.py4j_gateway(gateway, name="py4j") as bridge:
                java = bridge.to_jvm(rs.from_iterable(range(100)).map(lambda x: x * x), flow=True)
                evens = bridge.from_jvm(java).filter(lambda x: x % 2 == 0)
                assert list(rs.iterate(evens, prefetch=16)) == expected
    assert [r.getMessage() for r in caplog.records if "data channel" in r.getMessage()] == []
