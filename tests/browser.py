"""A real headless Chromium, driven over the DevTools protocol through ``--remote-debugging-pipe`` (stdlib only:
NUL-separated JSON on file descriptors 3 and 4, no websocket, no driver download).

Used by the browser tests to load hlodiff's HTML reports, read the rendered DOM, click, record every network
request the page makes and every dialog a script would open, and take screenshots.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars"]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(RuntimeError):
    pass


class Browser:
    """One browser process; ``with Browser() as b: page = b.open(path)``."""

    def __init__(self, binary: str, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="hlodiff-chromium-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        def wire_fds() -> None:  # in the child: the protocol reads fd 3 and writes fd 4
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen([binary, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
                                      "about:blank"], preexec_fn=wire_fds, close_fds=False,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._out = os.fdopen(to_chrome_w, "wb", buffering=0)
        self._in = os.fdopen(from_chrome_r, "rb", buffering=0)
        self._buf = b""
        self._next = 0
        self.events: list[dict] = []

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (CDPError, OSError, EOFError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self._out, self._in):
            try:
                f.close()
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- protocol ----------------------------------------------------------------------------------------------

    def _recv(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise CDPError("timed out waiting for the browser")
            chunk = self._in.read(1 << 16)
            if not chunk:
                raise EOFError("the browser closed the protocol pipe")
            self._buf += chunk
        message, self._buf = self._buf.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next += 1
        request = {"id": self._next, "method": method, "params": params or {}}
        if session:
            request["sessionId"] = session
        self._out.write(json.dumps(request).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._recv(deadline)
            if message.get("id") == self._next:
                if "error" in message:
                    raise CDPError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_event(self, method: str, session: str, since: int = 0) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self.events[since:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            since = len(self.events)
            message = self._recv(deadline)
            if "method" in message:
                self.events.append(message)

    def open(self, path: Path, *, scripts: bool = True, width: int = 1400, height: int = 1000) -> "Page":
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Network.enable", "Runtime.enable"):
            self.send(method, session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        if not scripts:
            self.send("Emulation.setScriptExecutionDisabled", {"value": True}, session=session)
        url = Path(path).resolve().as_uri()
        mark = len(self.events)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session, mark)
        return Page(self, session, url, mark)


class Page:
    def __init__(self, browser: Browser, session: str, url: str, mark: int) -> None:
        self.browser, self.session, self.url, self.mark = browser, session, url, mark

    def evaluate(self, expression: str):
        result = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                        "awaitPromise": True}, session=self.session)
        if "exceptionDetails" in result:
            raise CDPError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def settle(self) -> None:
        """Give queued events (network, dialogs) a moment to arrive."""
        self.evaluate("new Promise(r => setTimeout(r, 150))")

    def events(self, method: str) -> list[dict]:
        return [e for e in self.browser.events[self.mark:]
                if e.get("method") == method and e.get("sessionId") == self.session]

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events("Network.requestWillBeSent")]

    def screenshot(self, path: Path, full_height: int | None = None) -> None:
        params: dict = {"format": "png"}
        if full_height:
            params["clip"] = {"x": 0, "y": 0, "width": 1400, "height": full_height, "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.browser.send("Page.captureScreenshot", params, session=self.session)["data"]
        Path(path).write_bytes(base64.b64decode(data))
