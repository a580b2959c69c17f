"""Append orders to the pipeline's source: ``python add_orders.py [COUNT]`` adds COUNT (default
500) lines to each partition's file in ``orders/``, continuing its ids. A run of the pipeline
reads the lines added since the last run, each exactly once."""

from __future__ import annotations

import sys
from pathlib import Path

PARTITIONS = 2


def add_orders(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for partition in range(PARTITIONS):
        file = folder / f"{partition}.csv"
        start = len(file.read_text().splitlines()) if file.exists() else 0
        with file.open("a") as out:
            for order in range(start, start + count):
                out.write(f"{order},{order % 97 * 0.25}\n")


if __name__ == "__main__":
    add_orders(Path(__file__).resolve().parent / "orders", int(sys.argv[1]) if len(sys.argv) > 1 else 500)
