"""Mamba 2 (`model.parts.mamba`) against transformers 5.24's GraniteMoeHybridMambaLayer, and IBM Granite 4.0-H's files
(granitemoehybrid) read as transformers reads them: the module's output and FlopCounterMode count with the weights
copied, a decode step from transformers' cached states; on random small files (dense and MoE, NoPE or RoPE, T across
the chunks of Q): N on the meta device, the bytes of its real cache after a prefill (K and V of the attention blocks,
the conv and SSM states of the Mamba 2 blocks) and the forward FLOPs of its eager CPU pass; saved bytes equal
autograd's on real CPU tensors.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
import torch
from transformers import DynamicCache, GraniteMoeHybridConfig
from transformers.models.granitemoehybrid.modeling_granitemoehybrid import GraniteMoeHybridMambaLayer

from model import GPT, budget
from model.config import Config, from_hf, read_hf
from model.memory import kv_cache_lines
from model.parts import mamba
from model.parts.mamba import GATES, Mamba2
from test_moe import _module as moe_module  # eager experts on the CPU, batched matmuls on the meta device
from test_window import measured, reference
from copied import assert_same_module, real_saved_bytes


def sizes(rng: random.Random) -> dict[str, object]:
    """Random Mamba 2 sizes: h_ssm (a multiple of g_ssm), d_ssm, d_state, g_ssm, Q, d_conv, the biases."""
    g = rng.randrange(1, 3)
    return {"ssm_heads": g * rng.randrange(1, 4), "ssm_head_dim": rng.randrange(1, 7), "ssm_state": rng.randrange(1, 9),
            "ssm_groups": g, "ssm_chunk": rng.choice([4, 8, 16]), "conv_width": rng.randrange(2, 5),
            "ssm_bias": rng.choice(["conv", "none", "proj", "all"])}


def hf_config(s: dict, d: int) -> GraniteMoeHybridConfig:
    """transformers' config of the sizes `s` at width d (mamba_expand · d = h_ssm·d_ssm: d divides it)."""
    inner = s["ssm_heads"] * s["ssm_head_dim"]
    return GraniteMoeHybridConfig(
        hidden_size=d, mamba_n_heads=s["ssm_heads"], mamba_d_head=s["ssm_head_dim"], mamba_d_state=s["ssm_state"],
        mamba_n_groups=s["ssm_groups"], mamba_chunk_size=s["ssm_chunk"], mamba_d_conv=s["conv_width"],
        mamba_expand=inner // d, mamba_conv_bias=s["ssm_bias"] in ("conv", "all"),
        mamba_proj_bias=s["ssm_bias"] in ("proj", "all"), num_hidden_layers=2, layer_types=["mamba", "attention"],
        num_attention_heads=2, num_key_value_heads=1)


def hybrid(s: dict, B: int, T: int, d: int, L: int = 2, mamba: tuple[int, ...] = (0,), **more: object) -> Config:
    return Config(B=B, T=T, d=d, h=2, L=L, V=50, T_max=512, norm="rmsnorm", positions="rope", mlp="swiglu",
                  kv_heads=1, head_dim=8, bias="none", mamba_layers=mamba, **s, **more)


def copied(s: dict, d: int, B: int, T: int,
           seed: int) -> tuple[GraniteMoeHybridMambaLayer, Mamba2, GraniteMoeHybridConfig]:
    """transformers' layer with random weights, and this module with them copied one to one."""
    torch.manual_seed(seed)
    config = hf_config(s, d)
    ref = GraniteMoeHybridMambaLayer(config, 0)
    ours = Mamba2(hybrid(s, B, T, d))
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.3)
        for mine, theirs in ((ours.in_proj, ref.in_proj), (ours.out_proj, ref.out_proj)):
            mine.weight.copy_(theirs.weight)
            if theirs.bias is not None:
                mine.bias.copy_(theirs.bias)
        ours.conv_weight.copy_(ref.conv1d.weight.squeeze(1))
        if ref.conv1d.bias is not None:
            ours.conv_bias.copy_(ref.conv1d.bias)
        for name in ("dt_bias", "A_log", "D"):
            getattr(ours, name).copy_(getattr(ref, name))
        ours.norm_weight.copy_(ref.norm.weight)
    return ref, ours, config


