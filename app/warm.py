"""A server process, warmed before its first page: `panel serve app/explorer.py --setup app/warm.py` (`make run`).

The first page of a fresh process paid for everything torch and the model do once per process: torch's first
calls (its dispatcher's caches, the optimizer's first step, the fake-tensor machinery), and the default page's own
figures (its pass, budget, training plan, and its architecture's symbolic pass, `model.symbolic`). While a page
built them, the event loop waited and so did every other page: a key press on one page waited 2 s for another
page's first training card (benchmarks/bench_first_card.py). Panel runs this script once per process before it
serves (with --num-procs, in each worker once it is started), so the first page finds all of it done.

What other pages bring later (another architecture's first card) is computed off the event loop
(`app.background`).
"""
from __future__ import annotations

import time

from model import symbolic
from model.changes import changes
from model.config import PRESETS
from model.training import TrainSetup, plan

from app.query import DEFAULT_CONFIG

MODERN = "llama3-8b"  # the modern recipe's first-call paths (RMSNorm, RoPE, SwiGLU, GQA, fused attention)


def warm() -> float:
    """Compute what the default page and a modern page first need; the seconds it took."""
    t0 = time.perf_counter()
    symbolic.enable()
    for cfg in (DEFAULT_CONFIG, PRESETS[MODERN]):
        plan(cfg, TrainSetup())  # its pass, budget, saved-bytes formula and step peak too
        changes(cfg, "fp32")
    symbolic.build_now(DEFAULT_CONFIG, "fp32")
    return time.perf_counter() - t0


print(f"explorer: process warmed in {warm():.1f} s (app/warm.py)", flush=True)
