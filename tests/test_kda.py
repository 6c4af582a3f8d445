"""Kimi delta attention (`model.parts.kda`) against transformers 5.24's KimiLinearDeltaAttention, and Kimi Linear's files
(kimi_linear) read as transformers reads them: the module's output and FlopCounterMode count with the weights copied
(T across the chunks of 64), a decode step from transformers' cached states; on random small files (KDA and NoPE latent
attention blocks mixed, dense and MoE): N on the meta device, the bytes of its real cache after a prefill (the latent
and key of the attention blocks, the conv and recurrent states of the KDA blocks, from `python -m model --json`) and
the forward FLOPs of its eager CPU pass; the class defaults' N; saved bytes equal autograd's on real CPU tensors.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace

import pytest
import torch
from transformers import DynamicCache, KimiLinearConfig
from transformers.models.kimi_linear.modeling_kimi_linear import KimiLinearDeltaAttention

from copied import assert_same_module, real_saved_bytes
from model import GPT, budget, trace
from model.config import Config, HFConfigError, from_hf
from model.parts.kda import KimiDeltaAttention
from test_moe import _module as moe_module  # eager experts on the CPU, batched matmuls on the meta device
from test_window import reference

CLASS_DEFAULTS_N = 49_133_074_464  # KimiLinearConfig() on the meta device: 21 KDA and 6 latent attention blocks


def hf_config(h: int, d_k: int, d_conv: int, d: int) -> KimiLinearConfig:
    """transformers' config of one KDA block (block 0) of h heads of d_k at width d; the output norm's ε this
    module's (a value only)."""
    return KimiLinearConfig(hidden_size=d, linear_num_heads=h, linear_head_dim=d_k, linear_conv_kernel_dim=d_conv,
                            num_hidden_layers=2, layer_types=["linear_attention", "full_attention"], rms_norm_eps=1e-6,
                            vocab_size=50, pad_token_id=0)


def kda_config(h: int, d_k: int, d_conv: int, d: int, B: int = 1, T: int = 8) -> Config:
    return Config(B=B, T=T, d=d, h=2, L=2, V=50, T_max=512, norm="rmsnorm", positions="rope", mlp="swiglu",
                  bias="none", kv_heads=1, head_dim=8, kda_layers=(0,), kda_heads=h, kda_head_dim=d_k,
                  conv_width=d_conv)


def copied(h: int, d_k: int, d_conv: int, d: int, seed: int) -> tuple[KimiLinearDeltaAttention, KimiDeltaAttention]:
    """transformers' layer with random weights, and this module with them copied one to one."""
    torch.manual_seed(seed)
    ref = KimiLinearDeltaAttention(hf_config(h, d_k, d_conv, d), 0)
    ours = KimiDeltaAttention(kda_config(h, d_k, d_conv, d))
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.3)
        pairs = {"q_proj": ref.q_proj, "k_proj": ref.k_proj, "v_proj": ref.v_proj, "f_a": ref.forget_gate.f_a_proj,
                 "f_b": ref.forget_gate.f_b_proj, "b_proj": ref.b_proj, "g_a": ref.g_a_proj, "g_b": ref.g_b_proj,
                 "o_proj": ref.o_proj}
        for name, theirs in pairs.items():
            getattr(ours, name).weight.copy_(theirs.weight)
        ours.conv_weight.copy_(ref.conv1d.weight.squeeze(1))
        ours.dt_bias.copy_(ref.forget_gate.dt_bias)
        ours.A_log.copy_(ref.forget_gate.A_log.view(-1))
        ours.norm_weight.copy_(ref.o_norm.weight)
    return ref, ours


@pytest.mark.parametrize("seed", range(4))
@torch.no_grad()
def test_module_equals_transformers_output_flops_and_parameters(seed):
    """Weights copied one to one: the same output and FlopCounterMode count over T across chunk boundaries (padded to
    whole chunks of 64), and the same parameters."""
    rng = random.Random(f"kda-{seed}")
    h, d_k, d_conv, d = rng.randrange(1, 4), rng.randrange(2, 9), rng.randrange(2, 5), 4 * rng.randrange(2, 6)
    B, T = rng.randrange(1, 3), [1, 7, 64, 65, 130][seed % 5]
    ref, ours = copied(h, d_k, d_conv, d, seed)
    x = torch.randn(B, T, d)
    assert_same_module(ref, ours, x, tol=1e-4)
    cfg = kda_config(h, d_k, d_conv, d, B, T)
    assert budget(cfg).line("params/kda_block").value == sum(p.numel() for p in ref.parameters())


