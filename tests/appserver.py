"""Start `panel serve app/explorer.py` on a free port for browser tests, benchmarks and screenshots.

    with serve_app() as base:      # base == "http://localhost:PORT"
        page.goto(base + "/explorer?T=512")
"""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PANEL = str(Path(sys.executable).with_name("panel"))
# Debian's Chromium (Playwright cannot download browsers here) and the flags this machine needs
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served(str):
    """The base URL of a served explorer ("http://localhost:PORT"), with the server's log."""

    log_path: Path
    pid: int  # the server process, for memory readings

    def log(self) -> str:
        """Everything the server printed so far."""
        return self.log_path.read_text(errors="replace")


def wait_ready(url: str, proc: subprocess.Popen, log_path: Path | None = None, timeout: float = 60.0) -> None:
    """Poll `url` until it answers 200; fail early with the server's output if it exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = log_path.read_text(errors="replace") if log_path else ""
            raise RuntimeError(f"panel serve exited with {proc.returncode}:\n{out}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


@contextlib.contextmanager
def serve_app(extra_args: tuple[str, ...] = (), port: int | None = None,
              apps: tuple[str, ...] = ()) -> Iterator[Served]:
    """Serve the explorer (and static/ at /course) on localhost; yield its base URL; stop it afterwards.

    `apps`: more app files served by the same process (benchmarks/bare_page.py at /bare_page, the latency floor).

    The server's output goes to a temporary file (a pipe nobody reads would fill up and stall the server).
    """
    port = port or free_port()
    cmd = [PANEL, "serve", "app/explorer.py", *apps, "--port", str(port), "--address", "127.0.0.1", "--log-level", "warning",
           "--allow-websocket-origin", f"localhost:{port}", "--allow-websocket-origin", f"127.0.0.1:{port}",
           "--static-dirs", "course=static", *extra_args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "BOKEH_LOG_LEVEL": "warn"}
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "server.log"
        with open(log_path, "w") as log:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        served = Served(f"http://localhost:{port}")
        served.log_path, served.pid = log_path, proc.pid
        try:
            wait_ready(served + "/explorer", proc, log_path)
            yield served
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
