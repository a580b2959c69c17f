"""Reactive Streams for Python: the specification's four interfaces with every rule kept,
reference implementations, backpressure-aware operators, blocking and asyncio iteration,
and (in `reactive_streams.jvm`) a bridge to the JVM's ``org.reactivestreams``.

Rules are cited as in the specification (§1.1 … §4.2); see ``README.md``.
"""

from ._aiterate import AsyncPublisherIterator as AsyncPublisherIterator
from ._aiterate import aiterate as aiterate
from ._aiterate import from_async_iterable as from_async_iterable
from ._api import Processor as Processor
from ._api import Publisher as Publisher
from ._api import Subscriber as Subscriber
from ._api import Subscription as Subscription
from ._async_publisher import AsyncIterablePublisher as AsyncIterablePublisher
from ._demand import MAX_DEMAND as MAX_DEMAND
from ._errors import IllegalDemandError as IllegalDemandError
from ._errors import JvmError as JvmError
from ._errors import NullElementError as NullElementError
from ._errors import ReactiveStreamsError as ReactiveStreamsError
from ._flat_map import concat as concat
from ._flat_map import merge as merge
from ._iterable import from_iterable as from_iterable
from ._iterate import BlockingIterator as BlockingIterator
from ._iterate import iterate as iterate
from ._processor import IdentityProcessor as IdentityProcessor
from ._processor import MapProcessor as MapProcessor
from ._submission import SubmissionPublisher as SubmissionPublisher
from ._subscribers import AsyncSubscriber as AsyncSubscriber
from ._subscribers import SyncSubscriber as SyncSubscriber

__all__ = [
    "MAX_DEMAND",
    "AsyncIterablePublisher",
    "AsyncPublisherIterator",
    "AsyncSubscriber",
    "BlockingIterator",
    "IdentityProcessor",
    "IllegalDemandError",
    "JvmError",
    "MapProcessor",
    "NullElementError",
    "Processor",
    "Publisher",
    "ReactiveStreamsError",
    "SubmissionPublisher",
    "Subscriber",
    "Subscription",
    "SyncSubscriber",
    "aiterate",
    "concat",
    "from_async_iterable",
    "from_iterable",
    "iterate",
    "merge",
]

__version__ = "0.1.0"
