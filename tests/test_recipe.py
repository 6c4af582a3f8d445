"""The modern recipe (RMSNorm, RoPE, SwiGLU, GQA, bias switches, QK-norm): published counts, invariants that
do not share the model's code, formulas true at random configurations, autograd's saved bytes, config.json."""
from __future__ import annotations

import dataclasses
import json
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest
import torch

import model
from model import GPT, PRESETS, Config, budget, trace
from model.config import CHOICES, MLA_PRESETS, WINDOW_PRESETS, HFConfigError, from_hf, swiglu_width
from model.formula import evaluate, matches
from model.memory import kv_cache_lines
from model.formula import evaluate_shape as shape_of
from model.training import TrainSetup, plan
from pagetools import run_cli
from copied import real_saved_bytes

HF = Path(__file__).parent / "hf"
PUBLISHED = {"llama3-8b": 8_030_261_248, "llama3-70b": 70_553_706_496, "llama3.2-1b": 1_235_814_400,
             "mistral-7b": 7_241_732_096, "qwen2.5-0.5b": 494_032_768, "qwen2.5-7b": 7_615_616_512,
             "qwen3-0.6b": 596_049_920, "mistral-nemo-12b": 12_247_782_400, "qwen3-4b-instruct-2507": 4_022_468_096}
MODERN = dict(norm="rmsnorm", positions="rope", mlp="swiglu", bias="none")


@pytest.mark.parametrize("name", PUBLISHED)
def test_published_counts(name):
    assert budget(PRESETS[name]).params_exact == PUBLISHED[name]


@pytest.mark.parametrize("name, V, T_max, h, h_kv, d_head", [
    ("llama3-8b", 128_256, 8_192, 32, 8, 128), ("llama3-70b", 128_256, 8_192, 64, 8, 128),
    ("mistral-7b", 32_000, 32_768, 32, 8, 128), ("qwen3-0.6b", 151_936, 40_960, 16, 8, 128)])
def test_preset_shapes(name, V, T_max, h, h_kv, d_head):
    cfg = PRESETS[name]
    assert (cfg.V, cfg.T_max, cfg.h, cfg.h_kv, cfg.d_head) == (V, T_max, h, h_kv, d_head)


def test_qwen3_sets_d_head_apart_and_counts_it_by_hand():
    cfg = PRESETS["qwen3-0.6b"]
    assert cfg.d_head * cfg.h == 2_048 != cfg.d == 1_024
    d, h, kv, dh, ff, L, V = 1_024, 16, 8, 128, 3_072, 28, 151_936
    block = d * (h + 2 * kv) * dh + h * dh * d + 2 * dh + 3 * d * ff + 2 * d  # q, k, v, o, QK-norm, MLP, 2 norms
    assert V * d + L * block + d == budget(cfg).params_exact == 596_049_920  # tied head: W_te counted once


# --- invariants -----------------------------------------------------------------------------------------------

BASE = Config(B=2, T=8, d=64, h=8, L=3, V=97, T_max=16, **MODERN)


def test_h_kv_equal_to_h_is_multi_head_attention():
    mha = replace(BASE, kv_heads=8)
    assert mha == replace(BASE, kv_heads=None) and mha.h_kv == 8
    gpt2_attn = budget(replace(BASE, norm="layernorm", positions="learned", mlp="gelu", bias="none"))
    assert budget(mha).params_attn_block == 4 * 64 * 64 == gpt2_attn.params_attn_block
    names = [r.local for r in trace(mha).rows]
    assert "attn.k_heads" not in names and trace(mha).rows[names.index("attn.k")].shape == (2, 8, 8, 8)