def _width(rng: random.Random, s: dict) -> int:
    """A width d that divides h_ssm·d_ssm (transformers' mamba_expand is a whole number)."""
    inner = s["ssm_heads"] * s["ssm_head_dim"]
    return rng.choice([w for w in range(1, inner + 1) if inner % w == 0])


@pytest.mark.parametrize("seed", range(6))
@torch.no_grad()
def test_module_equals_transformers_output_flops_and_parameters(seed):
    """Weights copied one to one: the same output and FlopCounterMode count (T across the chunks of Q, padded to
    whole chunks), and the same parameters."""
    rng = random.Random(f"mamba-{seed}")
    s = sizes(rng)
    d, B, T = _width(rng, s), rng.randrange(1, 3), rng.choice([1, 3, 8, 17, 40])
    ref, ours, _ = copied(s, d, B, T, seed)
    x = torch.randn(B, T, d)
    assert_same_module(ref, ours, x)


@pytest.mark.parametrize("seed", range(3))
@torch.no_grad()
def test_a_decode_step_equals_transformers_after_its_prefill(seed):
    """transformers' prefill fills its cache (LinearAttentionLayer's conv and SSM states); its states in this module's
    decode step give transformers' next output, twice in a row; the states' bytes are the cache lines'."""
    rng = random.Random(f"mamba-decode-{seed}")
    s = sizes(rng)
    d, B, T = _width(rng, s), rng.randrange(1, 3), rng.choice([1, 5, 23])
    ref, ours, config = copied(s, d, B, T, seed)
    cache = DynamicCache(config=config)
    ref(torch.randn(B, T, d), cache=cache)
    layer = cache.layers[0]
    lines = {x.key: x.value for x in kv_cache_lines(hybrid(s, B, T, d), "fp32")}
    assert layer.conv_states[0].numel() * 4 == lines["memory/state_conv"]
    assert layer.recurrent_states[0].numel() * 4 == lines["memory/state_ssm"]
    assert layer.recurrent_states[0].dtype == torch.float32
    for _ in range(2):
        past = (layer.conv_states[0].clone(), layer.recurrent_states[0].clone())
        x = torch.randn(B, 1, d)
        torch.testing.assert_close(ours(x, past=past), ref(x, cache=cache), atol=1e-5, rtol=1e-5)


def test_the_ssm_state_is_fp32_in_a_bf16_module():
    """transformers keeps the SSM state in fp32 at any dtype (its scan computes in fp32), the conv state at the
    model's: the cache lines count them so."""
    s = {"ssm_heads": 4, "ssm_head_dim": 4, "ssm_state": 8, "ssm_groups": 2, "ssm_chunk": 8, "conv_width": 4,
         "ssm_bias": "conv"}
    config = hf_config(s, 8)
    cache = DynamicCache(config=config)
    with torch.no_grad():
        GraniteMoeHybridMambaLayer(config, 0).to(torch.bfloat16)(torch.randn(2, 11, 8, dtype=torch.bfloat16),
                                                                 cache=cache)
    layer = cache.layers[0]
    conv, ssm = layer.conv_states[0], layer.recurrent_states[0]
    lines = {x.key: x.value for x in kv_cache_lines(hybrid(s, 2, 11, 8), "bf16")}
    assert (conv.dtype, ssm.dtype) == (torch.bfloat16, torch.float32)
    assert conv.numel() * 2 == lines["memory/state_conv"] and ssm.numel() * 4 == lines["memory/state_ssm"]


def written(**fields: object) -> dict:
    """The config.json GraniteMoeHybridConfig writes for `fields` (every key it has but time_step_limit, whose infinity
    its JSON writes as an object its class does not read back)."""
    doc = json.loads(GraniteMoeHybridConfig(**fields).to_json_string())
    return {**{k: v for k, v in doc.items() if k != "time_step_limit"}, "model_type": "granitemoehybrid"}


