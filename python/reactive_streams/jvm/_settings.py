"""`BridgeSettings`: how a bridge batches, requests ahead and runs its drains, checked once and
owned here; the JVM side's ``BridgeRuntime`` is built from them."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["DEFAULT_LINGER", "DEFAULT_MAX_BATCH", "DEFAULT_THREADS", "BridgeSettings"]

DEFAULT_MAX_BATCH = 8192
DEFAULT_THREADS = 4
DEFAULT_LINGER = 0.0005  # seconds
MAX_LINGER = 1.0


@dataclass(frozen=True)
class BridgeSettings:
    """A bridge's settings, each an int >= 1 but `data_channel`.

    Attributes:
        max_batch: most elements in one crossing, either way.
        demand_window: most elements an adapter has requested upstream on its subscriber's
            behalf and not yet received; None means ``max_batch``. However large the
            subscriber's demand, no more than this is queued for it on either side.
        threads: the JVM side's drain threads, shared by all the bridge's streams. On Py4J each
            is one callback connection, served by one Python thread, so a thousand streams use
            as many threads and sockets as a few. A callback (``on_next``, ``request``) that
            blocks holds one of them while it blocks. On JPype the deliveries to Python take
            turns on one of them, and another joins while one has been stuck in Python for 20 ms.
        data_channel: on the Py4J backends, whether the bridge opens its data channel (one
            authenticated loopback socket beside Py4J for the streams' signals and batches). The
            default; False keeps everything on Py4J's calls and text protocol (about 20 MB/s),
            as before the channel existed: for comparison, or where no loopback socket may be
            opened. JPype has no channel either way.
        linger: seconds that rows from a JVM publisher emitting on a thread of its own (Reactor's
            ``publishOn``, a driver) may gather before they cross to Python, while fewer than a
            batch's worth (256) are queued and more were asked for: each crossing has a fixed
            cost on both sides, and such a producer would otherwise hand Python a few rows at a
            time. 0 to 1; 0 sends rows as they come, for the least latency. Rows emitted inside
            ``request`` (``Flux.range``, ``fromIterable``) never linger, nor do the last rows
            asked for, nor a stream's last.
    """

    max_batch: int = DEFAULT_MAX_BATCH
    demand_window: int | None = None
    threads: int = DEFAULT_THREADS
    data_channel: bool = True
    linger: float = DEFAULT_LINGER

    def __post_init__(self) -> None:
        _check("max_batch", self.max_batch, "elements per crossing")
        if self.demand_window is None:
            object.__setattr__(self, "demand_window", self.max_batch)
        _check("demand_window", self.demand_window, "elements requested ahead per stream")
        _check("threads", self.threads, "JVM drain threads")
        if not isinstance(self.data_channel, bool):
            raise TypeError(f"data_channel must be a bool, got {self.data_channel!r}")
        linger = self.linger
        if isinstance(linger, bool) or not isinstance(linger, (int, float)):
            raise TypeError(f"linger must be a number of seconds, got {linger!r}")
        if not (math.isfinite(linger) and 0 <= linger <= MAX_LINGER):
            meaning = "how long rows may wait to cross"
            raise ValueError(f"linger must be 0 to {MAX_LINGER:g} s ({meaning}), got {linger!r}")

    @property
    def linger_micros(self) -> int:
        """`linger` in whole microseconds, as the JVM side takes it (at least 1 when not 0)."""
        return max(1, round(self.linger * 1e6)) if self.linger else 0

    @property
    def window(self) -> int:
        """`demand_window`, resolved."""
        assert self.demand_window is not None
        return self.demand_window


def _check(name: str, value: object, meaning: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1 ({meaning}), got {value!r}")
