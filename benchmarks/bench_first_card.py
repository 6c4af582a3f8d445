"""Does one page's first heavy card stall another page? A key press on page A, timed while page B, in a fresh
server process, opens its training card and then makes its architecture's first new T (its symbolic pass).

Measured in headless Chromium (issue 24), against page A's own quiet presses in the same run:

1. a fresh `panel serve` (what `make run` starts); page A opens GPT-2 small (shapes and budget), presses T until
   its architecture's symbolic pass is built, then presses ArrowLeft on T `--presses` times: the quiet latency
   (keydown -> the frame showing the new (B, h, T, T));
2. page B opens `--preset` (default llama3-8b) with every card (page A's latency while B's page is built, the
   cost of opening any page, printed apart), then scrolls to its training card; page A keeps pressing until B's
   card is built: the latency while a fresh process builds its first training card;
3. page B presses T twice, a new (B, T) at its architecture (the second starts its symbolic pass); page A keeps
   pressing for `--busy-seconds`: the latency while the symbolic pass is built.

Target: page A's p50 and p95 within 2x its quiet ones while B builds its training card and its symbolic pass.
Figures, not assertions; `--cold` serves without app/warm.py, the baseline.

    python benchmarks/bench_first_card.py [--presses 20] [--preset llama3-8b] [--busy-seconds 4]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from appserver import CHROMIUM, CHROMIUM_ARGS, serve_app  # noqa: E402
from bench_app_latency import SETUP_JS, percentile, press_and_time, shape_check  # noqa: E402

import model  # noqa: E402

FIND_JS = """window.__find = (root, sel) => {
  const hit = root.querySelector(sel); if (hit) return hit;
  for (const el of root.querySelectorAll('*')) { if (el.shadowRoot) { const r = window.__find(el.shadowRoot, sel); if (r) return r; } }
  return null;
};"""
CARD_JS = "() => { const c = window.__find(document, '.training-card'); if (c) c.scrollIntoView(); return !!c; }"
TRAINING_BUILT_JS = "() => !!window.__find(document, '.train-D')"  # the card's D box: the card is built


def open_a(browser, base: str):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{base}/explorer?panels=shapes,budget")
    page.locator("table.shapes").first.wait_for(timeout=60_000)
    page.evaluate(SETUP_JS)
    return page


class Presser:
    """ArrowLeft presses on page A's T slider, each a T not seen before, timed to the frame that shows it."""

    def __init__(self, page, cfg: model.Config) -> None:
        self.page, self.cfg, self.T = page, cfg, cfg.T
        self.handle = page.locator(".slider-T .noUi-handle")

    def press(self) -> float:
        self.handle.focus()
        self.T -= 1
        return press_and_time(self.page, self.handle, "ArrowLeft", shape_check(self.cfg, self.T))


def summary(name: str, values: list[float], quiet: list[float] | None) -> str:
    p50, p95 = statistics.median(values), percentile(values, 0.95)
    ratio = "" if quiet is None else (f"   {p50 / statistics.median(quiet):4.2f}x   {p95 / percentile(quiet, 0.95):4.2f}x")
    return f"{name:<44} {len(values):>4} {p50:8.1f} {p95:8.1f} {max(values):8.1f}{ratio}"


def run(args: argparse.Namespace) -> None:
    from playwright.sync_api import sync_playwright

    preset = model.PRESETS[args.preset]
    with serve_app(warm=not args.cold) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            a = open_a(browser, base)
            presser = Presser(a, model.PRESETS["gpt2-small"])
            for _ in range(3):  # the second (B, T) starts the architecture's symbolic pass; let it be built
                presser.press()
            time.sleep(args.symbolic_seconds)
            quiet = [presser.press() for _ in range(args.presses)]

            b = browser.new_page(viewport={"width": 1280, "height": 800})
            b.add_init_script(FIND_JS)
            t0 = time.perf_counter()
            b.goto(f"{base}/explorer?preset={args.preset}", wait_until="commit")
            opening: list[float] = []
            while not b.evaluate("() => !!window.__find(document, '.training-card')"):  # B's page is built
                opening.append(presser.press())
            time.sleep(1.0)  # the page's own last messages
            t1, card = time.perf_counter(), []
            b.evaluate(CARD_JS)
            built = False
            while not built and time.perf_counter() - t1 < 120:
                card.append(presser.press())
                built = b.evaluate(TRAINING_BUILT_JS)
            card_s = time.perf_counter() - t1

            handle = b.locator(".slider-T .noUi-handle")
            handle.focus()
            for _ in range(2):
                handle.press("ArrowLeft")
            t2, busy = time.perf_counter(), []
            while time.perf_counter() - t2 < args.busy_seconds:
                busy.append(presser.press())
        finally:
            browser.close()
    print(f"page B: {args.preset} (d = {preset.d:,}, L = {preset.L}); its training card was built "
          f"{card_s:.1f} s after it scrolled to it" + ("" if built else " (NOT within 120 s)"))
    print(f"{'page A, key press -> view (ms)':<44} {'n':>4} {'p50':>8} {'p95':>8} {'max':>8}   {'p50/q':>5}   {'p95/q':>5}")
    print(summary("quiet", quiet, None))
    print(summary("while B's page opens (its cards built)", opening, quiet))
    print(summary("while B builds its first training card", card, quiet))
    print(summary("while B builds its first symbolic pass", busy, quiet))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presses", type=int, default=20)
    p.add_argument("--preset", default="llama3-8b", choices=list(model.PRESETS))
    p.add_argument("--busy-seconds", type=float, default=4.0)
    p.add_argument("--symbolic-seconds", type=float, default=4.0, help="time given to page A's symbolic pass")
    p.add_argument("--cold", action="store_true", help="a server not warmed by app/warm.py (the baseline)")
    run(p.parse_args())


if __name__ == "__main__":
    main()
