"""Run on the cluster's client host by test_tls.py, in a thin client's environment: a client the
server (or its TLS proxy) does not let in. Each of the library's calls that reach the server,
with the error's first line; and whether any of the client's publishers was ever subscribed (a
stream that opened). The outcome is a JSON line on stdout.

    python refused_script.py CONNECT_URL
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

url = sys.argv[1]
subscribed: list[str] = []


class Watched(rs.Publisher[Any]):
    """A publisher that notes being subscribed: a stream of the library's that opened."""

    def __init__(self, name: str) -> None:
        self.name = name

    def subscribe(self, subscriber: rs.Subscriber[Any]) -> None:
        subscribed.append(self.name)
        rs.from_iterable([(1, "a")]).subscribe(subscriber)


def attempt(call: Callable[[], Any]) -> dict[str, Any]:
    try:
        call()
    except Exception as exc:  # what a user sees: the class and the message's lines
        text = str(exc)
        return {"class": type(exc).__name__, "lines": len(text.splitlines()), "text": text}
    return {"class": None}


spark = SparkSession.builder.remote(url).getOrCreate()
outcome = {
    "register_publisher": attempt(lambda: rss.register_publisher(spark, "events", Watched("registered"))),
    "jvm_publisher": attempt(lambda: list(rs.iterate(rss.jvm_publisher(spark, "longs", "10")))),
    "dataframe_from_publisher": attempt(
        lambda: rss.dataframe_from_publisher(spark, Watched("dataframe"), "id long, name string").count()
    ),
}
outcome["subscribed"] = subscribed
print(json.dumps(outcome), flush=True)
# Not PySpark's exit: its atexit hook makes a call of its own (clearing the ML cache), which its
# retries repeat for some ten minutes on a handshake that fails (docs/deploy.md says so).
os._exit(0)
