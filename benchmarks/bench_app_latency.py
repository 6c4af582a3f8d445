"""Slider change -> updated table and chart in the page, measured in headless Chromium.

For GPT-2 small and GPT-3 175B, each sample presses an arrow key on a focused slider (a real keydown) and
times, inside the page, from the keydown to the first animation frame in which the shapes table shows the
new shape (T slider) or the chart's data source holds the new block total and the table the new "× L"
(L slider). Each T sample is a configuration never visited before (the model traces it: ~15 ms uncached);
each L sample is a new configuration too; the baseline, measured in the same run, bounces T between two
visited values, so `model.trace` answers from its cache and only the page's own round trip remains (Bokeh websocket, Panel's 50 ms slider debounce,
formatting, rendering). Prints p50/p95 per case and the ratio to that baseline. Targets: p50 <= 150 ms,
p95 <= 300 ms.

    python benchmarks/bench_app_latency.py [--samples 40]
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from appserver import CHROMIUM, CHROMIUM_ARGS, serve_app  # noqa: E402

import model  # noqa: E402


# Installed once per page: remember the time of every keydown; `__waitFor(check)` resolves with the time from
# the last keydown to the first animation frame in which check() is true.
SETUP_JS = """
() => {
  window.__keydown = null;
  document.addEventListener('keydown', () => { window.__keydown = performance.now(); }, true);
  const find = (root, sel) => {
    const hit = root.querySelector(sel); if (hit) return root;
    for (const el of root.querySelectorAll('*')) { if (el.shadowRoot) { const r = find(el.shadowRoot, sel); if (r) return r; } }
    return null;
  };
  window.__tableRoot = find(document, 'table.shapes');
  window.__tableText = () => window.__tableRoot.querySelector('table.shapes').textContent;
  window.__source = () => Bokeh.documents[0].get_model_by_name('budget-parts');
  window.__waitFor = (check) => new Promise((resolve, reject) => {
    const t0 = performance.now();
    const tick = () => {
      if (check()) { resolve(performance.now() - window.__keydown); return; }
      if (performance.now() - t0 > 10000) { reject(new Error('no update within 10 s')); return; }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}
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


def open_page(browser, base: str, query: str):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{base}/explorer{query}")
    page.locator("table.shapes").first.wait_for(timeout=60_000)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].get_model_by_name('budget-parts')")
    page.evaluate(SETUP_JS)
    return page, errors


def shape_check(cfg: model.Config, T: int) -> str:
    """JS condition: the table shows the (B, h, T, T) shape of the scores at this T."""
    return f"return window.__tableText().includes('({cfg.B}, {cfg.h}, {T}, {T})');"


def bench_T(page, cfg: model.Config, n: int) -> list[float]:
    """n presses of ArrowLeft on T from T_max: each a configuration not seen before."""
    handle = page.locator(".slider-T .noUi-handle")
    handle.focus()
    out = []
    for i in range(1, n + 1):
        out.append(press_and_time(page, handle, "ArrowLeft", shape_check(cfg, cfg.T - i)))
    return out


def bench_cached(page, cfg: model.Config, n: int, T: int) -> list[float]:
    """Baseline: T bounces between T and T + 1, both traced already (model cache hits): the page's own round trip."""
    handle = page.locator(".slider-T .noUi-handle")
    handle.focus()
    out = []
    for i in range(n):
        key, t = ("ArrowRight", T + 1) if i % 2 == 0 else ("ArrowLeft", T)
        out.append(press_and_time(page, handle, key, shape_check(cfg, t)))
    return out


def bench_L(page, cfg: model.Config, n: int, step: int) -> list[float]:
    """n presses on L from cfg.L, each a configuration not seen before (step -1: ArrowLeft, +1: ArrowRight);
    the chart's "blocks × L" bar (its data source) and the table's "× L" heading must both show the new L."""
    handle = page.locator(".slider-L .noUi-handle")
    handle.focus()
    b = model.budget(cfg)
    per_block = b.params_attn_block + b.params_mlp_block
    key = "ArrowLeft" if step < 0 else "ArrowRight"
    out = []
    for i in range(1, n + 1):
        L = cfg.L + step * i
        check = (f"const s = window.__source(); return s && Number(s.data.value[1]) === {L * per_block} && "
                 f"window.__tableText().includes('× L = {L:,}');")
        out.append(press_and_time(page, handle, key, check))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40, help="samples per case (30 ... 47)")
    args = parser.parse_args()
    n = min(47, max(30, args.samples))  # GPT-2 small's L slider walks 1 ... 48: at most 47 new values
    from playwright.sync_api import sync_playwright

    rows: list[tuple[str, list[float]]] = []
    errors: list[str] = []
    with serve_app() as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            for name in ("gpt2-small", "gpt3-175b"):
                cfg = model.PRESETS[name]
                page, errs = open_page(browser, base, f"?preset={name}")
                page.locator(".slider-T .noUi-handle").focus()
                time.sleep(0.5)
                rows.append((f"{name}  T  (new config)", bench_T(page, cfg, n)))
                rows.append((f"{name}  T  (cached: baseline)", bench_cached(page, cfg, n, T=cfg.T - n)))
                errors += errs
                page.close()
                # L: downwards from the preset's L where there is room (GPT-3 175B, L = 96), else upwards from L = 1
                # (GPT-2 small; the L slider reaches 48), at a T the T benchmarks never visited: all new configs
                start_L, step = (cfg.L, -1) if cfg.L > n else (1, +1)
                start = dataclasses.replace(cfg, L=start_L, T=cfg.T - n - 5)
                page, errs = open_page(browser, base, f"?preset={name}&L={start.L}&T={start.T}")
                rows.append((f"{name}  L  (chart + table)", bench_L(page, start, n, step)))
                errors += errs
                page.close()
        finally:
            browser.close()

    baseline = {name: statistics.median(v) for name, v in rows if "baseline" in name}
    print(f"\nslider key press -> table/chart updated in Chromium ({n} samples each; ms)\n")
    print(f"{'case':36} {'p50':>7} {'p95':>7} {'max':>7}  {'p50 / baseline':>14}")
    for name, v in rows:
        base_p50 = baseline[[k for k in baseline if k.split()[0] == name.split()[0]][0]]
        print(f"{name:36} {statistics.median(v):7.1f} {percentile(v, 0.95):7.1f} {max(v):7.1f}  "
              f"{statistics.median(v) / base_p50:14.2f}")
    p50 = max(statistics.median(v) for _, v in rows)
    p95 = max(percentile(v, 0.95) for _, v in rows)
    print(f"\nworst p50 {p50:.1f} ms (target <= 150), worst p95 {p95:.1f} ms (target <= 300)")
    if errors:
        print(f"browser errors: {errors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
