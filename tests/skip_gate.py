"""Skips outside the TCK fail the run unless tests/expected_skips.json lists them (issue 48): a
skip says a check did not run, and a module-level ``importorskip`` would drop a whole module
silently if a dependency went missing. The TCK's own skips are pinned per class in
tests/tck/expected_skips.json by its plugin."""

from __future__ import annotations

import json
from pathlib import Path

EXPECTED = Path(__file__).with_name("expected_skips.json")
TCK_EXPECTED = Path(__file__).parent / "tck" / "expected_skips.json"


def expected() -> dict[str, str]:
    """Node id prefixes allowed to skip, each with why."""
    return dict(json.loads(EXPECTED.read_text()))


def tck_classes() -> set[str]:
    """The TCK verification classes (``path::Class``) whose skips its plugin pins, wherever
    they live (the Connect one is under tests/spark)."""
    return set(json.loads(TCK_EXPECTED.read_text()))


def unexpected(skips: dict[str, str], allowed: dict[str, str], tck: set[str]) -> dict[str, str]:
    """The ``skips`` (node id: reason) neither the TCK's (under tests/tck/, or of a class in
    ``tck``) nor under an ``allowed`` prefix."""
    return {
        node: why
        for node, why in sorted(skips.items())
        if not node.startswith("tests/tck/")
        and "::".join(node.split("::")[:2]) not in tck
        and not any(node.startswith(prefix) for prefix in allowed)
    }


def message(skips: dict[str, str]) -> str:
    lines = [f"{len(skips)} test(s) skipped outside the TCK that tests/expected_skips.json does not list:"]
    lines += [f"  {node}: {why}" for node, why in skips.items()]
    lines.append("Make them run, or list them there with why.")
    return "\n".join(lines)
