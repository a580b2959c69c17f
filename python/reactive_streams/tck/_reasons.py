"""The TCK's messages name its Java hooks (``PublisherVerification#createFailedPublisher``);
a Python user implements ``create_failed_publisher()`` or sets ``factory.failed``. These
functions name the Python hook, keeping the TCK's own name after it."""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["JAVA_HOOKS", "python_reason"]

#: The Java hooks the TCK 1.0.4's messages name, as written there, and the Python hook of each.
JAVA_HOOKS: dict[str, str] = {
    "PublisherVerification#createFailedPublisher": "create_failed_publisher",
    "`maxElementsFromPublisher()`": "max_elements_from_publisher",
    "`skipStochasticTests()`": "skip_stochastic_tests",
    "doesCoordinatedEmission()": "does_coordinated_emission",
}

# Messages about a limit the user declared, without naming the hook that declares it.
_LIMITS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"is higher than supported by given producer: -?\d+"), "max_elements_from_publisher"),
    (re.compile(r"only supports -?\d+ subscribers"), "max_supported_subscribers"),
)

_JAVA = re.compile("|".join(re.escape(name) for name in JAVA_HOOKS))


def python_reason(message: str, hook: Callable[[str], str]) -> str:
    """``message`` with each Java hook it names replaced by ``hook(python_name)`` followed by
    ``(TCK: java_name)``; a limit it reports without naming its hook gets the hook appended.

    Args:
        message: a TCK message (a skip reason, a failure).
        hook: how the user provides a Python hook: ``create_failed_publisher()`` for a
            verification class, ``factory.failed`` for the command line's factory.
    """
    translated = _JAVA.sub(lambda m: f"{hook(JAVA_HOOKS[m.group(0)])} (TCK: {m.group(0)})", message)
    for pattern, python_name in _LIMITS:
        match = pattern.search(translated)
        if match is not None:
            end = match.end()
            translated = f"{translated[:end]} (see {hook(python_name)}){translated[end:]}"
    return translated
