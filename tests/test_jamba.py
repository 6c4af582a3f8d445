"""Mamba, the first one (`model.parts.mamba1`), against transformers 5.24's JambaMambaMixer, and AI21's Jamba files
(jamba) read as transformers reads them: the module's output and FlopCounterMode count with the weights copied, a decode
step from transformers' cached states; on random small files (dense and MoE blocks, attention and Mamba mixed, T 1 to
40): N on the meta device, the bytes of its real cache after a prefill (K and V of the attention blocks, the conv and
SSM states of the Mamba blocks) and the forward FLOPs of its eager CPU pass; JambaConfig's defaults (Jamba-v0.1);
saved bytes equal autograd's on real CPU tensors; bad input refused in one line.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
import torch
from transformers import DynamicCache, JambaConfig
from transformers.models.jamba.modeling_jamba import JambaMambaMixer

from model import GPT, budget
from model.config import PRESETS, Config, from_hf, read_hf
from model.memory import kv_cache_lines
from model.parts.mamba1 import Mamba1
from test_moe import _module as moe_module  # eager experts on the CPU, batched matmuls on the meta device
from test_window import measured, reference
from copied import assert_same_module, real_saved_bytes


def sizes(rng: random.Random) -> dict[str, object]:
    """Random Mamba sizes: d_inner (a multiple of d, below), d_s, r_dt, d_conv, the biases."""
    return {"mamba1_state": rng.randrange(1, 9), "mamba1_dt_rank": rng.randrange(1, 5), "conv_width": rng.randrange(2, 5),
            "mamba1_bias": rng.choice(["conv", "none", "proj", "all"])}


def hf_config(s: dict, d: int, expand: int) -> JambaConfig:
    """transformers' config of the sizes `s` at width d, d_inner = expand·d."""
    return JambaConfig(hidden_size=d, mamba_expand=expand, mamba_d_state=s["mamba1_state"],
                       mamba_dt_rank=s["mamba1_dt_rank"], mamba_d_conv=s["conv_width"],
                       mamba_conv_bias=s["mamba1_bias"] in ("conv", "all"),
                       mamba_proj_bias=s["mamba1_bias"] in ("proj", "all"), num_hidden_layers=2, attn_layer_period=2,
                       attn_layer_offset=1, num_attention_heads=2, num_key_value_heads=1, num_experts=1)


def hybrid(s: dict, B: int, T: int, d: int, inner: int, L: int = 2, mamba: tuple[int, ...] = (0,),
           **more: object) -> Config:
    return Config(B=B, T=T, d=d, h=2, L=L, V=50, T_max=512, norm="rmsnorm", positions="rope", mlp="swiglu",
                  kv_heads=1, head_dim=4, bias="none", mamba1_layers=mamba, mamba1_inner=inner,
                  nope_layers=tuple(i for i in range(L) if i not in mamba), **s, **more)


def copied(s: dict, d: int, expand: int, B: int, T: int,
           seed: int) -> tuple[JambaMambaMixer, Mamba1, JambaConfig]:
    """transformers' mixer with random weights, and this module with them copied one to one."""
    torch.manual_seed(seed)
    config = hf_config(s, d, expand)
    ref = JambaMambaMixer(config, 0)
    ours = Mamba1(hybrid(s, B, T, d, expand * d))
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.3)
        for mine, theirs in ((ours.in_proj, ref.in_proj), (ours.out_proj, ref.out_proj), (ours.x_proj, ref.x_proj),
                             (ours.dt_proj, ref.dt_proj)):
            mine.weight.copy_(theirs.weight)
            if theirs.bias is not None:
                mine.bias.copy_(theirs.bias)
        ours.conv_weight.copy_(ref.conv1d.weight.squeeze(1))
        if ref.conv1d.bias is not None:
            ours.conv_bias.copy_(ref.conv1d.bias)
        for name in ("A_log", "D"):
            getattr(ours, name).copy_(getattr(ref, name))
        for mine, theirs in (("dt_norm", "dt_layernorm"), ("b_norm", "b_layernorm"), ("c_norm", "c_layernorm")):
            getattr(ours, mine).copy_(getattr(ref, theirs).weight)
    return ref, ours, config


