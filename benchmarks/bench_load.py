"""A class on one server: the server's cost per move, the sustained moves per second, and 50 concurrent sessions.

Each simulated learner does what a browser does: GET /explorer (a session and its token), open the Bokeh
websocket, pull the document, say `document_ready`, then send PATCH-DOC events that move a slider, as BokehJS
does when a handle moves. A move counts as done when the server has sent back the patch that puts the new
shape into the shapes table. Three parts, all against one `panel serve` (with `--num-procs N` if asked):

1. cost per move (one session, moves one after another): server CPU per uncached move (every move a new
   configuration), per cached move (two configurations, alternately), and per move of a bare Panel page
   (benchmarks/bare_page.py) as the floor;
2. sustained rate: 20 sessions, each with its own B so that every move is a configuration never seen, at a
   rising total rate of moves per second for --rate-seconds each; the highest rate served with p95 <= 300 ms
   (and >= 90 % of the moves asked for done) is what one server sustains;
3. a class: --sessions learners moving T about every --pace s for --duration s (a short drag each: many
   configurations recur): p50/p95 latency against a single-session baseline, errors, server RSS per idle
   session, and RSS once every session has closed (and after a second class: growth means a leak).

    python benchmarks/bench_load.py                          # the figures of docs/figures.md
    python benchmarks/bench_load.py --num-procs 2 --sessions 0   # the sustained rate on 2 processes only
    python benchmarks/bench_load.py --sessions 5 --duration 10 --rates 5,10

Traffic goes to 127.0.0.1 only; every loop is bounded in count and time.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
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
    opens: list[float] = field(default_factory=list)  # seconds from GET to the whole document received


def _tree(pid: int) -> list[psutil.Process]:
    """The server and its workers (panel serve --num-procs N forks N workers)."""
    parent = psutil.Process(pid)
    return [parent, *parent.children(recursive=True)]


def rss_mb(pid: int) -> float:
    return sum(p.memory_info().rss for p in _tree(pid)) / 2**20


def cpu_s(pid: int) -> float:
    return sum(t.user + t.system for t in (p.cpu_times() for p in _tree(pid)))


@dataclass(frozen=True)
class Input:
    """Where a page's input for one field goes, and what BokehJS sends for one move of it.

    A Panel slider (the bare page) sends two model changes per move, `value` and `value_throttled`; the explorer's
    controls card (app/cards/controls/view.py, an ESM component) sends one change of its data model's `asked`:
    the list of unanswered inputs, here [[count, field, value]], the count rising with every input.
    """

    id: str
    field: str
    esm: bool  # the explorer's controls card, not a Panel slider

    def events(self, value: int, count: int) -> list[dict]:
        if self.esm:
            return [{"kind": "ModelChanged", "model": {"id": self.id}, "attr": "asked", "new": [[count, self.field, value]]}]
        return [{"kind": "ModelChanged", "model": {"id": self.id}, "attr": attr, "new": value}
                for attr in ("value", "value_throttled")]


def _objects(doc: dict):
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "object":
                yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def find_slider(doc: dict, field: str) -> Input:
    """The input for `field` in a pulled document's JSON: the explorer's controls panel (its data model), or a
    Panel slider with CSS class slider-FIELD."""
    for node in _objects(doc):
        attributes = node.get("attributes", {})
        if "ControlsPanel" in node.get("name", ""):
            return Input(node["id"], field, esm=True)  # the data model of Panel's ESM component
        if "Slider" in node.get("name", "") and f"slider-{field}" in attributes.get("css_classes", []):
            return Input(node["id"], field, esm=False)
    raise LookupError(f"no controls card and no slider with CSS class slider-{field} in the document")


class Learner:
    """One browser-like session on the Bokeh websocket protocol."""

    def __init__(self, base: str, path: str, query: str = "") -> None:  # query: "?B=3" etc.
        self.base, self.path, self.query = base, path, query
        self.receiver = Receiver(Protocol())
        self.ws = None
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.reader: asyncio.Task | None = None
        self.inputs = 0  # inputs sent (the controls card's count)

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

    async def move(self, slider: Input, value: int, marker: str, timeout: float = 10) -> float:
        """Move the slider as BokehJS sends it (Input.events); seconds until `marker` comes back."""
        self.inputs += 1
        t0 = time.perf_counter()
        await self.send("PATCH-DOC", {"events": slider.events(value, self.inputs)})
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
        t0 = time.perf_counter()
        slider = find_slider(await me.open(), "T")
        stats.opens.append(time.perf_counter() - t0)
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


ARRIVAL = 0.1  # seconds between two learners opening the page (--arrival): 50 within 5 s


async def run_phase(target: Target, n: int, duration: float, pace: float, pid: int, seed: int) -> tuple[Stats, float]:
    """n sessions open, idle RSS measured, then all drag for `duration` seconds, then all close."""
    stats, go = Stats(), asyncio.Event()
    events = [asyncio.Event() for _ in range(n)]
    tasks = []
    for i in range(n):
        tasks.append(asyncio.create_task(learner(target, duration, pace, stats, events[i], go, seed + i)))
        await asyncio.sleep(ARRIVAL)  # a class arriving, not one burst
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


# --- 1. cost per move -----------------------------------------------------------------------------------------
async def cost_per_move(base: str, pid: int, path: str, marker: str, values: list[int]) -> float:
    """Server CPU ms per move, one session, each move sent once the previous one is shown."""
    me = Learner(base, path)
    try:
        slider = find_slider(await me.open(), "T")
        for v in values[:4]:  # warm: the first moves build what every later one reuses
            await me.move(slider, v, marker.format(T=v))
        await asyncio.sleep(1)
        c0 = cpu_s(pid)
        for v in values[4:]:
            await me.move(slider, v, marker.format(T=v))
        return (cpu_s(pid) - c0) / (len(values) - 4) * 1e3
    finally:
        await me.close()


# --- 2. sustained rate ----------------------------------------------------------------------------------------
@dataclass
class Mover:
    """An open session with its own B (9, 10, ...); `T` walks down from 1,023: every move a new configuration."""

    learner: Learner
    slider: Input
    B: int
    T: int = 1024


async def open_movers(base: str, n: int) -> list[Mover]:
    movers = []
    for i in range(n):
        me = Learner(base, "explorer")
        doc = await me.open()
        B = 9 + i  # set by a move, not by the link: with --num-procs a session re-created in another worker
        await me.move(find_slider(doc, "B"), B, f"({B}, 12, 1024, 1024)", timeout=60)  # does not see the link
        movers.append(Mover(me, find_slider(doc, "T"), B=B))
        await asyncio.sleep(0.05)
    return movers


async def rate_step(movers: list[Mover], rate: float, seconds: float, seed: int) -> tuple[Stats, float]:
    """All movers together ask for `rate` moves per second (each at its own random times) for `seconds`;
    returns the latencies and the achieved rate. A mover still waiting for its last move sends the next late."""
    stats = Stats()
    end = time.monotonic() + seconds

    async def run(m: Mover, rng: random.Random) -> None:
        due = time.monotonic() + rng.uniform(0, len(movers) / rate)
        while True:
            if due >= end or m.T <= 2:
                return
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            m.T -= 1
            try:
                stats.latencies.append(await m.learner.move(m.slider, m.T, f"({m.B}, 12, {m.T}, {m.T})"))
            except Exception as e:  # noqa: BLE001 - counted, not fatal
                stats.errors.append(f"{type(e).__name__}: {e}")
                return
            due += rng.expovariate(rate / len(movers))

    t0 = time.monotonic()
    await asyncio.gather(*(run(m, random.Random(seed + i)) for i, m in enumerate(movers)))
    return stats, len(stats.latencies) / max(seconds, time.monotonic() - t0)


async def sustained(base: str, rates: list[float], seconds: float, n: int = 20) -> list[tuple[float, Stats, float]]:
    """The rate ladder, stopping after the first rate not sustained."""
    movers = await open_movers(base, n)
    await asyncio.sleep(3)  # the sessions' own start-up work is done before the first rate
    out = []
    try:
        for k, rate in enumerate(rates):
            stats, achieved = await rate_step(movers, rate, seconds, seed=1000 * k)
            out.append((rate, stats, achieved))
            if not ok(rate, stats, achieved):
                break
            await asyncio.sleep(2)
    finally:
        for m in movers:
            await m.learner.close()
    return out


def ok(rate: float, stats: Stats, achieved: float) -> bool:
    return not stats.errors and pct(stats.latencies, .95) <= 300 and achieved >= 0.9 * rate




def main() -> int:
    global ARRIVAL
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=50, help="the class (0: skip the class)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of dragging per session")
    ap.add_argument("--pace", type=float, default=2.0, help="mean seconds between one learner's slider moves")
    ap.add_argument("--arrival", type=float, default=ARRIVAL,
                    help="seconds between two learners opening the page (default 0.1: 50 pages in 5 s)")
    ap.add_argument("--num-procs", type=int, default=1, help="panel serve --num-procs")
    ap.add_argument("--rates", default="5,10,15,20,25,30,40,50,60", help="total moves per second to try, rising")
    ap.add_argument("--rate-seconds", type=float, default=12.0, help="seconds per rate")
    ap.add_argument("--marker", default="(8, 12, {T}, {T})",
                    help="text the server sends once T has changed (default: the score tensor's shape at B=8, h=12)")
    args = ap.parse_args()
    ARRIVAL = args.arrival
    rates = [float(r) for r in args.rates.split(",") if r.strip()]
    if not (0 <= args.sessions <= 200 and 1 <= args.duration <= 600 and 0.1 <= args.pace <= 60
            and 1 <= args.num_procs <= 4 and rates and all(0 < r <= 200 for r in rates)):
        ap.error("keep --sessions in 0..200, --duration in 1..600 s, --pace in 0.1..60 s, --num-procs in 1..4, "
                 "--rates in (0, 200]")
    load_before = os.getloadavg()
    lifetime = ("--check-unused-sessions", "1000", "--unused-session-lifetime", "1000")  # closed pages go at once
    procs = ("--num-procs", str(args.num_procs)) if args.num_procs > 1 else ()
    with serve_app(lifetime + procs, apps=("benchmarks/bare_page.py",), warm=True) as base:
        pid, b = base.pid, str(base)
        cost = {}
        if args.num_procs == 1:  # with several workers, one session's CPU is spread over processes: not comparable
            cost["floor: bare Panel page"] = asyncio.run(cost_per_move(b, pid, "bare_page", "T = {T}", [1023, 1024] * 32))
            cost["explorer, cached"] = asyncio.run(cost_per_move(b, pid, "explorer", args.marker, [1000, 1001] * 32))
            cost["explorer, uncached"] = asyncio.run(cost_per_move(b, pid, "explorer", args.marker,
                                                                   list(range(1000, 936, -1))))
        if args.sessions:  # first: the memory per idle session is read against a process that saw one session
            target = Target(b, "explorer", args.marker)
            warm, _ = asyncio.run(run_phase(target, 1, 5, args.pace, pid, seed=1))  # imports, caches: one-time costs
            baseline_rss = settle_rss(pid)
            solo, _ = asyncio.run(run_phase(target, 1, min(20, args.duration), args.pace / 4, pid, seed=2))
            solo_rss = settle_rss(pid)
            load, idle_rss = asyncio.run(run_phase(target, args.sessions, args.duration, args.pace, pid, seed=100))
            after_rss = settle_rss(pid, 15)
            asyncio.run(run_phase(target, n_idle := args.sessions, 0, args.pace, pid, seed=500))  # open, close only
            again_rss = settle_rss(pid, 15)
        ladder = asyncio.run(sustained(b, rates, args.rate_seconds))

    print(f"server: panel serve, {args.num_procs} process(es); {psutil.cpu_count()} cores shared; load average "
          f"before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    if cost:
        print("\n1. server CPU per move (one session, whole server process)")
        for name, ms in cost.items():
            print(f"   {name:28}{ms:7.1f} ms")
        floor = cost["floor: bare Panel page"]
        print(f"   ratio to the floor: cached {cost['explorer, cached'] / floor:.2f} (target <= 1.3), uncached "
              f"{cost['explorer, uncached'] / floor:.2f} (target <= 2)")
    print(f"\n2. sustained rate: 20 sessions, every move a new configuration, {args.rate_seconds:.0f} s per rate")
    print(f"   {'asked/s':>8}{'done/s':>8}{'moves':>7}{'errors':>7}{'p50 ms':>8}{'p95 ms':>8}  sustained")
    for rate, st, achieved in ladder:
        print(f"   {rate:8.0f}{achieved:8.1f}{len(st.latencies):7}{len(st.errors):7}{pct(st.latencies, .5):8.0f}"
              f"{pct(st.latencies, .95):8.0f}  {'yes' if ok(rate, st, achieved) else 'no'}")
    best = max((r for r, st, a in ladder if ok(r, st, a)), default=0)
    print(f"   highest sustained: {best:.0f} moves/s with p95 <= 300 ms = a class of {best * 2:.0f} learners each "
          f"moving a slider every 2 s")
    for e in sorted({e for _, st, _ in ladder for e in st.errors})[:5]:
        print("   error:", e)
    if not args.sessions:
        return 0
    n = args.sessions
    print(f"\n3. a class: {n} sessions x {args.duration:.0f} s, one slider move per ~{args.pace:.1f} s each")
    print(f"{'':28}{'updates':>9}{'errors':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for name, s in (("baseline: 1 session", solo), (f"load: {n} sessions", load)):
        print(f"{name:28}{len(s.latencies):>9}{len(s.errors) + len(warm.errors) * (name[0] == 'b'):>8}"
              f"{pct(s.latencies, .5):>9.1f}{pct(s.latencies, .95):>9.1f}{pct(s.latencies, 1):>9.1f}")
    print(f"p95 ratio load / baseline: {pct(load.latencies, .95) / pct(solo.latencies, .95):.2f}")
    print(f"opening the page ({n} learners, one every {ARRIVAL:.2f} s: GET, websocket, whole document): p50 "
          f"{pct(load.opens, .5):.0f} ms, max {pct(load.opens, 1):.0f} ms (target: every page within 5 s)")
    print(f"server RSS: before load {baseline_rss:.1f} MB (after a warm-up session), {n} idle sessions "
          f"{idle_rss:.1f} MB = {(idle_rss - baseline_rss) / n:.2f} MB per idle session (target <= 3), after all "
          f"closed {after_rss:.1f} MB ({100 * (after_rss - baseline_rss) / baseline_rss:+.1f} %; 1-session run left "
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
