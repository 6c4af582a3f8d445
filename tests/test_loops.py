"""`model.loops.repeat`: a chunked scan counted from one iteration in a recorded meta pass records exactly the pass of
the plain loop (FLOPs, every saved storage in order, every tensor), and runs in full wherever values matter."""
from __future__ import annotations

import contextlib

from dataclasses import replace

import pytest
import torch

from model import loops
from model.config import ALL_PRESETS
from model.passes import PASS_LOCK, real_pass

# Gated DeltaNet (Qwen3-Next), Kimi delta attention (Kimi Linear), Mamba (Jamba): T/64 chunks, ⌈√T⌉ steps
SCANS = ("qwen3-next-80b-a3b", "kimi-linear-48b-a3b", "jamba-v0.1")


@pytest.mark.parametrize("T", [5 * 64, 7 * 64 + 5, 1000])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("preset", SCANS)
def test_a_counted_scan_records_the_plain_loops_pass(preset, dtype, T):
    cfg = replace(ALL_PRESETS[preset], B=2, T=T)
    with PASS_LOCK:
        counted = real_pass(cfg, dtype)
        with loops.every_iteration():
            plain = real_pass(cfg, dtype)
    assert counted == plain
    assert len(counted.saved) > 60  # the scans' states, one per chunk or step, are among them


class Noted:
    """A recording that notes what `repeat` asks of it."""

    def __init__(self) -> None:
        self.asked: list[tuple[object, int]] = []

    def mark(self) -> object:
        return "mark"

    def repeat_since(self, mark: object, times: int) -> None:
        self.asked.append((mark, times))


@pytest.mark.parametrize("n", [1, 4, 5, 9])
def test_repeat_runs_iterations_0_1_2_and_the_last_of_a_recorded_meta_loop(n):
    ran, skipped, noted = [], [], Noted()
    with loops.recording(noted):
        loops.repeat(n, ran.append, torch.empty(3, device="meta"), skipped.append)
    if n <= 4:
        assert (ran, skipped, noted.asked) == (list(range(n)), [], [])
    else:
        assert (ran, skipped, noted.asked) == ([0, 1, 2, n - 1], list(range(3, n - 1)), [("mark", n - 4)])


def test_repeat_runs_every_iteration_where_values_or_guards_matter():
    """Real tensors (values), the symbolic pass's fake tensors (its chunk count must stay exact), no recording, and
    `every_iteration`: the plain loop, nothing counted."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    meta = torch.empty(3, device="meta")
    noted = Noted()
    cases = ((torch.empty(3), noted, contextlib.nullcontext()), (FakeTensorMode().from_tensor(meta), noted,
             contextlib.nullcontext()), (meta, None, contextlib.nullcontext()), (meta, noted, loops.every_iteration()))
    for probe, recording, plain in cases:
        ran = []
        with loops.recording(recording), plain:
            loops.repeat(9, ran.append, probe)
        assert ran == list(range(9))
    assert noted.asked == []
