"""Reactive Streams for Python: the specification's four interfaces with every rule kept,
reference implementations, backpressure-aware operators, blocking and asyncio iteration,
and (in `reactive_streams.jvm`) a bridge to the JVM's ``org.reactivestreams``.

Rules are cited as in the specification (§1.1 … §4.2); see ``README.md``. Use the package as
``import reactive_streams as rs``: some operators are named as builtins (``rs.map``,
``rs.filter``, ``rs.range``, ``rs.sum``, ``rs.min``, ``rs.max``, ``rs.all``, ``rs.zip``), as in
``rs``'s reference, and a star import would hide the builtins.
"""

from ._aggregates import average as average
from ._aggregates import count as count
from ._aggregates import last as last
from ._aggregates import max as max
from ._aggregates import min as min
from ._aggregates import reduce as reduce
from ._aggregates import sum as sum
from ._aggregates import to_list as to_list
from ._aiterate import AsyncPublisherIterator as AsyncPublisherIterator
from ._aiterate import aiterate as aiterate
from ._aiterate import from_async_iterable as from_async_iterable
from ._api import ConnectablePublisher as ConnectablePublisher
from ._api import Connection as Connection
from ._api import Processor as Processor
from ._api import Publisher as Publisher
from ._api import Subscriber as Subscriber
from ._api import Subscription as Subscription
from ._async_publisher import AsyncIterablePublisher as AsyncIterablePublisher
from ._clock import interval as interval
from ._clock import timer as timer
from ._compose import compose as compose
from ._compose import pipe as pipe
from ._counting import batch as batch
from ._counting import skip as skip
from ._counting import take as take
from ._demand import MAX_DEMAND as MAX_DEMAND
from ._elementwise import distinct_until_changed as distinct_until_changed
from ._elementwise import filter as filter
from ._elementwise import map as map
from ._elementwise import scan as scan
from ._elementwise import skip_while as skip_while
from ._elementwise import take_while as take_while
from ._errors import IllegalDemandError as IllegalDemandError
from ._errors import JvmError as JvmError
from ._errors import MissingDemandError as MissingDemandError
from ._errors import NoSuchElementError as NoSuchElementError
from ._errors import NullElementError as NullElementError
from ._errors import ReactiveStreamsError as ReactiveStreamsError
from ._errors import StreamTimeoutError as StreamTimeoutError
from ._flat_map import concat as concat
from ._flat_map import concat_map as concat_map
from ._flat_map import concat_with as concat_with
from ._flat_map import flat_map as flat_map
from ._flat_map import merge as merge
from ._flat_map import merge_with as merge_with
from ._fluent import MISSING as MISSING
from ._gauges import StreamState as StreamState
from ._gauges import describe_streams as describe_streams
from ._iterable import from_iterable as from_iterable
from ._iterate import BlockingIterator as BlockingIterator
from ._iterate import iterate as iterate
from ._later import delay_subscription as delay_subscription
from ._lookups import all as all
from ._lookups import contains as contains
from ._lookups import element_at as element_at
from ._lookups import first as first
from ._lookups import some as some
from ._multicast import publish as publish
from ._multicast import replay as replay
from ._multicast import share as share
from ._operator_types import Operator as Operator
from ._overflow import on_backpressure_buffer as on_backpressure_buffer
from ._overflow import on_backpressure_drop as on_backpressure_drop
from ._overflow import on_backpressure_latest as on_backpressure_latest
from ._processor import IdentityProcessor as IdentityProcessor
from ._processor import MapProcessor as MapProcessor
from ._recovery import catch as catch
from ._recovery import on_error_return as on_error_return
from ._recovery import retry as retry
from ._schedulers import AsyncioScheduler as AsyncioScheduler
from ._schedulers import Cancellable as Cancellable
from ._schedulers import ImmediateScheduler as ImmediateScheduler
from ._schedulers import Scheduler as Scheduler
from ._schedulers import ThreadPoolScheduler as ThreadPoolScheduler
from ._schedulers import VirtualTimeScheduler as VirtualTimeScheduler
from ._schedulers import default_scheduler as default_scheduler
from ._scheduling import publish_on as publish_on
from ._scheduling import subscribe_on as subscribe_on
from ._sequence import append as append
from ._sequence import default_if_empty as default_if_empty
from ._sequence import end_with as end_with
from ._sequence import prepend as prepend
from ._sequence import start_with as start_with
from ._sequence import switch_if_empty as switch_if_empty
from ._sources import defer as defer
from ._sources import empty as empty
from ._sources import error as error
from ._sources import generate as generate
from ._sources import just as just
from ._sources import never as never
from ._sources import range as range
from ._sources import repeat as repeat
from ._submission import SubmissionPublisher as SubmissionPublisher
from ._subscribers import AsyncSubscriber as AsyncSubscriber
from ._subscribers import SyncSubscriber as SyncSubscriber
from ._tap import tap as tap
from ._timed import delay as delay
from ._timed import timeout as timeout
from ._windows import buffer as buffer
from ._windows import debounce as debounce
from ._windows import sample as sample
from ._windows import throttle_first as throttle_first
from ._zip import zip as zip
from ._zip import zip_with as zip_with

__all__ = [
    "MAX_DEMAND",
    "MISSING",
    "AsyncIterablePublisher",
    "AsyncPublisherIterator",
    "AsyncSubscriber",
    "AsyncioScheduler",
    "BlockingIterator",
    "Cancellable",
    "ConnectablePublisher",
    "Connection",
    "IdentityProcessor",
    "IllegalDemandError",
    "ImmediateScheduler",
    "JvmError",
    "MapProcessor",
    "MissingDemandError",
    "NoSuchElementError",
    "NullElementError",
    "Operator",
    "Processor",
    "Publisher",
    "ReactiveStreamsError",
    "Scheduler",
    "StreamState",
    "StreamTimeoutError",
    "SubmissionPublisher",
    "Subscriber",
    "Subscription",
    "SyncSubscriber",
    "ThreadPoolScheduler",
    "VirtualTimeScheduler",
    "aiterate",
    "all",
    "append",
    "average",
    "batch",
    "buffer",
    "catch",
    "compose",
    "concat",
    "concat_map",
    "concat_with",
    "contains",
    "count",
    "debounce",
    "default_if_empty",
    "default_scheduler",
    "defer",
    "delay",
    "delay_subscription",
    "describe_streams",
    "distinct_until_changed",
    "element_at",
    "empty",
    "end_with",
    "error",
    "filter",
    "first",
    "flat_map",
    "from_async_iterable",
    "from_iterable",
    "generate",
    "interval",
    "iterate",
    "just",
    "last",
    "map",
    "max",
    "merge",
    "merge_with",
    "min",
    "never",
    "on_backpressure_buffer",
    "on_backpressure_drop",
    "on_backpressure_latest",
    "on_error_return",
    "pipe",
    "prepend",
    "publish",
    "publish_on",
    "range",
    "reduce",
    "repeat",
    "replay",
    "retry",
    "sample",
    "scan",
    "share",
    "skip",
    "skip_while",
    "some",
    "start_with",
    "subscribe_on",
    "sum",
    "switch_if_empty",
    "take",
    "take_while",
    "tap",
    "throttle_first",
    "timeout",
    "timer",
    "to_list",
    "zip",
    "zip_with",
]

__version__ = "0.1.0"
