"""The TCK for anyone's factory, from a shell:

    python -m reactive_streams.tck package.module:factory --kind publisher|whitebox|blackbox|processor
           [--backend jpype|py4j] [--flow] [--junit-xml FILE] [--timeout-ms N] [--tests NAME,...]
    python -m reactive_streams.tck --list-tests --kind publisher

`FACTORY_HELP` gives the factory's signature for each kind and its optional hooks (``--help``
prints it). Prints a table (rule, test, outcome, reason) and a summary line; exits 1 when any
test fails, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import importlib
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from typing import Any

from .._errors import ReactiveStreamsError
from ._names import TEST_NAMES, rule_of
from ._run import BridgePool, TckRun, run_verification
from ._verification import (
    IdentityProcessorVerification,
    PublisherVerification,
    SubscriberBlackboxVerification,
    SubscriberWhiteboxVerification,
    Verification,
)


def load_factory(spec: str) -> Callable[..., Any]:
    """``package.module:name`` -> the object (dots after the colon walk attributes)."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ReactiveStreamsError(f"expected module:factory, got {spec!r}")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ReactiveStreamsError(f"cannot import {module_name!r}: {exc}") from exc
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ReactiveStreamsError(f"{module_name!r} has no {attribute!r}") from None
    if not callable(target):
        raise ReactiveStreamsError(f"{spec} is not callable")
    return target  # type: ignore[no-any-return]


KINDS = ("publisher", "whitebox", "blackbox", "processor")

FACTORY_HELP = """\
the factory, by --kind (module:factory names any callable; dots after the colon walk
attributes, as in mypkg.tck:Factories.numbers):
  publisher  factory(elements: int) -> Publisher
               exactly `elements` items, then on_complete (2**63-1: never completes)
  whitebox   factory(probe: WhiteboxProbe) -> Subscriber
               one that reports its signals to the probe: return probe.wrap(subscriber)
  blackbox   factory() -> Subscriber
  processor  factory(buffer_size: int) -> Processor
               an identity processor: it passes on what it receives

optional hooks: attributes of the factory, used when present, named as the methods of the
pytest classes (reactive_streams.tck.PublisherVerification & co.) except `failed`:
  factory.failed() -> Publisher        publisher, processor: a publisher that signals
                                       on_error after on_subscribe (without it, 2 tests skip)
  factory.create_element(i) -> item    whitebox, blackbox, processor (default: i itself)
  factory.trigger_request(subscriber)  blackbox: make the subscriber request more
 and limits, each a value or a function of no argument returning it:
  factory.max_elements_from_publisher  publisher, processor: int (default: no limit)
  factory.skip_stochastic_tests        publisher, processor: bool
  factory.bounded_depth_of_on_next_and_request_recursion   publisher, processor: int
  factory.max_supported_subscribers    processor: int
  factory.does_coordinated_emission    processor: bool

choosing tests: --tests takes the upstream TCK's test names, comma-separated, each exact
or a glob (--tests 'required_spec309_*,*spec317*'); --list-tests --kind K prints them.

example, mypkg/tck.py:
  import reactive_streams as rs

  class Unreadable:
      def __iter__(self):
          raise OSError("no data")  # so from_iterable signals on_error at once

  def numbers(elements):
      return rs.from_iterable(range(elements))

  numbers.failed = lambda: rs.from_iterable(Unreadable())

  $ python -m reactive_streams.tck mypkg.tck:numbers --kind publisher --junit-xml tck.xml
"""

_BASES: dict[str, type[Verification]] = {
    "publisher": PublisherVerification,
    "whitebox": SubscriberWhiteboxVerification,
    "blackbox": SubscriberBlackboxVerification,
    "processor": IdentityProcessorVerification,
}
# Optional hooks read from the factory's attributes: settings (a value, or a function of no
# argument returning one) and calls (functions taking the hook's arguments).
_SETTINGS = (
    "max_elements_from_publisher",
    "skip_stochastic_tests",
    "bounded_depth_of_on_next_and_request_recursion",
    "max_supported_subscribers",
    "does_coordinated_emission",
)
_CALLS = ("create_element", "trigger_request")
_FAILED_KINDS = ("publisher", "processor")


def verification_for(
    kind: str, factory: Callable[..., Any], flow: bool, timeout_ms: int | None
) -> Verification:
    """A verification instance whose factory method calls ``factory``, and whose optional hooks
    are ``factory``'s attributes of the same names (``factory.failed`` for
    ``create_failed_publisher``)."""
    base = _BASES[kind]
    namespace: dict[str, Any] = {"flow": flow, "timeout_ms": timeout_ms, "_hook": _factory_hook}
    if kind == "publisher":
        namespace["create_publisher"] = lambda self, elements: factory(elements)
    elif kind == "whitebox":
        namespace["create_subscriber"] = lambda self, probe: factory(probe)
    elif kind == "blackbox":
        namespace["create_subscriber"] = lambda self: factory()
    else:
        namespace["create_identity_processor"] = lambda self, size: factory(size)
    failed = getattr(factory, "failed", None)
    if kind in _FAILED_KINDS and failed is not None:
        namespace["create_failed_publisher"] = lambda self: failed()
    for name in _SETTINGS:
        if hasattr(base, name) and hasattr(factory, name):
            namespace[name] = _setting(getattr(factory, name))
    for name in _CALLS:
        if hasattr(base, name) and hasattr(factory, name):
            namespace[name] = _call(getattr(factory, name))
    name = getattr(factory, "__qualname__", type(factory).__name__)
    return type(name, (base,), namespace)()  # type: ignore[no-any-return]


def _setting(value: Any) -> Callable[[Any], Any]:
    return lambda self: value() if callable(value) else value


