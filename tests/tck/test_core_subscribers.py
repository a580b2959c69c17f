"""The TCK judges the reference subscribers (seen from Java through ``subscriber_to_jvm``) and
processors (``processor_to_jvm``)."""

from __future__ import annotations

from typing import Any

import reactive_streams as rs
from reactive_streams.tck import (
    IdentityFlowProcessorVerification,
    IdentityProcessorVerification,
    SubscriberBlackboxVerification,
    SubscriberWhiteboxVerification,
    WhiteboxProbe,
)

from .test_core_publishers import failed


class Keep(rs.SyncSubscriber[Any]):
    def when_next(self, item: Any) -> bool:
        return True

    def when_error(self, exc: BaseException) -> None:
        pass  # the TCK sends errors on purpose, and leaves streams open until the bridge closes


class AsyncKeep(rs.AsyncSubscriber[Any]):
    def when_next(self, item: Any) -> bool:
        return True

    def when_error(self, exc: BaseException) -> None:
        pass


class TestSyncSubscriberWhitebox(SubscriberWhiteboxVerification):
    def create_subscriber(self, probe: WhiteboxProbe) -> rs.Subscriber[Any]:
        return probe.wrap(Keep(batch=4))


class TestSyncSubscriberBlackbox(SubscriberBlackboxVerification):
    def create_subscriber(self) -> rs.Subscriber[Any]:
        return Keep(batch=4)


class TestAsyncSubscriberWhitebox(SubscriberWhiteboxVerification):
    def create_subscriber(self, probe: WhiteboxProbe) -> rs.Subscriber[Any]:
        return probe.wrap(AsyncKeep(batch=4))


class TestAsyncSubscriberBlackbox(SubscriberBlackboxVerification):
    def create_subscriber(self) -> rs.Subscriber[Any]:
        return AsyncKeep(batch=4)


class TestIdentityProcessor(IdentityProcessorVerification):
    def does_coordinated_emission(self) -> bool:
        return True  # upstream is asked for what every subscriber can take: the least demand

    def create_identity_processor(self, buffer_size: int) -> rs.Processor[Any, Any]:
        return rs.IdentityProcessor()

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        return failed()


class TestIdentityFlowProcessor(IdentityFlowProcessorVerification):
    def does_coordinated_emission(self) -> bool:
        return True

    def create_identity_processor(self, buffer_size: int) -> rs.Processor[Any, Any]:
        return rs.IdentityProcessor()

    def create_failed_publisher(self) -> rs.Publisher[Any]:
        return failed()
