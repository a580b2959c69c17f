"""The verification base classes, named as upstream's, with snake_case factory methods."""

from __future__ import annotations

from typing import Any, ClassVar

from .._api import Processor, Publisher, Subscriber
from .._demand import MAX_DEMAND
from ._probe import WhiteboxProbe

__all__ = [
    "FlowPublisherVerification",
    "FlowSubscriberBlackboxVerification",
    "FlowSubscriberWhiteboxVerification",
    "IdentityFlowProcessorVerification",
    "IdentityProcessorVerification",
    "PublisherVerification",
    "SubscriberBlackboxVerification",
    "SubscriberWhiteboxVerification",
    "Verification",
]

#: Default TestEnvironment timeouts (ms) by backend. The TCK's own default (100 ms) is too short
#: once signals hop between threads and across the boundary; Py4J adds a socket round trip.
DEFAULT_TIMEOUTS: dict[str, int] = {"jpype": 1000, "py4j": 2000, "spark": 2000}


class Verification:
    """What every verification class shares: its kind, the backend it runs on, and the TCK's
    ``TestEnvironment`` timeouts, all settable as class attributes.

    Attributes:
        backend: ``"jpype"`` (an in-process JVM), ``"py4j"`` (a standalone gateway JVM) or
            ``"spark"`` (the active SparkSession's gateway, built with
            ``rss.configure(builder, tck_classpath())``); ``None``: ``$RS_TCK_BACKEND`` or jpype.
        timeout_ms: how long the TCK waits for each expected signal; ``None``: 1000 on JPype,
            2000 on Py4J and Spark. The poll timeout is the same (TCK 1.0.4's ``expectError``
            waits only one poll interval, so a shorter one fails slow errors).
        no_signals_timeout_ms: how long the TCK waits to see that nothing arrives (each
            ``expectNone`` sleeps this long, so it sets the run time).
        gc_timeout_ms: how long §3.13's test waits before it checks for the dropped subscriber.
        flow: run the ``java.util.concurrent.Flow`` variant of the verification.
        close_elements: the publisher's elements are resources its Java subscriber owns and must
            close, as the Arrow roots a ``pyarrow.RecordBatch`` becomes in Java: the TCK's
            subscribers keep what they receive and close nothing, so with this set each element
            that is ``AutoCloseable`` is closed for them when the test that received it is over
            (publisher verifications).
    """

    kind: ClassVar[str] = ""
    #: The bridge the verification runs on; set by the runner before any factory method is
    #: called, for factories that build on JVM objects (``self.bridge.from_jvm(...)``).
    bridge: Any = None
    flow: ClassVar[bool] = False
    backend: ClassVar[str | None] = None
    timeout_ms: ClassVar[int | None] = None
    no_signals_timeout_ms: ClassVar[int] = 100
    gc_timeout_ms: ClassVar[int] = 300
    close_elements: ClassVar[bool] = False

    def create_element(self, element: int) -> Any:
        """The element the TCK's helper publishers send for index ``element`` (subscriber and
        processor verifications); distinct and comparable by equality. Default: the int."""
        return element

    def max_elements_from_publisher(self) -> int:
        """The most elements the publisher can emit; tests that need more are skipped by the
        TCK, and ``2**63-1`` means it never completes. Default ``2**63-2`` (no limit)."""
        return MAX_DEMAND - 1

    def bounded_depth_of_on_next_and_request_recursion(self) -> int:
        """How deep ``request`` inside ``on_next`` may recurse (§3.3). Default 1."""
        return 1

    def skip_stochastic_tests(self) -> bool:
        """Whether to skip the TCK's stochastic test (§1.3, 100 runs). Default False."""
        return False

    def after_run(self) -> None:
        """Checks of your own once the TCK has run every test of the class, with `bridge` still
        set: what the TCK cannot see, such as an Arrow allocator back at 0 bytes. Overriding it
        adds one item to the class, ``after_run``, which fails with what this raises (an
        ``AssertionError`` from ``assert``). Default: nothing, and no item."""

    def settings(self, backend: str) -> str:
        timeout = self.timeout_ms or DEFAULT_TIMEOUTS.get(backend, 1000)
        values: dict[str, Any] = {
            "timeout": timeout,
            "pollTimeout": timeout,
            "noSignalsTimeout": self.no_signals_timeout_ms,
            "gcTimeout": self.gc_timeout_ms,
            "maxElements": self.max_elements_from_publisher(),
            "boundedDepth": self.bounded_depth_of_on_next_and_request_recursion(),
            "skipStochastic": str(bool(self.skip_stochastic_tests())).lower(),
            "closeElements": str(bool(self.close_elements)).lower(),
        }
        values.update(self._extra_settings())
        return ";".join(f"{key}={value}" for key, value in values.items())

    def _extra_settings(self) -> dict[str, Any]:
        return {}

    def _hook(self, name: str) -> str:
        """How the user provides the hook ``name`` (a method of this class), for messages."""
        return f"{name}()"


