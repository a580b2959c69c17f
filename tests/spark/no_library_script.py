"""Run in a subprocess by test_no_library.py: a classic local session whose Python workers start
an interpreter that cannot import reactive_streams (this one, with an import hook that refuses
it: as a worker host's Python without the library), and each partitioned path run on it.
Prints each one's error, as JSON.

    python no_library_script.py WORK_FOLDER
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

import reactive_streams as rs
from reactive_streams import spark as rss

work = Path(sys.argv[1])
hook = work / "hook"
hook.mkdir()
(hook / "sitecustomize.py").write_text(
    "import sys\n"
    "class NoLibrary:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] == 'reactive_streams':\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
    "sys.meta_path.insert(0, NoLibrary())\n"
)
python = work / "python-without-the-library"
python.write_text(f'#!/bin/sh\nPYTHONPATH="{hook}${{PYTHONPATH:+:$PYTHONPATH}}" exec {sys.executable} "$@"\n')
python.chmod(0o755)

# PySpark starts UDF workers with PYSPARK_PYTHON when it is set (a parent process may have set it)
os.environ["PYSPARK_PYTHON"] = str(python)
builder = SparkSession.builder.master("local[2]").config("spark.pyspark.python", str(python))
spark = rss.configure(builder).getOrCreate()


def error_of(run: Any) -> str:
    try:
        run()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "no error"


class Count(rs.SyncSubscriber[Any]):
    pass


rss.register_source(
    spark,
    "numbers",
    lambda p, s: rs.from_iterable((i,) for i in range(s, 10)),
    1,
    "n long",
    latest=lambda p: 10,
)
rss.register_sink(spark, "counted", lambda p, b: Count())


def source() -> None:
    query = (
        spark.readStream.format("numbers")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(work / "ck-source"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)


outcome = {
    "source": error_of(source),
    "sink": error_of(lambda: spark.range(3).write.format("counted").mode("append").save()),
    "map_partitions": error_of(
        lambda: rss.map_partitions(spark.range(3), lambda p: rs.MapProcessor(tuple), "id long").collect()
    ),
    "pid": os.getpid(),
}
spark.stop()
print(json.dumps(outcome))