def granite_doc(rng: random.Random, moe: bool) -> dict:
    """A tiny Granite 4.0-H: heads, widths, the tie and the bias drawn; Mamba 2 and attention blocks by layer_types
    (its legacy words mamba and attention, or linear_attention and full_attention; one attention block at least, and
    one Mamba 2 block); RoPE or none; Mamba 2's sizes (mamba_d_head "auto" or given); with experts E, k, their width and
    the shared MLP's, else the shared MLP alone (num_local_experts = 0)."""
    h_kv = rng.choice([1, 2])
    h, L = h_kv * rng.choice([1, 2]), rng.randrange(2, 5)
    g = rng.randrange(1, 3)
    d, expand = 2 * h * rng.randrange(1, 4), rng.randrange(1, 3)
    heads = rng.choice([g * k for k in (1, 2, 3) if (expand * d) % (g * k) == 0])  # d even: g divides it
    mamba, attn = rng.choice([("mamba", "attention"), ("linear_attention", "full_attention")])
    types = [rng.choice([mamba, attn]) for _ in range(L)]
    first, second = rng.sample(range(L), 2)
    types[first], types[second] = mamba, attn
    fields = dict(vocab_size=rng.randrange(8, 60), hidden_size=d, num_hidden_layers=L, num_attention_heads=h,
                  num_key_value_heads=h_kv, max_position_embeddings=256, tie_word_embeddings=rng.random() < 0.3,
                  attention_bias=rng.random() < 0.5, shared_intermediate_size=rng.randrange(1, 20), layer_types=types,
                  position_embedding_type=rng.choice([None, "rope", "nope"]), mamba_n_heads=heads, mamba_n_groups=g,
                  mamba_d_state=rng.randrange(1, 9), mamba_d_conv=rng.randrange(2, 5), mamba_expand=expand,
                  mamba_chunk_size=rng.choice([4, 8, 16]), mamba_conv_bias=rng.random() < 0.7,
                  mamba_proj_bias=rng.random() < 0.3, embedding_multiplier=2.0, residual_multiplier=0.5,
                  attention_multiplier=0.1, logits_scaling=3.0)
    if rng.random() < 0.5:
        fields["mamba_d_head"] = expand * d // heads
    if moe:
        E = rng.randrange(1, 6)
        fields.update(num_local_experts=E, num_experts_per_tok=rng.randrange(1, E + 1),
                      intermediate_size=rng.randrange(2, 20))
    else:
        fields["num_local_experts"] = 0
    return written(**fields)


GRANITE = [(moe, i) for moe in (False, True) for i in range(5)]


@pytest.mark.parametrize("moe, seed", GRANITE, ids=[f"{'moe' if m else 'dense'}-{i}" for m, i in GRANITE])
def test_granite_files_match_transformers_parameters_cache_and_flops(moe, seed):
    """Mamba 2 beside attention: N, the whole cache after a prefill (K and V, conv and SSM states, fp32) and the forward
    FLOPs (T across the chunks of Q) equal transformers'."""
    rng = random.Random(f"granitemoehybrid-{moe}-{seed}")
    doc = granite_doc(rng, moe)
    B, T = rng.randrange(1, 3), rng.choice([1, 5, 16, 21, 40])
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.L_ssm >= 1 and cfg.ssm_heads == doc["mamba_n_heads"] and ("moe" in cfg.block_kinds[0]) == moe
    assert bool(cfg.nope_layers) == (doc["position_embedding_type"] != "rope")
    N, kv, flops = measured(cfg)
    ref_N, ref_kv, ref_flops = reference(doc, B, T, build=moe_module)
    assert (N, kv) == (ref_N, ref_kv), doc
    assert flops == pytest.approx(ref_flops, rel=1e-12), doc


