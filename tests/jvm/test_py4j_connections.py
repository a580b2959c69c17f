"""Py4J's pinned-thread connections: under re-entrant calls and Py4J's idle cleanup
(``CallbackClient.periodicCleanup``, which the tests run themselves: Py4J 0.10.9.9's
``PythonClient``, the pinned-thread client both backends use, schedules none), and a drain
thread's connection that Py4J shut down.

A JVM thread that calls Python, which calls Java, which calls Python again (a TCK factory, a
synchronous ``onSubscribe``) used to leave its connection in Py4J's idle deque while the outer
call still waited on it; a cleanup then closed it under the caller ("Error while sending a
command"). The bridge guards the deque (``Py4JConnectionDeque``)."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge, BridgeSettings

from ..support import Probe, wait_for
from .kit import WAIT_MS, Kit

BACKENDS = ["py4j", "spark"]  # JPype has no sockets


@pytest.fixture(params=BACKENDS)
def py4j_like(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(f"{request.param}_bridge")


def _callback_client(bridge: Any) -> Any:
    from py4j.java_gateway import JavaObject

    return JavaObject("GATEWAY_SERVER", bridge.jvm._gateway_client).getCallbackClient()


def _run_on_a_jvm_thread(jvm: Any, runnable: Any) -> None:
    """Runs a Python Runnable on a new JVM thread and raises what it raised there."""
    executors = jvm.java.util.concurrent.Executors
    task = jvm.java.util.concurrent.FutureTask(executors.callable(runnable))
    jvm.java.lang.Thread(task).start()
    task.get()


class _Runnable:
    def __init__(self, body: Any) -> None:
        self.body = body

    def run(self) -> None:
        self.body()

    class Java:
        implements = ("java.lang.Runnable",)


def test_a_reentrant_call_survives_the_idle_cleaner(py4j_like: Any) -> None:
    jvm = py4j_like.jvm
    client = _callback_client(py4j_like)
    executors = jvm.java.util.concurrent.Executors
    inner_runs: list[int] = []

    def clean() -> None:  # from another Python thread, as Py4J's cleaner thread would
        cleaner = threading.Thread(target=client.periodicCleanup)
        cleaner.start()
        cleaner.join()

    def outer() -> None:
        for _ in range(2):  # the second round shows no stale duplicate is left behind
            executors.callable(_Runnable(lambda: inner_runs.append(1))).call()  # re-enters Python
            clean()
            clean()
            jvm.java.lang.System.nanoTime()  # this JVM thread's connection still answers

    _run_on_a_jvm_thread(jvm, _Runnable(outer))
    assert len(inner_runs) == 2


def test_the_cleaner_still_closes_connections_of_ended_threads(py4j_like: Any) -> None:
    client = _callback_client(py4j_like)
    served_by: list[threading.Thread] = []

    _run_on_a_jvm_thread(py4j_like.jvm, _Runnable(lambda: served_by.append(threading.current_thread())))
    (server_thread,) = served_by
    assert server_thread is not threading.main_thread()
    client.periodicCleanup()
    client.periodicCleanup()
    server_thread.join(timeout=10)
    assert not server_thread.is_alive()  # its connection was closed, so its Python thread ended


def test_a_drain_thread_whose_connection_python_closed_still_delivers_the_next_stream(
    py4j_like: Any, request: pytest.FixtureRequest
) -> None:
    """CI's rare rule-1.1 stall: a drain thread's Py4J connection is shut down by Py4J when a
    call on it fails (here Python closed its end). The thread's next JVM -> Python stream then
    tuned that dead connection after its first batch (a NullPointerException in the drain,
    which ended the stream and told Python nothing: its next request went nowhere)."""
    if py4j_like.backend == "spark":
        bridge = Bridge.spark(request.getfixturevalue("spark_session"), threads=1)
    else:  # the session's JVM, one drain thread: every pass below runs on the same JVM thread
        bridge = Bridge.py4j_gateway(py4j_like._host.backend._gateway, BridgeSettings(threads=1), name="py4j")
    with bridge:
        kit = Kit(bridge)
        gateway_client = bridge.jvm._gateway_client
        connections: list[Any] = []

        def subscribed_over(connection_of_this_call: list[Any]) -> rs.Publisher[int]:
            class Recorded(rs.Publisher[int]):
                def subscribe(self, subscriber: rs.Subscriber[int]) -> None:  # called over Py4J
                    connection_of_this_call.append(gateway_client.get_thread_connection())
                    rs.from_iterable([1, 2, 3]).subscribe(subscriber)

            return Recorded()

        # The drain thread calls Python (the factory's subscribe) on its own connection...
        first = kit.recorder_of(subscribed_over(connections))
        wait_for(lambda: bool(connections), "the drain thread to call Python")
        connections[0].socket.shutdown(socket.SHUT_RDWR)  # ...whose Python end then closes
        # Its next call fails, and Py4J shuts the connection down (its socket null); the stream
        # that made it is told. Or Py4J found the connection dead while sending, and sent the
        # call again on a new one (it retries a failed send, not a failed answer): the stream then
        # runs whole. Which of the two happens is up to when the closed end's FIN arrives.
        second = kit.recorder_of(rs.from_iterable([4, 5, 6]), 4)
        assert second.awaitDone(WAIT_MS)
        if second.isComplete():
            assert list(second.items()) == [4, 5, 6]
        else:
            assert (second.errorClass(), list(second.items())) == ("py4j.Py4JException", [])
        probe = Probe()
        probe.diagnose = kit.describe
        bridge.from_jvm(kit.Flux.range(0, 1000)).subscribe(probe)
        probe.await_subscribed()
        for n in (5, 5, 990):
            probe.request(n)
            probe.await_items(probe.requested)
        probe.await_done()
        assert probe.completed and probe.items == list(range(1000))
        first.cancel()
