"""model.symbolic: one symbolic pass per architecture equals the real pass at every B and T where it holds."""
from __future__ import annotations

import gc
from dataclasses import replace

import pytest
import torch

from model import Config, PRESETS, symbolic
from model.passes import real_pass, run_pass

TINY = Config(B=3, T=50, d=64, h=4, L=2, V=101, T_max=256)
MODERN = replace(TINY, norm="rmsnorm", positions="rope", mlp="swiglu", bias="none", ff_dim=96, kv_heads=2)
RECIPES = {
    "gpt2, tied": TINY,
    "gpt2, untied": replace(TINY, tie=False),
    "modern, grouped K/V": MODERN,
    "modern, one K/V head, QK-norm, d_head apart": replace(MODERN, kv_heads=1, qk_norm=True, head_dim=24),
    "biases on q, k, v only": replace(MODERN, bias="qkv", kv_heads=4),
    "gpt2, fused attention": replace(TINY, attention="fused"),
    "modern, fused attention": replace(MODERN, attention="fused"),
    "modern, fused, one K/V head, QK-norm, d_head apart": replace(MODERN, kv_heads=1, qk_norm=True, head_dim=24,
                                                                  attention="fused"),
}
SIZES = [(2, 3), (3, 50), (5, 5), (8, 256), (7, 129), (64, 17)]


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("name", RECIPES)
def test_the_symbolic_pass_is_the_real_pass_wherever_it_holds(name, dtype):
    cfg = RECIPES[name]
    built = symbolic.symbolic_pass(cfg, dtype)
    for B, T in SIZES:
        assert built.holds(B, T), (B, T)
        assert built.at(B, T) == real_pass(replace(cfg, B=B, T=T), dtype), (B, T)


def test_it_does_not_hold_where_a_size_of_one_or_two_changes_the_pass_or_positions_run_out():
    built = symbolic.symbolic_pass(TINY, "fp32")
    for B, T in [(1, 50), (3, 1), (3, 2), (3, TINY.T_max + 1)]:
        assert not built.holds(B, T), (B, T)
    rope = symbolic.symbolic_pass(MODERN, "fp32")
    assert rope.holds(3, 10 * MODERN.T_max)  # RoPE has no position table to run out of
    # where it does not hold, the pass really differs: T = 2 slices the logits without a copy
    assert real_pass(replace(TINY, T=2), "fp32").saved != built.at(3, 2).saved


def test_equal_B_and_T_stay_two_sizes():
    built = symbolic.symbolic_pass(replace(TINY, B=6, T=6), "fp32")
    assert built.at(2, 40) == real_pass(replace(TINY, B=2, T=40), "fp32")


@pytest.fixture
def enabled():
    symbolic.clear()
    symbolic.enable()
    yield
    symbolic.enable(False)
    symbolic.wait()
    symbolic.clear()


def test_run_pass_uses_it_from_an_architectures_second_size(enabled):
    cfg = replace(PRESETS["gpt2-small"], L=1, V=1000)
    run_pass(replace(cfg, T=300), "fp32")
    assert symbolic.evaluated(replace(cfg, T=302), "fp32") is None  # one size seen: no symbolic pass yet
    run_pass(replace(cfg, T=301), "fp32")
    symbolic.wait()
    for B, T in [(8, 302), (2, 1024), (5, 3)]:
        evaluated = symbolic.evaluated(replace(cfg, B=B, T=T), "fp32")
        assert evaluated is not None and evaluated == real_pass(replace(cfg, B=B, T=T), "fp32")
        assert run_pass(replace(cfg, B=B, T=T), "fp32") == evaluated
    assert symbolic.evaluated(replace(cfg, B=1, T=302), "fp32") is None  # B = 1: a real pass
    assert symbolic.evaluated(replace(cfg, d=832, h=13, T=302), "fp32") is None  # another architecture
    assert symbolic.evaluated(replace(cfg, T=302), "bf16") is None  # another dtype


def test_off_it_changes_nothing():
    symbolic.clear()
    cfg = replace(TINY, d=128)
    for T in (40, 41, 42):
        run_pass(replace(cfg, T=T), "fp32")
    symbolic.wait()
    assert symbolic.evaluated(replace(cfg, T=43), "fp32") is None


def _alive(kind: type) -> int:
    gc.collect()
    return sum(isinstance(o, kind) for o in gc.get_objects())


@pytest.mark.filterwarnings("ignore::FutureWarning")  # gc.get_objects() meets torch.distributed.reduce_op
def test_passes_leave_nothing_alive():
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    real_pass(replace(TINY, T=7), "fp32")
    tensors = _alive(torch.Tensor)
    for T in range(8, 13):  # a real pass: its tensors (autograd's hooks held them in a cycle through C++)
        real_pass(replace(TINY, T=T), "fp32")
    assert _alive(torch.Tensor) == tensors
    for T in (20, 21):  # a symbolic pass: its shape environment (torch's class-level caches held it)
        symbolic.symbolic_pass(replace(TINY, T=T), "fp32")
    assert _alive(ShapeEnv) == 0