@pytest.mark.parametrize("h_kv", [1, 2, 4])
def test_grouped_query_attention_shrinks_k_v_and_the_cache(h_kv):
    cfg = replace(BASE, kv_heads=h_kv)
    rows = {r.local: r for r in trace(cfg).rows}
    assert rows["attn.k"].shape == rows["attn.v"].shape == (2, h_kv, 8, 8)
    assert rows["attn.k_heads"].shape == (2, 8, 8, 8)
    assert rows["attn.k_heads"].view == (h_kv == 1)  # one K head is broadcast (a view); a group is copied
    mha = budget(BASE).params_attn_block
    assert mha - budget(cfg).params_attn_block == 2 * (8 - h_kv) * 8 * 64  # W_k, W_v lose (h − h_kv)·d_head columns
    per_token = {x.key: x.value for x in kv_cache_lines(cfg, "bf16")}["memory/kv_cache_per_token"]
    assert per_token * (8 // h_kv) == {x.key: x.value for x in kv_cache_lines(BASE, "bf16")}["memory/kv_cache_per_token"]


def test_rope_has_T_max_times_d_fewer_parameters_and_runs_past_T_max():
    learned, rope = replace(BASE, positions="learned"), BASE
    assert budget(learned).params_exact - budget(rope).params_exact == 16 * 64
    with pytest.raises(ValueError, match="learned position table"):
        replace(learned, T=17)
    far = replace(rope, T=40)
    assert far.beyond_context and {r.local: r.shape for r in trace(far).rows}["attn.scores"] == (2, 8, 40, 40)


def test_swiglu_holds_three_d_by_d_ff_matrices():
    cfg = replace(BASE, ff_dim=200)
    assert budget(cfg).params_mlp_block == 3 * 64 * 200
    with torch.device("meta"):
        mlp = GPT(cfg).blocks[0].mlp
    assert [tuple(p.shape) for p in mlp.parameters()] == [(200, 64), (200, 64), (64, 200)]
    assert swiglu_width(4_096) == 11_008 and replace(BASE, ff_dim=None).d_ff == swiglu_width(64) == 256
    assert replace(BASE, mlp="gelu").d_ff == 256 == 4 * 64


@pytest.mark.parametrize("bias, extra", [("all", (8 + 2 * 4) * 8 + 64 + 2 * 256 + 64), ("qkv", (8 + 2 * 4) * 8),
                                          ("none", 0)])
def test_bias_switches(bias, extra):
    cfg = replace(BASE, kv_heads=4, bias=bias)
    assert budget(cfg).params_attn_block + budget(cfg).params_mlp_block \
        == 2 * (8 + 4) * 8 * 64 + 3 * 64 * 256 + extra


def test_qk_norm_adds_two_gains_of_d_head():
    assert budget(replace(BASE, qk_norm=True)).params_attn_block - budget(BASE).params_attn_block == 2 * 8
    names = [r.local for r in trace(replace(BASE, qk_norm=True)).rows]
    assert names.index("attn.q_norm.rstd") < names.index("attn.q_norm") < names.index("attn.q_rot")


def test_trace_lists_the_recipe_in_execution_order():
    names = [r.local for r in trace(replace(BASE, kv_heads=2)).rows]
    order = ["wte", "rope.angles", "rope.cos", "rope.sin", "ln_1.rstd", "ln_1", "attn.qkv", "attn.q", "attn.k",
             "attn.v", "attn.q_rot", "attn.k_rot", "attn.k_heads", "attn.v_heads", "attn.scores", "attn.masked",
             "attn.attn", "attn.attn_v", "attn.merged", "attn.proj", "resid_1", "ln_2.rstd", "ln_2", "mlp.gate",
             "mlp.up", "mlp.silu", "mlp.gated", "mlp.proj", "resid_2", "ln_f.rstd", "ln_f", "head", "loss"]
    assert names == ["idx", *order]


# --- validation ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    (dict(kv_heads=3), r"h_kv=3 does not divide h=8: .* \(nearest divisors of 8: 2, 4\)"),
    (dict(norm="batchnorm"), r"norm must be one of layernorm, rmsnorm"),
    (dict(bias=True), r"bias must be one of all, none, qkv"),
    (dict(qk_norm=1), r"qk_norm must be True or False, got 1"),
    (dict(head_dim=7), r"d_head=7 is odd: RoPE rotates pairs of features"),
    (dict(ff_dim=0), r"d_ff=0 is out of range"),
    (dict(kv_heads=2.0), r"h_kv must be a whole number"),
])
def test_recipe_fields_are_validated_with_the_fix(change, message):
    with pytest.raises(ValueError, match=message):
        replace(BASE, **change)


