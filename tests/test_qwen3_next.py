"""Qwen3-Next (qwen3_next) where every block is full attention: QK-norm per head, partial RoPE (a quarter of each head
by its class's default), an output gate on the heads (`attn_gate`: the merged heads times sigmoid(x W_g) before W_o, W_g
held in q_proj's rows beside each head's query), zero-centred RMSNorms (gain 1 + g: values only), and Qwen2-MoE's
experts with a gated shared expert. Random small files, written by its own config class, read as transformers reads
them: N on the meta device, the bytes of its real cache after a prefill, and forward FLOPs equal to FlopCounterMode on
its eager CPU forward with eager experts; logits equal with the weights copied in; saved bytes and a real step's peak
equal autograd's. With Gated DeltaNet blocks (linear_attention, `model.parts.delta`): N, the whole cache (K, V and
the states) and the FLOPs equal transformers' too.
"""
from __future__ import annotations

import json
import random
from dataclasses import replace

import copied
import pytest
import torch
from transformers import CONFIG_MAPPING, Qwen3NextConfig

from model import GPT, PRESETS, Config, budget, hf, trace
from model.changes import changes
from model.config import HFConfigError, from_hf, read_hf
from model.passes import saved_bytes_of
from model.report import recipe_text
from pagetools import run_cli
from test_moe import _module as moe_module  # eager experts on the CPU, batched matmuls on the meta device
from test_training import check_a_real_step_on_cpu_tensors
from test_window import _module, measured, reference


def written(**fields: object) -> dict:
    """The config.json Qwen3NextConfig writes for `fields` (every key it has, the linear blocks' too)."""
    return {**json.loads(Qwen3NextConfig(**fields).to_json_string()), "model_type": "qwen3_next"}


def qwen3_next_doc(rng: random.Random, moe: bool) -> dict:
    """A tiny Qwen3-Next of full-attention blocks, its file as its class writes it: heads, widths (d_head from 4, so
    that a quarter of it rotates), the biases, the tie and, with experts, E, k, their widths and which blocks are MoE
    drawn; every block full attention by layer_types or by full_attention_interval = 1."""
    h_kv = rng.choice([1, 2])
    h, L = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 5)
    fields = dict(vocab_size=rng.randrange(8, 60), hidden_size=rng.randrange(4, 24), num_hidden_layers=L,
                  num_attention_heads=h, num_key_value_heads=h_kv, head_dim=2 * rng.randrange(2, 7),
                  intermediate_size=rng.randrange(2, 30), max_position_embeddings=64,
                  tie_word_embeddings=rng.random() < 0.3, attention_bias=rng.random() < 0.5, num_experts=0)
    if rng.random() < 0.5:
        fields["layer_types"] = ["full_attention"] * L
    else:
        fields["full_attention_interval"] = 1
    if moe:
        E = rng.randrange(1, 6)
        fields.update(num_experts=E, num_experts_per_tok=rng.randrange(1, E + 1),
                      moe_intermediate_size=rng.randrange(2, 20), shared_expert_intermediate_size=rng.randrange(2, 20),
                      decoder_sparse_step=rng.randrange(1, 3),
                      mlp_only_layers=rng.sample(range(L), rng.randrange(0, L)),
                      norm_topk_prob=rng.random() < 0.5)
    return written(**fields)


SWEEP = [(moe, i) for moe in (False, True) for i in range(6)]


@pytest.mark.parametrize("moe, seed", SWEEP, ids=[f"{'moe' if m else 'dense'}-{i}" for m, i in SWEEP])
def test_random_files_match_transformers_parameters_cache_and_flops(moe, seed):
    rng = random.Random(f"qwen3_next-{moe}-{seed}")
    doc = qwen3_next_doc(rng, moe)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.attn_gate and cfg.qk_norm and cfg.rotary_dim is not None
    assert cfg.bias == ("attn" if doc["attention_bias"] else "none") and cfg.shared_gate == ("moe" in cfg.block_kinds)
    assert measured(cfg) == reference(doc, B, T, build=moe_module), doc


