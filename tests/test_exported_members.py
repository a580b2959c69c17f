"""The public API is what DESIGN.md's contract names, exported from one __init__."""

from __future__ import annotations

import pickle

import reactive_streams as rs


def test_exported_members() -> None:
    assert set(rs.__all__) == {
        "MAX_DEMAND", "AsyncPublisherIterator", "AsyncIterablePublisher", "AsyncSubscriber",
        "BlockingIterator", "IdentityProcessor", "IllegalDemandError", "JvmError", "MapProcessor",
        "NullElementError", "Processor", "Publisher", "ReactiveStreamsError", "SubmissionPublisher",
        "Subscriber", "Subscription", "SyncSubscriber", "aiterate", "concat", "from_async_iterable",
        "from_iterable", "iterate", "merge",
    }  # fmt: skip
    for name in rs.__all__:
        member = getattr(rs, name)
        if callable(member):
            assert member.__doc__, f"{name} has no docstring"
    assert rs.MAX_DEMAND == 2**63 - 1


def test_errors_share_one_base_and_match_the_builtins_the_rules_name() -> None:
    assert issubclass(rs.IllegalDemandError, (rs.ReactiveStreamsError, ValueError))
    assert issubclass(rs.NullElementError, (rs.ReactiveStreamsError, TypeError))
    assert issubclass(rs.JvmError, rs.ReactiveStreamsError)


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
