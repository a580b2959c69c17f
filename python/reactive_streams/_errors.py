"""The library's exceptions: one base, and subclasses that also match the builtin a rule names."""

from __future__ import annotations

__all__ = [
    "IllegalDemandError",
    "JvmError",
    "MissingDemandError",
    "NoSuchElementError",
    "NullElementError",
    "ReactiveStreamsError",
    "StreamTimeoutError",
]


class ReactiveStreamsError(Exception):
    """Base of every exception this library raises or signals."""


class IllegalDemandError(ReactiveStreamsError, ValueError):
    """Signalled through ``on_error`` when ``request(n)`` is called with ``n <= 0`` (§3.9).

    It is a ``ValueError`` as well, the Python counterpart of Java's
    ``IllegalArgumentException``.
    """


class NullElementError(ReactiveStreamsError, TypeError):
    """A ``None`` subscriber, subscription or element (§1.9, §2.13).

    It is a ``TypeError`` as well, the Python counterpart of Java's ``NullPointerException``.
    """


class NoSuchElementError(ReactiveStreamsError, LookupError):
    """Signalled by an operator whose answer is an element the stream did not have: ``first``,
    ``last``, ``min``, ``max`` or ``average`` of an empty stream, ``element_at`` past its end,
    ``reduce`` of an empty stream with no initial value (each unless given a ``default``).

    It is a ``LookupError`` as well, the base of ``IndexError`` and ``KeyError`` (Java's
    ``NoSuchElementException``).
    """


class MissingDemandError(ReactiveStreamsError):
    """Signalled by a source that cannot wait (``interval``, a full ``on_backpressure_buffer``)
    when an element is due and the subscriber has asked for none: the message names what was
    lost. Apply a backpressure strategy (``on_backpressure_drop``, ``on_backpressure_latest``,
    ``on_backpressure_buffer``) to choose another policy."""


class StreamTimeoutError(ReactiveStreamsError, TimeoutError):
    """Signalled by ``timeout`` when no element came in time. It is a ``TimeoutError`` as well."""


class JvmError(ReactiveStreamsError):
    """A ``java.lang.Throwable`` that crossed the boundary into Python.

    The Java class, message and stack are copied into plain strings when the exception is
    created, so it can still be printed after its JVM or gateway has gone.

    Attributes:
        java_class: fully qualified name of the Java exception class.
        java_message: its ``getMessage()``, or ``None``.
        java_stack: its stack trace as Java prints it (``printStackTrace``).
    """

    def __init__(self, java_class: str, java_message: str | None, java_stack: str = "") -> None:
        self.java_class = java_class
        self.java_message = java_message
        self.java_stack = java_stack
        text = java_class if java_message is None else f"{java_class}: {java_message}"
        super().__init__(text)

    def __reduce__(self) -> tuple[type[JvmError], tuple[str, str | None, str]]:
        return (type(self), (self.java_class, self.java_message, self.java_stack))
