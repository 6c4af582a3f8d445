"""Stopping what a test started: a server in a session of its own, with every process it started."""
from __future__ import annotations

import os
import signal
import subprocess

import psutil


def stop_group(proc: subprocess.Popen, timeout: float = 30) -> list[int]:
    """SIGTERM `proc`'s process group (it was started with `start_new_session=True`), SIGKILL it if it lingers,
    then kill any child that left the group (a Jupyter kernel in a session of its own). Returns the pids still
    alive afterwards: none."""
    try:
        started = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        started = []
    os.killpg(proc.pid, signal.SIGTERM)  # Jupyter shuts its kernels down on SIGTERM
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    _, alive = psutil.wait_procs(started, timeout=10)
    for p in alive:
        p.kill()
    _, alive = psutil.wait_procs(alive, timeout=5)
    return [p.pid for p in alive]