def test_the_flagship_with_every_block_full_attention_is_counted_exactly():
    """Qwen3NextConfig's defaults (Qwen3-Next-80B-A3B's shape: 48 blocks of d 2,048, 16 heads of 256, 2 K/V heads,
    512 experts of 512, 10 per token, and a gated shared expert of 512) with every block full attention: N is its
    module's on the meta device, the gate W_g (2,048, 16·256) in each block."""
    doc = written(full_attention_interval=1)
    cfg = from_hf(doc)
    module = _module(doc, "meta")
    assert budget(cfg).params_exact == sum(p.numel() for p in module.parameters()) == 79_442_012_160
    ungated = budget(replace(cfg, attn_gate=False)).params_exact
    assert budget(cfg).params_exact - ungated == 48 * 2_048 * 16 * 256
    assert (cfg.E, cfg.k, cfg.E_shared, cfg.d_shared, cfg.d_head, cfg.rotary_dim) == (512, 10, 1, 512, 256, 64)


def hybrid_doc(rng: random.Random, moe: bool) -> dict:
    """A tiny Qwen3-Next with Gated DeltaNet blocks: the full-attention file of `qwen3_next_doc`, its blocks drawn
    linear_attention or full_attention (layer_types, at least one linear), or by full_attention_interval, and the
    Gated DeltaNet sizes drawn (h_lv a multiple of h_lk); at least one block of each kind."""
    doc = qwen3_next_doc(rng, moe)
    L = max(2, doc["num_hidden_layers"])  # one block of each kind at least
    fields = {k: v for k, v in doc.items() if k not in ("model_type", "layer_types", "full_attention_interval")}
    fields["num_hidden_layers"] = L
    if rng.random() < 0.6:
        linear, full = rng.sample(range(L), 2)
        types = [rng.choice(["linear_attention", "full_attention"]) for _ in range(L)]
        types[linear], types[full] = "linear_attention", "full_attention"
        fields["layer_types"] = types
    else:
        fields.update(layer_types=None, full_attention_interval=rng.randrange(2, L + 1))
    h_lk = rng.randrange(1, 3)
    fields.update(linear_num_key_heads=h_lk, linear_num_value_heads=h_lk * rng.randrange(1, 3),
                  linear_key_head_dim=rng.randrange(2, 9), linear_value_head_dim=rng.randrange(2, 9),
                  linear_conv_kernel_dim=rng.randrange(2, 5))
    return written(**fields)


HYBRID = [(moe, i) for moe in (False, True) for i in range(5)]


@pytest.mark.parametrize("moe, seed", HYBRID, ids=[f"{'moe' if m else 'dense'}-{i}" for m, i in HYBRID])
def test_hybrid_files_match_transformers_parameters_cache_and_flops(moe, seed):
    """Gated DeltaNet beside attention: N, the whole cache after a prefill (fp32) and the forward FLOPs (T across the
    chunks of 64) equal transformers'."""
    rng = random.Random(f"qwen3_next-hybrid-{moe}-{seed}")
    doc = hybrid_doc(rng, moe)
    B, T = rng.randrange(1, 3), rng.choice([1, 5, 64, 70, 130])
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.L_lin >= 1 and cfg.linear_k_heads == doc["linear_num_key_heads"]
    N, kv, flops = measured(cfg)
    ref_N, ref_kv, ref_flops = reference(doc, B, T, build=moe_module)
    assert (N, kv) == (ref_N, ref_kv), doc
    assert flops == pytest.approx(ref_flops, rel=1e-12), doc