def test_the_class_defaults_are_mamba_2_alone_and_refused_in_one_line():
    """GraniteMoeHybridConfig's defaults make every block Mamba 2 (layer_types null): refused, one line; with one
    attention block in four the same sizes are read and N is transformers'."""
    with pytest.raises(ValueError, match="a model of Mamba 2 blocks alone is not modelled yet") as e:
        read_hf(written())
    assert "\n" not in str(e.value)
    doc = written(num_hidden_layers=4, layer_types=["mamba", "mamba", "mamba", "attention"])
    cfg = from_hf(doc)
    assert (cfg.ssm_heads, cfg.ssm_head_dim, cfg.ssm_state, cfg.ssm_chunk, cfg.conv_width) == (128, 64, 256, 256, 4)
    from test_window import _module
    assert budget(cfg).params_exact == sum(p.numel() for p in _module(doc, "meta").parameters())


@pytest.mark.parametrize("change, message", [
    ({"mamba_n_heads": 7}, "mamba_n_heads=7 does not divide mamba_expand · hidden_size"),
    ({"mamba_d_head": 3}, "is not mamba_expand · hidden_size"),
    ({"mamba_d_head": "wide"}, "must be a whole number of at least 1, or \"auto\""),
    ({"mamba_n_groups": 3}, "mamba_n_groups=3 does not divide mamba_n_heads"),
    ({"position_embedding_type": 3}, "must be a word such as \"rope\""),
    ({"layer_types": ["mamba", "sliding_attention"]}, "layer_types lists sliding_attention"),
    ({"mamba_chunk_size": 0}, "mamba_chunk_size=0"),
])
def test_bad_files_are_refused_in_one_line(change, message):
    base = {"hidden_size": 16, "num_hidden_layers": 2, "layer_types": ["mamba", "attention"], "num_attention_heads": 2,
            "mamba_n_heads": 4, "mamba_expand": 2}
    doc = {**written(**base), **change}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        read_hf(doc)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("bad, words", [
    ({"mamba_layers": (), "conv_width": None}, "ssm_heads=4 is set but mamba_layers is not"),
    ({"mamba_layers": (), **dict.fromkeys(("ssm_heads", "ssm_head_dim", "ssm_state", "ssm_groups", "ssm_chunk"))},
     "conv_width=4 is set but none of linear_layers, mamba_layers, kda_layers and mamba1_layers is"),
    ({"ssm_state": None}, "need d_state"),
    ({"ssm_groups": 3}, "h_ssm=4 is not a multiple of g_ssm=3"),
    ({"mamba_layers": (0, 5)}, "mamba_layers"),
    ({"mamba_layers": (0, 1)}, "a model of Mamba 2 blocks alone"),
    ({"linear_layers": (1,), "linear_k_heads": 1, "linear_v_heads": 1, "linear_k_dim": 2, "linear_v_dim": 2},
     "mamba_layers and linear_layers are both set"),
    ({"window": 4}, "beside latent attention, a window"),
])
def test_bad_fields_are_refused_in_one_line(bad, words):
    s = {"ssm_heads": 4, "ssm_head_dim": 2, "ssm_state": 4, "ssm_groups": 2, "ssm_chunk": 8, "conv_width": 4}
    with pytest.raises(ValueError, match=words) as e:
        Config(**{**vars(hybrid(s, 1, 8, 8)), **bad})
    assert "\n" not in str(e.value)


HYBRIDS = [hybrid({"ssm_heads": 2, "ssm_head_dim": 3, "ssm_state": 4, "ssm_groups": 1, "ssm_chunk": 4,
                   "conv_width": 3}, 2, T, 12, L=2, mamba=(0,), attention=attention) for T, attention in
           ((5, "eager"), (9, "fused"))]


