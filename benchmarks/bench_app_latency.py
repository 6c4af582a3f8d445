"""The explorer against the floor: a bare Panel page (benchmarks/bare_page.py) served by the same process.

Measured in headless Chromium, side by side in one run, and printed with ratios to the floor (issue 16):

- opening a page: the server's CPU per page opened (pages of both kinds taken in turns, each until its full
  view), the Bokeh models in the page's document, and the server's memory per idle session.
- page load: navigation start -> full view (sliders, table, chart's bars), and time to first byte; cold cache.
- key press -> view updated: an arrow key on a focused slider (a real keydown), timed inside the page from
  the keydown to the first animation frame that shows what the server answered. Explorer: the shapes table
  shows the new (B, h, T, T) (T slider; every press a configuration never seen: new; and bouncing between two
  seen values: cached), or the chart's "blocks × L" bar and the table's "× L" both show the new L (L slider).
  Floor: the bare page's text shows the new T (a server round trip: the slider's own label changes in the
  browser alone). New configurations are timed after the architecture's first two T presses, which start
  its symbolic pass in the server's background (model.symbolic); that one-off is printed apart. p50 and p95,
  at GPT-2 small and GPT-3 175B; the server's CPU per press beside the floor's.
- continuous drag: the mouse drags the T handle for ~2 s at 60 moves/s; distinct table states shown per
  second while dragging, and the time from release until the value under the handle is shown.
- a class: 10 pages opened one every 0.25 s (each with its own B), then each presses T every 1.5 s for a
  minute: the slowest page's load, p50/p95 of the presses, errors.

Targets: CPU to open <= 3x the floor; CPU per press <= 2x (new configuration) and <= 1.3x (cached); load
<= 1.3x; first byte <= 2x; key press p50 <= 1.5x; <= 3 MB per idle session; the class: every page within 10 s,
0 errors, p95 <= 300 ms. Figures, not assertions.

    python benchmarks/bench_app_latency.py [--samples 30] [--loads 6] [--opens 6] [--class-seconds 60]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
SYMBOLIC_BUILD_S = 4.0  # time given to the server's background build of an architecture's symbolic pass
sys.path.insert(0, str(ROOT / "tests"))

from appserver import CHROMIUM, CHROMIUM_ARGS, serve_app  # noqa: E402

import model  # noqa: E402

# Installed once per page: remember the time of every keydown and pointer release; `__waitFor(check)` resolves
# with the time from the last keydown (or release) to the first animation frame in which check() is true.
SETUP_JS = """
() => {
  window.__keydown = null;
  document.addEventListener('keydown', () => { window.__keydown = performance.now(); }, true);
  document.addEventListener('pointerup', () => { window.__keydown = performance.now(); }, true);
  const find = (root, sel) => {
    const hit = root.querySelector(sel); if (hit) return hit;
    for (const el of root.querySelectorAll('*')) { if (el.shadowRoot) { const r = find(el.shadowRoot, sel); if (r) return r; } }
    return null;
  };
  window.__find = find;
  window.__view = find(document, 'table.shapes') || find(document, '.bare');
  window.__viewText = () => window.__view.isConnected ? window.__view.textContent
                              : (window.__view = find(document, 'table.shapes') || find(document, '.bare')).textContent;
  window.__bar = (key) => {  // a bar's parameter count, as the parameter chart shows it
    const b = find(document, `.part[data-key="${key}"]`); return b && Number(b.dataset.value);
  };
  window.__waitFor = (check) => new Promise((resolve, reject) => {
    const t0 = performance.now();
    const tick = () => {
      if (check()) { resolve(performance.now() - window.__keydown); return; }
      if (performance.now() - t0 > 10000) { reject(new Error('no update within 10 s')); return; }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  window.__record = () => {  // every distinct view state, with its time, until __recording is false
    window.__states = []; window.__recording = true; let last = null;
    const tick = () => {
      const t = window.__viewText();
      if (t !== last) { window.__states.push(performance.now()); last = t; }
      if (window.__recording) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  };
}
"""

# Before any page script: poll each frame for the full view; record its time (ms since navigation start).
LOAD_JS = """
window.__full = null;
(() => {
  const find = (root, sel) => {
    const hit = root.querySelector(sel); if (hit) return hit;
    for (const el of root.querySelectorAll('*')) { if (el.shadowRoot) { const r = find(el.shadowRoot, sel); if (r) return r; } }
    return null;
  };
  const full = () => {  // the full page's sliders, table and the budget's chart drawn (the bare page: its slider)
    if (!document.body) return false;
    if (find(document, '.bare')) return !!find(document, '.noUi-handle');
    return !!(find(document, '.explorer') && find(document, '.noUi-handle') && find(document, 'table.shapes tbody tr')
              && find(document, '.parts .part'));
  };
  const poll = () => { if (full()) { window.__full = performance.now(); } else { requestAnimationFrame(poll); } };
  requestAnimationFrame(poll);
})();
"""


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def press_and_time(page, handle, key: str, check_js: str) -> float:
    """Press `key` on the focused slider handle; ms from keydown to the frame where check_js holds."""
    page.evaluate(f"() => {{ window.__pending = window.__waitFor(() => {{ {check_js} }}); }}")
    handle.press(key)
    return page.evaluate("() => window.__pending")


def open_page(browser, base: str, path: str):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{base}/{path}")
    page.locator("table.shapes, .bare").first.wait_for(timeout=60_000)
    page.evaluate(SETUP_JS)
    return page, errors


def shape_check(cfg: model.Config, T: int) -> str:
    """JS condition: the table shows the (B, h, T, T) shape of the scores at this T."""
    return f"return window.__viewText().includes('({cfg.B}, {cfg.h}, {T}, {T})');"


def bare_check(T: int) -> str:
    return f"return window.__viewText().includes('T = {T}');"


def presses(page, check, values: list[int], keys: list[str]) -> list[float]:
    handle = page.locator(".slider-T .noUi-handle")
    handle.focus()
    return [press_and_time(page, handle, key, check(v)) for v, key in zip(values, keys)]


def bounce(T: int, n: int) -> tuple[list[int], list[str]]:
    """n presses alternating T + 1 (ArrowRight) and T (ArrowLeft): two configurations, both seen after the first."""
    return [T + 1 if i % 2 == 0 else T for i in range(n)], ["ArrowRight" if i % 2 == 0 else "ArrowLeft" for i in range(n)]


def bench_L(page, cfg: model.Config, n: int, step: int) -> list[float]:
    """n presses on L from cfg.L, each a configuration not seen before (step -1: ArrowLeft, +1: ArrowRight);
    the chart's "blocks × L" bar and the table's "× L" heading must both show the new L."""
    handle = page.locator(".slider-L .noUi-handle")
    handle.focus()
    b = model.budget(cfg)
    per_block = b.params_attn_block + b.params_mlp_block
    key = "ArrowLeft" if step < 0 else "ArrowRight"
    out = []
    for i in range(1, n + 1):
        L = cfg.L + step * i
        check = (f"return window.__bar('params/blocks') === {L * per_block} && "
                 f"window.__viewText().includes('× L = {L:,}');")
        out.append(press_and_time(page, handle, key, check))
    return out


def drag(page, check, seconds: float = 2.0, pixels: float = 300) -> tuple[float, float]:
    """Drag the T handle left for `seconds` at ~60 moves/s; (distinct view states per second while dragging,
    ms from release until the value under the handle is shown)."""
    box = page.locator(".slider-T .noUi-handle").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.evaluate("() => window.__record()")
    start = page.evaluate("() => performance.now()")
    steps = int(seconds * 60)
    t0 = time.perf_counter()
    for i in range(1, steps + 1):
        page.mouse.move(x - pixels * i / steps, y)
        time.sleep(max(0.0, t0 + i / 60 - time.perf_counter()))
    end = page.evaluate("() => performance.now()")
    value = page.locator(".slider-T .noUi-handle").get_attribute("aria-valuenow")
    page.evaluate(f"() => {{ window.__pending = window.__waitFor(() => {{ {check(int(float(value)))} }}); }}")
    page.mouse.up()
    settle = page.evaluate("() => window.__pending")
    states = page.evaluate(f"() => {{ window.__recording = false; return window.__states.filter(t => t > {start} && t <= {end}).length; }}")
    return states / ((end - start) / 1e3), settle


def page_load(browser, url: str) -> tuple[float, float]:
    """(ms from navigation start to the full view, ms to the first byte), in a fresh browser context (cold cache)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.add_init_script(LOAD_JS)
        page.goto(url)
        page.wait_for_function("() => window.__full !== null", timeout=60_000)
        full = page.evaluate("() => window.__full")
        ttfb = page.evaluate("() => performance.getEntriesByType('navigation')[0].responseStart")
        return full, ttfb
    finally:
        context.close()


def cpu_seconds(pid: int) -> float:
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


MODELS_JS = "() => Bokeh.documents[0].all_models.size"


def open_costs(browser, urls: dict[str, str], pid: int, k: int) -> dict[str, tuple[float, int, float]]:
    """Open `k` pages of each of `urls`, taking turns (the pages compared see the same load), each until its full
    view and 0.5 s more: {name: (median server CPU ms per page, Bokeh models in the page's document, server RSS
    MiB per idle session: the growth while its k pages stay open, over k)}."""
    cpu: dict[str, list[float]] = {name: [] for name in urls}
    models: dict[str, int] = {}
    rss: dict[str, float] = {name: 0.0 for name in urls}
    contexts: dict[str, list] = {name: [] for name in urls}
    try:
        for _ in range(k):
            for name, url in urls.items():
                r0, c0 = psutil.Process(pid).memory_info().rss, cpu_seconds(pid)
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                contexts[name].append(context)
                page = context.new_page()
                page.add_init_script(LOAD_JS)
                page.goto(url)
                page.wait_for_function("() => window.__full !== null", timeout=60_000)
                models[name] = page.evaluate(MODELS_JS)
                time.sleep(0.5)  # the session's last messages
                cpu[name].append((cpu_seconds(pid) - c0) * 1e3)
                rss[name] += (psutil.Process(pid).memory_info().rss - r0) / 2**20
        return {name: (statistics.median(cpu[name]), models[name], rss[name] / k) for name in urls}
    finally:
        for group in contexts.values():
            for context in group:
                context.close()


def a_class(browser, base: str, n: int = 10, every: float = 0.25, period: float = 1.5,
            seconds: float = 60, floor: bool = False) -> tuple[float, list[float], int]:
    """n pages opened one every `every` s, each with its own B (every press a new configuration); then each
    presses ArrowLeft on T every `period` s for `seconds`. Returns (the slowest page's ms from navigation start
    to its full view, every press's ms to the table showing the new T, errors). With `floor`, the same class of
    bare pages (their text shows the new T): what the machine, its browser and Panel cost on their own."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pages, errors = [], []
    try:
        for i in range(n):
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.add_init_script(LOAD_JS)
            page.goto(f"{base}/bare_page" if floor else f"{base}/explorer?B={i + 1}", wait_until="commit")
            pages.append(page)
            time.sleep(every)
        full = []
        for page in pages:
            page.wait_for_function("() => window.__full !== null", timeout=120_000)
            full.append(page.evaluate("() => window.__full"))
            page.evaluate(SETUP_JS)
            page.evaluate("() => { window.__lat = []; window.__failed = 0; }")
            page.locator(".slider-T .noUi-handle").focus()
        T = [1024] * n
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            k = i % n
            T[k] -= 1
            check = bare_check(T[k]) if floor else f"return window.__viewText().includes('({k + 1}, 12, {T[k]}, {T[k]})');"
            pages[k].evaluate(f"() => {{ window.__waitFor(() => {{ {check} }}).then((ms) => window.__lat.push(ms), "
                              f"() => {{ window.__failed += 1; }}); }}")
            pages[k].keyboard.press("ArrowLeft")
            i += 1
            time.sleep(max(0.0, period / n - 0.002))
        time.sleep(3)
        latencies = [x for page in pages for x in page.evaluate("() => window.__lat")]
        failed = sum(page.evaluate("() => window.__failed") for page in pages)
        return max(full), latencies, failed + len(errors)
    finally:
        context.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30, help="key presses per case (20 ... 47)")
    parser.add_argument("--loads", type=int, default=6, help="page loads per page (cold cache each)")
    parser.add_argument("--opens", type=int, default=6, help="pages opened per page for the server's cost to open")
    parser.add_argument("--class-seconds", type=float, default=60, help="seconds of key presses in the class (0: none)")
    args = parser.parse_args()
    n = min(47, max(20, args.samples))  # GPT-2 small's L slider walks 1 ... 48: at most 47 new values
    from playwright.sync_api import sync_playwright

    keys: list[tuple[str, str, list[float]]] = []  # (preset, case, ms)
    drags: list[tuple[str, float, float]] = []
    cpu: dict[str, float] = {}
    errors: list[str] = []
    load_before = os.getloadavg()
    with serve_app(apps=("benchmarks/bare_page.py",), warm=True) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            urls = {"floor": f"{base}/bare_page", "explorer": f"{base}/explorer"}
            open_costs(browser, urls, base.pid, 1)  # warm: imports and caches of the first page
            opens = open_costs(browser, urls, base.pid, args.opens)
            loads = {"floor": [], "explorer": []}
            for _ in range(args.loads):
                loads["floor"].append(page_load(browser, f"{base}/bare_page"))
                loads["explorer"].append(page_load(browser, f"{base}/explorer?preset=gpt2-small"))

            page, errs = open_page(browser, base, "bare_page")
            time.sleep(0.5)
            c0 = cpu_seconds(base.pid)
            keys.append(("floor", "T key press", presses(page, bare_check, *bounce(1024, n))))
            cpu["floor"] = (cpu_seconds(base.pid) - c0) / n * 1e3
            drags.append(("floor", *drag(page, bare_check)))
            errors += errs
            page.close()
            for name in ("gpt2-small", "gpt3-175b"):
                cfg = model.PRESETS[name]
                page, errs = open_page(browser, base, f"explorer?preset={name}")
                time.sleep(0.5)
                check = lambda T, cfg=cfg: shape_check(cfg, T)  # noqa: E731
                # The architecture's second T starts its symbolic pass (model.symbolic) in the server's background:
                # a one-off per architecture and process, measured apart from the presses after it.
                c0 = cpu_seconds(base.pid)
                presses(page, check, [cfg.T - 1, cfg.T - 2], ["ArrowLeft"] * 2)
                time.sleep(SYMBOLIC_BUILD_S)
                cpu[f"{name} first"] = (cpu_seconds(base.pid) - c0) * 1e3
                top = cfg.T - 2
                c0 = cpu_seconds(base.pid)
                keys.append((name, "T new config", presses(page, check, [top - i for i in range(1, n + 1)],
                                                            ["ArrowLeft"] * n)))
                cpu[f"{name} new"] = (cpu_seconds(base.pid) - c0) / n * 1e3
                presses(page, check, *bounce(top - n, 2))  # both seen: the cached case starts warm
                c0 = cpu_seconds(base.pid)
                keys.append((name, "T cached", presses(page, check, *bounce(top - n, n))))
                cpu[f"{name} cached"] = (cpu_seconds(base.pid) - c0) / n * 1e3
                drags.append((name, *drag(page, check)))
                errors += errs
                page.close()
                # L: downwards from the preset's L where there is room (GPT-3 175B, L = 96), else upwards from L = 1
                start_L, step = (cfg.L, -1) if cfg.L > n else (1, +1)
                start = dataclasses.replace(cfg, L=start_L, T=cfg.T - n - 5)
                page, errs = open_page(browser, base, f"explorer?preset={name}&L={start.L}&T={start.T}")
                keys.append((name, "L chart + table", bench_L(page, start, n, step)))
                errors += errs
                page.close()
            if args.class_seconds:
                classes = {name: a_class(browser, base, seconds=args.class_seconds, floor=name == "floor")
                           for name in ("floor", "explorer")}
        finally:
            browser.close()

    floor = next(v for p, _, v in keys if p == "floor")
    f50, f95 = statistics.median(floor), percentile(floor, 0.95)
    print(f"\nload average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} "
          f"({psutil.cpu_count()} cores shared)")
    print(f"\nkey press -> view updated in Chromium ({n} presses each; ms; floor: bare Panel page)\n")
    print(f"{'case':32} {'p50':>7} {'p95':>7} {'max':>7} {'p50/floor':>10} {'p95/floor':>10}")
    for preset, case, v in keys:
        p50, p95 = statistics.median(v), percentile(v, 0.95)
        print(f"{preset + '  ' + case:32} {p50:7.1f} {p95:7.1f} {max(v):7.1f} {p50 / f50:10.2f} {p95 / f95:10.2f}")
    print("target: p50/floor <= 1.5 (the floor is the bare page's round trip: its text shows the new T)")

    print("\ncontinuous drag of T (~2 s, 60 mouse moves/s)\n")
    print(f"{'page':14} {'states/s':>9} {'release -> final ms':>20}")
    for preset, rate, settle in drags:
        print(f"{preset:14} {rate:9.1f} {settle:20.1f}")
    print("targets: >= 20 states/s, release -> final <= 100 ms")

    print(f"\npage load, cold cache ({args.loads} loads each; ms; median)\n")
    fl = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in loads.items()}
    print(f"{'page':14} {'full view':>10} {'first byte':>11}")
    for k, (full, ttfb) in fl.items():
        print(f"{k:14} {full:10.1f} {ttfb:11.1f}")
    print(f"ratios: full view {fl['explorer'][0] / fl['floor'][0]:.2f} (target <= 1.3), "
          f"first byte {fl['explorer'][1] / fl['floor'][1]:.2f} (target <= 2)")

    print("\nserver CPU per T key press in Chromium (whole server process; ms, ratio to the bare page's)")
    for k, v in cpu.items():
        if k.endswith(" first"):
            continue
        target = {"new": "<= 2", "cached": "<= 1.3"}.get(k.split()[-1], "")
        print(f"  {k:22} {v:7.1f} ms  {v / cpu['floor']:5.2f}x  {('target ' + target) if target else ''}")
    for k, v in cpu.items():
        if k.endswith(" first"):
            print(f"  once per architecture and process, {k.split()[0]}: its first two T presses and the symbolic "
                  f"pass they start, {v:.0f} ms in all (model.symbolic)")

    print(f"\nopening a page ({args.opens} pages of each, taking turns, each until its full view; whole server "
          f"process; median)")
    print(f"{'page':10} {'CPU ms/page':>12} {'ratio':>6} {'Bokeh models':>13} {'MiB/idle session':>17}")
    for k, (ms, models, rss) in opens.items():
        print(f"{k:10} {ms:12.1f} {ms / opens['floor'][0]:6.2f} {models:13} {rss:17.2f}")
    print("targets: CPU to open <= 3x the bare page's; <= 3 MB per idle session")
    if args.class_seconds:
        print(f"\na class in Chromium: 10 pages opened one every 0.25 s, then each presses T every 1.5 s for "
              f"{args.class_seconds:.0f} s (every press a new configuration)")
        for name, (slowest, class_ms, class_errors) in classes.items():
            print(f"  {name:9} slowest page to its full view {slowest:.0f} ms; {len(class_ms)} presses, "
                  f"{class_errors} errors, p50 {percentile(class_ms, 0.5):.0f} ms, p95 {percentile(class_ms, 0.95):.0f} ms"
                  if class_ms else f"  {name:9} no press measured; {class_errors} errors")
        print("  targets (explorer): every page within 10,000 ms, 0 errors, p95 <= 300 ms")
    if errors:
        print(f"browser errors: {errors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
