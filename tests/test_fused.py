"""Fused attention (`Config.attention = "fused"`): the meta pass runs the kernel the CPU runs, and every figure holds.

The kernel: what `model.parts.attention.fused_attention` calls is what F.scaled_dot_product_attention runs on the CPU (torch's
choice, outputs, gradients, saved tensors), and its meta function makes what the CPU kernel makes. The figures:
saved bytes and new memory against real CPU passes, FLOPs equal to eager's, the causal kernel's FLOPs, the contrast
with eager, the step's peak, the symbolic pass, the presets, config.json, values and the CLI.
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend
from torch.utils.flop_counter import FlopCounterMode

from model import GPT, PRESETS, Config, budget, trace
from model.config import GPT2_RECIPE_PRESETS, MODERN, from_hf
from model.formula import matches
from model.parts.attention import fused_attention
from model.rules import preset_of
from model.passes import TORCH_DTYPES, record, run_pass, saved_bytes_of
from model.training import TrainSetup, plan
from pagetools import run_cli

# (B, h, h_kv, T, d_head): multi-head, grouped, multi-query, T = 1
HEADS = [(2, 4, 4, 7, 6), (1, 4, 2, 9, 8), (3, 6, 1, 5, 4), (2, 3, 3, 1, 2)]
DTYPES = ("fp32", "bf16", "fp16")


def _qkv(B: int, h: int, h_kv: int, T: int, d_head: int, dtype: str, device: str = "cpu"):
    """q, k and v as the module makes them: views of one (B, T, (h + 2h_kv)·d_head) projection, heads transposed."""
    x = torch.randn(B, T, (h + 2 * h_kv) * d_head, device=device).to(TORCH_DTYPES[dtype]).requires_grad_()
    q, k, v = x.split([h * d_head, h_kv * d_head, h_kv * d_head], dim=2)
    return x, *(t.view(B, T, -1, d_head).transpose(1, 2) for t in (q, k, v))


def _saved(run) -> list[tuple]:
    """(shape, stride, dtype, storage bytes) of every tensor autograd saves while `run()` runs."""
    out = []

    def pack(t):
        out.append((tuple(t.shape), t.stride(), t.dtype, t.untyped_storage().nbytes()))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = run()
    return out, result


# --- the kernel -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("heads", HEADS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_runs_the_cpu_flash_kernel_for_what_the_module_makes(heads, dtype):
    _, q, k, v = _qkv(*heads, dtype)
    choice = torch._fused_sdp_choice(q, k, v, is_causal=True, enable_gqa=heads[1] != heads[2])
    assert choice == SDPBackend.FLASH_ATTENTION.value


@pytest.mark.parametrize("heads", HEADS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_on_the_cpu_it_is_scaled_dot_product_attention_output_gradients_and_saved_tensors(heads, dtype):
    torch.manual_seed(0)
    x, q, k, v = _qkv(*heads, dtype)
    gqa = heads[1] != heads[2]
    ours_saved, (ours, lse) = _saved(lambda: fused_attention(q, k, v))
    theirs_saved, theirs = _saved(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa))
    assert torch.equal(ours, theirs) and ours_saved == theirs_saved
    assert lse.shape == heads[:2] + heads[3:4] and lse.dtype == torch.float32  # (B, h, T), fp32 whatever the dtype
    grad = torch.randn_like(ours)
    mine = torch.autograd.grad(ours, x, grad)[0]
    assert torch.equal(mine, torch.autograd.grad(theirs, x, grad)[0])
    # and it is attention: eager's written-out softmax(q kᵀ / √d_head + mask) @ v, K/V heads shared
    group = heads[1] // heads[2]
    kk, vv = (t.float().repeat_interleave(group, dim=1) for t in (k, v))
    T = heads[3]
    future = torch.ones(T, T).triu(1).bool()
    scores = (q.float() @ kk.transpose(-2, -1) / heads[4] ** 0.5).masked_fill(future, -torch.inf)
    tolerance = 1e-5 if dtype == "fp32" else 2e-2
    assert torch.allclose(ours.float(), scores.softmax(-1) @ vv, atol=tolerance)
    assert torch.allclose(lse, scores.logsumexp(-1), atol=tolerance)


@pytest.mark.parametrize("heads", HEADS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_on_the_meta_device_it_makes_and_saves_what_the_cpu_kernel_does(heads, dtype):
    cpu_saved, cpu = _saved(lambda: fused_attention(*_qkv(*heads, dtype)[1:]))
    meta_saved, meta = _saved(lambda: fused_attention(*_qkv(*heads, dtype, device="meta")[1:]))
    assert [(tuple(t.shape), t.stride(), t.dtype) for t in meta] == [(tuple(t.shape), t.stride(), t.dtype) for t in cpu]
    assert meta_saved == cpu_saved
    # F.scaled_dot_product_attention itself takes the math path on the meta device: a (B, h, T, T) softmax saved
    _, q, k, v = _qkv(*heads, dtype, device="meta")
    math_saved, _ = _saved(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
    T = heads[3]
    assert any(shape[-2:] == (T, T) for shape, *_ in math_saved) and not any(s[0][-2:] == (T, T) for s in meta_saved)


def test_the_flop_counter_counts_the_cpu_kernel_as_the_two_matmuls_written_out():
    q, k, v = (torch.randn(2, 4, 64, 32) for _ in range(3))  # the example: 0 FLOPs before the registration
    with FlopCounterMode(display=False) as fused:
        F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with FlopCounterMode(display=False) as eager:
        (q @ k.transpose(-2, -1)).softmax(-1) @ v
    assert fused.get_total_flops() == eager.get_total_flops() == 4 * 2 * 4 * 64 * 64 * 32 == 4_194_304


# --- the pass: saved bytes and new memory against real CPU passes, both switches, both recipes ------------------------

MODERN_SMALL = Config(B=2, T=7, d=24, h=4, L=2, V=11, T_max=16, kv_heads=2, **{**MODERN, "attention": "eager"})
PASSES = [Config(B=2, T=7, d=24, h=4, L=2, V=11, T_max=16),  # GPT-2's recipe
          Config(B=3, T=5, d=18, h=3, L=3, V=13, T_max=8, tie=False),
          MODERN_SMALL, replace(MODERN_SMALL, kv_heads=1, qk_norm=True, head_dim=10, bias="qkv"),
          replace(MODERN_SMALL, kv_heads=4, B=1, T=9, tie=True)]
BOTH = [replace(c, attention=a) for c in PASSES for a in ("eager", "fused")]


def _ids(c: Config) -> str:
    return f"{'gpt2' if c.norm == 'layernorm' else 'modern'}-{c.attention}-h{c.h}-kv{c.h_kv}-T{c.T}"


def _dtypes(c: Config) -> list[str]:
    """fp32, and bf16 where no LayerNorm runs: CPU's fused LayerNorm keeps its statistics at 16 bits for 16-bit input
    (tests/test_lines.py), which no meta pass sees."""
    return ["fp32"] if c.norm == "layernorm" else ["fp32", "bf16"]


@pytest.mark.parametrize("cfg", BOTH, ids=_ids)
def test_saved_bytes_equal_autograd_on_real_cpu_tensors_and_fused_saves_no_T_by_T(cfg):
    for dtype in _dtypes(cfg):
        torch.manual_seed(0)
        model = GPT(cfg).to(TORCH_DTYPES[dtype])  # all L blocks, on the CPU: the flash kernel itself runs
        idx = torch.randint(0, cfg.V, (cfg.B, cfg.T))
        assert saved_bytes_of(model, idx) == trace(cfg, dtype).saved_bytes
        shapes = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: shapes.append(tuple(t.shape)) or t, lambda t: t):
            model(idx)
        square = [s for s in shapes if s[-2:] == (cfg.T, cfg.T)]
        if cfg.attention == "fused":
            assert square == [], square  # neither scores, softmax nor a (T, T) mask
        else:
            assert (cfg.B, cfg.h, cfg.T, cfg.T) in square  # the softmax, kept by every block


@pytest.mark.parametrize("cfg", BOTH, ids=_ids)
def test_the_meta_pass_is_the_real_cpu_pass_tensor_for_tensor(cfg):
    """Every recorded tensor (shape, element size, view or new memory, saved), every saved storage and every FLOP count
    of the meta pass, against the same recorder on the module's real CPU pass (block 0, flash kernel included)."""
    for dtype in _dtypes(cfg):
        torch.manual_seed(0)
        model = GPT(cfg, depth=1).to(TORCH_DTYPES[dtype])
        real = record(model, torch.randint(0, cfg.V, (cfg.B, cfg.T)), cfg.tie)
        assert real == run_pass(cfg, dtype)
        new = sum(math.prod(t.shape) * t.element_bytes * (cfg.L if t.phase == "block" else 1) for t in real.tensors
                  if not t.view)
        assert trace(cfg, dtype).activation_bytes == new


