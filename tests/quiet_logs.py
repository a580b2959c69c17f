"""What a successful run must not print: the check of tests/test_setup_quiet.py and
tests/spark/test_connect_close.py.

A run is quiet when no line of its output is part of a stack trace (Java's ``\\tat ...`` and
``Caused by:``, Python's ``Traceback``, ``Exception in thread``), an SLF4J warning, a WARN or ERROR
line of log4j's (the layout of examples/log4j2.properties and Spark's default: ``yy/MM/dd HH:mm:ss
LEVEL Logger: message``), a JUL ``WARNING:``/``SEVERE:`` line of ours, or a Python log record of
ours at WARNING or above. Lines a run may print, Spark's own, are passed as ``allowed`` (each a
regular expression searched in the line), each with why it is no concern of ours; the stack
trace that follows an allowed line is allowed with it.
"""

from __future__ import annotations

import re

_STACK = re.compile(
    r"^\s+at [\w$.<>/]+\(.*\)$|^\s+\.\.\. \d+ more$|^Caused by: |^Traceback \(most recent call last\)"
    r"|Exception in thread "
)
_LOG4J = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (WARN|ERROR|FATAL) ")
_SLF4J = re.compile(r"^SLF4J(\(W\)|\(E\))?: ")
# The level line of JUL's two-line SimpleFormatter (the bridge's io.github.rspy loggers), and our
# Python loggers' records in the "LEVEL:name:message" format the child scripts set.
_OURS = re.compile(r"^(WARNING|SEVERE): |^(WARNING|ERROR|CRITICAL):reactive_streams")
# The JVM's own notice that Spark uses an incubator module: not a warning of ours or Spark's log.
_JVM_NOTICE = re.compile(r"^WARNING: Using incubator modules: ")


def noisy_lines(output: str, allowed: dict[str, str] | None = None) -> list[str]:
    """The lines of ``output`` a quiet run must not print, but for those ``allowed`` matches."""
    patterns = [re.compile(pattern) for pattern in (allowed or {})]
    noisy = []
    in_allowed = False  # the stack trace of an allowed line is allowed with it
    for line in output.splitlines():
        if _JVM_NOTICE.search(line) or any(p.search(line) for p in patterns):
            in_allowed = True
            continue
        if in_allowed and (_STACK.search(line) or not line.strip()):
            continue
        in_allowed = False
        if _STACK.search(line) or _LOG4J.search(line) or _SLF4J.search(line) or _OURS.search(line):
            noisy.append(line)
    return noisy
