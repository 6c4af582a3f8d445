"""Time and memory of a real values pass (`model.values`), against a plain forward pass of the same model.

Prints, in one run on this machine:
  1. per case (GPT-2 small on a short text, GPT-2 small at T = MAX_T, and the configurations at each limit:
     MAX_PARAMS and MAX_L), the median wall time of an uncached `model.values` call ("now"), of the same call as
     the pass was before (one random stream drawn on one core, the forward pass on torch's default threads:
     `as_before`), and of a plain pass (the model built by `model.values.build` and run forward once without
     hooks or statistics), with the ratios now/before and now/plain, and the process's CPU seconds of now and
     before (all threads: drawing on two cores costs the same CPU in less time; on a busy machine, where no core
     is idle, the CPU seconds are the steadier figure);
  2. the time of a cached call (the same configuration, text and seed again);
  3. memory of a fresh process per case: RSS before, peak (ru_maxrss) and RSS after the call, which shows the
     pass gives its memory back (weights freed, heap trimmed).
Timings are printed, never asserted. Run: python benchmarks/bench_values.py [--repeat N]  (about 3 minutes)
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil
import torch

from model import PRESETS, Config, budget
from model import units as fmt
from model import values as mv
from model.gpt import GPT, init_weights

SHORT = "The cat sat on the mat."  # 7 tokens
LONG = " ".join(["The Transformer reads text as tokens and compares every token with every earlier one."] * 8)
GPT2 = PRESETS["gpt2-small"]
CASES: dict[str, tuple[Config, str]] = {
    "gpt2-small, 7 tokens": (GPT2, SHORT),
    f"gpt2-small, T = {mv.MAX_T}": (GPT2, LONG),
    # at the limits: the scaled-down copies the page offers for GPT-2 medium (near MAX_PARAMS) and GPT-3 175B (MAX_L)
    "gpt2-medium's copy, T = 64": (mv.plan(PRESETS["gpt2-medium"], mv.MAX_T).run, LONG),
    "gpt3-175b's copy, T = 64": (mv.plan(PRESETS["gpt3-175b"], mv.MAX_T).run, LONG),
}


def build_before(cfg: Config, seed: int) -> GPT:
    """`model.values.build` before ParallelNormal: GPT-2's initialisation from one stream, drawn on one core."""
    with torch.device("meta"):
        model = GPT(cfg)
    model.to_empty(device="cpu")
    if cfg.tie:
        model.head.weight = model.wte.weight
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.reset_parameters()
        model.apply(init_weights)
    return model.eval()


@contextlib.contextmanager
def as_before():
    """`model.values` as it was before: `build_before`, and the forward pass on torch's default threads."""
    build, threads = mv.build, mv.FORWARD_THREADS
    mv.build, mv.FORWARD_THREADS = build_before, None
    try:
        yield
    finally:
        mv.build, mv.FORWARD_THREADS = build, threads


def plain(cfg: Config, text: str, seed: int) -> float:
    """Seconds for the same model built and initialised the same way, one forward pass, no hooks, no statistics."""
    ids, _ = mv.token_ids(text)
    p = mv.plan(cfg, len(ids))
    start = time.perf_counter()
    model = mv.build(p.run, seed)
    with torch.no_grad():
        model(torch.tensor([ids[:p.run.T]]))
    del model
    return time.perf_counter() - start


def ours(cfg: Config, text: str, seed: int) -> float:
    mv._run.cache_clear()
    start = time.perf_counter()
    mv.values(cfg, text, seed)
    return time.perf_counter() - start


def before(cfg: Config, text: str, seed: int) -> float:
    with as_before():
        return ours(cfg, text, seed)


