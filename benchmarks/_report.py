"""Shared by the benchmarks: machine facts, and writing results to a JSON file and to one
section of RESULTS.md (each benchmark owns the section between its markers)."""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS_MD = HERE / "RESULTS.md"
RESULTS_DIR = HERE / "results"
HEADER = "# Benchmark results\n\nWritten by the scripts in this folder; each owns one section.\n"


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr
        java = java.splitlines()[0] if java else "none"
    except (OSError, subprocess.SubprocessError):
        java = "none"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "java": java,
        "system": f"{platform.system()} {platform.release()}",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write(name: str, title: str, rows: list[dict[str, Any]], notes: list[str], extra: dict[str, Any]) -> None:
    """Write ``results/<name>.json`` and the ``name`` section of RESULTS.md."""
    info = machine()
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"{name}.json").write_text(
        json.dumps({"machine": info, "rows": rows, "extra": extra}, indent=2) + "\n"
    )
    columns = list(rows[0])
    lines = [
        f"## {title}",
        "",
        f"Measured {info['date']} on {info['cpu']} ({info['cores']} cores), Python {info['python']}, "
        f"{info['java']}, {info['system']}.",
        "",
        "| " + " | ".join(columns) + " |",
        "| " + " | ".join("---" for _ in columns) + " |",
    ]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row[c]) for c in columns) + " |")
    lines += [""] + [f"- {note}" for note in notes]
    section = "\n".join(lines).rstrip() + "\n"
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = (
        RESULTS_MD.read_text()
        if RESULTS_MD.exists()
        else "# Benchmark results\n\nWritten by the scripts in this folder; each owns one section.\n"
    )
    block = f"{start}\n{section}{end}"
    if start in text:
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS_MD.write_text(text)
    print(section)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
