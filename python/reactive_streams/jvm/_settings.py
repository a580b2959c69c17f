"""`BridgeSettings`: how a bridge batches, requests ahead and runs its drains, checked once and
owned here; the JVM side's ``BridgeRuntime`` is built from them."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_BATCH", "DEFAULT_THREADS", "BridgeSettings"]

DEFAULT_MAX_BATCH = 8192
DEFAULT_THREADS = 4


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
    """

    max_batch: int = DEFAULT_MAX_BATCH
    demand_window: int | None = None
    threads: int = DEFAULT_THREADS
    data_channel: bool = True

    def __post_init__(self) -> None:
        _check("max_batch", self.max_batch, "elements per crossing")
        if self.demand_window is None:
            object.__setattr__(self, "demand_window", self.max_batch)
        _check("demand_window", self.demand_window, "elements requested ahead per stream")
        _check("threads", self.threads, "JVM drain threads")
        if not isinstance(self.data_channel, bool):
            raise TypeError(f"data_channel must be a bool, got {self.data_channel!r}")

    @property
    def window(self) -> int:
        """`demand_window`, resolved."""
        assert self.demand_window is not None
        return self.demand_window


def _check(name: str, value: object, meaning: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1 ({meaning}), got {value!r}")