def test_the_fused_rows_are_the_kernels_output_and_its_fp32_log_sum_exp():
    cfg = PRESETS["llama3-8b"]
    rows = {r.local: r for r in trace(cfg, "bf16").rows}
    eager = {r.local: r for r in trace(replace(cfg, attention="eager"), "bf16").rows}
    assert not {"attn.scores", "attn.masked", "attn.attn", "attn.k_heads", "attn.v_heads"} & set(rows)
    shapes = {r.symbolic for r in rows.values()}
    assert "(B, h, T)" in shapes and "(B, h, T, T)" not in shapes
    lse = rows["attn.lse"]
    assert (lse.symbolic, lse.shape, lse.nbytes, lse.saved) == ("(B, h, T)", (8, 32, 8192), 8 * 32 * 8192 * 4, True)
    out = rows["attn.attn_v"]
    assert out.shape == eager["attn.attn_v"].shape and out.label.startswith("fused attention") and out.saved
    assert rows["attn.merged"].view and not eager["attn.merged"].view  # the kernel writes (B, T, h, d_head): no copy
    assert [r.local for r in trace(cfg).rows if r.local.startswith("attn.")][-4:] == ["attn.attn_v", "attn.lse",
                                                                                      "attn.merged", "attn.proj"]


def test_eager_would_hold_this_much_of_B_h_T_T_here():
    cfg = PRESETS["llama3-8b"]  # B = 8, T = 8,192, h = 32, L = 32
    lines = {x.key: x for x in trace(cfg, "bf16").lines}
    made, kept = lines["memory/eager_scores"], lines["memory/eager_scores_saved"]
    tensor = 8 * 32 * 8192**2 * 2  # one (B, h, T, T) at bf16: 32 GiB
    assert (made.value, kept.value) == (3 * 32 * tensor, 32 * tensor)  # scores, masked, softmax; the softmax is kept
    assert kept.value == 2**40 and "attn.scores, attn.masked, attn.attn" in made.label
    eager = [r for r in trace(replace(cfg, attention="eager"), "bf16").rows if r.symbolic == "(B, h, T, T)"]
    assert made.value == sum(r.nbytes * r.repeat for r in eager)
    assert all(matches(x.formula, cfg.symbols(), x.value) for x in (made, kept))
    assert "memory/eager_scores" not in {x.key for x in trace(replace(cfg, attention="eager"), "bf16").lines}


