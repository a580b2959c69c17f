"""The suite's own plumbing (tests/conftest.py): the wait for Spark Connect's fixed port."""

from __future__ import annotations

import socket

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