def test_the_flagship_is_read_with_its_gated_deltanet_blocks():
    """Qwen3NextConfig's defaults (Qwen3-Next-80B-A3B's shape): 36 Gated DeltaNet blocks, every fourth block attention;
    N is its module's on the meta device."""
    cfg = from_hf(written())
    assert cfg.L_lin == 36 and cfg.linear_layers[:4] == (0, 1, 2, 4)
    assert budget(cfg).params_exact == sum(p.numel() for p in _module(written(), "meta").parameters()) \
        == 79_674_391_296
    notes = read_hf(written()).notes
    assert any(n.startswith("Gated DeltaNet in 36 of the 48 blocks (layer_types lists them linear_attention)")
               for n in notes)


@pytest.mark.parametrize("doc, message", [
    ({"model_type": "qwen3_next", "num_hidden_layers": 2, "layer_types": ["sliding_attention", "full_attention"]},
     "layer_types lists sliding_attention, which qwen3_next's module does not build (its blocks are full_attention or "
     "linear_attention); list those"),
    ({"model_type": "qwen3_next", "num_hidden_layers": 2, "full_attention_interval": 0},
     "full_attention_interval=0: full_attention_interval (every n-th block full attention, the others Gated DeltaNet) "
     "must be a whole number of at least 1"),
    ({"model_type": "llama", "num_hidden_layers": 2, "layer_types": ["linear_attention", "full_attention"]},
     "layer_types lists linear_attention, which llama's module does not build (Qwen3-Next's Gated DeltaNet blocks are "
     "qwen3_next's, Granite 4.0-H's Mamba 2 blocks granitemoehybrid's)"),
])
def test_blocks_its_module_does_not_build_are_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)


def test_the_notes_name_what_is_not_read_and_what_changes_values_only():
    notes = read_hf(written(num_hidden_layers=2, layer_types=["full_attention"] * 2)).notes
    assert ("not read, as no block is linear_attention: linear_num_key_heads, linear_num_value_heads, "
            "linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim (they size only those blocks)") in notes
    assert any("the RMSNorms' gain 1 + g (zero-centred" in n for n in notes)
    assert any(n.startswith("partial RoPE: d_rot = 64 of each head's d_head = 256") for n in notes)
    beside = read_hf({"model_type": "qwen3_next", "num_hidden_layers": 2, "full_attention_interval": 3,
                      "layer_types": ["full_attention"] * 2})
    assert "full_attention_interval = 3 is not read: layer_types lists each block's attention" in beside.notes


TINY = written(vocab_size=40, hidden_size=24, intermediate_size=20, num_hidden_layers=3, num_attention_heads=4,
               num_key_value_heads=2, head_dim=8, max_position_embeddings=64, rms_norm_eps=1e-5,
               full_attention_interval=1, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=12,
               shared_expert_intermediate_size=10, decoder_sparse_step=2, pad_token_id=0)


def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    """A Qwen3-Next's weights in this module: q_proj's rows split into W_qkv's queries and W_g, every RMSNorm's gain
    1 + g, the experts' stacked matrices transposed, the router, the shared expert and its gate."""
    ref, ours = copied.pair(doc)
    d_expert = doc["moe_intermediate_size"]
    with torch.no_grad():
        ours.ln_f.weight.copy_(1 + ref.model.norm.weight)
        for block, layer in zip(ours.blocks, ref.model.layers):
            a = layer.self_attn
            copied.gated_attention(block, a, doc["num_attention_heads"])
            for mine, theirs in ((block.ln_1, layer.input_layernorm), (block.ln_2, layer.post_attention_layernorm),
                                 (block.attn.q_norm, a.q_norm), (block.attn.k_norm, a.k_norm)):
                mine.weight.copy_(1 + theirs.weight)
            if block.kind == "dense":
                copied.gated(block.mlp, layer.mlp)
                continue
            m, experts = layer.mlp, block.moe.experts
            block.moe.router.weight.copy_(m.gate.weight)
            experts.w_gate.copy_(m.experts.gate_up_proj[:, :d_expert].transpose(1, 2))
            experts.w_up.copy_(m.experts.gate_up_proj[:, d_expert:].transpose(1, 2))
            experts.w_down.copy_(m.experts.down_proj.transpose(1, 2))
            copied.gated(block.moe.shared, m.shared_expert)
            block.moe.shared_gate.weight.copy_(m.shared_expert_gate.weight)
    return ref, ours


