"""model.budget: published parameter counts, analytic parts, 2N / 6N, and FLOPs against formula and torch."""
from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from model import GPT, PRESETS, Budget, Config, budget
from model.config import GPT2_RECIPE_PRESETS

import model.budgeting as mb
import model.parts.mlp as mlp_part

PUBLISHED = {"gpt2-small": 124_439_808, "gpt2-medium": 354_823_168, "gpt2-large": 774_030_080,
             "gpt2-xl": 1_557_611_200}

CONFIGS = [
    Config(B=1, T=1, d=1, h=1, L=1, V=1, T_max=1),
    Config(B=2, T=8, d=16, h=4, L=2, V=50, T_max=8),
    Config(B=3, T=5, d=12, h=12, L=3, V=7, T_max=9),
    Config(B=1, T=17, d=30, h=1, L=4, V=101, T_max=32, tie=False),
    Config(B=4, T=64, d=64, h=8, L=1, V=1000, T_max=128),
    Config(B=2, T=33, d=48, h=6, L=7, V=257, T_max=33, tie=False),
    *(PRESETS[name] for name in GPT2_RECIPE_PRESETS),  # the modern presets: tests/test_recipe.py
    replace(PRESETS["gpt2-small"], B=1, T=1),
    replace(PRESETS["gpt3-175b"], B=1, T=2_048, tie=False),
]


def ids(c: Config) -> str:
    return f"B{c.B}-T{c.T}-d{c.d}-h{c.h}-L{c.L}-V{c.V}-{'tied' if c.tie else 'untied'}"


# --- parameters ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", PUBLISHED)
def test_published_gpt2_counts(name):
    b = budget(PRESETS[name])
    assert b.params_exact == PUBLISHED[name]


def test_gpt2_small_parts():
    b = budget(PRESETS["gpt2-small"])
    assert b.params_emb == (50_257 + 1_024) * 768 == 39_383_808
    assert b.params_attn_block == 4 * 768**2 + 4 * 768 == 2_362_368
    assert b.params_mlp_block == 8 * 768**2 + 5 * 768 == 4_722_432
    assert b.params_norms == 25 * 2 * 768 == 38_400
    assert b.params_head == 0
    assert b.params_approx == 12 * 12 * 768**2 + (50_257 + 1_024) * 768 == 124_318_464


@pytest.mark.parametrize("c", CONFIGS, ids=ids)
def test_params_exact_is_the_full_depth_module(c):
    with torch.device("meta"):
        n = GPT(c).num_params()
    assert budget(c).params_exact == n


@pytest.mark.parametrize("c", CONFIGS, ids=ids)
def test_parts_sum_to_exact(c):
    b = budget(c)
    assert b.params_emb + c.L * (b.params_attn_block + b.params_mlp_block) + b.params_norms + b.params_head \
        == b.params_exact


@pytest.mark.parametrize("c", CONFIGS, ids=ids)
def test_part_formulas(c):
    b, d, L = budget(c), c.d, c.L
    assert b.params_emb == (c.V + c.T_max) * d
    assert b.params_attn_block == 4 * d * d + 4 * d
    assert b.params_mlp_block == 8 * d * d + 5 * d
    assert b.params_norms == (2 * L + 1) * 2 * d
    assert b.params_head == (0 if c.tie else c.V * d)


@pytest.mark.parametrize("c", CONFIGS, ids=ids)
def test_approx_leaves_out_exactly_biases_and_norms(c):
    b, d, L = budget(c), c.d, c.L
    assert b.params_approx == 12 * L * d * d + (c.V + c.T_max) * d + (0 if c.tie else c.V * d)
    assert b.params_exact - b.params_approx == 9 * L * d + (2 * L + 1) * 2 * d  # biases 9d/block, norms


@pytest.mark.parametrize("c", CONFIGS[:8], ids=ids)
def test_untied_differs_by_V_times_d(c):
    tied, untied = budget(replace(c, tie=True)), budget(replace(c, tie=False))
    assert untied.params_exact - tied.params_exact == c.V * c.d
    assert untied.params_head == c.V * c.d and tied.params_head == 0
    # the tied head costs no parameters but the same matmul
    assert untied.flops_fwd_measured_per_token == tied.flops_fwd_measured_per_token


def test_params_do_not_depend_on_the_batch_shape():
    c = PRESETS["gpt2-medium"]
    assert budget(replace(c, B=1, T=1)).params_exact == budget(c).params_exact == 354_823_168


# --- FLOPs -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("c", CONFIGS, ids=ids)
def test_2N_and_6N(c):
    b = budget(c)
    assert b.flops_fwd_per_token == 2 * b.params_exact
    assert b.flops_train_per_token == 6 * b.params_exact
    assert isinstance(b.flops_fwd_per_token, int) and isinstance(b.flops_train_per_token, int)


