"""Exceptions of the bridge, and the conversions of exceptions across the boundary."""

from __future__ import annotations

import traceback
from typing import Any

from .._errors import JvmError, NullElementError, ReactiveStreamsError

__all__ = ["BridgeClosedError", "JvmTypeError", "JvmValueError", "error_from_java", "python_error_parts"]


class BridgeClosedError(ReactiveStreamsError):
    """The bridge was closed, or its JVM died, while a stream was live (or before it started)."""


class JvmValueError(JvmError, ValueError):
    """A ``java.lang.IllegalArgumentException`` (what §3.9 asks a JVM publisher to signal)."""


class JvmTypeError(JvmError, TypeError):
    """A ``java.lang.NullPointerException`` (what §1.9 and §2.13 ask for a null)."""


_BY_CLASS: dict[str, type[JvmError]] = {
    "java.lang.IllegalArgumentException": JvmValueError,
    "java.lang.NullPointerException": JvmTypeError,
}


def error_from_java(java_class: Any, message: Any, stack: Any, throwable: Any = None) -> JvmError:
    """A Java exception as the Python exception to raise or signal: a `JvmError` carrying its
    class name, message and stack as plain strings, of the subclass that also matches the
    Python builtin (`JvmValueError` for ``IllegalArgumentException``, `JvmTypeError` for
    ``NullPointerException``).

    Args:
        java_class: the exception's Java class name (``java.lang.IllegalStateException``).
        message: its message, or None.
        stack: its stack, as ``printStackTrace`` prints it (or "").
        throwable: the Java exception itself, if any: kept as ``java_throwable`` (a pickled
            copy of the error leaves it out), so that the same exception can go back to the JVM.
    """
    name = str(java_class)
    error = _BY_CLASS.get(name, JvmError)(name, None if message is None else str(message), str(stack or ""))
    error.java_throwable = throwable  # type: ignore[attr-defined]
    return error


def python_error_parts(error: BaseException) -> tuple[str, str, str, str, Any]:
    """(kind, type name, message, traceback, original Java exception or None) for ``pushError``.

    ``kind`` tells Java which exception to make: "value" (``IllegalArgumentException``, as §3.9
    asks), "null" (``NullPointerException``, §2.13) or "other" (``PythonException``).
    """
    original = getattr(error, "java_throwable", None) if isinstance(error, JvmError) else None
    if isinstance(error, NullElementError):
        kind = "null"
    elif isinstance(error, ValueError):
        kind = "value"
    else:
        kind = "other"
    cls = type(error)
    name = f"{cls.__module__}.{cls.__qualname__}"
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return kind, name, str(error), text, original
