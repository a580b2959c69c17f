"""SyncSubscriber and AsyncSubscriber."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import reactive_streams as rs

from .support import WAIT, Boom, Spy, wait_for


class Collect(rs.SyncSubscriber[Any]):
    def __init__(self, batch: int = 256, stop_at: Any = None) -> None:
        super().__init__(batch)
        self.items: list[Any] = []
        self.errors: list[BaseException] = []
        self.completed = threading.Event()
        self.stop_at = stop_at

    def when_next(self, item: Any) -> bool:
        self.items.append(item)
        return item != self.stop_at

    def when_error(self, exc: BaseException) -> None:
        self.errors.append(exc)
        self.completed.set()

    def when_complete(self) -> None:
        self.completed.set()


class AsyncCollect(rs.AsyncSubscriber[Any]):
    def __init__(self, batch: int = 256, fail_at: Any = None) -> None:
        super().__init__(batch=batch)
        self.items: list[Any] = []
        self.threads: set[str] = set()
        self.errors: list[BaseException] = []
        self.finished = threading.Event()
        self.fail_at = fail_at

    def when_next(self, item: Any) -> None:
        self.threads.add(threading.current_thread().name)
        if item == self.fail_at:
            raise Boom("hook failed")
        self.items.append(item)

    def when_error(self, exc: BaseException) -> None:
        self.errors.append(exc)
        self.finished.set()

    def when_complete(self) -> None:
        self.finished.set()


def test_sync_subscriber_requests_in_batches() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    subscriber = Collect(batch=8)
    spy.subscribe(subscriber)
    assert subscriber.items == list(range(100)) and subscriber.completed.is_set()
    assert spy.requests[0] == 8 and set(spy.requests[1:]) == {6}


def test_sync_subscriber_cancels_when_the_hook_returns_false() -> None:
    spy = Spy(rs.from_iterable(range(100)))
    subscriber = Collect(stop_at=3)
    spy.subscribe(subscriber)
    assert subscriber.items == [0, 1, 2, 3] and spy.cancels == 1


def test_sync_subscriber_cancels_a_second_subscription() -> None:  # §2.5
    first, second = Spy(rs.from_iterable(range(10**6))), Spy(rs.from_iterable([1]))
    subscriber = Collect(batch=1)
    first.subscribe(subscriber)
    second.subscribe(subscriber)
    assert second.cancels == 1 and first.cancels == 0


@pytest.mark.parametrize("method", ["on_subscribe", "on_next", "on_error"])
def test_subscribers_raise_type_error_for_none(method: str) -> None:  # §2.13
    for subscriber in (Collect(), AsyncCollect()):
        with pytest.raises(TypeError, match=r"§2\.13"):
            getattr(subscriber, method)(None)


def test_hook_failure_cancels_and_reaches_when_error_without_raising() -> None:  # §2.13
    spy = Spy(rs.from_iterable(range(100)))
    subscriber = AsyncCollect(fail_at=5)
    spy.subscribe(subscriber)
    assert subscriber.finished.wait(WAIT)
    assert subscriber.items == [0, 1, 2, 3, 4] and isinstance(subscriber.errors[0], Boom)
    assert spy.cancels == 1


def test_async_subscriber_runs_hooks_on_the_executor_in_order() -> None:
    subscriber = AsyncCollect(batch=16)
    rs.from_iterable(range(5000)).subscribe(subscriber)
    assert subscriber.finished.wait(WAIT)
    assert subscriber.items == list(range(5000))
    assert all(name.startswith("reactive-streams") for name in subscriber.threads)


def test_async_subscriber_cancel_from_another_thread() -> None:
    spy = Spy(rs.from_iterable(range(10**9)))
    subscriber = AsyncCollect(batch=4)
    spy.subscribe(subscriber)
    subscriber.cancel()
    wait_for(lambda: spy.cancels > 0, "the cancel to reach the publisher")
    assert spy.cancels == 1


def test_async_subscriber_on_a_shut_down_executor_cancels() -> None:
    from concurrent.futures import ThreadPoolExecutor

    executor = ThreadPoolExecutor(1)
    executor.shutdown()
    spy = Spy(rs.from_iterable(range(10)))

    class Sub(rs.AsyncSubscriber[int]):
        def when_next(self, item: int) -> None:
            pass

    spy.subscribe(Sub(executor))
    assert spy.requests == []


def test_bad_batch_is_refused() -> None:
    with pytest.raises(ValueError, match="batch"):
        Collect(batch=0)


# A subclass that overrides a signal method instead of its hook got the first batch and then
# hung (no more demand, no when_complete): it is refused when the class is defined.


@pytest.mark.parametrize("base", [rs.SyncSubscriber, rs.AsyncSubscriber])
@pytest.mark.parametrize(
    ("method", "hook"),
    [("on_next", "when_next"), ("on_error", "when_error"), ("on_complete", "when_complete")],
)
def test_overriding_a_signal_method_is_refused_naming_the_hook(base: type, method: str, hook: str) -> None:
    def override(self: Any, *args: Any) -> None:
        pass

    with pytest.raises(TypeError, match=rf"Mine overrides {method}\(\), .*: override {hook}\(\) instead"):
        type("Mine", (base,), {method: override, "when_next": lambda self, item: None})


def test_a_subclass_of_a_subclass_is_checked_too() -> None:
    with pytest.raises(TypeError, match=r"Deeper overrides on_next\(\), which SyncSubscriber keeps"):

        class Deeper(Collect):
            def on_next(self, item: Any) -> None:
                super().on_next(item)  # even one that calls super(): that cannot be checked


def test_a_subclass_with_hooks_only_is_accepted_and_its_subclasses_too() -> None:
    class Total(Collect):
        def when_complete(self) -> None:
            super().when_complete()

    sub = Total(batch=16)
    rs.from_iterable(range(100)).subscribe(sub)
    assert sub.items == list(range(100)) and sub.completed.is_set()


def test_completion_resolves_after_the_hooks_have_run() -> None:
    """`completion`: None once when_complete has returned (an AsyncSubscriber's runs on its
    executor, after on_complete has returned), the failure once when_error has run, None
    when the subscriber stops itself."""
    seen: list[str] = []

    class Slow(rs.AsyncSubscriber[int]):
        def when_next(self, item: int) -> None:
            seen.append("next")

        def when_complete(self) -> None:
            time.sleep(0.2)
            seen.append("complete")

    slow = Slow()
    rs.from_iterable([1, 2]).subscribe(slow)
    assert slow.completion.result(timeout=10) is None
    assert seen == ["next", "next", "complete"]

    class Failing(rs.SyncSubscriber[int]):
        def when_next(self, item: int) -> None:
            raise Boom("no")

        def when_error(self, exc: BaseException) -> None:
            pass

    failing = Failing()
    rs.from_iterable([1]).subscribe(failing)
    with pytest.raises(Boom):
        failing.completion.result(timeout=10)

    class Stopping(rs.SyncSubscriber[int]):
        def when_next(self, item: int) -> bool:
            return False

    stopping = Stopping()
    rs.from_iterable(range(10)).subscribe(stopping)
    assert stopping.completion.result(timeout=10) is None

    class Complaining(rs.SyncSubscriber[int]):
        def when_next(self, item: int) -> None:
            pass

        def when_complete(self) -> None:
            raise Boom("at the end")

    complaining = Complaining()
    rs.from_iterable([1]).subscribe(complaining)
    with pytest.raises(Boom, match="at the end"):
        complaining.completion.result(timeout=10)
