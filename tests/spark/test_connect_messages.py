"""The Connect wire's messages, built from the descriptor set the build generates from
spark/src/main/proto/rspy_connect.proto and puts in the Spark connectors' jar."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.spark._connect import _messages
from reactive_streams.spark._connect._wire import CALL, decode_reply, decode_status, encode_call, status_error

from ..conftest import ROOT


def test_the_messages_are_the_proto_files() -> None:
    proto = (ROOT / "spark" / "src" / "main" / "proto" / "rspy_connect.proto").read_text()
    for name in ("Call", "Status", "Elements"):
        descriptor = _messages.message(name).DESCRIPTOR
        assert descriptor.full_name == f"io.github.rspy.connect.{name}"
        assert f"message {name} {{" in proto
        for field in descriptor.fields:
            assert f" {field.name} = {field.number};" in proto, (name, field.name)
    ops = {f.name for f in _messages.message("Call").DESCRIPTOR.oneofs_by_name["op"].fields}
    assert {"mux", "subscribe", "demand", "push", "keepalive", "registry_stats", "sink_progress"} <= ops
    assert len(ops) == 20


def test_the_wire_doc_is_what_the_proto_says() -> None:
    """docs/connect-wire.md's reference part is generated from the .proto's comments: a change to
    either alone fails here."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "connect_wire_doc.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    doc = (ROOT / "docs" / "connect-wire.md").read_text()
    for op in _messages.message("Call").DESCRIPTOR.oneofs_by_name["op"].fields:
        assert f"| `{op.name}` |" in doc


def test_a_call_is_its_ops_message() -> None:
    call = encode_call({"op": "demand", "stream": "s", "n": 3}, b"\x00body")
    assert call.type_url == CALL
    decoded = _messages.message("Call").FromString(call.value)
    assert decoded.WhichOneof("op") == "demand" and decoded.demand.n == 3
    assert (decoded.stream, decoded.body) == ("s", b"\x00body")
    op = {"op": "subscribe", "stream": "s", "mux": "m", "name": "n", "arg": None, "max_batch": 8}
    subscribe = _messages.message("Call").FromString(encode_call(op).value).subscribe
    assert not subscribe.HasField("arg") and (subscribe.mux, subscribe.max_batch) == ("m", 8)  # None: unset
    push = (
        _messages.message("Call")
        .FromString(
            encode_call({"op": "push", "stream": "s", "sub": 2, "end": "error", "error": "boom"}).value
        )
        .push
    )
    assert (push.sub, push.end, push.error) == (2, _messages.message("Call").END_ERROR, "boom")


@pytest.mark.parametrize(
    ("op", "error", "text"),
    [
        ({"op": "demand", "stream": "s", "m": 3}, ValueError, "'demand' does not fit the .proto in 'm'"),
        ({"op": "demand", "stream": "s", "n": "many"}, TypeError, "in 'n': "),  # protobuf: "integer"
        ({"op": "demand", "stream": "s", "n": 2**80}, ValueError, "in 'n': "),  # "out of range"
        ({"op": "no_such_op", "stream": "s"}, ValueError, 'no "no_such_op" field'),
        ({"op": "keepalive", "streams": [7]}, TypeError, "'keepalive' does not fit the .proto in 'streams'"),
    ],
)
def test_a_call_the_proto_has_no_room_for_fails_before_it_is_sent(
    op: dict[str, Any], error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=re.escape(text)):
        encode_call(op)


def test_a_status_reads_as_a_dict_of_every_field() -> None:
    status_class = _messages.message("Status")
    ok = status_class(stream="s")
    ok.ok.ended.append("gone")
    ok.ok.epoch = 4
    assert decode_status(ok.SerializeToString()) == {
        "event": "ok",
        "stream": "s",
        "ended": ["gone"],
        "unknown": [],
        "registered": None,  # optional, unset
        "epoch": 4,
        "query": None,
    }
    stats = status_class()
    stats.stats.streams["a"].requests.extend([1, 2])
    decoded = decode_status(stats.SerializeToString())
    assert decoded["stream"] is None and decoded["all"] is None
    assert decoded["streams"]["a"]["requests"] == [1, 2] and decoded["streams"]["a"]["reason"] is None
    failed = status_class()
    failed.error.java_class = "java.lang.IllegalStateException"
    failed.error.message = "no"
    error = status_error(decode_status(failed.SerializeToString()))
    assert isinstance(error, rs.JvmError) and "IllegalStateException" in str(error) and "no" in str(error)


def test_elements_cross_as_their_message() -> None:
    import pyspark.sql.connect.proto as pb2

    elements = _messages.message("Elements")(stream="abc", data=b"q\x01")
    response = pb2.ExecutePlanResponse()
    response.extension.type_url = "type.googleapis.com/io.github.rspy.connect.Elements"
    response.extension.value = elements.SerializeToString()
    reply = decode_reply(response)
    assert reply is not None and (reply.kind, reply.stream, reply.data) == ("elements", "abc", b"q\x01")


def test_a_connectors_jar_without_the_descriptor_set_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jar = tmp_path / "reactive-streams-py-spark.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    monkeypatch.setattr(_messages, "spark_connector_jars", lambda: [str(jar)])
    monkeypatch.setattr(_messages, "_classes", {})
    with pytest.raises(rs.ReactiveStreamsError, match=r"has no io/github/rspy/spark/connect/wire\.binpb"):
        _messages.message("Call")