def test_d_head_set_apart_lifts_h_divides_d():
    cfg = Config(B=1, T=4, d=100, h=3, L=1, V=10, head_dim=40, **MODERN)
    assert cfg.d_head == 40 and budget(cfg).params_attn_block == 2 * 6 * 40 * 100
    with pytest.raises(ValueError, match="not divisible by h=3"):
        replace(cfg, head_dim=None)


# --- every formula true, at random configurations of both recipes ----------------------------------------------

def random_recipe(rng: random.Random, big: bool = False) -> Config:
    h = rng.randint(1, 64 if big else 8)
    kv = rng.choice([k for k in range(1, h + 1) if h % k == 0])
    positions = rng.choice(CHOICES["positions"])
    d_head = rng.randint(1, 64 if big else 8) * (2 if positions == "rope" else 1)
    apart = rng.random() < 0.3
    d = rng.randint(1, 4_096 if big else 40) if apart else h * d_head
    T_max = rng.randint(1, 4_096 if big else 32)
    T = rng.randint(1, T_max * (2 if positions == "rope" else 1))
    return Config(B=rng.randint(1, 64 if big else 4), T=T, d=d, h=h, L=rng.randint(1, 96 if big else 4),
                  V=rng.randint(1, 131_072 if big else 300), T_max=T_max, tie=rng.random() < 0.5,
                  norm=rng.choice(CHOICES["norm"]), positions=positions, mlp=rng.choice(CHOICES["mlp"]),
                  ff_dim=rng.choice([None, rng.randint(1, 8_192 if big else 64)]), kv_heads=kv,
                  head_dim=d_head if apart else None, bias=rng.choice(CHOICES["bias"]), qk_norm=rng.random() < 0.5,
                  attention=rng.choice(CHOICES["attention"]))


RANDOM = [random_recipe(random.Random(i), big=i % 3 == 0) for i in range(60)]


@pytest.mark.parametrize("cfg", RANDOM, ids=lambda c: f"{c.norm}-{c.positions}-{c.mlp}-{c.bias}-h{c.h}-kv{c.h_kv}-"
                                                      f"{c.attention}")
def test_every_formula_is_true_at_random_recipes(cfg):
    s = cfg.symbols()
    b = budget(cfg)
    with torch.device("meta"):
        assert GPT(cfg).num_params() == b.params_exact  # the full-depth module, not block 0 × L
    for dtype in ("fp32", "bf16"):
        tr = trace(cfg, dtype)
        for line in (*b.lines, *tr.lines):
            got = evaluate(line.formula, s)
            assert (got == line.value) if isinstance(line.value, int) else math.isclose(float(got), line.value)
        assert all(shape_of(r.symbolic, s) == r.shape for r in tr.rows)
    steps = [x.value for x in b.lines if x.key.startswith("flops/steps/")]
    assert 2 * b.params_exact + sum(steps) == b.flops_fwd_measured_per_token


@pytest.mark.parametrize("cfg", RANDOM[:20], ids=lambda c: f"{c.norm}-{c.positions}-{c.mlp}-h{c.h}-kv{c.h_kv}")
def test_training_formulas_are_true_at_random_recipes(cfg):
    """The training run's figures (model.training) use the recipe's measured-FLOPs formula and saved bytes."""
    p = plan(cfg, TrainSetup())
    assert all(matches(x.formula, p.symbols, x.value) for x in p.lines if x.formula)


# --- saved bytes: the meta-device figure against autograd on real CPU tensors ---------------------------------------

SMALL = [replace(BASE, kv_heads=2, qk_norm=True), replace(BASE, kv_heads=1, B=1, T=2, bias="qkv", tie=False),
         Config(B=2, T=5, d=30, h=3, L=2, V=11, T_max=4, head_dim=6, kv_heads=1, **MODERN),
         Config(B=3, T=4, d=12, h=4, L=2, V=9, T_max=8, norm="layernorm", mlp="swiglu", kv_heads=2, ff_dim=7),
         Config(B=1, T=1, d=8, h=2, L=1, V=5, T_max=2, positions="rope", bias="none")]


