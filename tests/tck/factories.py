"""Factories for the CLI tests (``python -m reactive_streams.tck tests.tck.factories:NAME``)."""

from __future__ import annotations

from typing import Any

import reactive_streams as rs

from .test_core_publishers import failed, source
from .test_verdicts import OneTooMany


def good(elements: int) -> rs.Publisher[Any]:
    return rs.from_iterable(source(elements))


good.failed = failed  # type: ignore[attr-defined]


def one_too_many(elements: int) -> rs.Publisher[Any]:
    return OneTooMany()


def not_a_publisher(elements: int) -> Any:
    return [1, 2, 3]


def limited(elements: int) -> rs.Publisher[Any]:
    """A good publisher declaring that it emits at most 2 elements, and no failed publisher."""
    return rs.from_iterable(source(elements))


limited.max_elements_from_publisher = 2  # type: ignore[attr-defined]
