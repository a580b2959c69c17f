"""The TCK for anyone's factory, from a shell:

    python -m reactive_streams.tck package.module:factory --kind publisher|whitebox|blackbox|processor
           [--backend jpype|py4j] [--flow] [--junit-xml FILE] [--timeout-ms N] [--tests NAME,...]

The factory, by kind: ``publisher``: ``factory(elements)`` returns a publisher of exactly that
many elements (``2**63-1``: unbounded), and an optional ``factory.failed()`` a failed publisher;
``whitebox``: ``factory(probe)`` a subscriber wired to the probe (``probe.wrap(subscriber)``);
``blackbox``: ``factory()`` a subscriber; ``processor``: ``factory(buffer_size)`` an identity
processor. Prints a table (rule, test, outcome, reason) and a summary line; exits 1 when any
test fails, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from typing import Any

from .._errors import ReactiveStreamsError
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


def verification_for(
    kind: str, factory: Callable[..., Any], flow: bool, timeout_ms: int | None
) -> Verification:
    """A verification instance whose factory method calls ``factory``."""
    base: type[Verification] = {
        "publisher": PublisherVerification,
        "whitebox": SubscriberWhiteboxVerification,
        "blackbox": SubscriberBlackboxVerification,
        "processor": IdentityProcessorVerification,
    }[kind]
    namespace: dict[str, Any] = {"flow": flow, "timeout_ms": timeout_ms}
    if kind == "publisher":
        namespace["create_publisher"] = lambda self, elements: factory(elements)
        failed = getattr(factory, "failed", None)
        namespace["create_failed_publisher"] = lambda self: failed() if failed is not None else None
    elif kind == "whitebox":
        namespace["create_subscriber"] = lambda self, probe: factory(probe)
    elif kind == "blackbox":
        namespace["create_subscriber"] = lambda self: factory()
    else:
        namespace["create_identity_processor"] = lambda self, size: factory(size)
        failed = getattr(factory, "failed", None)
        namespace["create_failed_publisher"] = lambda self: failed() if failed is not None else None
    name = getattr(factory, "__qualname__", type(factory).__name__)
    return type(name, (base,), namespace)()  # type: ignore[no-any-return]


def print_table(run: TckRun, out: Any = sys.stdout) -> None:
    rows = [
        (r.rule or "-", r.name, r.outcome, r.message.splitlines()[0] if r.message else "")
        for r in run.results
    ]
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
            failure = ET.SubElement(case, "failure", message=result.message, type=result.outcome)
            failure.text = result.stack
        elif result.outcome == "skipped":
            ET.SubElement(case, "skipped", message=result.message)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reactive_streams.tck", description="Run the Reactive Streams TCK against a factory."
    )
    parser.add_argument("factory", help="module:factory")
    parser.add_argument("--kind", required=True, choices=["publisher", "whitebox", "blackbox", "processor"])
    parser.add_argument("--backend", default="jpype", choices=["jpype", "py4j"])
    parser.add_argument("--flow", action="store_true", help="run the java.util.concurrent.Flow variant")
    parser.add_argument("--junit-xml", metavar="FILE")
    parser.add_argument("--timeout-ms", type=int, default=None)
    parser.add_argument("--tests", default="", help="comma-separated test names (default: all)")
    args = parser.parse_args(argv)
    try:
        factory = load_factory(args.factory)
        verification = verification_for(args.kind, factory, args.flow, args.timeout_ms)
        tests = [t for t in args.tests.split(",") if t]
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
