"""The project's PEP 517 build backend: setuptools' own, with the bridge's jars in every wheel.

pyproject.toml names it (`build-backend = "rspy_build"`, `backend-path = ["build_backend"]`).
Every hook is setuptools.build_meta's, except two:

- `get_requires_for_build_wheel` adds pyspark to the build requirements when the jars must be
  built (the Spark connectors compile against PySpark's jars) and $RSPY_SPARK_JARS is not set;
- `build_wheel` first makes sure the jars are in place and fresh (`jvm_jars.ensure_jars`: Gradle
  runs if they are missing or stale, and a clear error says what is missing otherwise), and
  empties setuptools' staged copy of the package (build/lib), so nothing an earlier build left
  there ships.

Editable installs (`pip install -e .`) are setuptools' own: they read the jars from the source
tree, where `gradle pythonJars` (scripts/setup.sh) puts them. sdists carry the Gradle sources
(MANIFEST.in) and no jars: a wheel built from an sdist runs Gradle.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import jvm_jars
from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (every hook not redefined below)


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    requires: list[str] = _setuptools.get_requires_for_build_wheel(config_settings)
    if not jvm_jars.is_fresh() and not os.environ.get(jvm_jars.SPARK_JARS_ENV):
        requires = [*requires, "pyspark>=4.0"]
    return requires


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    jvm_jars.ensure_jars()
    # setuptools stages the package in build/lib and never empties it: a jar or a module left
    # there by an earlier build (an older version's, or one since moved: jvm/_arrow.py) would end
    # up in this wheel too.
    shutil.rmtree(jvm_jars.ROOT / "build" / "lib" / "reactive_streams", ignore_errors=True)
    name: str = _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    return name
