"""Falcon-H1 (falcon_h1) against transformers 5.24's FalconH1ForCausalLM: a parallel hybrid block (`model.parts.hybrid`),
attention and Mamba 2 both reading one norm of x in every block, Mamba 2 without its gated norm (`ssm_norm`). Its
mixer with the weights copied (output, FlopCounterMode count, parameters); FalconH1Config's class defaults (N on the
meta device); random small files (N, the bytes of its real cache after a prefill: K, V, conv and SSM states of every
block, and the forward FLOPs of its eager CPU pass); saved bytes equal autograd's on real CPU tensors; the labels of
the status line, the budget and cache lines and the changes card; the export's one-line refusal; the live page.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace

import pytest
import torch
from transformers import FalconH1Config
from transformers.models.falcon_h1.modeling_falcon_h1 import FalconH1Mixer

from model import GPT, budget, stack, trace
from model.changes import all_attention, changes
from model.config import Config, from_hf, read_hf
from model.memory import kv_cache_lines
from model.parts.mamba import Mamba2
from model.rules import rules_line
from test_window import _module, measured, reference
from copied import assert_same_module, real_saved_bytes


def written(**fields: object) -> dict:
    """The config.json FalconH1Config writes for `fields` (time_step_limit left out: its infinity is no JSON)."""
    doc = json.loads(FalconH1Config(**fields).to_json_string())
    return {**{k: v for k, v in doc.items() if k != "time_step_limit"}, "model_type": "falcon_h1"}


def falcon_doc(rng: random.Random) -> dict:
    """A tiny Falcon-H1: heads, widths, the tie and the biases drawn; Mamba 2's sizes by mamba_d_ssm or mamba_expand
    (mamba_d_head "auto" or given), its norm (none, or a gain before or after the gate), head_dim set apart or d // h;
    muP multipliers away from 1."""
    h_kv = rng.choice([1, 2])
    h, L, g = h_kv * rng.choice([1, 2]), rng.randrange(1, 4), rng.randrange(1, 3)
    d = 2 * h * rng.randrange(1, 4)
    heads = g * rng.randrange(1, 4)
    inner = heads * rng.randrange(1, 4)
    proj = rng.random() < 0.3
    fields = dict(vocab_size=rng.randrange(8, 60), hidden_size=d, num_hidden_layers=L, num_attention_heads=h,
                  num_key_value_heads=h_kv, intermediate_size=rng.randrange(2, 30), max_position_embeddings=256,
                  tie_word_embeddings=rng.random() < 0.3, attention_bias=rng.random() < 0.3,
                  mlp_bias=rng.random() < 0.3, mamba_n_heads=heads, mamba_n_groups=g, mamba_d_state=rng.randrange(1, 9),
                  mamba_d_conv=rng.randrange(2, 5), mamba_chunk_size=rng.choice([4, 8, 16]),
                  mamba_conv_bias=rng.random() < 0.7, mamba_proj_bias=proj, projectors_bias=proj,
                  mamba_rms_norm=rng.random() < 0.5, mamba_norm_before_gate=rng.random() < 0.5,
                  attention_in_multiplier=0.5, ssm_out_multiplier=2.0, key_multiplier=0.7, embedding_multiplier=3.0,
                  lm_head_multiplier=0.2, mlp_multipliers=[0.5, 2.0], ssm_multipliers=[1.0, 0.5, 2.0, 1.5, 0.3])
    if rng.random() < 0.5:
        fields["mamba_d_ssm"] = inner
    else:  # mamba_d_ssm null: mamba_expand·d, which the heads must divide
        fields.update(mamba_d_ssm=None, mamba_expand=rng.randrange(1, 3), mamba_n_heads=g)
    if rng.random() < 0.3:
        fields["mamba_d_head"] = (fields["mamba_d_ssm"] or fields["mamba_expand"] * d) // fields["mamba_n_heads"]
    if rng.random() < 0.3:
        fields["head_dim"] = 2 * rng.randrange(1, 5)
    return written(**fields)


SEEDS = range(8)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_files_match_transformers_parameters_cache_and_flops(seed):
    """Attention and Mamba 2 in every block: N, the whole cache after a prefill (K and V of every block beside its
    conv and SSM states, fp32) and the forward FLOPs (T across the chunks of Q) equal transformers'."""
    rng = random.Random(f"falcon_h1-{seed}")
    doc = falcon_doc(rng)
    B, T = rng.randrange(1, 3), rng.choice([1, 5, 16, 21, 33])
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.ssm_parallel and cfg.L_ssm == cfg.L and cfg.ssm_heads == doc["mamba_n_heads"]
    assert cfg.ssm_norm == ("none" if not doc["mamba_rms_norm"] else
                            "norm_gate" if doc["mamba_norm_before_gate"] else "gated")
    N, kv, flops = measured(cfg)
    ref_N, ref_kv, ref_flops = reference(doc, B, T)
    assert (N, kv) == (ref_N, ref_kv), doc
    assert flops == pytest.approx(ref_flops, rel=1e-12), doc


