"""WorkingRows, the benchmarks' producer that works for each row (issue 45): built live, in
``request`` or on Reactor's worker, its rows arrive as the same rows made beforehand."""

from __future__ import annotations

from typing import Any

import pytest

import reactive_streams as rs
from reactive_streams.jvm import Bridge

ROWS = 10


def _rows(bridge: Bridge, publisher: Any) -> list[Any]:
    return list(rs.iterate(bridge.from_jvm(publisher)))


@pytest.mark.parametrize("producer", ["sync", "publishOn"])
def test_live_rows_arrive_as_the_rows_made_first(bridge: Bridge, producer: str) -> None:
    working_rows = bridge.jvm.io.github.rspy.bridge.testing.WorkingRows
    flux = bridge.jvm.reactor.core.publisher.Flux
    made = _rows(bridge, flux.fromIterable(working_rows.made(ROWS)))
    live = working_rows.sync(ROWS) if producer == "sync" else working_rows.publishOn(ROWS, 4)
    assert _rows(bridge, live) == made
    assert [row[0] for row in made] == list(range(ROWS))
    for index, (_, amount, label, even, note) in enumerate(made):
        assert label.startswith(f"#{index:07d} ") and isinstance(amount, float) and isinstance(even, bool)
        assert (note is None) == (index % 3 == 0), made  # the nullable column's nulls arrive as None
        assert note is None or note.startswith("note ")
    assert made[7][1:3] == (3906.01, "#0000007 3,906.01")  # as the Javadoc says
