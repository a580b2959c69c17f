"""Rows of decimals, dates and times against rows of plain values, JVM -> Python (issue 34).

Rows ``Object[]{long, BigDecimal, LocalDate, LocalDateTime}`` (the shape of a database's rows)
cross without a schema as tuples of int, ``Decimal``, ``date`` and ``datetime``; the target is
half the rate of the throughput benchmark's rows ``Object[]{long, double, 12-character
string}``, measured in the same run, on JPype and on the standalone Py4J gateway (data channel),
into a counting subscriber requesting 1,024 at a time (waiting for each, and with 4,096
outstanding). Also: the same rows from Python to the JVM (Reactor's ``count()``).

    python benchmarks/bridge_values.py [--rows N] [--repeat N] [--plain-only] [--no-write]

``--plain-only`` measures the plain rows alone (what a checkout before issue 34 can run);
``--no-write`` prints the table without writing RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
from typing import Any

from reactive_streams.jvm import Bridge

try:
    from . import _report
    from .bridge_throughput import AHEAD, QUICK_REPEAT, TEST_JARS, best, jvm_to_python, python_to_jvm
except ImportError:
    import _report  # type: ignore[no-redef]
    from bridge_throughput import AHEAD, QUICK_REPEAT, TEST_JARS, best, jvm_to_python, python_to_jvm


def _testing(bridge: Bridge) -> Any:
    return bridge.jvm.io.github.rspy.bridge.testing


def python_rows(rows: int, values: bool) -> list[tuple[Any, ...]]:
    """The benchmark's rows on the Python side: (int, Decimal, date, datetime) or (int, float, str)."""
    if not values:
        return [(index, index / 2, str(100_000_000_000 + index)) for index in range(rows)]
    start = datetime.datetime(2024, 1, 1)
    return [
        (
            index,
            decimal.Decimal(index * 1_234_567).scaleb(-2),
            datetime.date(2022, 1, 1) + datetime.timedelta(days=index % 3650),
            start + datetime.timedelta(seconds=index, microseconds=index % 1_000_000),
        )
        for index in range(rows)
    ]


def measure(name: str, bridge: Bridge, args: argparse.Namespace, table: list[dict[str, Any]]) -> None:
    testing, n, quick = _testing(bridge), args.rows, max(args.repeat, QUICK_REPEAT)
    kinds = [("long, double, str", lambda: testing.Sources.benchRows(n))]
    if not args.plain_only:
        kinds.append(("long, BigDecimal, LocalDate, LocalDateTime", lambda: testing.ValueRows.benchValues(n)))
    plain: dict[str, float] = {}

    def rows_per_s(source: Any, ahead: int) -> float:
        return best(quick, lambda: jvm_to_python(bridge, source(), n, ahead=ahead))

    for label, source in kinds:
        for ahead, how in ((1, "request(1024)"), (AHEAD, "request(1024), 4,096 outstanding")):
            rate = rows_per_s(source, ahead)
            plain.setdefault(how, rate)
            table.append(
                {
                    "backend": name,
                    "scenario": f"JVM → Python rows ({label}) as tuples, {how}",
                    "rows/s": rate,
                    "of plain rows": f"{rate / plain[how]:.0%}",
                }
            )
    for values in (False, True)[: 1 if args.plain_only else 2]:
        rows = python_rows(n, values)
        rate = best(args.repeat, lambda rows=rows: python_to_jvm(bridge, rows))
        label = "int, Decimal, date, datetime" if values else "int, float, str"
        plain.setdefault("to_jvm", rate)
        table.append(
            {
                "backend": name,
                "scenario": f"Python → JVM tuples ({label}) → count()",
                "rows/s": rate,
                "of plain rows": f"{rate / plain['to_jvm']:.0%}",
            }
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500_000, help="rows per run")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--plain-only", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    table: list[dict[str, Any]] = []
    with Bridge.jpype(TEST_JARS) as bridge:
        measure("jpype", bridge, args, table)
    with Bridge.py4j(TEST_JARS) as bridge:
        measure("py4j", bridge, args, table)
    notes = [
        f"{args.rows:,} rows per run, best of {max(args.repeat, QUICK_REPEAT)} (Python → JVM: of "
        f"{args.repeat}) after 6 unmeasured runs, one process; target: rows of decimals, dates and "
        "times at ≥ 50% of the plain rows' rate, JVM → Python.",
    ]
    if args.no_write:
        for row in table:
            print(" | ".join(_report._cell(v) for v in row.values()))
        return
    _report.write("values", "Values by default: decimals, dates and times (issue 34)", table, notes, {})


if __name__ == "__main__":
    main()
