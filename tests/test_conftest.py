"""The suite's own plumbing (tests/conftest.py): the wait for Spark Connect's fixed port."""

from __future__ import annotations

import socket
from types import SimpleNamespace

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
    from .conftest import FIXED_PORT_GROUP, _worker_group
    from .test_docs import PARTS

    groups = {
        str(part): _worker_group(
            SimpleNamespace(  # type: ignore[arg-type]
                nodeid=f"tests/test_docs.py::test_page_blocks_run_as_written[{part}]",
                callspec=SimpleNamespace(params={"part": part}),
                parent=None,
            )
        )
        for part in PARTS
    }
    on_the_port = sorted(name for name, group in groups.items() if group == FIXED_PORT_GROUP)
    assert on_the_port and all(name.startswith("docs/spark.md:") for name in on_the_port)
    assert len(set(groups.values())) == len(groups) - len(on_the_port) + 1  # the rest, each apart