@pytest.mark.parametrize("seed", range(6))
@torch.no_grad()
def test_module_equals_transformers_output_flops_and_parameters(seed):
    """Weights copied one to one: the same output and FlopCounterMode count (T from 1 to 40: the scan by chunks
    counts transformers' loop's matmuls), and the same parameters."""
    rng = random.Random(f"mamba1-{seed}")
    s = sizes(rng)
    d, expand, B, T = rng.randrange(1, 9), rng.randrange(1, 4), rng.randrange(1, 3), rng.choice([1, 2, 3, 8, 17, 40])
    ref, ours, _ = copied(s, d, expand, B, T, seed)
    x = torch.randn(B, T, d)
    assert_same_module(ref, ours, x)


@pytest.mark.parametrize("seed", range(3))
@torch.no_grad()
def test_a_decode_step_equals_transformers_after_its_prefill(seed):
    """transformers' prefill fills its cache (LinearAttentionLayer's conv and SSM states); its states in this module's
    decode step give transformers' next output, twice in a row; the states' bytes are the cache lines'."""
    rng = random.Random(f"mamba1-decode-{seed}")
    s = sizes(rng)
    d, expand, B, T = rng.randrange(2, 9), rng.randrange(1, 3), rng.randrange(1, 3), rng.choice([1, 5, 23])
    ref, ours, config = copied(s, d, expand, B, T, seed)
    cache = DynamicCache(config=config)
    ref(torch.randn(B, T, d), cache=cache)
    layer = cache.layers[0]
    lines = {x.key: x.value for x in kv_cache_lines(hybrid(s, B, T, d, expand * d), "fp32")}
    assert layer.conv_states[0].numel() * 4 == lines["memory/state_conv"]
    assert layer.recurrent_states[0].numel() * 4 == lines["memory/state_ssm"]
    assert layer.recurrent_states[0].dtype == torch.float32
    for _ in range(2):
        past = (layer.conv_states[0].clone(), layer.recurrent_states[0].clone())
        x = torch.randn(B, 1, d)
        torch.testing.assert_close(ours(x, past=past), ref(x, cache=cache), atol=1e-5, rtol=1e-5)


def written(**fields: object) -> dict:
    """The config.json JambaConfig writes for `fields`."""
    return {**json.loads(JambaConfig(**fields).to_json_string()), "model_type": "jamba"}


def jamba_doc(rng: random.Random, moe: bool) -> dict:
    """A tiny Jamba: heads, widths and the tie drawn; attention in block i where i % attn_layer_period ==
    attn_layer_offset (one at least, and one Mamba block); Mamba's sizes (mamba_dt_rank "auto" or given, both biases);
    with experts E > 1, k and their width in block i where i % expert_layer_period == expert_layer_offset, else one
    expert (every block's MLP dense)."""
    h_kv = rng.choice([1, 2])
    h, L = h_kv * rng.choice([1, 2]), rng.randrange(2, 6)
    step = rng.randrange(1, 3)  # the experts' period; the attention layers' an even one beside 2 (one kind of MLP)
    period = rng.choice([p for p in range(2, L + 1) if not moe or step == 1 or p % 2 == 0])
    fields = dict(vocab_size=rng.randrange(8, 60), hidden_size=2 * h * rng.randrange(1, 4), num_hidden_layers=L,
                  num_attention_heads=h, num_key_value_heads=h_kv, max_position_embeddings=256,
                  tie_word_embeddings=rng.random() < 0.3, intermediate_size=rng.randrange(2, 20),
                  attn_layer_period=period, attn_layer_offset=rng.randrange(0, period),
                  mamba_d_state=rng.randrange(1, 9), mamba_d_conv=rng.randrange(2, 5), mamba_expand=rng.randrange(1, 3),
                  mamba_conv_bias=rng.random() < 0.7, mamba_proj_bias=rng.random() < 0.3)
    if rng.random() < 0.5:
        fields["mamba_dt_rank"] = rng.randrange(1, 5)
    if moe:
        E = rng.randrange(2, 6)
        fields.update(num_experts=E, num_experts_per_tok=rng.randrange(1, E + 1), expert_layer_period=step,
                      expert_layer_offset=rng.randrange(0, step))
    else:
        fields["num_experts"] = 1
    return written(**fields)