@pytest.mark.parametrize("c", CONFIGS, ids=ids)
def test_measured_flops_are_2x_matmul_params_plus_attention(c):
    d, L, T, V = c.d, c.L, c.T, c.V
    matmul_params = L * 12 * d * d + V * d  # W_qkv, W_o, W_fc, W_proj per block, and the head (tied or not)
    attention = L * 4 * T * d  # q kᵀ and attn @ v: 2 * 2 * T * d_head * h per token per block
    b = budget(c)
    assert b.flops_fwd_measured_per_token == 2 * matmul_params + attention
    assert b.flops_fwd_measured_per_token == L * (24 * d * d + 4 * T * d) + 2 * V * d
    assert b.flops_attn_per_token == attention
    assert b.attn_share == pytest.approx(attention / (2 * matmul_params + attention), rel=1e-12)
    assert b.T_attn_equals_dense == 6 * d


def test_gpt2_small_measured_flops():
    b = budget(PRESETS["gpt2-small"])
    assert b.flops_fwd_measured_per_token == 12 * (24 * 768**2 + 4 * 1_024 * 768) + 2 * 50_257 * 768 == 284_812_800
    assert b.flops_attn_per_token == 37_748_736
    assert b.T_attn_equals_dense == 4_608
    assert 0.13 < b.attn_share < 0.14


def test_measured_per_token_does_not_depend_on_B():
    c = Config(B=1, T=16, d=32, h=4, L=3, V=64, T_max=16)
    assert budget(c).flops_fwd_measured_per_token == budget(replace(c, B=9)).flops_fwd_measured_per_token


def test_attention_flops_grow_linearly_with_T():
    c = PRESETS["gpt2-small"]
    a = [budget(replace(c, T=T)).flops_attn_per_token for T in (256, 512, 1_024)]
    assert a[1] == 2 * a[0] and a[2] == 2 * a[1]
    # at T = 6d the attention term equals the dense 24Ld² term
    big = Config(B=1, T=6 * 64, d=64, h=4, L=2, V=10, T_max=1_024)
    b = budget(big)
    assert b.flops_attn_per_token == 2 * 24 * 64 * 64


FULL_DEPTH = [CONFIGS[1], CONFIGS[2], CONFIGS[3], CONFIGS[5], replace(PRESETS["gpt2-small"], B=1, T=64)]


@pytest.mark.parametrize("c", FULL_DEPTH, ids=ids)
def test_measured_flops_equal_a_full_depth_flop_count(c):
    """FlopCounterMode over the whole GPT(cfg), all L blocks, on meta: the baseline the collapsed pass replaces."""
    with torch.device("meta"):
        model = GPT(c)
    idx = torch.zeros(c.B, c.T, dtype=torch.long, device="meta")
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(idx)
    total = counter.get_total_flops()
    bmm = sum(n for op, n in counter.get_flop_counts()["Global"].items() if "bmm" in str(op))
    b = budget(c)
    assert b.flops_fwd_measured_per_token == total / (c.B * c.T)
    assert b.flops_attn_per_token == bmm / (c.B * c.T)


# --- the object ------------------------------------------------------------------------------------------

def test_as_dict_has_every_field():
    b = budget(CONFIGS[1])
    d = b.as_dict()
    assert list(d) == ["params_emb", "params_attn_block", "params_mlp_block", "params_blocks", "params_norms", "params_head",
                       "params_approx", "params_exact", "params_active", "flops_fwd_per_token", "flops_train_per_token",
                       "flops_fwd_active_per_token", "flops_train_active_per_token", "flops_fwd_measured_per_token", "flops_attn_per_token", "attn_share", "T_attn_equals_dense"]
    assert d["params_exact"] == b.params_exact and replace(Budget(**d), lines=b.lines) == b
    assert b.params_blocks == CONFIGS[1].L * (b.params_attn_block + b.params_mlp_block)


def test_budget_is_cached_by_the_whole_config():
    c = CONFIGS[1]
    assert budget(c) is budget(c)
    assert budget(replace(c, tie=False)) is not budget(c)
    assert budget(replace(c, tie=False)).params_exact != budget(c).params_exact


def test_budget_raises_when_the_parts_do_not_add_up(monkeypatch):
    c = Config(B=1, T=3, d=10, h=2, L=2, V=13, T_max=4)
    mb.budget.cache_clear()
    monkeypatch.setattr(mlp_part, "extras", lambda cfg: [])  # the MLP's formula "forgets" its biases
    try:
        expected = r"^analytic parameter parts \(170, 2480, 100, 0\) sum to 2,750, the module has 2,850$"
        with pytest.raises(RuntimeError, match=expected):
            budget(c)
    finally:
        mb.budget.cache_clear()
