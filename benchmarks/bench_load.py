"""A full class at once: N concurrent real sessions of the explorer, each dragging sliders for a while.

Each simulated learner does what a browser does: GET /explorer (a session and its token), open the
Bokeh websocket, pull the document, then send PATCH-DOC events that move a slider, as BokehJS does when a
handle moves. An update counts as done when the server has sent back the patch that puts the new shape
into the shapes table. Measured: p50/p95 update latency (against a single-session baseline measured in the
same run), errors, server RSS per idle session, and RSS once every session has closed.

    python benchmarks/bench_load.py                       # 50 sessions x 60 s, the figures in the README
    python benchmarks/bench_load.py --sessions 5 --duration 10

Traffic goes to 127.0.0.1 only; every loop is bounded in count and time.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import websockets
from bokeh.protocol import Protocol
from bokeh.protocol.receiver import Receiver

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from appserver import serve_app  # noqa: E402
TOKEN = re.compile(r'"token":"([^"]+)"')


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def find_slider(doc: dict, field: str) -> str:
    """The id of the explorer's slider for `field` (CSS class slider-FIELD), in a pulled document's JSON."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "object" and "Slider" in node.get("name", "") and \
                    f"slider-{field}" in node.get("attributes", {}).get("css_classes", []):
                return node["id"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    raise LookupError(f"no slider with CSS class slider-{field} in the document")


class Learner:
    """One browser-like session on the Bokeh websocket protocol."""

    def __init__(self, base: str, path: str, query: str = "") -> None:
        self.base, self.path, self.query = base, path, query
        self.receiver = Receiver(Protocol())
        self.ws = None
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.reader: asyncio.Task | None = None

    async def open(self) -> dict:
        html = await asyncio.to_thread(lambda: urllib.request.urlopen(f"{self.base}/{self.path}{self.query}", timeout=30).read().decode())
        token = TOKEN.search(html).group(1)
        ws_url = self.base.replace("http://", "ws://") + f"/{self.path}/ws"
        self.ws = await websockets.connect(ws_url, subprotocols=["bokeh", token], max_size=None,
                                           origin=self.base, open_timeout=30)
        self.reader = asyncio.create_task(self._read())
        await self._expect("ACK")
        await self.send("PULL-DOC-REQ", {})
        doc = (await self._expect("PULL-DOC-REPLY")).content["doc"]
        # as BokehJS does once the page is drawn: Panel then applies updates at once instead of on the next tick
        await self.send("PATCH-DOC", {"events": [{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {
            "type": "event", "name": "document_ready", "values": {"type": "map"}}}]})
        return doc

    async def _read(self) -> None:
        async for frame in self.ws:
            msg = await self.receiver.consume(frame)
            if msg is not None:
                await self.inbox.put(msg)

    async def _expect(self, msgtype: str, timeout: float = 30):
        while True:
            msg = await asyncio.wait_for(self.inbox.get(), timeout)
            if msg.msgtype == "ERROR":
                raise RuntimeError(f"server error: {msg.content}")
            if msg.msgtype == msgtype:
                return msg

    async def send(self, msgtype: str, content: dict) -> None:
        header = {"msgid": uuid.uuid4().hex, "msgtype": msgtype}
        for part in (header, {}, content):
            await self.ws.send(json.dumps(part))

    async def move(self, slider: str, value: int, marker: str, timeout: float = 10) -> float:
        """Move the slider as a drag does (value, then value_throttled); seconds until `marker` comes back."""
        events = [{"kind": "ModelChanged", "model": {"id": slider}, "attr": attr, "new": value}
                  for attr in ("value", "value_throttled")]
        t0 = time.perf_counter()
        await self.send("PATCH-DOC", {"events": events})
        deadline = t0 + timeout
        while True:
            msg = await self._expect("PATCH-DOC", max(0.01, deadline - time.perf_counter()))
            if marker in json.dumps(msg.content, ensure_ascii=False):
                return time.perf_counter() - t0

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            self.reader.cancel()


@dataclass(frozen=True)
class Target:
    base: str  # http://127.0.0.1:PORT
    path: str  # the app's URL path
    marker: str  # what the page shows once T has changed, formatted with T


async def learner(target: Target, duration: float, pace: float, stats: Stats, opened: asyncio.Event,
                  go: asyncio.Event, seed: int) -> None:
    rng = random.Random(seed)
    me = Learner(target.base, target.path)
    try:
        slider = find_slider(await me.open(), "T")
        opened.set()
        await go.wait()
        end = time.monotonic() + duration
        T = 1024
        while time.monotonic() < end:
            T = rng.choice([t for t in range(max(2, T - 64), min(1024, T + 64) + 1) if t != T])  # a short drag
            stats.latencies.append(await me.move(slider, T, target.marker.format(T=T)))
            await asyncio.sleep(rng.uniform(0.5, 1.5) * pace)
    except Exception as e:  # noqa: BLE001 - every failure is a counted error, not a crash of the benchmark
        stats.errors.append(f"{type(e).__name__}: {e}")
        opened.set()
    finally:
        await me.close()


async def run_phase(target: Target, n: int, duration: float, pace: float, pid: int, seed: int) -> tuple[Stats, float]:
    """n sessions open, idle RSS measured, then all drag for `duration` seconds, then all close."""
    stats, go = Stats(), asyncio.Event()
    events = [asyncio.Event() for _ in range(n)]
    tasks = []
    for i in range(n):
        tasks.append(asyncio.create_task(learner(target, duration, pace, stats, events[i], go, seed + i)))
        await asyncio.sleep(0.05)  # a class arriving, not one burst
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 300)
    await asyncio.sleep(2)
    idle_rss = rss_mb(pid)
    go.set()
    await asyncio.wait_for(asyncio.gather(*tasks), duration + 120)
    return stats, idle_rss


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1e3 if xs else float("nan")


