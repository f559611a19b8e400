"""Open a page in headless Chromium and ask it what a person would see: a screenshot, and whether
every image loaded.

Talks to the browser over the DevTools protocol on a pipe (`--remote-debugging-pipe`: JSON
messages ending in a NUL byte, commands on the child's fd 3, answers on its fd 4), so no
WebSocket library and no port are needed. Debian's `chromium` package (.ci/system-deps.sh installs
it when run as root); a test skips with the reason where it is missing.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",  # root in CI: Chromium's own sandbox refuses to start as root
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)
# A guard against a browser that hangs, not a performance expectation.
DEADLINE_S = 120


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageView:
    screenshot: bytes  # PNG of the whole page
    images: list[dict]  # per <img>: alt, complete, naturalWidth, naturalHeight
    title: str


class Browser:
    """One headless Chromium with a fresh profile, driven over the DevTools pipe."""

    def __init__(self, binary: str, profile: Path):
        self._to_child_r, self._to_child_w = os.pipe()
        self._from_child_r, self._from_child_w = os.pipe()
        to_r, from_w = self._to_child_r, self._from_child_w

        def wire_pipe() -> None:  # in the child, before exec: the protocol's fixed descriptors
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=wire_pipe,
            pass_fds=(3, 4),
        )
        os.close(to_r)
        os.close(from_w)
        self._next_id = 0
        self._buffer = b""
        self._events: list[dict] = []

    def close(self) -> str:
        """End the browser; returns what it wrote on stderr (for failure messages)."""
        try:
            self._send("Browser.close", {})
        except OSError:
            pass
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        for fd in (self._to_child_w, self._from_child_r):
            try:
                os.close(fd)
            except OSError:
                pass
        return (err or b"").decode(errors="replace")[-2000:]

    # -- protocol ------------------------------------------------------------------------------
    def _send(self, method: str, params: dict, session: str | None = None) -> int:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_child_w, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the browser did not answer")
            ready, _, _ = select.select([self._from_child_r], [], [], left)
            if ready:
                chunk = os.read(self._from_child_r, 1 << 20)
                if not chunk:
                    raise ConnectionError("the browser closed its DevTools pipe")
                self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        sent = self._send(method, params or {}, session)
        deadline = time.monotonic() + DEADLINE_S
        while True:
            message = self._read_message(deadline)
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self._events.append(message)

    def wait_event(self, method: str, session: str) -> dict:
        deadline = time.monotonic() + DEADLINE_S
        while True:
            for i, event in enumerate(self._events):
                if event["method"] == method and event.get("sessionId") == session:
                    return self._events.pop(i)
            message = self._read_message(deadline)
            if "method" in message:
                self._events.append(message)

    # -- what a test asks ----------------------------------------------------------------------
    def view(self, url: str, width: int = 1200) -> PageView:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=session)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        self.call("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session)
        check = (
            "JSON.stringify({title: document.title, images: Array.from(document.images).map(i => ({"
            "alt: i.alt, complete: i.complete, naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight}))})"
        )
        found = self.call("Runtime.evaluate", {"expression": check, "returnByValue": True}, session=session)
        page = json.loads(found["result"]["value"])
        size = self.call("Page.getLayoutMetrics", session=session)["cssContentSize"]
        shot = self.call(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": min(int(size["height"]), 16000), "scale": 1},
            },
            session=session,
        )
        return PageView(base64.b64decode(shot["data"]), page["images"], page["title"])


def check_page(page_file: Path, tmp_path: Path, *, title: str, images: int, colours: int):
    """Open `page_file` in headless Chromium (skip the test where there is none) and check what a
    person would see: the title, `images` images all loaded and sized, a page that is not blank and
    has more than `colours` colours. Returns (the page, its screenshot as a PIL image)."""
    import io

    import pytest
    from PIL import Image

    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium here: .ci/system-deps.sh installs Debian's chromium when run as root")
    browser = Browser(binary, tmp_path / "profile")
    try:
        page = browser.view(Path(page_file).resolve().as_uri())
    finally:
        log = browser.close()
    shot = tmp_path / f"{Path(page_file).stem}.png"
    shot.write_bytes(page.screenshot)
    assert page.title.startswith(title), log
    assert len(page.images) == images
    for image in page.images:
        assert image["complete"] and image["naturalWidth"] > 100 and image["naturalHeight"] > 100, image
    picture = Image.open(io.BytesIO(page.screenshot)).convert("RGB")
    small = picture.resize((picture.width // 4, picture.height // 4))
    pixels = list(small.getdata())
    ink = sum(1 for r, g, b in pixels if min(r, g, b) < 200) / len(pixels)
    assert ink > 0.05, f"the page looks blank ({ink:.1%} of it is not white): {shot}"
    assert len(set(pixels)) > colours, f"the page has almost no colours: {shot}"
    return page, picture
