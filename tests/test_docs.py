"""Every Python block of README.md and docs/*.md runs as written, and prints what the page says.

Each page's blocks run in order, each in a fresh interpreter (as a user pasting it into a new
file would), in one working directory per page whose ``libs/`` folder holds the jars the docs
name (Reactor, RxJava, Pekko: the build's test jars). A comment on the line before a block
changes how it runs: ``<!-- doc-test: save NAME.py -->`` also saves it under that name for
later blocks to import, ``<!-- doc-test: pytest -->`` runs it with pytest instead, and
``<!-- doc-test: javac -->`` before a ```java block compiles it into ``classes/`` (for later
blocks' ``classpath=``) with the jars of ``libs/``.

A ```text block right after a Python block (with at most one line of prose ending in ``:``
between them, such as "It prints:") is its output: the block's stdout must equal it. The
README's blocks must also print no error, warning of ours or stack trace on stderr.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import ROOT, with_port_holders

# docs/tck.md has its own test, which also checks the TCK's verdicts: tests/tck/test_docs_examples.py
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "tck.md")]
_BLOCK = re.compile(
    r"(?:<!-- doc-test: (?P<marker>[^>]*?) -->\n)?```(?P<language>python|java)\n(?P<code>.*?)```"
    r"(?:\n\n(?:[^`\n][^\n]*:\n\n)?```text\n(?P<output>.*?)```)?",
    re.S,
)
# What the README's blocks may print on stderr: Spark's and the JVM's own start-up lines, Spark's
# progress bar, and log lines of Spark's loggers below ERROR. Anything else (our warnings and
# errors, which our classes' loggers or Python's logging print, Python warnings, any stack trace)
# is what a newcomer reads as a failure.
_OUR_JVM_CLASSES = frozenset(
    p.stem
    for d in ("jvm/src/main", "spark/src/main")
    for p in (ROOT / d).rglob("*.*")
    if p.suffix in (".java", ".scala")
)
_SPARK_LOG_LINE = re.compile(r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d (?:INFO|WARN) ([\w$.]+): .*")
_QUIET = re.compile(
    r"\s*|\[Stage \d+:.*\]\s*|WARNING: Using incubator modules: .*"
    r"|Using Spark's default log4j profile: .*|Setting default log level to \"\w+\"\."
    r"|To adjust logging level use sc\.setLogLevel\(newLevel\)\..*"
    r"|NOTE: Picked up JDK_JAVA_OPTIONS: .*"  # the suite's JVM options (tests/conftest.py)
)


def _noise(stderr: str) -> str | None:
    """The first line of ``stderr`` that is not one of Spark's or the JVM's own quiet lines."""
    for line in re.split(r"[\r\n]", stderr):
        spark = _SPARK_LOG_LINE.fullmatch(line)
        if spark and spark.group(1) not in _OUR_JVM_CLASSES:
            continue
        if not spark and _QUIET.fullmatch(line):
            continue
        return line
    return None


@dataclass
class Block:
    page: Path
    line: int
    code: str
    marker: str
    language: str = "python"
    output: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    found = []
    for match in _BLOCK.finditer(text):
        line = text.count("\n", 0, match.start("code"))
        found.append(
            Block(
                page,
                line,
                match.group("code"),
                match.group("marker") or "",
                match.group("language"),
                match.group("output"),
            )
        )
    return found


def test_every_page_has_its_blocks_found() -> None:
    readme = blocks(ROOT / "README.md")
    assert len(readme) >= 3
    assert all(b.output is not None for b in readme), [b.where for b in readme if b.output is None]
    markers = {b.marker.split()[0] for page in PAGES for b in blocks(page) if b.marker}
    assert markers <= {"save", "pytest", "javac"}, markers
    for page in PAGES:
        for b in blocks(page):
            assert (b.language == "java") == (b.marker == "javac"), (
                f"{b.where}: a java block runs only as javac"
            )


def test_an_output_block_is_found_only_right_after_its_code(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint(1)\n```\n\nIt prints:\n\n```text\n1\n```\n\n"
        "```python\nprint(2)\n```\n\nSome prose.\n\nMore prose:\n\n```text\n2\n```\n"
    )
    assert [b.output for b in blocks(page)] == ["1\n", None]


def test_noise_is_what_a_user_would_read_as_a_failure() -> None:
    quiet = (
        "WARNING: Using incubator modules: jdk.incubator.vector\n"
        "26/11/27 16:48:31 WARN NativeCodeLoader: Unable to load native-hadoop library\n"
        'Setting default log level to "WARN".\n'
        "[Stage 0:>                          (0 + 1) / 1]\r                 \r"
        "26/11/27 16:48:54 WARN ResolveWriteToStream: spark.sql.adaptive.enabled is not supported\n"
    )
    assert _noise(quiet) is None
    for line in (
        "26/11/27 16:48:54 ERROR Utils: Exception encountered",
        "26/11/27 16:48:54 WARN ToPythonSubscriber: something of ours",
        "\tat org.apache.spark.util.Utils$.tryOrIOException(Utils.scala:1480)",
        "Traceback (most recent call last):",
        "/x/session.py:12: UserWarning: Failed to set spark.jars",
        "java.io.IOException: a frame of kind 90 and 3 bytes from Python",
        "a subscriber raised: boom",  # Python's logging without a handler prints the message alone
    ):
        assert _noise(quiet + line + "\n") == line, line


USER_PAGES = [ROOT / "README.md", *(ROOT / "docs" / f"{n}.md" for n in ("guide", "bridge", "spark", "tck"))]


def test_user_pages_name_no_issue_numbers() -> None:
    for page in USER_PAGES:
        found = re.findall(r".*\bissues? \d+.*", page.read_text(), flags=re.I)
        assert not found, f"{page.relative_to(ROOT)}: {found}"


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_relative_links_and_their_anchors_resolve() -> None:
    pages = [*PAGES, ROOT / "docs" / "tck.md", ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "RESULTS.md"]
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", link):
                continue
            path, _, anchor = link.partition("#")
            target = (page.parent / path).resolve() if path else page
            assert target.exists(), f"{page.relative_to(ROOT)}: {link} does not exist"
            if anchor and target.suffix == ".md":
                headings = re.findall(r"^#+ (.*)$", target.read_text(), flags=re.M)
                assert anchor in {_anchor(h) for h in headings}, (
                    f"{page.relative_to(ROOT)}: no heading for {link}"
                )


def _run(block: Block, workdir: Path) -> subprocess.CompletedProcess[str]:
    if block.marker == "javac":
        name = re.search(r"public (?:final )?(?:class|interface|record) (\w+)", block.code)
        assert name, f"{block.where}: no public class to name the file after"
        source = workdir / "java-src" / f"{name.group(1)}.java"
        source.parent.mkdir(exist_ok=True)
        source.write_text(block.code)
        classpath = os.pathsep.join(str(p) for p in sorted((workdir / "libs").glob("*.jar")))
        command = ["javac", "-d", "classes", "-cp", classpath, str(source.relative_to(workdir))]
        return subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=300)
    if block.marker.startswith("save "):
        (workdir / block.marker.split()[1]).write_text(block.code)
    if block.marker == "pytest":
        path = workdir / f"test_doc_{block.line}.py"
        path.write_text(block.code)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path.name]
    else:
        command = [sys.executable, "-c", block.code]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("RS_TCK_CLASSPATH", None)
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=900)


@dataclass
class Part:
    """What one test item runs: a page's blocks in order, or one block of a page whose blocks each
    stand alone (a SparkSession of their own): those spread over the test workers."""

    page: Path
    blocks: list[Block]

    @property
    def dials_connect(self) -> bool:
        """Whether it starts an embedded Connect server, on Spark's fixed port (tests/conftest.py)."""
        return any(".remote(" in b.code for b in self.blocks)

    def __str__(self) -> str:
        name = str(self.page.relative_to(ROOT))
        return (
            name if len(self.blocks) != 1 or self.page.name not in _BLOCK_BY_BLOCK else self.blocks[0].where
        )