@pytest.mark.parametrize("cfg", [replace(c, attention=a) for c in SMALL for a in CHOICES["attention"]],
                         ids=lambda c: f"{c.norm}-{c.positions}-kv{c.h_kv}-T{c.T}-{c.attention}")
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_saved_bytes_equal_autograd_on_real_cpu_tensors(cfg, dtype):
    """All L blocks on CPU against block 0 × L on the meta device. As for GPT-2 (tests/test_lines.py), CPU's fused
    LayerNorm keeps its mean and rstd at 16 bits for 16-bit input (2 bytes less per statistic); RMSNorm is written
    out here, so it agrees to the byte at both dtypes."""
    real = real_saved_bytes(cfg, dtype)
    ln_stats = (2 * cfg.L + 1) * 2 * cfg.B * cfg.T if cfg.norm == "layernorm" and dtype == "bf16" else 0
    assert real == trace(cfg, dtype).saved_bytes - 2 * ln_stats


# --- values -------------------------------------------------------------------------------------------------------

def test_values_runs_the_modern_recipe_and_is_importable_as_a_function():
    from model import values

    cfg = replace(BASE, B=1, T=16, V=50_257, kv_heads=2, qk_norm=True, T_max=64)
    v = values(cfg, "The cat sat on the mat and looked at the dog, who looked back at the cat.")
    assert abs(v.loss - math.log(50_257)) < 0.5  # an untrained model's loss starts near ln V
    p = v.attention(0, 0)
    assert not p[0, 1:].any() and not p[3, 4:].any() and p[3, :4].all()  # exact causal zeros above the diagonal
    assert model.values is values and model.values.Values is type(v)
    assert "blocks.0.attn.k_heads" in v.stats and "blocks.0.ln_1.rstd" in v.stats


# --- config.json ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("file, preset", [("gpt2", "gpt2-small"), ("llama3-8b", "llama3-8b"),
                                          ("mistral-7b", "mistral-7b"), ("qwen2.5-0.5b", "qwen2.5-0.5b"),
                                          ("qwen3-0.6b", "qwen3-0.6b")])
def test_from_hf_reads_each_model_type_to_its_preset(file, preset):
    # every model read from a config.json runs fused attention, as transformers runs it ("sdpa"); GPT-2's preset
    # keeps the lesson's eager attention, the modern presets are fused already
    cfg = Config.from_hf(json.loads((HF / f"{file}.json").read_text()))
    assert cfg == dataclasses.replace(PRESETS[preset], attention="fused")


def _llama(**change) -> dict:
    doc = json.loads((HF / "llama3-8b.json").read_text())
    doc.update(change)
    return {k: v for k, v in doc.items() if v is not ...}


def test_from_hf_with_both_biases_is_every_linear_biased():
    cfg = from_hf(_llama(attention_bias=True, mlp_bias=True))
    assert cfg.bias == "all" and cfg.norm == "rmsnorm"
    assert budget(cfg).params_exact - PUBLISHED["llama3-8b"] == 32 * ((32 + 16) * 128 + 4_096 + 2 * 14_336 + 4_096)


def test_hf_config_on_the_cli(capsys, tmp_path):
    path = HF / "qwen2.5-0.5b.json"
    code, out, err = run_cli(["--hf-config", str(path), "--json"], capsys)
    doc = json.loads(out)
    assert (code, err) == (0, f"note: {path}: T set to 8,192 of the 32,768-token context (T_max, from "
                              f"max_position_embeddings)\n") and doc["budget"]["params_exact"] == 494_032_768
    assert doc["config"]["bias"] == "qkv" and doc["config"]["h_kv"] == 2
    assert {x["key"] for x in doc["memory"]} >= {"memory/kv_cache", "memory/kv_cache_per_token"}
    for text, problem in [("{nope", "is not JSON"), ('{"model_type": "llama", "hidden_size": "8"}', "hidden_size='8'"),
                          ("[]", "must hold a JSON object")]:
        bad = tmp_path / "config.json"
        bad.write_text(text)
        code, out, err = run_cli(["--hf-config", str(bad)], capsys)
        assert code == 2 and out == "" and problem in err and len(err.splitlines()) == 1 and "Traceback" not in err
    code, _, err = run_cli(["--hf-config", str(tmp_path / "missing.json")], capsys)
    assert code == 2 and "cannot read --hf-config" in err