@pytest.mark.parametrize("more", [{}, {"attention_bias": True}, {"num_experts": 0}, {"partial_rotary_factor": 0.5}],
                         ids=["moe", "biases", "dense", "half-rotary"])
def test_logits_equal_transformers_with_the_weights_copied(more):
    """The same logits through the gated heads, QK-norm, partial RoPE, the zero-centred norms and (every other block)
    the experts, renormalised as norm_topk_prob (the class's default) says; without the gate they differ."""
    ref, ours = _copied({**TINY, **more})
    assert ours.cfg.attn_gate and ("moe" in ours.cfg.block_kinds) == (more.get("num_experts") != 0)
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-5, rtol=1e-5)
        ungated = GPT(replace(ours.cfg, attn_gate=False)).eval()
        ungated.load_state_dict({k: v for k, v in ours.state_dict().items() if ".attn.gate." not in k})
        assert not torch.allclose(ungated(idx)[0], expected, atol=1e-3)


LIKE_QWEN3_NEXT = Config(B=2, T=7, d=16, h=4, L=2, V=11, T_max=16, norm="rmsnorm", positions="rope", mlp="swiglu",
                         bias="attn", kv_heads=2, head_dim=6, rotary_dim=2, qk_norm=True, attn_gate=True,
                         attention="eager")
SMALL = [LIKE_QWEN3_NEXT, replace(LIKE_QWEN3_NEXT, attention="fused", bias="none", head_dim=None),
         replace(LIKE_QWEN3_NEXT, experts=4, top_k=2, expert_dim=6, shared_experts=1, shared_dim=5, shared_gate=True,
                 moe_step=2)]


def _ids(c: Config) -> str:
    return f"{c.attention}-{''.join(k[0] for k in c.block_kinds)}"


@pytest.mark.parametrize("cfg, dtype", [(c, d) for c in SMALL for d in ("fp32", "bf16")],
                         ids=lambda x: x if isinstance(x, str) else _ids(x))
def test_saved_bytes_equal_autograd_on_real_cpu_tensors(cfg, dtype):
    """The gate's sigmoid keeps its output and the product keeps both factors: autograd's bytes, every one counted."""
    torch.manual_seed(0)
    m = GPT(cfg).to({"fp32": torch.float32, "bf16": torch.bfloat16}[dtype])
    assert saved_bytes_of(m, torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg, dtype).saved_bytes
    ungated = trace(replace(cfg, attn_gate=False), dtype).saved_bytes
    size = {"fp32": 4, "bf16": 2}[dtype]
    assert trace(cfg, dtype).saved_bytes - ungated == size * 2 * cfg.L * cfg.B * cfg.T * cfg.h * cfg.d_head


@pytest.mark.parametrize("cfg", [SMALL[0], replace(SMALL[2], rotary_dim=None)], ids=["dense", "moe"])
def test_the_peak_equals_a_real_step_on_cpu_tensors(cfg):
    """A real step's peak, the gate's tensors alive with the rest (the mixture of experts' with RoPE on every feature:
    with partial RoPE and shared experts, `model.peak`'s probes fit q, k and v's fused storage with a wrong pair of
    monomials, with or without the gate)."""
    check_a_real_step_on_cpu_tensors(cfg)