# --- FLOPs: the measured count is eager's; the causal kernel's beside it ----------------------------------------------

def _random(rng: random.Random) -> Config:
    """A small configuration of GPT-2's recipe or of the modern one, at random sizes."""
    h = rng.choice([1, 2, 3, 4, 6])
    d_head, T_max = 2 * rng.randint(1, 6), rng.randint(1, 40)
    base = dict(B=rng.randint(1, 5), T=rng.randint(1, T_max), d=h * d_head, h=h, L=rng.randint(1, 4),
                V=rng.randint(2, 300), T_max=T_max, tie=rng.random() < 0.5)
    if rng.random() < 0.5:
        return Config(**base)
    kv_heads = rng.choice([k for k in range(1, h + 1) if h % k == 0])
    return Config(**base, **{**MODERN, "attention": "eager"}, kv_heads=kv_heads, qk_norm=rng.random() < 0.5)


RANDOM = [_random(random.Random(i)) for i in range(24)]


@pytest.mark.parametrize("cfg", RANDOM, ids=_ids)
def test_measured_forward_flops_per_token_are_equal_for_eager_and_fused(cfg):
    eager, fused = budget(cfg), budget(replace(cfg, attention="fused"))
    assert fused.flops_fwd_measured_per_token == eager.flops_fwd_measured_per_token
    assert fused.flops_attn_per_token == eager.flops_attn_per_token == 4 * cfg.L * cfg.T * cfg.h * cfg.d_head
    lines = {x.key: x for x in fused.lines}
    causal = lines["flops/attention_causal"].value
    assert causal == 2 * cfg.L * (cfg.T + 1) * cfg.h * cfg.d_head  # T(T + 1)/2 of the T² (query, key) pairs
    assert causal * 2 * cfg.T == fused.flops_attn_per_token * (cfg.T + 1)
    forward = fused.flops_fwd_measured_per_token - fused.flops_attn_per_token + causal
    assert lines["flops/forward_causal"].value == forward
    assert "flops/attention_causal" not in {x.key for x in eager.lines}