def test_the_class_defaults_are_exact():
    """FalconH1Config's defaults: 32 blocks of attention (32 heads of 128, 8 K/V heads) beside Mamba 2 (128 heads of
    8 × 256, mamba_d_ssm 1,024), no gated norm; N is transformers' module's on the meta device."""
    doc = written()
    cfg = from_hf(doc)
    assert (cfg.L, cfg.L_ssm, cfg.ssm_heads, cfg.ssm_head_dim, cfg.ssm_state, cfg.ssm_chunk, cfg.conv_width) == \
        (32, 32, 128, 8, 256, 256, 4)
    assert cfg.ssm_norm == "none" and cfg.ssm_parallel and cfg.d_head == 128 and cfg.h_kv == 8
    assert budget(cfg).params_exact == sum(p.numel() for p in _module(doc, "meta").parameters()) == 8_514_961_408


def mixers(rng_seed: int, norm: str) -> tuple[FalconH1Mixer, Mamba2, FalconH1Config, Config]:
    """transformers' mixer with random weights (muP multipliers at 1; the norm's ε 1e-6, this module's: a value) and this
    module's Mamba 2 with them copied."""
    torch.manual_seed(rng_seed)
    config = FalconH1Config(hidden_size=12, num_attention_heads=2, num_hidden_layers=1, mamba_d_ssm=24, rms_norm_eps=1e-6,
                            mamba_n_heads=6, mamba_n_groups=2, mamba_d_state=4, mamba_d_conv=3, mamba_chunk_size=8,
                            mamba_rms_norm=norm != "none", mamba_norm_before_gate=norm == "norm_gate")
    ref = FalconH1Mixer(config, 0)
    ref.register_buffer("mup_vector", torch.ones(1, 1, 2 * 24 + 2 * 8 + 6), persistent=False)
    cfg = from_hf(written(hidden_size=12, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=1, mamba_d_ssm=24,
                          mamba_n_heads=6, mamba_n_groups=2, mamba_d_state=4, mamba_d_conv=3, mamba_chunk_size=8,
                          mamba_rms_norm=norm != "none", mamba_norm_before_gate=norm == "norm_gate"), B=2, T=13)
    ours = Mamba2(cfg)
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.3)
        ours.in_proj.weight.copy_(ref.in_proj.weight)
        ours.out_proj.weight.copy_(ref.out_proj.weight)
        ours.conv_weight.copy_(ref.conv1d.weight.squeeze(1))
        ours.conv_bias.copy_(ref.conv1d.bias)
        for name in ("dt_bias", "A_log", "D"):
            getattr(ours, name).copy_(getattr(ref, name))
        if norm != "none":
            ours.norm_weight.copy_(ref.norm.weight)
    return ref, ours, config, cfg


@pytest.mark.parametrize("norm", ["none", "norm_gate", "gated"])
@torch.no_grad()
def test_the_mixer_equals_transformers_output_flops_and_parameters(norm):
    """Mamba 2 without its gated norm (y·SiLU(z)), or with the norm before or after the gate: FalconH1Mixer's
    output, FlopCounterMode count and parameters."""
    ref, ours, _, cfg = mixers(0, norm)
    assert cfg.ssm_norm == norm
    x = torch.randn(2, 13, 12)
    assert_same_module(ref, ours, x)


CONFIGS = [Config(B=2, T=T, d=12, h=2, L=2, V=30, T_max=64, norm="rmsnorm", positions="rope", mlp="swiglu", kv_heads=1,
                  bias="none", mamba_layers=(0, 1), ssm_parallel=True, ssm_heads=2, ssm_head_dim=3, ssm_state=4,
                  ssm_groups=1, ssm_chunk=4, conv_width=3, ssm_norm=norm, attention=attention)
           for T, attention, norm in ((5, "eager", "none"), (9, "fused", "none"), (7, "eager", "norm_gate"))]