@pytest.mark.parametrize("cfg", HYBRIDS, ids=["eager-5", "fused-9"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_saved_bytes_equal_autograd_on_real_cpu_tensors(cfg, dtype):
    """What the chunked scan keeps for backward: the meta pass's bytes are autograd's on real CPU tensors."""
    from model import trace
    real = real_saved_bytes(cfg, dtype)
    assert real == trace(cfg, dtype).saved_bytes


def kept(cfg: Config, dtype: str, block: int = 0) -> dict[int, int]:
    """Bytes by element size of the storages first saved in the mixer with a fixed state of `cfg`'s meta pass's
    block `block` (its first block of each kind: `model.passes.Pass.blocks`)."""
    from model.passes import run_pass
    out: dict[int, int] = {}
    for x in run_pass(cfg, dtype).saved:
        if x.lin and x.block == block:
            out[x.element_bytes] = out.get(x.element_bytes, 0) + x.nbytes
    return out


SIZES = [{"ssm_heads": 6, "ssm_head_dim": 3, "ssm_state": 5, "ssm_groups": 2, "ssm_chunk": 4, "conv_width": 4},
         {"ssm_heads": 1, "ssm_head_dim": 1, "ssm_state": 1, "ssm_groups": 1, "ssm_chunk": 1, "conv_width": 1}]


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("s", SIZES, ids=["sizes", "ones"])
def test_saved_bytes_formula_equals_the_pass_across_chunk_boundaries(s, gate, dtype):
    """`mamba.saved_parts`: what a Mamba 2 mixer's pass keeps for backward, element size by element size, at B and T
    on both sides of whole chunks of Q (T_pad, n_c), every output norm, every size of 1 (B, h_ssm, d_state, Q,
    d_conv, one chunk)."""
    from model.passes import DTYPES
    for B, T in ((1, 1), (2, 3), (1, 4), (3, 5), (2, 9), (1, 17)):
        cfg = hybrid({**s, "ssm_norm": gate}, B, T, 12)
        parts = mamba.saved_parts(cfg, DTYPES[dtype])
        assert kept(cfg, dtype) == {k: k * e.value(cfg.symbols()) for k, e in parts.items()}, (B, T)


@pytest.mark.parametrize("B, T", [(1, 4), (3, 9)])
def test_saved_bytes_equal_autograd_beside_attention_across_a_chunk(B, T):
    """Falcon-H1's wiring (Mamba 2 beside attention in every block, no norm) at one chunk and at three: the meta
    pass's bytes are autograd's on real CPU tensors, and its Mamba 2 part is `saved_parts`."""
    from model import trace
    cfg = hybrid({**SIZES[0], "ssm_norm": "none"}, B, T, 12, mamba=(0, 1), ssm_parallel=True)
    assert real_saved_bytes(cfg, "fp32") == trace(cfg, "fp32").saved_bytes
    assert kept(cfg, "fp32") == {k: k * e.value(cfg.symbols()) for k, e in mamba.saved_parts(cfg, 4).items()}


def test_cli_prints_the_states_and_the_changes_card_ending_with_mamba_2(tmp_path):
    """python -m model on a Granite 4.0-H file: the cache lines name the states, the changes card ends with Mamba 2 in
    place of attention (tests/test_changes_hybrid.py checks its figures)."""
    rng = random.Random("granitemoehybrid-cli")
    doc = granite_doc(rng, True)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    args = [sys.executable, "-m", "model", "--hf-config", str(path), "--T", "21", "--B", "2"]
    out = json.loads(subprocess.run([*args, "--json"], capture_output=True, text=True, check=True).stdout)
    kv = {x["key"]: x for x in out["kv"]}
    assert kv["memory/state_ssm"]["formula"] == "L_ssm·B·h_ssm·d_ssm·d_state·4"
    assert out["config"]["L_ssm"] == doc["layer_types"].count("linear_attention")
    run = subprocess.run([*args, "--table", "changes"], capture_output=True, text=True, check=True)
    assert "Mamba 2 in L_ssm = " in " ".join(run.stdout.split()) and "Traceback" not in run.stderr
    served = subprocess.run([*args, "--table", "infer"], capture_output=True, text=True, check=True).stdout
    assert "each Mamba 2 block's states whatever T" in served
