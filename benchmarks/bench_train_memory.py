"""Measure, don't only compute: the real peak memory of one training step on CPU against `model.training`'s prediction.

    .venv/bin/python benchmarks/bench_train_memory.py

For a few tiny configurations, trains `GPT(cfg)` in fp32 with `torch.optim.Adam` for a few steps and measures
step 3 (the Adam states exist from step 1 on; gradients are kept allocated between steps, `zero_grad(set_to_none=
False)`, as frameworks with gradient buffers do). The peak is measured at the allocator: `torch.profiler` with
`profile_memory=True` records every CPU allocation and free in the step; their running sum from the step's start,
plus the bytes already held (weights, gradients, Adam's m, v and step counters, the batch's token ids), peaks at the step's peak.

Printed side by side, in the same process, for `plan(cfg, TrainSetup(optimizer="adam-fp32", gpus=1)).memory`:
- the predicted peak, `memory.peak`: weights 4N + gradients 4N + Adam's m and v 8N + the bytes alive at the
  step's largest phase, measured on the meta device by `model.peak` (one block, formulas per structure);
- the sum of the parts, `memory.total`: the same states + the saved-for-backward activations (what this
  benchmark compared before the peak was modelled);
- each as a ratio of the measured peak (1.00 = exact; the target for the peak is within 5 %);
- the phase and operator of the predicted peak, and the operators running at the measured one.
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model import GPT, Config  # noqa: E402
from model import units  # noqa: E402
from model.training import TrainSetup, plan  # noqa: E402

LLAMA = dict(norm="rmsnorm", positions="rope", mlp="swiglu", kv_heads=2, bias="none")
CONFIGS = {  # tiny, but with blocks that matter next to the embeddings
    "d 64, L 2, T 64, B 8, V 256": Config(B=8, T=64, d=64, h=4, L=2, V=256, T_max=64),
    "d 128, L 4, T 128, B 8, V 512": Config(B=8, T=128, d=128, h=4, L=4, V=512, T_max=128),
    "d 128, L 4, T 256, B 4, V 512": Config(B=4, T=256, d=128, h=8, L=4, V=512, T_max=256),
    "d 256, L 2, T 128, B 16, V 1024, untied": Config(B=16, T=128, d=256, h=8, L=2, V=1024, T_max=128, tie=False),
    # the modern recipe: RMSNorm, RoPE, SwiGLU (d_ff = 8d/3 rounded up to 256), grouped-query attention, no biases
    "Llama-style d 128, h 8, h_kv 2, L 4, T 128, B 8": Config(B=8, T=128, d=128, h=8, L=4, V=512, T_max=128, **LLAMA),
    "Llama-style d 256, h 8, h_kv 1, L 2, T 64, B 16, untied": Config(B=16, T=64, d=256, h=8, L=2, V=1024, T_max=64,
                                                                      tie=False, **{**LLAMA, "kv_heads": 1}),
    "Qwen3-style d 128, h 8, h_kv 4, d_head 32, QK-norm, T 256, B 4": Config(
        B=4, T=256, d=128, h=8, L=4, V=512, T_max=256, head_dim=32, qk_norm=True, **{**LLAMA, "kv_heads": 4}),
}
STEPS = 3


def held_bytes(model: torch.nn.Module, opt: torch.optim.Optimizer, idx: torch.Tensor) -> int:
    """Bytes of the tensors that live across the step: weights, gradients, the optimizer's state, the token ids."""
    tensors = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in (idx, *model.parameters())}
    for p in model.parameters():
        if p.grad is not None:
            tensors[p.grad.untyped_storage().data_ptr()] = p.grad.untyped_storage().nbytes()
    for state in opt.state.values():
        for t in state.values():
            if torch.is_tensor(t):
                tensors[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return sum(tensors.values())


def peak_of(prof) -> tuple[int, str]:
    """The highest running sum of the CPU allocations (+) and frees (−) the profiler recorded, in time order, and
    the operators running at that moment (outermost first).

    Reads the profiler's raw "[memory]" records (one per allocation or free, with its byte count); the
    per-operator summaries of `prof.events()` fold them into operators and lose their order.
    """
    events = prof.profiler.kineto_results.events()
    records = sorted((e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]")
    running = peak = at = 0
    for t, n in records:
        running += n
        if running > peak:
            peak, at = running, t
    ops = sorted((e.end_ns() - e.start_ns(), e.name()) for e in events
                 if e.name() != "[memory]" and e.start_ns() <= at <= e.end_ns())
    return peak, " > ".join(name.removeprefix("aten::") for _, name in reversed(ops[:3]))


def measure(cfg: Config) -> tuple[int, str]:
    """(peak bytes of training step STEPS, the operators running at the peak)."""
    torch.manual_seed(0)
    model = GPT(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    idx = torch.randint(0, cfg.V, (cfg.B, cfg.T))

    def step() -> None:
        opt.zero_grad(set_to_none=False)
        loss = model(idx)[1]  # the logits are not kept: autograd holds what backward needs
        loss.backward()
        opt.step()

    for _ in range(STEPS - 1):
        step()
    before = held_bytes(model, opt, idx)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    peak, ops = peak_of(prof)
    return before + peak, ops


def main() -> None:
    setup = TrainSetup(optimizer="adam-fp32", gpus=1)
    head = f"{'configuration (fp32 Adam, CPU)':62} {'measured peak':>14} {'predicted peak':>15} {'ratio':>6}   " \
           f"{'off by':>8}   {'sum of parts':>12} {'ratio':>6}   {'predicted at':28} measured at"
    print(head)
    print("-" * len(head))
    worst = 0.0
    for name, cfg in CONFIGS.items():
        measured, ops = measure(cfg)
        p = plan(cfg, setup)
        m = p.memory
        at = next(x.label.rsplit("during ", 1)[1] for x in p.lines if x.key == f"memory/peak_{m.peak_phase}")
        worst = max(worst, abs(m.peak / measured - 1))
        print(f"{name:62} {units.nbytes(measured):>14} {units.nbytes(m.peak):>15} {m.peak / measured:6.3f} "
              f"{f'{measured - m.peak:,} B':>8}   "
              f"{units.nbytes(m.total):>12} {m.total / measured:6.3f}   {m.peak_phase + ': ' + at:28} {ops}")
    print(f"\nratio = figure ÷ measured peak (the peak's worst: off by {worst:.4%}; target within 5 %); off by =\n"
          "measured − predicted peak in bytes, mostly Adam's step counters (4 bytes per parameter tensor, not in the plan).\n"
          "predicted peak = weights + gradients + Adam states + what is alive at the step's largest phase (model.peak);\n"
          "sum of parts = weights + gradients + Adam states + saved activations: it misses the logits (B, T, V) and\n"
          "their copies in the loss, the gradients flowing back and the scores attention holds in local variables.")


if __name__ == "__main__":
    main()