def test_the_budget_the_shapes_the_change_and_the_words_name_the_gate():
    cfg = LIKE_QWEN3_NEXT
    b = budget(cfg)
    d, h, d_head = cfg.d, cfg.h, cfg.d_head
    assert b.line("params/attn_block").formula.startswith("(3h + 2h_kv)·d_head·d + (h + 2h_kv)·d_head + h·d_head")
    assert "the output gate's W_g (d, h·d_head)" in b.line("params/attn_block").label
    gate = changes(cfg).steps[[g.key for g in changes(cfg).steps].index("attn_gate")]
    lines = {x.key.rsplit("/", 1)[1]: x for x in gate.lines}
    assert lines["params"].value == cfg.L * h * d_head * (d + 1) and lines["params"].formula == "Lh·d_head·(d + 1)"
    assert lines["flops"].value == 2 * cfg.L * d * h * d_head and lines["flops"].formula == "2Lhd·d_head"
    assert "kv_cache" not in lines and gate.title.startswith("an output gate (gated attention, Qwen3-Next's)")
    assert "The output gate (gated attention) comes after QK-norm" in changes(cfg).note
    rows = {r.local: r for r in trace(cfg).rows}
    for name in ("attn.gate", "attn.gate_scale", "attn.gated"):
        assert rows[name].symbolic == "(B, T, h·d_head)" and rows[name].shape == (cfg.B, cfg.T, h * d_head)
    assert rows["attn.gated"].label == "merged heads times their gate, into W_o"
    assert "an output gate on the heads (gated attention)" in recipe_text(cfg)
    assert b.params_exact == budget(replace(cfg, attn_gate=False)).params_exact + cfg.L * h * d_head * (d + 1)


def test_the_cli_sets_the_gate(capsys):
    status, out, _ = run_cli(["--preset", "qwen3-0.6b", "--attn-gate", "--json"], capsys)
    doc, cfg = json.loads(out), PRESETS["qwen3-0.6b"]
    assert status == 0 and doc["config"]["attn_gate"] is True
    assert doc["budget"]["params_exact"] - budget(cfg).params_exact == cfg.L * cfg.d * cfg.h * cfg.d_head


QWEN3_5 = [(t, i) for t in ("qwen3_5_text", "qwen3_5_moe_text") for i in range(3)]


@pytest.mark.parametrize("model_type, seed", QWEN3_5, ids=[f"{t}-{i}" for t, i in QWEN3_5])
def test_qwen3_5_text_files_match_transformers_parameters_cache_and_flops(model_type, seed):
    """Qwen3.5's text models run Qwen3-Next's blocks (dense MLPs, or every block a mixture of experts), their Gated
    DeltaNet's projections split into four matrices: read as qwen3_next, N, the whole cache after a prefill and the
    FLOPs equal those of Qwen3.5's own module."""
    rng = random.Random(f"{model_type}-{seed}")
    moe = model_type == "qwen3_5_moe_text"
    doc = hybrid_doc(rng, moe)
    fields = {f.name for f in __import__("dataclasses").fields(CONFIG_MAPPING[model_type])}
    own = {k: v for k, v in doc.items() if k in fields and k not in ("mlp_only_layers", "decoder_sparse_step",
                                                                     "norm_topk_prob")}
    doc = {**json.loads(CONFIG_MAPPING[model_type](**own).to_json_string()), "model_type": model_type}
    B, T = rng.randrange(1, 3), rng.choice([1, 5, 70])
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.L_lin >= 1 and ("moe" in cfg.mlp_kinds) == moe
    N, kv, flops = measured(cfg)
    ref_N, ref_kv, ref_flops = reference(doc, B, T, build=moe_module)
    assert (N, kv) == (ref_N, ref_kv), doc
    assert flops == pytest.approx(ref_flops, rel=1e-12), doc


def test_qwen3_5_class_defaults_are_counted_exactly():
    for model_type, N in (("qwen3_5_text", 8_953_803_264), ("qwen3_5_moe_text", 34_660_610_688)):
        doc = {**json.loads(CONFIG_MAPPING[model_type]().to_json_string()), "model_type": model_type}
        reading = read_hf(doc)
        assert budget(reading.config).params_exact == N and reading.config.L_lin == 3 * reading.config.L // 4
        assert reading.notes[0].startswith(f"{model_type}: its module runs Qwen3-Next's blocks")
