"""A headless Chromium driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``:
JSON messages ended by a NUL byte, on the browser's file descriptors 3 and 4), for the tests that
check what a page shows once its scripts have run: no WebDriver, no websocket library.
scripts/setup.sh installs Debian's ``chromium-headless-shell``.

    with Browser.start() as browser:
        page = browser.open("http://...")
        page.wait_for("document.querySelector('svg g.node') !== null")
        page.click("svg g.node")
        text = page.evaluate("document.body.innerText")
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any

__all__ = ["Browser", "BrowserError", "Page", "chromium"]

_CANDIDATES = ("chromium-headless-shell", "chromium", "google-chrome")


class BrowserError(RuntimeError):
    """The browser refused a command, or a page did not get where a test waited for it to."""


def chromium() -> str:
    """The headless Chromium's path; setup.sh installs it (a test needing it fails without)."""
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise BrowserError(f"no headless Chromium on PATH (tried {', '.join(_CANDIDATES)}): run scripts/setup.sh")


def _above_nine(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Browser:
    """One headless browser process; `open` gives a `Page`. Close it (a context manager)."""

    def __init__(
        self, process: subprocess.Popen[bytes], to_browser: int, from_browser: int, profile: str
    ) -> None:
        self._process, self._out, self._in, self._profile = process, to_browser, from_browser, profile
        self._next_id = 0
        self._pending = b""

    @classmethod
    def start(cls, log: Any = None) -> Browser:
        profile = tempfile.mkdtemp(prefix="rs-browser-")
        commands_read, commands_write = os.pipe()  # the browser reads its commands on fd 3
        replies_read, replies_write = os.pipe()  # and writes its replies on fd 4
        # Its ends above 9, so that moving them onto 3 and 4 overwrites neither.
        commands_read, replies_write = (_above_nine(fd) for fd in (commands_read, replies_write))

        # bash puts the pipes on 3 and 4 (the protocol's numbers) and closes their first ones.
        move = f'exec "$0" "$@" 3<&{commands_read} 4>&{replies_write} {commands_read}<&- {replies_write}>&-'
        process = subprocess.Popen(
            [
                "/bin/bash",  # dash redirects single-digit descriptors only
                "-c",
                move,
                chromium(),
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",  # root in a container: Chromium's sandbox needs user namespaces
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--window-size=1600,1200",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL if log is None else log,
            pass_fds=(commands_read, replies_write),
        )
        os.close(commands_read)
        os.close(replies_write)
        return cls(process, commands_write, replies_read, profile)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in (self._out, self._in):
            try:
                os.close(fd)
            except OSError:
                pass
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        """One DevTools command; its result (events in between are passed over)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._pending:
            chunk = os.read(self._in, 65536)
            if not chunk:
                raise BrowserError(f"the browser ended (exit status {self._process.poll()})")
            self._pending += chunk
        message, self._pending = self._pending.split(b"\0", 1)
        return json.loads(message)  # type: ignore[no-any-return]

    def open(self, url: str, timeout: float = 30) -> Page:
        """A new tab at ``url``, once its document has loaded (its scripts may still be at work)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        navigated = self.send("Page.navigate", {"url": url}, session)
        if navigated.get("errorText"):
            raise BrowserError(f"{url}: {navigated['errorText']}")
        page = Page(self, session)
        page.wait_for("location.href !== 'about:blank' && document.readyState === 'complete'", timeout)
        return page


class Page:
    """A tab of the `Browser`."""

    def __init__(self, browser: Browser, session: str) -> None:
        self._browser, self._session = browser, session

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able)."""
        result = self._browser.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            self._session,
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def wait_for(self, condition: str, timeout: float = 30) -> Any:
        """Poll the JavaScript ``condition`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(condition)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"{condition} still false after {timeout} s")
            time.sleep(0.1)

    def click(self, selector: str) -> None:
        """A real mouse click (pressed, released) at the middle of the first element matching
        ``selector``, scrolled into view: what a user's click does, handlers and all."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if box is None:
            raise BrowserError(f"nothing on the page matches {selector!r}")
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self._browser.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                self._session,
            )
