"""The whitebox probe and puppet, as Python sees them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._api import Subscriber, Subscription
from .._errors import JvmError
from .._rules import require_not_none

if TYPE_CHECKING:
    from ..jvm import Bridge

__all__ = ["Puppet", "WhiteboxProbe"]


@dataclass
class Puppet:
    """How the TCK drives a whitebox subscriber: ``trigger_request(n)`` must make it request at
    least ``n`` more elements, ``signal_cancel()`` must make it cancel."""

    trigger_request: Callable[[int], None]
    signal_cancel: Callable[[], None]


class _PuppetProxy:
    """Implements the runner's Java interface ``PythonPuppet``, which the TCK's whitebox probe
    calls to drive the subscriber."""

    def __init__(self, puppet: Puppet) -> None:
        self._puppet = puppet

    def triggerRequest(self, elements: int) -> None:
        self._puppet.trigger_request(int(elements))

    def signalCancel(self) -> None:
        self._puppet.signal_cancel()


class WhiteboxProbe:
    """The TCK's probe: a whitebox subscriber reports each signal it receives to it."""

    def __init__(self, java_probe: Any, bridge: Bridge) -> None:
        self._java = java_probe
        self._bridge = bridge

    def register_on_subscribe(self, puppet: Puppet) -> None:
        """Report ``on_subscribe``, with the puppet the TCK drives the subscriber by."""
        proxy = self._bridge.proxy(_PuppetProxy(puppet), "io.github.rspy.tck.PythonPuppet")
        self._java.registerOnSubscribe(proxy)

    def register_on_next(self, element: Any) -> None:
        """Report ``on_next(element)``."""
        self._java.registerOnNext(self._bridge.box(element))

    def register_on_error(self, error: BaseException) -> None:
        """Report ``on_error``; a `JvmError` goes back as the very Java exception it came from."""
        throwable = getattr(error, "java_throwable", None) if isinstance(error, JvmError) else None
        if throwable is None:
            name = f"{type(error).__module__}.{type(error).__qualname__}"
            throwable = self._bridge.jvm.io.github.rspy.bridge.PythonException(name, str(error), "")
        self._java.registerOnError(throwable)

    def register_on_complete(self) -> None:
        """Report ``on_complete``."""
        self._java.registerOnComplete()

    def wrap(
        self, subscriber: Subscriber[Any], *, report: Callable[[Any], Any] | None = None
    ) -> Subscriber[Any]:
        """``subscriber``, reporting each of its signals to this probe after it handles them;
        its puppet requests and cancels on the subscription it was given.

        Args:
            report: for elements that change form crossing the bridge (a Java row arrives as a
                tuple, a ``VectorSchemaRoot`` as a ``pyarrow.RecordBatch``), the element to
                report for each one received: the JVM object the TCK created
                (``create_element``) that it stands for, which the TCK compares with ``equals``.
                Default: the element itself.
        """
        return _ProbedSubscriber(subscriber, self, report)


class _ProbedSubscriber(Subscriber[Any]):
    def __init__(
        self, inner: Subscriber[Any], probe: WhiteboxProbe, report: Callable[[Any], Any] | None
    ) -> None:
        self._inner = inner
        self._probe = probe
        self._report = report

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "subscription", "§2.13")
        self._inner.on_subscribe(subscription)
        self._probe.register_on_subscribe(Puppet(subscription.request, subscription.cancel))

    def on_next(self, item: Any) -> None:
        require_not_none(item, "element", "§2.13")
        self._inner.on_next(item)
        self._probe.register_on_next(item if self._report is None else self._report(item))

    def on_error(self, exc: BaseException) -> None:
        require_not_none(exc, "error", "§2.13")
        self._inner.on_error(exc)
        self._probe.register_on_error(exc)

    def on_complete(self) -> None:
        self._inner.on_complete()
        self._probe.register_on_complete()