@pytest.mark.parametrize("cfg", RANDOM[:6], ids=_ids)
def test_flop_counter_on_the_full_depth_cpu_module_gives_the_measured_count(cfg):
    cfg = replace(cfg, attention="fused")
    torch.manual_seed(0)
    model = GPT(cfg)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(torch.randint(0, cfg.V, (cfg.B, cfg.T)))
    assert counter.get_total_flops() == budget(cfg).flops_fwd_measured_per_token * cfg.B * cfg.T


def test_at_long_context_a_causal_kernel_runs_about_half_of_attention():
    b = budget(PRESETS["llama3-8b"])
    lines = {x.key: x.value for x in b.lines}
    assert lines["flops/attention_causal"] / b.flops_attn_per_token == pytest.approx(0.5, abs=1e-4)
    assert lines["flops/forward_causal"] < b.flops_fwd_measured_per_token


# --- the presets, config.json and values ------------------------------------------------------------------------------

def test_the_modern_presets_start_fused_and_gpt2s_and_gpt3s_keep_eager():
    for name, cfg in PRESETS.items():
        assert cfg.attention == ("eager" if name in GPT2_RECIPE_PRESETS or cfg.sinks or cfg.mla else "fused"), name
        # gpt-oss's sinks join the softmax, which no fused kernel here takes; latent attention's q, k and v differ in
        # width
    assert {"mistral-nemo-12b", "qwen3-4b-instruct-2507"} <= {n for n, c in PRESETS.items() if c.attention == "fused"}
    assert Config(B=1, T=4, d=8, h=2, L=1, V=5).attention == "eager"  # the lesson's default


def test_a_config_json_starts_fused():
    doc = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
           "intermediate_size": 96, "num_hidden_layers": 2, "vocab_size": 100, "max_position_embeddings": 128}
    assert from_hf(doc).attention == "fused"


def test_the_switch_is_validated_with_its_choices():
    with pytest.raises(ValueError, match="attention must be one of eager, fused"):
        Config(B=1, T=4, d=8, h=2, L=1, V=5, attention="flash")


def test_fused_and_eager_compute_the_same_numbers_and_values_runs_eager():
    from model.values import EAGER_RUN, values
    from model.values_report import run_line

    cfg = replace(MODERN_SMALL, attention="fused")
    torch.manual_seed(0)
    fused = GPT(cfg)
    eager = GPT(replace(cfg, attention="eager"))
    eager.load_state_dict(fused.state_dict())  # the switch changes no parameter
    idx = torch.randint(0, cfg.V, (cfg.B, cfg.T))
    (a, loss_a), (b, loss_b) = fused(idx), eager(idx)
    assert torch.allclose(a, b, atol=1e-6) and torch.allclose(loss_a, loss_b, atol=1e-6)
    v = values(cfg, [1, 2, 3, 4, 5])
    assert v.plan.asked.attention == "fused" and v.cfg.attention == "eager"  # the weights exist to show
    assert EAGER_RUN in run_line(v) and v.attention(0, 0)[4, :5].sum() == pytest.approx(1, abs=1e-5)


