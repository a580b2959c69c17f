"""The upstream TCK judges every Python reference publisher and operator, seen from Java through
``to_jvm``: one verification class each, one pytest item per TCK test."""

from __future__ import annotations

import itertools
from typing import Any

import reactive_streams as rs
from reactive_streams.tck import PublisherVerification

from ..support import Boom, WatchedSource, _SubmittingPublisher, shared_loop


class Naturals:
    """0, 1, 2, ... afresh for each iteration, so that every subscriber sees the same stream."""

    def __iter__(self) -> Any:
        return itertools.count()


def source(elements: int) -> Any:
    """``elements`` integers, re-iterable; endless for 2**63-1 (the TCK's "never completes")."""
    return range(elements) if elements < rs.MAX_DEMAND else Naturals()


class _Unreadable:
    """An iterable that fails at once: from_iterable signals on_error right after on_subscribe."""

    def __iter__(self) -> Any:
        raise Boom("failed publisher")


class _UnreadableAsync:
    def __aiter__(self) -> Any:
        raise Boom("failed publisher")


def failed() -> rs.Publisher[Any]:
    return rs.from_iterable(_Unreadable())


class _CorePublisher(PublisherVerification):
    def create_failed_publisher(self) -> rs.Publisher[Any]:
        return failed()


class TestFromIterable(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(source(elements))


class TestAsyncIterablePublisher(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.AsyncIterablePublisher(source(elements), batch_size=16)

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        return rs.AsyncIterablePublisher(_Unreadable())


class TestFromAsyncIterable(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        count = elements if elements < rs.MAX_DEMAND else 2**62
        return rs.from_async_iterable(WatchedSource(count, None), shared_loop())

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        return rs.from_async_iterable(_UnreadableAsync(), shared_loop())


class TestSubmissionPublisher(_CorePublisher):
    """Hot and multicast: each subscriber gets a fresh one, fed ``elements`` by a thread."""

    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return _SubmittingPublisher(min(elements, 2**62), None)

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        publisher: rs.SubmissionPublisher[Any] = rs.SubmissionPublisher()
        publisher.close_exceptionally(Boom("failed"))
        return publisher


class TestMapProcessorAsPublisher(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        processor: rs.MapProcessor[int, int] = rs.MapProcessor(lambda x: x + 1)
        rs.from_iterable(source(elements)).subscribe(processor)
        return processor


class TestMap(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(source(elements)).map(lambda x: x * 2)


class TestFilter(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(source(2 * elements if elements < rs.MAX_DEMAND else elements)).filter(
            lambda x: x % 2 == 0
        )


class TestTake(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(Naturals()).take(elements)


class TestSkip(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(source(elements + 7 if elements < rs.MAX_DEMAND else elements)).skip(7)


class TestBatch(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        size = 3
        upstream = source(elements * size) if elements < rs.MAX_DEMAND // size else Naturals()
        return rs.from_iterable(upstream).batch(size)


class TestConcat(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        half = elements // 2 if elements < rs.MAX_DEMAND else 10
        rest = elements - half if elements < rs.MAX_DEMAND else elements
        return rs.concat(rs.from_iterable(range(half)), rs.from_iterable(source(rest)))


class TestMerge(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        half = elements // 2 if elements < rs.MAX_DEMAND else 10
        rest = elements - half if elements < rs.MAX_DEMAND else elements
        return rs.merge(rs.from_iterable(range(half)), rs.AsyncIterablePublisher(source(rest)))


class TestFlatMap(_CorePublisher):
    def create_publisher(self, elements: int) -> rs.Publisher[Any]:
        return rs.from_iterable(source(elements)).flat_map(lambda x: rs.from_iterable([x]), concurrency=4)
