"""Start `panel serve app/explorer.py` on a free port for browser tests, benchmarks and screenshots.

    with serve_app() as base:      # base == "http://localhost:PORT"
        page.goto(base + "/explorer?T=512")

Every process started here runs in its own session (process group) and is stopped with its whole group, so
`--num-procs N`'s forked workers (and anything else a server starts) go with it (`spawn`, `stop_group`).
The server signs its session ids as `make run` does (`--session-ids signed`, a fresh BOKEH_SECRET_KEY).
"""
from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
PANEL = str(Path(sys.executable).with_name("panel"))
# Debian's Chromium (Playwright cannot download browsers here) and the flags this machine needs
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
SIGNED = ("--session-ids", "signed")  # as `make run`: made-up ?bokeh-session-id= values are refused (403)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served(str):
    """The base URL of a served explorer ("http://localhost:PORT"), with the server's log."""

    log_path: Path
    pid: int  # the server process, for memory readings
    final_log: str = ""  # the whole log once the server has stopped (its folder is gone)

    def log(self) -> str:
        """Everything the server printed so far (once it has stopped, all it printed)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:  # stopped: a report written after the fixture's end still reads it
            return self.final_log

    def sessions_launched(self) -> int:
        """Sessions made so far, one per page and one per re-created session (Panel's "Session … launching";
        needs env={"PANEL_LOG_LEVEL": "info"})."""
        return self.log().count(" launching")


def secret_key() -> str:
    """A fresh BOKEH_SECRET_KEY (256 bits, as `bokeh secret` makes): servers that share one accept each other's
    signed session ids."""
    return secrets.token_urlsafe(32)


def spawn(cmd: list[str], log_path: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start `cmd` in the project root in a new session (its own process group, led by it), output to `log_path`
    (a pipe nobody reads would fill up and stall it). Stop it with `stop_group`."""
    with open(log_path, "w") as log:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)


def group(pgid: int) -> list[psutil.Process]:
    """The live processes of process group `pgid` (a `spawn`ed process's pid): the leader, its children, and any
    of them orphaned. Zombies are dead and left out."""
    members = []
    for p in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):  # it ended meanwhile
            if os.getpgid(p.pid) == pgid:
                members.append(p)
    return alive(members)


def alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    """The processes still running: neither gone nor a zombie (a zombie is dead; only its exit status is left)."""
    running = []
    for p in procs:
        with contextlib.suppress(psutil.Error):
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                running.append(p)
    return running


def stop_group(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM to `proc`'s whole process group, SIGKILL to whatever is left after `timeout` s; reap the leader.
    Forked workers stay in the group after their parent has exited, so none is left behind. Idempotent."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        deadline = time.monotonic() + timeout
        while group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not group(proc.pid):
            break
    proc.wait()


def http_status(url: str) -> int:
    """The HTTP status `url` answers with (403 and 500 included)."""
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def wait_ready(url: str, proc: subprocess.Popen, log_path: Path | None = None, timeout: float = 120.0) -> None:
    """Poll `url` until it answers 200; fail early with the server's output if it exits.

    A request, once the server listens, may wait as long as is left: the first page of a server on a busy machine
    can take many seconds, and giving up on it early would only queue more pages (one session each)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = log_path.read_text(errors="replace") if log_path else ""
            raise RuntimeError(f"{Path(proc.args[0]).name} exited with {proc.returncode}:\n{out}")
        try:
            with urllib.request.urlopen(url, timeout=max(1.0, deadline - time.monotonic())) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


@contextlib.contextmanager
def serve_app(extra_args: tuple[str, ...] = (), port: int | None = None,
              apps: tuple[str, ...] = (), env: dict[str, str] | None = None, warm: bool = False) -> Iterator[Served]:
    """Serve the explorer (and static/ at /course) on localhost; yield its base URL; stop it afterwards.

    `apps`: more app files served by the same process (benchmarks/bare_page.py at /bare_page, the latency floor).
    `env`: more environment variables (a BOKEH_SECRET_KEY shared by several servers, PANEL_LOG_LEVEL).
    `warm`: warm the process before it serves, as `make run` does (`--setup app/warm.py`, about 9 s); the tests'
    servers start cold (tests/test_servers.py runs `make run` itself, warm-up included), the benchmarks warm.

    The server's output goes to a temporary file; the server and its workers are stopped as one group.
    """
    port = port or free_port()
    cmd = [PANEL, "serve", "app/explorer.py", *apps, "--port", str(port), "--address", "127.0.0.1", "--log-level", "warning",
           "--allow-websocket-origin", f"localhost:{port}", "--allow-websocket-origin", f"127.0.0.1:{port}",
           "--static-dirs", "course=static", *SIGNED, *(("--setup", "app/warm.py") if warm else ()), *extra_args]
    env = {"BOKEH_SECRET_KEY": secret_key(), **os.environ, "PYTHONUNBUFFERED": "1", "BOKEH_LOG_LEVEL": "warn",
           **(env or {})}
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "server.log"
        proc = spawn(cmd, log_path, env)
        served = Served(f"http://localhost:{port}")
        served.log_path, served.pid = log_path, proc.pid
        try:
            wait_ready(served + "/explorer", proc, log_path)
            yield served
        finally:
            stop_group(proc)
            served.final_log = log_path.read_text(errors="replace") if log_path.exists() else ""