@pytest.mark.parametrize("name", [n for n in PRESETS if not PRESETS[n].gpt2_recipe
                                  and n not in (*WINDOW_PRESETS, *MLA_PRESETS)])  # DeepSeek-V3: tests/test_mla.py
@pytest.mark.parametrize("fmt", [[], ["--markdown"], ["--json"], ["--csv", "--table", "budget"], ["--table", "kv"],
                                 ["--table", "train"], ["--table", "train", "--json"]])
def test_every_table_prints_at_every_modern_preset(name, fmt, capsys):
    code, out, err = run_cli(["--preset", name, *fmt], capsys)
    assert (code, err) == (0, "") and out


def test_recipe_options_on_the_cli(capsys):
    code, out, _ = run_cli(["--d", "512", "--h", "8", "--L", "8", "--V", "32000", "--T-max", "256", "--norm", "rmsnorm",
                            "--positions", "rope", "--mlp", "swiglu", "--h-kv", "2", "--bias", "none", "--qk-norm",
                            "--json"], capsys)
    cfg = Config(B=8, T=256, d=512, h=8, L=8, V=32_000, T_max=256, kv_heads=2, qk_norm=True, **MODERN)
    assert code == 0 and json.loads(out)["budget"]["params_exact"] == budget(cfg).params_exact


CASES = {"llama3-8b-budget.txt": ["--preset", "llama3-8b", "--table", "budget"],
         "llama3-8b-shapes.txt": ["--preset", "llama3-8b", "--table", "shapes", "--dtype", "bf16"],
         "qwen3-0.6b-kv.csv": ["--preset", "qwen3-0.6b", "--table", "kv", "--csv", "--dtype", "bf16"]}


@pytest.mark.parametrize("name", CASES)
def test_golden(name, capsys, golden):
    code, out, err = run_cli(CASES[name], capsys)
    assert (code, err) == (0, "")
    golden(name, out)


# --- the page's rules (model.rules.settle) for the recipe ------------------------------------------------------------

def test_settle_keeps_T_beyond_T_max_with_rope_and_says_so():
    from model.rules import settle

    asked = dict(B=1, T=4_096, d=64, h=8, L=2, V=100, T_max=1_024, tie=True, **MODERN)
    cfg, notes = settle(asked)
    assert cfg.T == 4_096 and notes == ["T = 4,096 is beyond T_max = 1,024, the context the model was trained for: "
                                        "RoPE has no table to run out of, so the shapes are shown, but quality past "
                                        "the trained context needs RoPE scaling"]
    cfg, notes = settle({**asked, "positions": "learned"})
    assert cfg.T == 1_024 and notes[0].startswith("T clamped 4,096 → 1,024")


def test_settle_snaps_h_kv_and_keeps_d_head_even_for_rope():
    from model.rules import settle

    cfg, notes = settle(dict(B=1, T=8, d=96, h=12, L=1, V=10, T_max=8, tie=True, kv_heads=5, **MODERN))
    assert (cfg.h, cfg.h_kv) == (12, 4) and notes == ["h_kv snapped 5 → 4: h = 12 is not divisible by 5"]
    cfg, notes = settle(dict(B=1, T=8, d=96, h=32, L=1, V=10, T_max=8, tie=True, **MODERN))
    assert cfg.h == 24 and cfg.d_head == 4  # 96 / 32 = 3 is odd; of the h with an even d / h, 24 is the nearest
    assert notes[-1] == "h snapped 32 → 24: RoPE rotates pairs of features, so d_head = d / h must be even"