class PublisherVerification(Verification):
    """Upstream's ``PublisherVerification``: subclass it and implement `create_publisher`."""

    kind = "publisher"

    def create_publisher(self, elements: int) -> Publisher[Any]:
        """A publisher that emits exactly ``elements`` elements then completes (``2**63-1``:
        never completes)."""
        raise NotImplementedError

    def create_failed_publisher(self) -> Publisher[Any] | None:
        """A publisher that signals ``on_error`` after ``on_subscribe``; ``None`` (the default)
        makes the TCK skip the two tests that need one."""
        return None


class SubscriberWhiteboxVerification(Verification):
    """Upstream's ``SubscriberWhiteboxVerification``: implement `create_subscriber`, whose
    subscriber reports its signals to the probe (``probe.wrap(subscriber)`` does it for you)."""

    kind = "whitebox"

    def create_subscriber(self, probe: WhiteboxProbe) -> Subscriber[Any]:
        raise NotImplementedError


class SubscriberBlackboxVerification(Verification):
    """Upstream's ``SubscriberBlackboxVerification``: implement `create_subscriber`."""

    kind = "blackbox"

    def create_subscriber(self) -> Subscriber[Any]:
        raise NotImplementedError

    def trigger_request(self, subscriber: Subscriber[Any]) -> None:
        """Nudge a subscriber that requests only when told to. Default: nothing."""


class IdentityProcessorVerification(Verification):
    """Upstream's ``IdentityProcessorVerification``: implement `create_identity_processor`.

    Attributes:
        processor_buffer_size: the buffer the TCK asks the processor to have (upstream's 16).
    """

    kind = "processor"
    processor_buffer_size: ClassVar[int] = 16

    def create_identity_processor(self, buffer_size: int) -> Processor[Any, Any]:
        raise NotImplementedError

    def create_failed_publisher(self) -> Publisher[Any] | None:
        """As `PublisherVerification.create_failed_publisher`."""
        return None

    def max_supported_subscribers(self) -> int:
        """How many subscribers the processor supports at once; below 2 the TCK skips its two
        multi-subscriber tests. Default: unbounded."""
        return MAX_DEMAND

    def does_coordinated_emission(self) -> bool:
        """Whether the processor emits only when every subscriber has requested. Default False."""
        return False

    def _extra_settings(self) -> dict[str, Any]:
        return {
            "bufferSize": self.processor_buffer_size,
            "maxSubscribers": self.max_supported_subscribers(),
            "coordinatedEmission": str(bool(self.does_coordinated_emission())).lower(),
        }


class FlowPublisherVerification(PublisherVerification):
    """Upstream's ``FlowPublisherVerification``: the publisher, seen as a ``Flow.Publisher``."""

    flow = True


class FlowSubscriberWhiteboxVerification(SubscriberWhiteboxVerification):
    """Upstream's ``FlowSubscriberWhiteboxVerification``."""

    flow = True


class FlowSubscriberBlackboxVerification(SubscriberBlackboxVerification):
    """Upstream's ``FlowSubscriberBlackboxVerification``."""

    flow = True


class IdentityFlowProcessorVerification(IdentityProcessorVerification):
    """Upstream's ``IdentityFlowProcessorVerification``."""

    flow = True


BASES = frozenset(
    {
        Verification,
        PublisherVerification,
        SubscriberWhiteboxVerification,
        SubscriberBlackboxVerification,
        IdentityProcessorVerification,
        FlowPublisherVerification,
        FlowSubscriberWhiteboxVerification,
        FlowSubscriberBlackboxVerification,
        IdentityFlowProcessorVerification,
    }
)