def _call(function: Callable[..., Any]) -> Callable[..., Any]:
    return lambda self, *args: function(*args)


def _factory_hook(self: Verification, name: str) -> str:
    """The factory's attribute for the verification's hook ``name``, for messages."""
    return "factory.failed" if name == "create_failed_publisher" else f"factory.{name}"


def select_tests(kind: str, patterns: str) -> list[str]:
    """The upstream tests of ``kind`` that ``patterns`` (comma-separated exact names or globs)
    name, in the TCK's order; ``[]`` for all. A pattern that matches nothing is an error that
    lists the close names."""
    names = TEST_NAMES[kind]
    chosen: set[str] = set()
    for pattern in (p.strip() for p in patterns.split(",")):
        if not pattern:
            continue
        matches = [n for n in names if n == pattern or fnmatch.fnmatchcase(n, pattern)]
        if not matches:
            raise ReactiveStreamsError(_no_such_test(kind, pattern))
        chosen.update(matches)
    return [n for n in names if n in chosen]


def _no_such_test(kind: str, pattern: str) -> str:
    names = TEST_NAMES[kind]
    needle = pattern.strip("*").lower()
    close = [n for n in names if needle and needle in n.lower()]
    close += [n for n in difflib.get_close_matches(pattern, names, n=5, cutoff=0.6) if n not in close]
    lines = [f"no {kind} test is named {pattern!r} (--tests takes exact upstream names, or globs)"]
    if close:
        lines.append("did you mean:")
        lines += [f"  {n}" for n in close[:10]]
        if needle and needle in close[0].lower():
            lines.append(f"or all of them: --tests '*{needle}*'")
    lines.append(f"all {len(names)} {kind} tests: --list-tests --kind {kind}")
    return "\n".join(lines)


def print_test_names(kind: str, out: Any = sys.stdout) -> None:
    for name in TEST_NAMES[kind]:
        out.write(f"{rule_of(name) or '-':<6} {name}\n")


def print_table(run: TckRun, out: Any = sys.stdout) -> None:
    rows = [(r.rule or "-", r.name, r.outcome, r.reason) for r in run.results]
    widths = [max(len(row[i]) for row in [("rule", "test", "outcome", "reason"), *rows]) for i in range(3)]
    header = ("rule", "test", "outcome", "reason")
    for row in [header, *rows]:
        out.write(
            f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:<{widths[2]}}  {row[3]}".rstrip() + "\n"
        )
    out.write(summary(run) + "\n")


def summary(run: TckRun) -> str:
    failed = run.count("failed") + run.count("config-failed")
    verdict = "FAILED" if failed else "passed"
    flow = " (Flow)" if run.flow else ""
    return (
        f"{verdict}: {run.verification}, {run.kind}{flow} verification on {run.backend}: "
        f"{run.count('passed')} passed, {failed} failed, {run.count('skipped')} skipped "
        f"in {run.seconds:.1f} s"
    )


def write_junit_xml(run: TckRun, path: str, suite_name: str) -> None:
    failures = run.count("failed") + run.count("config-failed")
    suite = ET.Element(
        "testsuite",
        name=suite_name,
        tests=str(len(run.results)),
        failures=str(failures),
        skipped=str(run.count("skipped")),
        errors="0",
        time=f"{run.seconds:.3f}",
    )
    for result in run.results:
        case = ET.SubElement(
            suite, "testcase", classname=suite_name, name=result.name, time=f"{result.millis / 1000:.3f}"
        )
        if result.failed:
            failure = ET.SubElement(case, "failure", message=result.details, type=result.outcome)
            failure.text = result.stack
        elif result.outcome == "skipped":
            ET.SubElement(case, "skipped", message=result.details)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def _positive_millis(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of milliseconds: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(
            f"must be a positive number of milliseconds, not {value} (leave it out for the default: "
            "1000 on jpype, 2000 on py4j)"
        )
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reactive_streams.tck",
        description="Run the upstream Reactive Streams TCK (1.0.4) against a Python factory. Exit "
        "status: 0 when no test fails, 1 when one does, 2 on bad arguments.",
        epilog=FACTORY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("factory", nargs="?", help="module:factory (see below)")
    parser.add_argument("--kind", required=True, choices=KINDS, help="what the factory makes")
    parser.add_argument("--backend", default="jpype", choices=["jpype", "py4j"])
    parser.add_argument("--flow", action="store_true", help="run the java.util.concurrent.Flow variant")
    parser.add_argument("--junit-xml", metavar="FILE", help="also write the results as JUnit XML")
    parser.add_argument(
        "--timeout-ms",
        type=_positive_millis,
        default=None,
        metavar="N",
        help="how long the TCK waits for each expected signal (default: 1000 on jpype, 2000 on py4j)",
    )
    parser.add_argument(
        "--tests",
        default="",
        metavar="NAME,...",
        help="upstream test names or globs, comma-separated (default: all)",
    )
    parser.add_argument(
        "--list-tests", action="store_true", help="print the upstream test names of --kind, and exit"
    )
    args = parser.parse_args(argv)
    if args.list_tests:
        print_test_names(args.kind)
        return 0
    if args.factory is None:
        parser.error("the factory (module:factory) is required, unless --list-tests")
    try:
        tests = select_tests(args.kind, args.tests)
        factory = load_factory(args.factory)
        verification = verification_for(args.kind, factory, args.flow, args.timeout_ms)
        pool = BridgePool()
        try:
            run = run_verification(verification, pool.get(args.backend), tests, args.backend)
        finally:
            pool.close()
    except ReactiveStreamsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_table(run)
    if args.junit_xml:
        write_junit_xml(run, args.junit_xml, f"{args.factory} ({args.kind})")
    return 1 if any(r.failed for r in run.results) else 0


if __name__ == "__main__":
    sys.exit(main())
