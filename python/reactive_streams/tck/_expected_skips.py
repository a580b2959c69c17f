"""The skips each verification class is expected to have, checked in as JSON, for a project's own
suite (the plugin's opt-in ``reactive_streams_tck_expected_skips`` ini option).

The TCK reports a failing ``optional_*`` test as a skip, so a regression there shows only as one
skip more. The file maps a class's pytest node id to the names of the tests it skips, or to
``{"skips": [...], "may_skip": [...], "why": "..."}`` when some outcomes depend on timing (a
coordinated multicast processor passes §1.11's multicast tests only when the TCK's subscribers
happen to join before the elements flow).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Expected", "compare", "load", "write"]


@dataclass(frozen=True)
class Expected:
    skips: frozenset[str]
    may_skip: frozenset[str] = frozenset()
    why: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def load(path: str) -> dict[str, Expected]:
    """The file's expectations by class node id (none when the file does not exist)."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as file:
        data = json.load(file)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected {{class node id: [skipped test names]}}")
    return {key: _entry(path, key, value) for key, value in data.items()}


def _entry(path: str, key: str, value: Any) -> Expected:
    if isinstance(value, list):
        return Expected(frozenset(value))
    if isinstance(value, dict) and isinstance(value.get("skips"), list):
        rest = {k: v for k, v in value.items() if k not in ("skips", "may_skip", "why")}
        return Expected(
            frozenset(value["skips"]), frozenset(value.get("may_skip", [])), str(value.get("why", "")), rest
        )
    raise ValueError(f"{path}: {key}: a list of test names, or {{'skips': [...], 'may_skip': [...]}}")


def compare(path: str, key: str, skipped: set[str], reasons: dict[str, str]) -> str | None:
    """What is wrong with ``skipped`` (the tests a full run of class ``key`` skipped, with the
    TCK's reasons), or None when it is as expected."""
    name = os.path.basename(path)
    expected = load(path).get(key)
    if expected is None:
        entry = json.dumps({key: sorted(skipped)})
        return (
            f"{name} has no entry for {key}, which skipped {len(skipped)}: add {entry} "
            "(pytest --tck-write-expected-skips writes it)"
        )
    more = sorted(skipped - expected.skips - expected.may_skip)
    fewer = sorted(expected.skips - skipped)
    lines = []
    if more:
        lines.append(
            f"{len(more)} TCK test(s) skipped that {name} does not expect (the TCK reports a failing "
            "optional test as a skip):"
        )
        lines += [f"  {test}: {reasons.get(test, '')}" for test in more]
    if fewer:
        lines.append(
            f"{len(fewer)} TCK test(s) that {name} lists as skipped no longer skip: update the file "
            "(pytest --tck-write-expected-skips rewrites it from a full run):"
        )
        lines += [f"  {test}" for test in fewer]
    if not lines:
        return None
    return f"{key}: {len(skipped)} skipped, {len(expected.skips)} expected\n" + "\n".join(lines)


def write(path: str, observed: dict[str, list[str]]) -> None:
    """Record what the fully run classes skipped, keeping every other class's entry and each
    class's ``may_skip`` list and its reason."""
    entries: dict[str, Any] = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as file:
            entries = json.load(file)
    known = load(path)
    for key, skipped in observed.items():
        old = known.get(key)
        if old is not None and (old.may_skip or old.why or old.extra):
            entries[key] = {
                **old.extra,
                "why": old.why,
                "skips": sorted(set(skipped) - old.may_skip),
                "may_skip": sorted(old.may_skip),
            }
        else:
            entries[key] = sorted(skipped)
    with open(path, "w", encoding="utf-8") as out:
        json.dump(dict(sorted(entries.items())), out, indent=2)
        out.write("\n")
