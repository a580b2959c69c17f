"""Py4J's pinned-thread connections under re-entrant calls and Py4J's idle cleaner (which runs
every 30 s; the tests run it at once through ``PythonClient.periodicCleanup``).

A JVM thread that calls Python, which calls Java, which calls Python again (a TCK factory, a
synchronous ``onSubscribe``) used to leave its connection in Py4J's idle deque while the outer
call still waited on it; the cleaner then closed it under the caller ("Error while sending a
command"). The bridge guards the deque (``Py4JConnectionDeque``)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

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