JAMBA = [(moe, i) for moe in (False, True) for i in range(4)]


@pytest.mark.parametrize("moe, seed", JAMBA, ids=[f"{'moe' if m else 'dense'}-{i}" for m, i in JAMBA])
def test_jamba_files_match_transformers_parameters_cache_and_flops(moe, seed):
    """Mamba beside attention: N, the whole cache after a prefill (K and V, conv and SSM states, fp32) and the forward
    FLOPs (T from 1 to 40) equal transformers'."""
    rng = random.Random(f"jamba-{moe}-{seed}")
    doc = jamba_doc(rng, moe)
    B, T = rng.randrange(1, 3), rng.choice([1, 5, 16, 21, 40])
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.L_mb >= 1 and cfg.mamba1_state == doc["mamba_d_state"] and bool(cfg.moe) == moe
    assert set(cfg.nope_layers) == set(range(cfg.L)) - set(cfg.mamba1_layers)
    N, kv, flops = measured(cfg)
    ref_N, ref_kv, ref_flops = reference(doc, B, T, build=moe_module)
    assert (N, kv) == (ref_N, ref_kv), doc
    assert flops == pytest.approx(ref_flops, rel=1e-12), doc


def test_the_class_defaults_are_jamba_v0_1_and_the_preset():
    """JambaConfig's defaults (its docstring's ai21labs/Jamba-v0.1): N = 51,570,323,328 on the meta device, as
    transformers builds it, the card's 52B (51.6B); the preset jamba-v0.1 is that reading."""
    from test_window import _module
    cfg = from_hf(written())
    assert budget(cfg).params_exact == sum(p.numel() for p in _module(written(), "meta").parameters()) \
        == 51_570_323_328
    assert (cfg.L_mb, cfg.mamba1_inner, cfg.mamba1_state, cfg.mamba1_dt_rank, cfg.conv_width) == (28, 8192, 16, 256, 4)
    assert budget(PRESETS["jamba-v0.1"]).params_exact == 51_570_323_328


@pytest.mark.parametrize("change, message", [
    ({"attn_layer_offset": 5}, "attn_layer_offset=5 is not below attn_layer_period=2, which JambaConfig requires"),
    ({"expert_layer_offset": 2}, "expert_layer_offset=2 is not below expert_layer_period=2"),
    ({"attn_layer_period": 8, "attn_layer_offset": 6}, "over 4 layers gives no attention layer"),
    ({"mamba_dt_rank": "wide"}, "must be a whole number of at least 1, or \"auto\""),
    ({"attn_layer_period": 0}, "attn_layer_period=0"),
    ({"mamba_d_state": 0}, "mamba_d_state=0"),
    ({"hidden_act": "gelu"}, "hidden_act='gelu'"),
    ({"attn_layer_period": 3, "attn_layer_offset": 0, "num_hidden_layers": 6},
     "the attention layers 0, 3 (attn_layer_period, attn_layer_offset) fall on both dense and expert layers"),
])
def test_bad_files_are_refused_in_one_line(change, message):
    base = {"hidden_size": 16, "num_hidden_layers": 4, "attn_layer_period": 2, "attn_layer_offset": 1,
            "num_attention_heads": 2, "num_key_value_heads": 1}
    doc = {**written(**base), **change}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        read_hf(doc)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("bad, words", [
    ({"mamba1_layers": (), "conv_width": None, "nope_layers": ()}, "mamba1_inner=8 is set but mamba1_layers is not"),
    ({"mamba1_state": None}, "need d_s"),
    ({"mamba1_layers": (0, 5)}, "mamba1_layers"),
    ({"mamba1_layers": (0, 1), "nope_layers": ()}, "a model of Mamba blocks alone"),
    ({"window": 4}, "beside latent attention, a window"),
])
def test_bad_fields_are_refused_in_one_line(bad, words):
    s = {"mamba1_state": 4, "mamba1_dt_rank": 2, "conv_width": 4, "mamba1_bias": "conv"}
    with pytest.raises(ValueError, match=words) as e:
        Config(**{**vars(hybrid(s, 1, 8, 8, 8)), **bad})
    assert "\n" not in str(e.value)


