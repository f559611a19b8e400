"""Wait until OpenAI-compatible servers answer: what `synthgen slurm wait-ready` runs in a job.

    ok, message = wait_ready(["http://127.0.0.1:8000/v1"], timeout_s=1800, pid=server_pid)

A URL ending in `/v1` is probed at `{url}/models` (vLLM and the scripted server answer it once the
model is loaded); any other URL is fetched as it is (e.g. `trl vllm-serve`'s `/health/`). Ready
means HTTP 200. With `pid`, waiting stops as soon as that process has exited (a server that
crashed while loading), instead of running into the timeout. Standard library only.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path


def is_ready(url: str, api_key: str | None = None, timeout_s: float = 5.0) -> bool:
    base = url.rstrip("/")
    request = urllib.request.Request(f"{base}/models" if base.endswith("/v1") else url)
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def process_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("State:"):
                return line.split()[1] != "Z"
    except OSError:
        return False
    return True


def wait_ready(
    urls: list[str],
    timeout_s: float,
    interval_s: float = 2.0,
    pid: int | None = None,
    api_key: str | None = None,
) -> tuple[bool, str]:
    """Poll every URL until all answer; (True, message) when they do, (False, why) otherwise."""
    start = time.monotonic()
    deadline = start + timeout_s
    waiting = list(dict.fromkeys(urls))
    while True:
        waiting = [u for u in waiting if not is_ready(u, api_key)]
        if not waiting:
            return True, f"ready after {time.monotonic() - start:.1f} s: {', '.join(urls)}"
        if pid is not None and not process_alive(pid):
            return False, f"server process {pid} exited before {waiting[0]} was ready"
        now = time.monotonic()
        if now >= deadline:
            return False, f"not ready after {timeout_s:g} s: {', '.join(waiting)}"
        time.sleep(max(0.05, min(interval_s, deadline - now)))


def run(settings) -> int:
    """`synthgen slurm wait-ready`: 0 when every server answers, 1 on timeout or a dead server."""
    import sys

    ok, message = wait_ready(settings.urls, settings.timeout_s, settings.interval_s, settings.pid, settings.api_key)
    print(f"wait-ready: {message}", file=sys.stdout if ok else sys.stderr, flush=True)
    return 0 if ok else 1