@torch.no_grad()
def test_a_decode_step_equals_transformers_after_its_prefill():
    """transformers' prefill fills its cache; its states in this module's decode step give transformers' next output."""
    ref, ours = copied(3, 6, 3, 24, seed=7)
    cache = DynamicCache(config=hf_config(3, 6, 3, 24))
    ref(torch.randn(2, 70, 24), cache=cache)
    layer = cache.layers[0]
    past = (layer.conv_states[0].clone(), layer.recurrent_states[0].clone())
    assert past[1].dtype == torch.float32 and past[1].shape == (2, 3, 6, 6) and past[0].shape == (2, 54, 3)
    x = torch.randn(2, 1, 24)
    torch.testing.assert_close(ours(x, past=past), ref(x, cache=cache), atol=1e-5, rtol=1e-5)


def written(**fields: object) -> dict:
    """The config.json KimiLinearConfig writes for `fields` (every key it has, under its attribute_map's names)."""
    return {**json.loads(KimiLinearConfig(**fields).to_json_string()), "model_type": "kimi_linear"}


def kimi_doc(rng: random.Random, moe: bool) -> dict:
    """A tiny Kimi Linear: KDA and latent attention blocks drawn (one of each at least), the latent's widths (with or
    without a query latent), the KDA sizes, the head's tie; with experts E, k, their widths, the shared experts and
    the dense blocks drawn (first_k_dense_replace, or mlp_layer_types), else every block dense."""
    L = rng.randrange(2, 5)
    kda, full = rng.sample(range(L), 2)
    types = [rng.choice(["linear_attention", "full_attention"]) for _ in range(L)]
    types[kda], types[full] = "linear_attention", "full_attention"
    h = rng.randrange(1, 4)
    fields = dict(vocab_size=rng.randrange(8, 60), hidden_size=4 * rng.randrange(1, 6), num_hidden_layers=L,
                  num_attention_heads=h, num_key_value_heads=h, intermediate_size=rng.randrange(2, 30),
                  kv_lora_rank=rng.randrange(2, 9), q_lora_rank=rng.choice([None, rng.randrange(2, 9)]),
                  qk_rope_head_dim=rng.randrange(1, 5), qk_nope_head_dim=rng.randrange(1, 6),
                  v_head_dim=rng.randrange(1, 7), linear_num_heads=rng.randrange(1, 4),
                  linear_head_dim=rng.randrange(2, 9), linear_conv_kernel_dim=rng.randrange(2, 5), layer_types=types,
                  tie_word_embeddings=rng.random() < 0.3, pad_token_id=0)
    if moe:
        E = rng.randrange(2, 6)
        fields.update(num_local_experts=E, num_experts_per_tok=rng.randrange(1, E + 1),
                      moe_intermediate_size=rng.randrange(2, 12), n_shared_experts=rng.randrange(0, 3))
        if rng.random() < 0.5:
            fields["mlp_layer_types"] = [rng.choice(["dense", "sparse"]) for _ in range(L)]
        else:
            fields["first_k_dense_replace"] = rng.randrange(0, L)
    else:
        fields["mlp_layer_types"] = ["dense"] * L
    return written(**fields)


SWEEP = [(moe, i) for moe in (False, True) for i in range(4)]


def cli_kv_cache(doc: dict, B: int, T: int, tmp_path) -> int:
    """`memory/kv_cache` of `python -m model --hf-config F --json` at fp32."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    run = subprocess.run([sys.executable, "-m", "model", "--hf-config", str(path), "--B", str(B), "--T", str(T),
                          "--json"], capture_output=True, text=True, check=True)
    return {x["key"]: x for x in json.loads(run.stdout)["kv"]}["memory/kv_cache"]["value"]


@pytest.mark.parametrize("moe, seed", SWEEP, ids=[f"{'moe' if m else 'dense'}-{i}" for m, i in SWEEP])
def test_random_files_match_transformers_parameters_cache_and_flops(moe, seed, tmp_path):
    """N, the whole cache after a prefill at fp32 (the latent and key of the attention blocks, the KDA blocks' conv
    and recurrent states) and the forward FLOPs of the eager CPU pass (T across the chunks of 64) equal transformers'."""
    rng = random.Random(f"kimi_linear-{moe}-{seed}")
    doc = kimi_doc(rng, moe)
    B, T = rng.randrange(1, 3), rng.choice([1, 5, 64, 70, 130])
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.kda_layers and set(cfg.nope_layers) == set(range(cfg.L)) - set(cfg.kda_layers) and cfg.mla
    N, kv, flops = reference(doc, B, T, build=moe_module)
    b = budget(cfg)
    assert b.params_exact == N, doc
    assert b.flops_fwd_measured_per_token * B * T == pytest.approx(flops, rel=1e-12), doc
    assert cli_kv_cache(doc, B, T, tmp_path) == kv, doc