# --- the training run: Llama 3 8B on 8 × H100 with ZeRO 3 at T = 8,192 ------------------------------------------------

def test_llama3_8b_fits_with_fused_attention_and_not_with_eager(capsys):
    args = ["--preset", "llama3-8b", "--table", "train", "--gpus", "8", "--zero", "3", "--json"]
    runs = {}
    for attention, B in (("fused", []), ("eager", []), ("fused", ["--B", "1"]), ("eager", ["--B", "1"])):
        code, out, err = run_cli([*args, "--attention", attention, *B], capsys)
        assert (code, err) == (0, "")
        runs[attention, bool(B)] = json.loads(out)["train"]["memory"]
    assert runs["fused", False]["max_B"] == 1 and runs["eager", False]["max_B"] == 0
    assert runs["fused", True]["fits"] and not runs["eager", True]["fits"]
    # at the preset's micro-batch B = 8 neither fits: fused keeps ~400 GiB of other activations, eager 1.4 TiB
    assert not runs["fused", False]["fits"] and runs["eager", False]["peak"] > 3 * runs["fused", False]["peak"]
    assert runs["eager", False]["peak"] > 1.4 * 2**40


@pytest.mark.parametrize("recompute", ["none", "full"])
def test_the_plan_of_a_fused_run_is_cheaper_by_the_kept_scores(recompute):
    cfg = replace(PRESETS["llama3-8b"], B=1)
    setup = TrainSetup(gpus=8, zero=3, recompute=recompute)
    fused, eager = plan(cfg, setup), plan(replace(cfg, attention="eager"), setup)
    assert fused.N == eager.N and fused.C_measured == eager.C_measured  # same model, same measured compute
    assert fused.memory.peak < eager.memory.peak and fused.memory.max_B >= eager.memory.max_B
    assert all(matches(x.formula, fused.symbols, x.value) for x in fused.lines if x.formula)


# --- the CLI ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("table", ["all", "shapes", "budget", "kv", "train", "changes"])
@pytest.mark.parametrize("attention", ["eager", "fused"])
def test_every_table_prints_for_both_switches(table, attention, capsys):
    code, out, err = run_cli(["--preset", "qwen3-0.6b", "--T", "512", "--attention", attention, "--table", table],
                             capsys)
    assert (code, err) == (0, "") and out.splitlines()[0].endswith(", fused attention") == (attention == "fused")
    if table in ("all", "shapes"):
        rows = {line.split()[0] for line in out.splitlines() if line.startswith("    attn.")}  # the block's rows
        assert ("attn.scores" in rows) == (attention == "eager") and ("attn.lse" in rows) == (attention == "fused")


def test_a_bad_attention_is_one_line(capsys):
    code, out, err = run_cli(["--attention", "flash"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--attention: invalid choice: 'flash' (choose from 'eager', 'fused')" in err


def test_the_changes_table_takes_a_gpu_for_the_wall(capsys):
    code, out, _ = run_cli(["--preset", "llama3-8b", "--table", "changes", "--gpu", "b200", "--csv"], capsys)
    assert code == 0 and "B200 192 GB (192 GiB)" in out and "(192·2³⁰/(4LBh))^0.5" in out
    code, _, err = run_cli(["--preset", "llama3-8b", "--table", "changes", "--gpu", "custom"], capsys)
    assert code == 2 and "named GPU" in err and err.count("\n") == 1


def test_either_attention_runs_the_presets_model() -> None:
    """Attention is how a model runs: Llama 3 8B written out is still Llama 3 8B (the pages' preset picker says so),
    and GPT-2 small through the fused kernel is still GPT-2 small."""
    for name, preset in PRESETS.items():
        for attention in ("eager",) if preset.sinks or preset.mla else ("eager", "fused"):  # gpt-oss's sinks and
            # latent attention: eager only
            assert preset_of(replace(preset, attention=attention)) == name
    assert preset_of(replace(PRESETS["llama3-8b"], kv_heads=None)) == "custom"  # the recipe still counts