HYBRIDS = [hybrid({"mamba1_state": 3, "mamba1_dt_rank": 2, "conv_width": 3, "mamba1_bias": "conv"}, 2, T, 8, 16,
                  attention=attention) for T, attention in ((5, "eager"), (9, "fused"))]


@pytest.mark.parametrize("cfg", HYBRIDS, ids=["eager-5", "fused-9"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_saved_bytes_equal_autograd_on_real_cpu_tensors(cfg, dtype):
    """What the scan by chunks keeps for backward: the meta pass's bytes are autograd's on real CPU tensors."""
    from model import trace
    real = real_saved_bytes(cfg, dtype)
    assert real == trace(cfg, dtype).saved_bytes


def test_cli_prints_the_cache_of_a_jamba_file_as_transformers_keeps_it(tmp_path):
    """python -m model --hf-config on a Jamba file: memory/kv_cache at fp32 is the bytes of transformers' real cache
    after a prefill; the changes card ends with Mamba in place of attention."""
    rng = random.Random("jamba-cli")
    doc = jamba_doc(rng, True)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    args = [sys.executable, "-m", "model", "--hf-config", str(path), "--T", "21", "--B", "2"]
    out = json.loads(subprocess.run([*args, "--json", "--dtype", "fp32"], capture_output=True, text=True,
                                    check=True).stdout)
    kv = {x["key"]: x for x in out["kv"]}
    assert kv["memory/state_ssm"]["formula"] == "L_mb·B·d_inner·d_s·4"
    assert kv["memory/kv_cache"]["value"] == reference(doc, 2, 21, build=moe_module)[1]
    run = subprocess.run([*args, "--table", "changes"], capture_output=True, text=True, check=True)
    assert "Mamba in L_mb = " in " ".join(run.stdout.split()) and "Traceback" not in run.stderr


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("bias", ["conv", "all"])
def test_saved_bytes_formula_equals_the_pass_across_the_scans_chunks(bias, dtype):
    """`mamba1.saved_parts`: what a Mamba mixer's pass keeps for backward, element size by element size, at B = 1 and
    more and at T on both sides of the scan's chunk sizes (⌈√T⌉ = 1, 2, 3, 4, 5, 8: T_pad and n_c), T = 1 and 2 (one
    chunk) among them; and the model's saved-bytes formula (`model.memory.saved_formula`) is the pass's."""
    from model import trace
    from model.formula import evaluate
    from model.memory import saved_formula, structure
    from model.parts import mamba1
    from model.passes import DTYPES, run_pass
    s = {"mamba1_state": 3, "mamba1_dt_rank": 2, "conv_width": 4, "mamba1_bias": bias}
    for B, T in ((1, 1), (2, 1), (1, 2), (3, 2), (2, 3), (1, 5), (2, 9), (2, 10), (1, 16), (3, 17), (2, 64), (1, 65)):
        cfg = hybrid(s, B, T, 8, 12, L=3, mamba=(0, 2))
        measured: dict[int, int] = {}
        recorded = run_pass(cfg, dtype)
        for x in recorded.saved:
            if x.lin:
                measured[x.element_bytes] = measured.get(x.element_bytes, 0) + x.nbytes
        parts = mamba1.saved_parts(cfg, DTYPES[dtype])
        assert measured == {k: k * e.value(cfg.symbols()) for k, e in parts.items()}, (B, T)
        assert evaluate(saved_formula(structure(cfg, dtype)), cfg.symbols()) == trace(cfg, dtype).saved_bytes, (B, T)