def test_the_class_defaults_are_counted_exactly():
    """KimiLinearConfig's defaults: 27 blocks of d 2,304, KDA in 21 (32 heads of 128, d_conv 4), NoPE latent attention
    in blocks 4, 8, …, 24 (d_c 512, d_R 64, d_nope 128, d_v 128, q from x), 256 experts of 1,024, 8 per token, one
    shared, the first block dense: N is its module's on the meta device."""
    doc = written()
    cfg = from_hf(doc)
    module = moe_module(doc, "meta")
    assert budget(cfg).params_exact == sum(p.numel() for p in module.parameters()) == CLASS_DEFAULTS_N
    assert (cfg.L_kda, cfg.kda_heads, cfg.kda_head_dim, cfg.conv_width, cfg.nope_layers) == (
        21, 32, 128, 4, (4, 8, 12, 16, 20, 24))


def test_a_checkpoint_s_linear_attn_config_is_read_as_its_class_reads_it():
    """Kimi Linear's checkpoints list their blocks in linear_attn_config (1-indexed) with the KDA sizes, and name keys
    as the class's attribute_map writes them (num_experts, num_experts_per_token, …): N as transformers'."""
    doc = {"model_type": "kimi_linear", "vocab_size": 40, "hidden_size": 16, "intermediate_size": 24,
           "moe_intermediate_size": 8, "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 2,
           "kv_lora_rank": 8, "qk_rope_head_dim": 4, "qk_nope_head_dim": 4, "v_head_dim": 4, "num_experts": 4,
           "num_experts_per_token": 2, "num_shared_experts": 1, "first_k_dense_replace": 1, "pad_token_id": 0,
           "linear_attn_config": {"full_attn_layers": [2, 4], "kda_layers": [1, 3], "head_dim": 4, "num_heads": 2,
                                  "short_conv_kernel_size": 3}}
    cfg = from_hf(doc, B=1, T=3)
    assert (cfg.kda_layers, cfg.nope_layers, cfg.kda_head_dim, cfg.conv_width, cfg.E) == ((0, 2), (1, 3), 4, 3, 4)
    assert budget(cfg).params_exact == sum(p.numel() for p in moe_module(doc, "meta").parameters())


# moonshotai/Kimi-Linear-48B-A3B-Instruct's config.json, its shape fields as published (its card: "48B total, 3B
# activated"; 49.1B on the hub)
KIMI_LINEAR_48B = {
    "model_type": "kimi_linear", "architectures": ["KimiLinearForCausalLM"], "hidden_act": "silu", "q_lora_rank": None,
    "mla_use_nope": True, "moe_router_activation_func": "sigmoid", "num_expert_group": 1, "topk_group": 1,
    "moe_layer_freq": 1, "tie_word_embeddings": False, "hidden_size": 2304, "num_hidden_layers": 27,
    "vocab_size": 163840, "rms_norm_eps": 1e-5, "num_attention_heads": 32, "num_key_value_heads": 32,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "num_experts": 256,
    "num_experts_per_token": 8, "num_shared_experts": 1, "moe_intermediate_size": 1024, "routed_scaling_factor": 2.446,
    "moe_renormalize": True, "first_k_dense_replace": 1, "intermediate_size": 9216,
    "linear_attn_config": {"full_attn_layers": [4, 8, 12, 16, 20, 24, 27],
                           "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
                           "head_dim": 128, "num_heads": 32, "short_conv_kernel_size": 4}}


def test_kimi_linear_48b_a3b_is_its_module_and_the_preset():
    """The released Kimi Linear 48B-A3B: N = 49,122,675,072, its module's on the meta device; N_active 3,484,453,248
    (one dense block, then 8 of 256 experts and the shared one); the preset kimi-linear-48b-a3b is that reading, and
    its cache is the 7 latent blocks' L_att·(d_c + d_R) per token and 20 KDA blocks' states."""
    from model.config import PRESETS
    cfg = from_hf(KIMI_LINEAR_48B)
    b = budget(cfg)
    assert b.params_exact == sum(p.numel() for p in moe_module(KIMI_LINEAR_48B, "meta").parameters()) \
        == 49_122_675_072
    assert b.params_active == 3_484_453_248
    assert cfg == PRESETS["kimi-linear-48b-a3b"]
    assert (cfg.L_kda, cfg.nope_layers, cfg.T_max) == (20, (3, 7, 11, 15, 19, 23, 26), 1_048_576)