def settle_rss(pid, seconds: float = 8) -> float:
    time.sleep(seconds)  # unused-session cleanup runs every second with a 1 s lifetime
    return rss_mb(pid)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of dragging per session")
    ap.add_argument("--pace", type=float, default=2.0, help="mean seconds between one learner's slider moves")
    ap.add_argument("--marker", default="(8, 12, {T}, {T})",
                    help="text the server sends once T has changed (default: the score tensor's shape at B=8, h=12)")
    args = ap.parse_args()
    if not (1 <= args.sessions <= 200 and 1 <= args.duration <= 600 and 0.1 <= args.pace <= 60):
        ap.error("keep --sessions in 1..200, --duration in 1..600 s and --pace in 0.1..60 s")
    lifetime = ("--check-unused-sessions", "1000", "--unused-session-lifetime", "1000")  # closed pages go at once
    with serve_app(lifetime) as base:
        pid = base.pid
        target = Target(str(base), "explorer", args.marker)
        warm, _ = asyncio.run(run_phase(target, 1, 5, args.pace, pid, seed=1))  # imports, caches: one-time costs
        baseline_rss = settle_rss(pid)
        solo, _ = asyncio.run(run_phase(target, 1, min(20, args.duration), args.pace / 4, pid, seed=2))
        solo_rss = settle_rss(pid)
        load, idle_rss = asyncio.run(run_phase(target, args.sessions, args.duration, args.pace, pid, seed=100))
        after_rss = settle_rss(pid, 15)
        asyncio.run(run_phase(target, n_idle := args.sessions, 0, args.pace, pid, seed=500))  # open, close: no drags
        again_rss = settle_rss(pid, 15)
    n = args.sessions
    print(f"load test: {n} sessions x {args.duration:.0f} s, one slider move per ~{args.pace:.1f} s each, "
          f"1 server process, {psutil.cpu_count()} cores")
    print(f"{'':28}{'updates':>9}{'errors':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for name, s in (("baseline: 1 session", solo), (f"load: {n} sessions", load)):
        print(f"{name:28}{len(s.latencies):>9}{len(s.errors) + len(warm.errors) * (name[0] == 'b'):>8}"
              f"{pct(s.latencies, .5):>9.1f}{pct(s.latencies, .95):>9.1f}{pct(s.latencies, 1):>9.1f}")
    print(f"p95 ratio load / baseline: {pct(load.latencies, .95) / pct(solo.latencies, .95):.2f}")
    print(f"server RSS: before load {baseline_rss:.1f} MB (after a warm-up session), {n} idle sessions "
          f"{idle_rss:.1f} MB = {(idle_rss - baseline_rss) / n:.2f} MB per idle session, after all closed "
          f"{after_rss:.1f} MB ({100 * (after_rss - baseline_rss) / baseline_rss:+.1f} %; 1-session run left "
          f"{solo_rss - baseline_rss:+.1f} MB)")
    grew = again_rss - after_rss
    verdict = ("no growth: what the first class left is the process's high-water mark, reused, not per-session garbage"
               if grew < 0.1 * (idle_rss - baseline_rss) else "it grew: sessions leave memory behind")
    print(f"leak check: a second class of {n_idle} sessions opened and closed leaves {again_rss:.1f} MB "
          f"({grew:+.1f} MB against the first): {verdict}")
    for e in sorted(set(load.errors + solo.errors + warm.errors))[:10]:
        print("error:", e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
