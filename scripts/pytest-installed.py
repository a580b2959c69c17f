"""Runs pytest on the project's tests against an installed reactive_streams (a wheel's), never
the source tree's: the package is imported, and checked, before pytest puts the project root on
sys.path for the tests' own modules. Run it from a folder outside the source tree.

    python pytest-installed.py ROOT [PYTEST ARGUMENTS...]

Exits with pytest's status. Used by check-wheel.sh and check-pyarrow.sh.
"""

import sys
from pathlib import Path

import pytest

import reactive_streams

root = Path(sys.argv[1]).resolve()
if root in Path(reactive_streams.__file__).resolve().parents:
    sys.exit(f"reactive_streams was imported from the source tree ({reactive_streams.__file__})")
options = ["-q", "-p", "no:cacheprovider", "--rootdir", str(root), "-c", str(root / "pyproject.toml")]
options += ["-W", "ignore::pytest.PytestAssertRewriteWarning"]  # the package is imported first, above
sys.exit(pytest.main([*options, *sys.argv[2:]]))