@pytest.mark.parametrize("change, words", [
    ({"layer_types": ["full_attention"] * 3}, "every block is full_attention"),
    ({"layer_types": ["linear_attention"] * 3}, "every block is linear_attention"),
    ({"linear_attn_config": {"full_attn_layers": [1], "kda_layers": [2]}, "layer_types": None}, "block 3"),
    ({"num_key_value_heads": 1}, "must equal num_attention_heads"),
    ({"attention_bias": True}, "attention_bias=true"),
    ({"num_experts": 4, "num_local_experts": 5}, "set the same thing"),
    ({"layer_types": ["full_attention", "linear_attention", "full_attention"], "mlp_layer_types": ["dense", "sparse",
                                                                                                   "sparse"]},
     "lists dense and MoE blocks alike"),
])
def test_bad_files_are_refused_in_one_line(change, words):
    doc = {**written(vocab_size=40, hidden_size=16, num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=2,
                     layer_types=["linear_attention", "full_attention", "linear_attention"], pad_token_id=0,
                     linear_num_heads=2, linear_head_dim=4, kv_lora_rank=4, qk_rope_head_dim=2, qk_nope_head_dim=2,
                     v_head_dim=2, num_local_experts=4, num_experts_per_tok=2, moe_intermediate_size=4),
           **change}
    with pytest.raises((HFConfigError, ValueError), match=words) as e:
        from_hf({k: v for k, v in doc.items() if v is not None or k != "layer_types"})
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("bad, words", [
    ({"kda_layers": (), "conv_width": None}, "kda_heads=2 is set but kda_layers is not"),
    ({"kda_head_dim": None}, "need d_kda"),
    ({"kda_layers": (0, 1)}, "lists every block"),
    ({"nope_layers": (0,)}, "nope_layers lists Kimi delta attention blocks"),
])
def test_bad_fields_are_refused_in_one_line(bad, words):
    base = vars(kda_config(2, 4, 3, 16))
    with pytest.raises(ValueError, match=words) as e:
        Config(**{**base, **bad})
    assert "\n" not in str(e.value)


def test_the_cli_serves_a_file_and_refuses_a_changes_card_in_one_line(tmp_path):
    """The inference card's decode step (latent attention's scores and its K and V made again in the L − L_kda
    attention blocks, the KDA blocks' states; its formulas checked against the meta step by `infer`) runs."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(kimi_doc(random.Random("kimi_linear-True-0"), True)))
    base = [sys.executable, "-m", "model", "--hf-config", str(path), "--table"]
    run = subprocess.run([*base, "changes"], capture_output=True, text=True)
    assert run.returncode != 0 and "Traceback" not in run.stderr and "Kimi delta attention" in run.stderr
    served = subprocess.run([*base, "infer"], capture_output=True, text=True, check=True).stdout
    assert "each Kimi delta attention block's states whatever T" in served


HYBRIDS = [Config(B=2, T=T, d=16, h=2, L=3, V=40, T_max=512, norm="rmsnorm", positions="rope", mlp="swiglu",
                  bias="none", latent_dim=6, rope_dim=2, nope_dim=2, value_dim=4, kda_layers=(0, 2), kda_heads=2,
                  kda_head_dim=4, conv_width=3, nope_layers=(1,), experts=4, top_k=2, expert_dim=6, dense_first=1)
           for T in (5, 70)]


@pytest.mark.parametrize("cfg", HYBRIDS, ids=["T5", "T70"])
def test_saved_bytes_equal_autograd_on_real_cpu_tensors(cfg):
    """What the chunked rule keeps for backward: the meta pass's bytes are autograd's on real CPU tensors."""
    real = real_saved_bytes(cfg)
    assert real == trace(cfg, "fp32").saved_bytes


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_saved_bytes_formula_equals_the_pass_across_chunk_boundaries(dtype):
    """`kda.saved_parts`: what a Kimi delta attention mixer's pass keeps for backward, element size by element size,
    at B and T on both sides of whole chunks of 64 (T_pad, n_c, T_r), B = 1 included."""
    from model.parts import kda
    from model.passes import DTYPES
    from test_mamba import kept
    for B, T in ((1, 1), (2, 5), (3, 63), (2, 64), (1, 65), (2, 129)):
        cfg = replace(HYBRIDS[0], B=B, T=T)
        parts = kda.saved_parts(cfg, DTYPES[dtype])
        assert kept(cfg, dtype) == {k: k * e.value(cfg.symbols()) for k, e in parts.items()}, (B, T)
