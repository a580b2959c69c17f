"""Arrow conversion is one room on each side: Python's ``reactive_streams.jvm._arrow`` is reached
only through its ``__init__``, and the Java package ``io.github.rspy.bridge.arrow`` names nothing
of ``io.github.rspy.bridge``, which uses it (so neither side can grow a circle through it)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from .conftest import ROOT

ARROW_PY = ROOT / "python" / "reactive_streams" / "jvm" / "_arrow"
ARROW_JAVA = ROOT / "jvm" / "src" / "main" / "java" / "io" / "github" / "rspy" / "bridge" / "arrow"


def _imported(path: Path) -> Iterator[str]:
    """Every name ``path`` imports, made absolute (``from ._arrow import x`` in
    ``reactive_streams/jvm/`` gives ``reactive_streams.jvm._arrow.x``)."""
    root = ROOT / "python" if ROOT / "python" in path.parents else ROOT
    package = path.relative_to(root).parent.parts
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = list(package[: len(package) - node.level + 1]) if node.level else []
            base = ".".join([*parts, node.module] if node.module else parts)
            yield from (f"{base}.{alias.name}" for alias in node.names)


def test_python_reaches_arrow_only_through_its_init() -> None:
    sources = [p for d in ("python", "tests", "benchmarks", "examples") for p in (ROOT / d).rglob("*.py")]
    private = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sources
        if ARROW_PY not in path.parents
        for name in _imported(path)
        if name.startswith("reactive_streams.jvm._arrow._")
    ]
    assert private == []
    assert "reactive_streams.jvm._arrow.rows_batch" in set(_imported(ARROW_PY.parent / "_to_jvm.py"))


def test_the_java_arrow_package_names_nothing_of_the_bridge() -> None:
    bridge = re.compile(r"\bio\.github\.rspy\.bridge\.(?!arrow\b)")
    sources = sorted(ARROW_JAVA.glob("*.java"))
    assert len(sources) > 5
    assert [f"{p.name}: {m[0]}" for p in sources for m in bridge.finditer(p.read_text())] == []
