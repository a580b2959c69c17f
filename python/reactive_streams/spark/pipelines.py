"""Spark Declarative Pipelines with this library's sources, processors and sinks.

``python -m reactive_streams.spark.pipelines [--remote URL | --master M --jars J,... --conf k=v ...]
{run,dry-run,init} ...`` runs PySpark's own pipelines CLI (``spark-pipelines``: the same
subcommands and options, after ours), with two differences:

- **The server.** With ``--remote``, the pipeline runs on that Spark Connect server (started
  with `connect_confs`), from this interpreter: a thin client (``pyspark-client``) needs no
  Java. Without it, a local server with this library's jars and plugins (`ConnectServer`, with
  ``--master``, ``--jars``, ``--conf`` and ``--server-log``) runs the pipeline and stops after it;
  a run that fails prints the first error and the last lines of that server's log. ``spark-pipelines``'
  own local server does not get ``--jars`` or ``--conf spark.jars`` when its confs are long
  (docs/deploy.md, "Declarative Pipelines").
- **Storage without a scheme.** A ``storage`` that is a plain path (``storage: checkpoints``)
  is taken relative to the spec's folder, as ``libraries`` are, and passed on as a ``file:``
  URI; PySpark refuses it (``PIPELINE_STORAGE_ROOT_INVALID``). With ``--remote``, that folder
  must be one the server and its executors see at the same path.
- **The end of a run.** When a Python data source has run (`register_source`,
  `map_partitions`, any other), PySpark 4.1 to 4.3's CLI ends a run that succeeded with
  ``[UNKNOWN_RESPONSE] Unknown response: Plan observed(__python_accumulator__=...)`` and exit
  status 1: after the run, the server reports the Python workers' accumulators, as it does
  after any command, and the CLI takes any report it does not expect for an error. Here the
  run's command is read to its completion with that report passed over, as PySpark reads other
  commands (with PySpark's own private calls; where they are missing, the report ends the run's
  events, the last before its completion).

`main` is the same from Python. POSIX only, as `ConnectServer`.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import logging
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .._errors import ReactiveStreamsError
from .connect_server import ConnectServer, _conf_pair

__all__ = ["main"]

_log = logging.getLogger(__name__)

#: The observed metric the server sends after a command in which Python workers ran.
_ACCUMULATORS = "__python_accumulator__"
_SUBCOMMANDS = ("run", "dry-run", "init")
#: The calls of PySpark's client (private, 3.4 to 4.3) that `_responses` makes.
_CLIENT_CALLS = (
    "_execute_plan_request_with_metadata",
    "_set_command_in_plan",
    "_execute_and_fetch_as_iterator",
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _responses(client: Any, command: Any, observations: Any) -> Iterator[Any]:
    """What ``SparkConnectClient.execute_command_as_iterator`` yields, read to the command's
    completion, the observed metrics passed over (the client has applied them already: the
    accumulators' report is one) rather than raised. Raised, they end the iteration before the
    completion, and the release of the stream's last response then races the session's close,
    which the server logs as an ERROR. PySpark's private calls: where one is missing,
    `_events_to_completion` is used instead."""
    request = client._execute_plan_request_with_metadata()
    client._set_command_in_plan(request.plan, command)
    for response in client._execute_and_fetch_as_iterator(request, observations or {}):
        if isinstance(response, dict):
            yield response
        else:
            _log.debug("passed over a response of the run's command: %s", type(response).__name__)


def _events_to_completion(events: Iterator[Any]) -> Iterator[Any]:
    """The run's events, ended by the accumulators' report that PySpark's client raises as an
    unknown response: the server sends it once the run's command has finished, just before
    the command's completion, so no event follows it."""
    try:
        yield from events
    except Exception as exc:  # PySparkValueError; matched by its message, as PySpark raises it
        text = str(exc)
        if "UNKNOWN_RESPONSE" not in text or _ACCUMULATORS not in text:
            raise
        _log.debug("the run's events ended with the server's report of Python accumulators")


@contextlib.contextmanager
def _runs_to_completion() -> Iterator[Any]:
    """PySpark's pipelines CLI, its run's events ending at the accumulators' report."""
    try:
        from pyspark.pipelines import cli as imported
    except ImportError as exc:
        raise ReactiveStreamsError(
            "Declarative Pipelines need PySpark 4.1 or later with its pipelines extra "
            f"(pip install 'pyspark[pipelines]', or 'pyspark-client' and pyyaml): {exc}"
        ) from exc
    cli: Any = imported  # its names are its own imports, which mypy takes for private
    start_run, load_pipeline_spec = cli.start_run, cli.load_pipeline_spec

    def start_run_to_completion(spark: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        client = spark.client
        if all(hasattr(client, name) for name in _CLIENT_CALLS):
            # The run's command read to its completion, as any other command's, the report
            # passed over: the instance's attribute stands for the client's method, for this run.
            client.execute_command_as_iterator = lambda command, observations=None: _responses(
                client, command, observations
            )
            return start_run(spark, *args, **kwargs)  # type: ignore[no-any-return]
        return _events_to_completion(start_run(spark, *args, **kwargs))

    def load_with_storage_uri(spec_path: Path) -> Any:
        spec = load_pipeline_spec(spec_path)
        if isinstance(spec.storage, str) and not _SCHEME.match(spec.storage):
            storage = (Path(spec_path).resolve().parent / spec.storage).resolve().as_uri()
            spec = copy.copy(spec)  # not dataclasses.replace: it would check the globs again
            object.__setattr__(spec, "storage", storage)  # frozen, as PipelineSpec sets its own
        return spec

    cli.start_run, cli.load_pipeline_spec = start_run_to_completion, load_with_storage_uri
    try:
        yield cli
    finally:
        cli.start_run, cli.load_pipeline_spec = start_run, load_pipeline_spec


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_cli(arguments: Sequence[str], remote: str | None) -> int:
    saved_argv = sys.argv
    with _runs_to_completion() as cli, _environment(**({} if remote is None else {"SPARK_REMOTE": remote})):
        sys.argv = ["spark-pipelines", *arguments]
        try:
            cli.main()
        finally:
            sys.argv = saved_argv
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reactive_streams.spark.pipelines``: run a pipeline (or validate it, or make
    a new one) with PySpark's pipelines CLI, as the module's docstring says. Returns 0 once
    the run has completed; a run that fails raises PySpark's error, as ``spark-pipelines``
    does; bad options exit with status 2 (argparse)."""
    parser = argparse.ArgumentParser(
        prog="python -m reactive_streams.spark.pipelines",
        description="Run a Spark Declarative Pipeline (spark-pipelines' subcommands and options, "
        "after these) on a Spark Connect server with reactive-streams' jars and plugins.",
    )
    parser.add_argument("--remote", help="a running server's URL (sc://...); default: start a local one")
    parser.add_argument("--master", default="local[2]", help="the local server's master (default local[2])")
    parser.add_argument("--jars", default="", help="more jars for the local server, comma-separated")
    parser.add_argument(
        "--conf",
        type=_conf_pair,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a conf of the local server",
    )
    parser.add_argument(
        "--server-log",
        metavar="FILE",
        help="append the local server's output to FILE and keep it (default: a temporary file, "
        "removed; a failed run prints its first error and last lines either way)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="run | dry-run | init, and their options")
    args = parser.parse_args(argv)
    if not args.command or args.command[0] not in _SUBCOMMANDS:
        parser.error(f"a subcommand is needed after the options: one of {', '.join(_SUBCOMMANDS)}")
    if args.remote is not None and (args.jars or args.conf or args.server_log or args.master != "local[2]"):
        parser.error(
            "--jars, --conf, --master and --server-log are a local server's: a --remote one has its own"
        )
    if args.command[0] == "init":
        return _run_cli(args.command, None)
    if args.remote is not None:
        if not args.remote.startswith("sc://"):
            parser.error(f"--remote takes a Spark Connect URL (sc://host:port/...), got {args.remote!r}")
        return _run_cli(args.command, args.remote)
    with ConnectServer.start(
        master=args.master,
        extra_jars=[j for j in args.jars.split(",") if j],
        conf=dict(args.conf),
        log=args.server_log,
    ) as server:
        try:
            return _run_cli(args.command, server.url)
        except Exception:  # not SystemExit (the CLI's own --help, bad options) or Ctrl-C
            # What failed a flow is often only in the server's log (a Python worker's own
            # traceback, Spark's reason), and the temporary log goes with the server.
            print(f"The pipeline's local server: {server._tail(0)}", file=sys.stderr)
            raise


if __name__ == "__main__":
    sys.exit(main())