_BLOCK_BY_BLOCK = {"spark.md"}
PARTS = [
    part
    for page in PAGES
    for part in (
        [Part(page, [b]) for b in blocks(page)]
        if page.name in _BLOCK_BY_BLOCK
        else [Part(page, blocks(page))]
    )
]


#: The node ids of the parts that start an embedded Connect server (tests/conftest.py's groups).
CONNECT_PARTS = frozenset(
    f"tests/test_docs.py::test_page_blocks_run_as_written[{part}]" for part in PARTS if part.dials_connect
)


def test_pages_run_block_by_block_have_no_block_that_needs_another() -> None:
    for page in PAGES:
        if page.name in _BLOCK_BY_BLOCK:
            assert not [b.where for b in blocks(page) if b.marker], (
                "save, pytest and javac blocks need their page"
            )


@pytest.mark.jvm
@pytest.mark.parametrize("part", PARTS, ids=str)
@pytest.mark.timeout(960)  # its subprocess may take 900 s
def test_page_blocks_run_as_written(part: Part, tmp_path: Path, test_jars: list[str]) -> None:
    page = part.page
    libs = tmp_path / "libs"
    libs.mkdir()
    for jar in (ROOT / "build" / "test-jars").glob("*.jar"):
        (libs / jar.name).symlink_to(jar)
    for block in part.blocks:
        result = _run(block, tmp_path)
        assert result.returncode == 0, (
            f"{block.where}: the block exited {result.returncode}\n--- stdout\n{result.stdout[-3000:]}"
            f"\n--- stderr\n{with_port_holders(result.stderr[-6000:])}"
        )
        if block.output is not None:
            assert result.stdout == block.output, (
                f"{block.where}: the block printed\n{result.stdout}\n"
                f"where the page says it prints\n{block.output}"
            )
        if page.name == "README.md":
            noise = _noise(result.stderr)
            assert noise is None, f"{block.where}: on stderr, {noise!r}\n--- stderr\n{result.stderr[-6000:]}"
