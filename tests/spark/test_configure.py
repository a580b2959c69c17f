"""rss.configure: the bridge jars on spark.jars, without Spark's own artifacts twice."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss
from reactive_streams.jvm import bridge_classpath

from ..conftest import TEST_JARS


def names(jars: list[str]) -> set[str]:
    return {Path(j).name for j in jars}


def test_spark_classpath_has_the_bridge_and_not_what_spark_ships() -> None:
    jars = rss.spark_classpath(TEST_JARS)
    assert "reactive-streams-py-bridge.jar" in names(jars)
    assert not any(n.startswith(("scala-library", "slf4j-api", "slf4j-nop", "pickle-")) for n in names(jars))
    assert len(names(jars)) == len(jars)  # no artifact twice
    assert set(bridge_classpath()) - {j for j in bridge_classpath() if "pickle" in j} <= set(jars)


def test_configure_keeps_jars_already_set() -> None:
    builder = SparkSession.Builder().config("spark.jars", "/opt/mine.jar")
    configured = rss.configure(builder)
    jars = configured._options["spark.jars"].split(",")
    assert jars[0] == "/opt/mine.jar" and "reactive-streams-py-bridge.jar" in names(jars)


def reactor_jar() -> str:
    return next(j for j in TEST_JARS if Path(j).name.startswith("reactor-core"))


def test_extra_jars_may_be_one_path_a_folder_or_a_pattern(tmp_path: Path) -> None:
    reactor = reactor_jar()
    assert reactor in rss.spark_classpath(reactor)  # one entry, not its characters
    assert reactor in rss.spark_classpath(Path(reactor))
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "reactor-core-3.7.0.jar").symlink_to(reactor)
    in_libs = str(libs / "reactor-core-3.7.0.jar")
    assert in_libs in rss.spark_classpath(libs)  # a folder: its jars (spark.jars takes no folders)
    assert str(libs) not in rss.spark_classpath(libs)
    assert in_libs in rss.spark_classpath(str(libs / "*.jar"))
    jars = rss.configure(SparkSession.Builder(), reactor)._options["spark.jars"].split(",")
    assert reactor in jars


def test_spark_classpath_gives_absolute_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server started in another folder (spark-submit's, a daemon's) reads the same jars."""
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "reactor-core-3.7.0.jar").symlink_to(reactor_jar())
    monkeypatch.chdir(tmp_path)
    jars = rss.connect_confs("libs/reactor-core-3.7.0.jar")["spark.jars"].split(",")
    assert str(libs / "reactor-core-3.7.0.jar") in jars and all(os.path.isabs(j) for j in jars)


def test_bad_extra_jars_are_refused_naming_them(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jar"
    broken.write_bytes(b"not a zip")
    with pytest.raises(
        rs.ReactiveStreamsError, match=f"^extra_jars entry is not a readable jar .*: {broken}: "
    ):
        rss.configure(SparkSession.Builder(), [str(broken)])
    with pytest.raises(rs.ReactiveStreamsError, match=r"^extra_jars entry does not exist: "):
        rss.configure(SparkSession.Builder(), str(tmp_path / "missing.jar"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(rs.ReactiveStreamsError, match=r"^extra_jars folder .* holds no \.jar file"):
        rss.configure(SparkSession.Builder(), empty)
    with pytest.raises(TypeError, match=r"^extra_jars must be a path"):
        rss.configure(SparkSession.Builder(), 5)  # type: ignore[arg-type]


def test_configure_needs_a_builder(spark_session: object) -> None:
    with pytest.raises(
        TypeError, match=r"^configure\(\) needs a SparkSession\.Builder .* call it before getOrCreate"
    ):
        rss.configure(spark_session)


def pyspark_after_starting_the_server() -> str:
    """What PySpark's Connect session does once the embedded server runs: it sets the builder's
    confs again, and warns of each static one the server refuses."""
    for key, kind in [
        ("spark.jars", "CANNOT_MODIFY_CONFIG"),
        ("spark.plugins", "CANNOT_MODIFY_CONFIG"),
        ("spark.connect.extensions.command.classes", "CANNOT_MODIFY_STATIC_CONFIG"),
        ("spark.mine", "CANNOT_MODIFY_CONFIG"),  # not configure's: still said
    ]:
        warnings.warn(
            f"Failed to set {key} to Some(x) due to [{kind}] Cannot modify the value",
            UserWarning,
            stacklevel=2,
        )
    warnings.warn("something else", UserWarning, stacklevel=2)
    return "session"


@pytest.mark.parametrize("make", ["getOrCreate", "create"])
def test_a_connect_builder_does_not_warn_of_the_confs_its_server_was_started_with(make: str) -> None:
    builder = SparkSession.Builder().remote("local[1]")
    setattr(builder, make, pyspark_after_starting_the_server)
    configured = rss.configure(builder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert getattr(configured, make)() == "session"
    assert [str(w.message) for w in caught] == [
        "Failed to set spark.mine to Some(x) due to [CANNOT_MODIFY_CONFIG] Cannot modify the value",
        "something else",
    ]


def test_a_reused_connect_server_may_lack_the_confs_so_its_warnings_stay() -> None:
    builder = SparkSession.Builder().remote("local[1]").config("spark.local.connect.reuse", "true")
    builder.getOrCreate = pyspark_after_starting_the_server  # type: ignore[method-assign]
    configured = rss.configure(builder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        configured.getOrCreate()
    assert len(caught) == 5


def test_a_classic_builder_is_left_as_it_is() -> None:
    configured = rss.configure(SparkSession.Builder())
    assert "getOrCreate" not in vars(configured) and "create" not in vars(configured)


@pytest.mark.parametrize(
    ("master", "set_before", "expected"),
    [
        ("local[2]", {}, sys.executable),
        ("local-cluster[2,1,1024]", {}, sys.executable),
        (None, {}, sys.executable),  # PySpark's default master is local
        ("local[2]", {"PYSPARK_PYTHON": "/opt/python"}, "/opt/python"),  # the user's wins
        ("spark://cluster:7077", {}, None),  # a cluster's workers have their own Python
    ],
    ids=["local", "local-cluster", "default-master", "the-users-wins", "a-cluster"],
)
def test_local_workers_use_this_interpreter_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, master: str | None, set_before: dict[str, str], expected: str | None
) -> None:
    """Executors' Python workers start ``PYSPARK_PYTHON`` (else ``python3``, which lacks this
    package): `configure` points local and local-cluster masters at this interpreter."""
    from pyspark.sql import SparkSession

    for key in ("PYSPARK_PYTHON", "MASTER", "PYSPARK_GATEWAY_PORT"):
        monkeypatch.delenv(key, raising=False)
    for key, value in set_before.items():
        monkeypatch.setenv(key, value)
    builder = SparkSession.Builder()
    if master is not None:
        builder = builder.master(master)
    rss.configure(builder)
    assert os.environ.get("PYSPARK_PYTHON") == expected


def test_the_spark_pyspark_python_conf_is_what_local_workers_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from pyspark.sql import SparkSession

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    rss.configure(SparkSession.Builder().master("local[1]").config("spark.pyspark.python", "/opt/py3"))
    assert os.environ["PYSPARK_PYTHON"] == "/opt/py3"
