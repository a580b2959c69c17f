"""Only who holds the token gets in: Spark's Connect server on its host's loopback with a token,
behind nginx terminating TLS on the host's address (docs/deploy.md's commands). A thin client
with the token and the test CA runs every feature (test_thin_client.py); here, the clients that
must not get in: each of the library's calls fails at once with one line naming why, and none
of the client's streams opens."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import kit

HERE = Path(__file__).resolve().parent

pytestmark = [pytest.mark.jvm, pytest.mark.timeout(600)]

REFUSED = "the Spark Connect server refused this client: "
NO_TRUST = "the TLS handshake with the Spark Connect server (or its proxy) failed: CERTIFICATE_VERIFY_FAILED"
PLAIN = "the Spark Connect server's address did not answer as gRPC does (an HTTP/1 server (HTTP status 400))"


def _url(cluster: Any, case: str) -> str:
    host = f"{kit().address('connect')}:{kit().PROXY_PORT}"
    return {
        "no token": f"sc://{host}/;use_ssl=true",
        "another token": cluster.connect_url("not-the-servers-token"),
        "a CA it does not trust": cluster.connect_url(),
        "no TLS": f"sc://{host}",
    }[case]


@pytest.mark.parametrize(
    ("case", "said"),
    [
        pytest.param(
            "no token", REFUSED + "No authentication token provided (UNAUTHENTICATED)", id="no-token"
        ),
        pytest.param(
            "another token", REFUSED + "Invalid authentication token (UNAUTHENTICATED)", id="other-token"
        ),
        pytest.param("a CA it does not trust", NO_TRUST, id="untrusted-ca"),
        pytest.param("no TLS", PLAIN, id="no-tls"),
    ],
)
def test_a_client_not_let_in_gets_one_line_at_once_and_opens_no_stream(
    cluster: Any, case: str, said: str
) -> None:
    netns_cluster = kit()
    client = netns_cluster.thin_client("4.2.0")
    trusted = None if case == "a CA it does not trust" else cluster.certificate_authority
    started = time.monotonic()
    done = cluster.run(
        "client",
        [str(client), str(HERE / "refused_script.py"), _url(cluster, case)],
        timeout=180,  # PySpark's own retries of a failed handshake would take some ten minutes
        env=netns_cluster.thin_environment(client, trusted),
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-4000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    for call in ("register_publisher", "jvm_publisher", "dataframe_from_publisher"):
        failed = outcome[call]
        assert failed["class"] == "ReactiveStreamsError" and failed["lines"] == 1, (call, failed)
        assert said in failed["text"], (call, failed)
    assert outcome["subscribed"] == []  # none of the client's streams opened
    assert took < 60, took  # at once, not after PySpark's retries


def test_the_server_itself_is_reached_only_through_the_proxy(cluster: Any) -> None:
    """The Connect server listens on its own host's loopback: from the client's host only the
    proxy's TLS port answers."""
    netns_cluster = kit()
    assert not cluster.reachable("connect", netns_cluster.CONNECT_PORT)
    assert cluster.reachable("connect", netns_cluster.PROXY_PORT)
    assert cluster.reachable("connect", netns_cluster.CONNECT_PORT, "connect", "127.0.0.1")
