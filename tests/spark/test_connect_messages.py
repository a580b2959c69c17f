"""The Connect wire's messages, built from the descriptor set the build generates from
spark/src/main/proto/rspy_connect.proto and puts in the Spark connectors' jar."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import reactive_streams as rs
from reactive_streams.spark._connect import _messages
from reactive_streams.spark._connect._wire import CALL, decode_reply, encode_call

from ..conftest import ROOT


def test_the_messages_are_the_proto_files() -> None:
    proto = (ROOT / "spark" / "src" / "main" / "proto" / "rspy_connect.proto").read_text()
    for name, fields in {"Call": ["header", "body"], "Elements": ["stream", "data"]}.items():
        descriptor = _messages.message(name).DESCRIPTOR
        assert descriptor.full_name == f"io.github.rspy.connect.{name}"
        assert [f.name for f in descriptor.fields] == fields
        assert f"message {name} {{" in proto


def test_a_call_and_elements_cross_as_their_messages() -> None:
    call = encode_call({"op": "demand", "stream": "s", "n": 3}, b"\x00body")
    assert call.type_url == CALL
    decoded = _messages.message("Call").FromString(call.value)
    assert decoded.header == '{"op": "demand", "stream": "s", "n": 3}' and decoded.body == b"\x00body"

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