def timed(run, cfg: Config, text: str, seed: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process, all its threads) of one call."""
    cpu = time.process_time()
    wall = run(cfg, text, seed)
    return wall, time.process_time() - cpu


def bench_time(repeat: int) -> None:
    print(f"1. one real pass, uncached (median of {repeat}, seconds; cpu: this process's CPU seconds, all threads): "
          "now, as before (one stream on one core, the pass on torch's threads), plain (build + initialise + "
          "forward, no hooks)")
    print(f"   {'case':<28}{'T':>3}{'d':>5}{'L':>4}{'parameters':>16}{'now':>7}{'before':>8}{'now/before':>12}"
          f"{'cpu now':>9}{'cpu before':>12}{'plain':>7}{'now/plain':>11}")
    for name, (cfg, text) in CASES.items():
        p = mv.plan(cfg, len(mv.token_ids(text)[0]))
        assert not p.scaled, f"{name} is above the limits: {p.reasons}"
        runs = {"before": before, "now": ours, "plain": plain}
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
        for seed in range(repeat):  # alternate, so all three see the same machine load
            for label, run in runs.items():
                times[label].append(timed(run, cfg, text, seed))
        wall = {k: statistics.median(w for w, _ in v) for k, v in times.items()}
        cpu = {k: statistics.median(c for _, c in v) for k, v in times.items()}
        print(f"   {name:<28}{p.run.T:>3}{p.run.d:>5}{p.run.L:>4}{fmt.params(p.params):>16}"
              f"{wall['now']:>7.2f}{wall['before']:>8.2f}{wall['now'] / wall['before']:>11.2f}x"
              f"{cpu['now']:>9.2f}{cpu['before']:>12.2f}{wall['plain']:>7.2f}{wall['now'] / wall['plain']:>10.2f}x")


def bench_cached() -> None:
    mv.values(GPT2, SHORT)
    n = 200
    start = time.perf_counter()
    for _ in range(n):
        mv.values(GPT2, SHORT)
    print(f"\n2. cached call (same configuration, text and seed): {(time.perf_counter() - start) / n * 1e3:.2f} ms "
          f"(mean of {n}; tokenizing and planning included)")


CHILD = """
import json, sys, psutil
import benchmarks.bench_values as bench
from model import values as mv
from model.gpt import GPT, init_weights
cfg, text = bench.CASES[sys.argv[1]]
mv.plan(cfg, len(mv.token_ids(text)[0]))  # warm the meta-device trace: not the pass's memory
proc = psutil.Process()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the high-water mark (VmHWM) to the current RSS
before = proc.memory_info().rss
v = mv.values(cfg, text)
print(json.dumps({"before": before, "peak": bench.hwm(), "after": proc.memory_info().rss, "kept": int(v.probs.nbytes)}))
"""


def hwm() -> int:
    """This process's peak RSS since the last reset, bytes (VmHWM; ru_maxrss would include the parent's, kept
    across exec)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))


def bench_memory() -> None:
    print("\n3. memory of a fresh process around one pass (MiB): RSS before, peak during (VmHWM), RSS after; kept: "
          "the result's attention weights; weights: 4 bytes per parameter")
    print(f"   {'case':<30}{'before':>9}{'peak':>9}{'after':>9}{'kept':>9}{'weights':>10}")
    root = str(Path(__file__).resolve().parents[1])
    for name, (cfg, text) in CASES.items():
        done = subprocess.run([sys.executable, "-c", CHILD, name], capture_output=True, text=True, check=True, cwd=root)
        m = json.loads(done.stdout.strip().splitlines()[-1])
        mib = 2**20
        weights = 4 * mv.plan(cfg, len(mv.token_ids(text)[0])).params
        print(f"   {name:<30}{m['before'] / mib:>9.0f}{m['peak'] / mib:>9.0f}{m['after'] / mib:>9.0f}"
              f"{m['kept'] / mib:>9.1f}{weights / mib:>10.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="uncached runs per case (default 3)")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {psutil.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, "
          f"load average {os.getloadavg()[0]:.2f} (other processes on the machine add noise)")
    print(f"limits: T <= {mv.MAX_T}, L <= {mv.MAX_L}, parameters <= {fmt.params(mv.MAX_PARAMS)}, "
          f"activations <= {fmt.nbytes(mv.MAX_ACTIVATION_BYTES)} (fp32, new memory as model.trace counts it)")
    for run in (ours, before, plain):  # first-call costs are not per-pass
        run(Config(B=1, T=4, d=8, h=2, L=1, V=64, T_max=8), [1, 2, 3, 4], 0)
    bench_time(args.repeat)
    bench_cached()
    bench_memory()
    print(f"load average at the end {os.getloadavg()[0]:.2f}; GPT-2 small has {fmt.params(budget(GPT2).params_exact)} "
          f"parameters")


if __name__ == "__main__":
    main()