@pytest.mark.parametrize("cfg", CONFIGS, ids=["eager-5", "fused-9", "eager-7-normed"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_saved_bytes_equal_autograd_on_real_cpu_tensors(cfg, dtype):
    """What a parallel hybrid block keeps for backward (each mixer's own copy of ln_1(x), the scan's tensors): the meta
    pass's bytes are autograd's on real CPU tensors."""
    assert real_saved_bytes(cfg, dtype) == trace(cfg, dtype).saved_bytes


def test_the_labels_count_attention_and_mamba_2_in_every_block():
    """Both mixers in all L blocks: the counts, the status line, the budget's and the cache's lines, the shapes
    table's group and the changes card say L, never L − L_ssm."""
    cfg = from_hf(written(**SMALL), B=2, T=11)
    assert stack.mixer_counts(cfg) == {"attention": stack.L, "lin": stack.L}
    assert "Mamba 2 beside attention in all L = 3 blocks" in rules_line(cfg)
    b = budget(cfg)
    lines = {x.key: x for x in b.lines}
    assert lines["params/attention"].label == "attention of all L blocks"
    assert lines["params/ssm_all"].formula.startswith("L·(") and "L_ssm" not in lines["params/ssm_all"].formula
    assert lines["params/blocks"].label.startswith("attention and Mamba 2 + MLP of all L blocks")
    every = [*b.lines, *kv_cache_lines(cfg, "fp32"), *trace(cfg, "fp32").lines]
    assert not [x.key for x in every if "L − L_ssm" in x.label + x.formula or "L_ssm" in x.formula]
    kv = {x.key: x for x in kv_cache_lines(cfg, "fp32")}
    assert kv["memory/kv_cache"].value == kv["memory/kv_cache_attention"].value + kv["memory/state_conv"].value \
        + kv["memory/state_ssm"].value
    assert kv["memory/kv_cache_all_attention"].value == kv["memory/kv_cache_attention"].value
    assert "attention and Mamba 2" in trace(cfg, "fp32").groups[0].title
    c = changes(cfg)
    last = c.steps[-1]
    assert last.key == "mamba" and last.title.startswith("Mamba 2 beside attention in all L = 3 blocks")
    twin = all_attention(cfg)
    assert not twin.mamba_layers and not twin.ssm_parallel and twin.L == cfg.L
    v = {x.key: x.value for x in c.lines}
    assert v["changes/mamba/params"] == budget(cfg).params_exact - budget(twin).params_exact > 0
    assert "changes/mamba/T_even" not in v and v["changes/mamba/states"] == kv["memory/state_conv"].value \
        + kv["memory/state_ssm"].value


SMALL = dict(vocab_size=40, hidden_size=16, intermediate_size=24, num_hidden_layers=3, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=256, mamba_d_ssm=24, mamba_n_heads=6, mamba_n_groups=2,
             mamba_d_state=4, mamba_d_conv=3, mamba_chunk_size=8)


def test_serving_runs_a_decode_step_over_both_caches():
    """A decode step of a parallel hybrid block reads K and V and Mamba 2's states: its rows and the cache it
    writes name both."""
    from model.inference import decode_pass, serving
    cfg = from_hf(written(**SMALL), B=2, T=11)
    names = {r.name for r in decode_pass(cfg).rows}
    assert {"blocks.0.attn.k_cache", "blocks.0.ssm.state"} <= names
    lines = {x.key: x for x in serving(cfg).result.lines}
    assert "each block's Mamba 2 states beside them" in lines["infer/kv_cache"].label


@pytest.mark.parametrize("change, message", [
    ({"mamba_n_heads": 7}, "mamba_n_heads=7 does not divide Mamba 2's width"),
    ({"mamba_d_head": 5}, "is not Mamba 2's width"),
    ({"mamba_n_groups": 4}, "mamba_n_groups=4 does not divide mamba_n_heads"),
    ({"mamba_proj_bias": True}, "a bias on one of Mamba 2's in_proj and out_proj without the other"),
    ({"mlp_multipliers": [1.0]}, "mlp_multipliers .* must be a list of 2 numbers"),
    ({"hidden_act": "gelu"}, "hidden_act"),
])
def test_bad_files_are_refused_in_one_line(change, message):
    with pytest.raises(ValueError, match=message) as e:
        read_hf({**written(**SMALL), **change})
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("bad, words", [
    ({"mamba_layers": (0, 1)}, "ssm_parallel puts Mamba 2 beside attention in every block"),
    ({"parallel": True}, "ssm_parallel wires the block its own way"),
    ({"parallel_norms": True}, "ssm_parallel and parallel_norms each wire the block their own way"),
])
def test_bad_fields_are_refused_in_one_line(bad, words):
    with pytest.raises(ValueError, match=words) as e:
        replace(CONFIGS[0], **{"L": 3, "mamba_layers": (0, 1, 2), **bad})
    assert "\n" not in str(e.value)


def test_cli_json_cache_and_the_export(tmp_path):
    """python -m model --json: memory/kv_cache is transformers' cache after a prefill (fp32); the no-server page shows
    it (tests/test_export_mamba.py)."""
    path = tmp_path / "config.json"
    doc = written(**SMALL)
    path.write_text(json.dumps(doc))
    out = subprocess.run([sys.executable, "-m", "model", "--hf-config", str(path), "--T", "13", "--B", "2", "--json"],
                         capture_output=True, text=True, check=True).stdout
    kv = {x["key"]: x["value"] for x in json.loads(out)["kv"]}
    assert kv["memory/kv_cache"] == reference(doc, 2, 13)[1]


def test_the_live_page_shows_a_falcon_h1_config():
    """The page's state takes a Falcon-H1 configuration from its link and builds every card's figures."""
    from app.query import config_items, parse_config
    from app.state import ExplorerState
    cfg = from_hf(written(**SMALL), B=2, T=11)
    search = "?" + "&".join(f"{k}={v}" for k, v in config_items(cfg))
    back, notes = parse_config(search)
    assert back == cfg and not notes
    s = ExplorerState()
    s.apply(back)
    assert s.budget.params_exact == budget(cfg).params_exact and s.trace.saved_bytes > 0 and s.serving.result.lines
    import panel as pn
    from app import Explorer
    page = Explorer(query=search)  # every card, its Bokeh models included (the chart's bars have their colours)
    assert pn.panel(page).get_root() is not None and page.state.config == cfg
