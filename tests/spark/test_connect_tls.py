"""What a client that gets no further than TLS is told (`refused_by_server`), from real gRPC
failures on loopback: a TLS server whose certificate the client does not trust, an HTTP/1
server where gRPC was expected, and a port where nothing listens (not a TLS failure: the calls'
own retries handle it). A Connect server behind a TLS proxy is tests/deploy/test_tls.py's."""

from __future__ import annotations

import http.server
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import pytest

grpc = pytest.importorskip("grpc")

from reactive_streams.spark._connect._wire import refused_by_server  # noqa: E402


def _call(target: str, credentials: object | None) -> BaseException:
    channel = (
        grpc.insecure_channel(target) if credentials is None else grpc.secure_channel(target, credentials)
    )
    try:
        channel.unary_unary("/spark.connect.SparkConnectService/Config")(b"", timeout=10)
    except grpc.RpcError as exc:
        return exc
    finally:
        channel.close()
    raise AssertionError("the call succeeded")


def _self_signed(folder: Path, name: str, *extra: str) -> tuple[Path, Path]:
    """A key and a self-signed certificate for ``name``, made by openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: no certificate for a TLS server")
    key, cert = folder / f"{name}.key", folder / f"{name}.pem"
    command = [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        f"/CN={name}",
    ]
    subprocess.run(
        [*command, *extra, "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True
    )
    return key, cert


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[int]:
    """A gRPC server with a self-signed certificate for localhost, on a free loopback port."""
    key, cert = _self_signed(tmp_path, "localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    credentials = grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
    port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    try:
        yield port
    finally:
        server.stop(None).wait()


def test_a_certificate_the_client_does_not_trust_is_named_in_one_line(
    tls_server: int, tmp_path: Path
) -> None:
    _, other = _self_signed(tmp_path, "other")  # a CA that signed nothing of the server's
    exc = _call(f"127.0.0.1:{tls_server}", grpc.ssl_channel_credentials(other.read_bytes()))
    error = refused_by_server(exc)
    assert error is not None, exc
    text = str(error)
    assert text.startswith("the TLS handshake with the Spark Connect server (or its proxy) failed: ")
    assert "CERTIFICATE_VERIFY_FAILED" in text and "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH" in text
    assert "\n" not in text and "Rendezvous" not in text and not text.endswith(": OK")


def test_plain_grpc_to_a_server_that_is_not_http2_is_named_in_one_line() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        exc = _call(f"127.0.0.1:{server.server_address[1]}", None)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
    error = refused_by_server(exc)
    assert error is not None, exc
    assert str(error).startswith("the Spark Connect server's address did not answer as gRPC does (")
    assert "use_ssl=true" in str(error) and "\n" not in str(error)


def test_nothing_listening_is_not_a_refusal() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed on leaving: nothing listens there
    exc = _call(f"127.0.0.1:{port}", None)
    assert exc.code() == grpc.StatusCode.UNAVAILABLE
    assert refused_by_server(exc) is None  # the calls' own retries handle a server not up yet
