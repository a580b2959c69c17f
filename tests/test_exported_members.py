"""The public API is what DESIGN.md's contract names, exported from one __init__."""

from __future__ import annotations

import pickle

import reactive_streams as rs

OPERATORS = {
    # sources
    "defer", "empty", "error", "from_async_iterable", "from_iterable", "generate", "just", "never",
    "range", "repeat",
    # element-wise and filtering
    "append", "batch", "concat_map", "default_if_empty", "distinct_until_changed", "end_with",
    "filter", "flat_map", "map", "prepend", "scan", "skip", "skip_while", "start_with",
    "switch_if_empty", "take", "take_while", "tap",
    # aggregates
    "all", "average", "contains", "count", "element_at", "first", "last", "max", "min", "reduce",
    "some", "sum", "to_list",
    # combining, errors, composition
    "concat", "concat_with", "merge", "merge_with", "zip", "zip_with", "catch", "on_error_return", "retry",
    "compose", "pipe",
}  # fmt: skip


def test_exported_members() -> None:
    assert set(rs.__all__) == OPERATORS | {
        "MAX_DEMAND", "MISSING", "AsyncPublisherIterator", "AsyncIterablePublisher", "AsyncSubscriber",
        "BlockingIterator", "IdentityProcessor", "IllegalDemandError", "JvmError", "MapProcessor",
        "NoSuchElementError", "NullElementError", "Operator", "Processor", "Publisher",
        "ReactiveStreamsError", "SubmissionPublisher", "Subscriber", "Subscription", "SyncSubscriber",
        "aiterate", "iterate",
        # time and threads
        "Scheduler", "Cancellable", "ThreadPoolScheduler", "AsyncioScheduler", "ImmediateScheduler",
        "VirtualTimeScheduler", "default_scheduler", "subscribe_on", "publish_on",
        "interval", "timer", "delay", "delay_subscription", "timeout", "buffer", "sample",
        "throttle_first", "debounce", "MissingDemandError", "StreamTimeoutError",
        # hot sources and many subscribers
        "on_backpressure_buffer", "on_backpressure_drop", "on_backpressure_latest",
        "publish", "replay", "share", "ConnectablePublisher", "Connection",
        # watching streams (issue 47)
        "StreamState", "describe_streams",
    }  # fmt: skip
    for name in rs.__all__:
        member = getattr(rs, name)
        if callable(member) and name not in ("Operator", "Cancellable"):
            assert member.__doc__, f"{name} has no docstring"
    assert rs.MAX_DEMAND == 2**63 - 1


def test_every_fluent_method_calls_the_function_of_its_name() -> None:
    """Publisher's methods call the package's functions through the registry the operator modules
    fill (``_api`` imports none of them): each one must find its function, and each function of
    an operator on a publisher must have its method."""
    from reactive_streams import _fluent

    methods = {name for name in vars(rs.Publisher) if not name.startswith("_")} - {"subscribe"}
    registered = set(_fluent.registered())
    assert registered <= set(rs.__all__)
    assert methods <= registered
    sources = {"concat", "defer", "empty", "error", "generate", "just", "merge", "never", "range", "repeat"}
    assert registered - methods == sources | {"zip"}  # nothing registered that no method calls
    for name in methods:
        assert getattr(rs.Publisher, name).__doc__, f"Publisher.{name} has no docstring"


def test_errors_share_one_base_and_match_the_builtins_the_rules_name() -> None:
    assert issubclass(rs.IllegalDemandError, (rs.ReactiveStreamsError, ValueError))
    assert issubclass(rs.NullElementError, (rs.ReactiveStreamsError, TypeError))
    assert issubclass(rs.JvmError, rs.ReactiveStreamsError)
    assert issubclass(rs.StreamTimeoutError, (rs.ReactiveStreamsError, TimeoutError))
    assert issubclass(rs.MissingDemandError, rs.ReactiveStreamsError)


def test_jvm_error_keeps_the_java_details_as_plain_strings() -> None:
    error = rs.JvmError(
        "java.lang.IllegalStateException", "boom", "java.lang.IllegalStateException: boom\n\tat X"
    )
    assert str(error) == "java.lang.IllegalStateException: boom"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.java_class, copy.java_message, copy.java_stack) == (
        error.java_class,
        error.java_message,
        error.java_stack,
    )
    assert str(rs.JvmError("java.lang.Error", None)) == "java.lang.Error"


def test_py_typed_is_shipped() -> None:
    from importlib.resources import files

    assert files("reactive_streams").joinpath("py.typed").is_file()
