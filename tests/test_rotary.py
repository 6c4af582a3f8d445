"""Partial rotary (issue 40): RoPE on d_rot of each head's d_head features, the rest passed through (Phi-4-mini's
partial_rotary_factor 0.75). Against transformers' Phi-3 module: random files' parameters, real cache bytes after a
prefill and eager forward FLOPs; its logits with the weights copied in. Saved bytes equal autograd's on real CPU tensors
and the memory formulas hold at every structure; the live page's rules keep d_rot valid; the trace, the reports and the
command line name it; the preset phi-4-mini is its config.json and its published count."""
from __future__ import annotations

import itertools
import json
import random
from dataclasses import replace

import pytest
import torch

from model import GPT, budget, trace
from model.changes import changes
from model.config import PRESETS, TABLE_PRESETS, Config, HFConfigError, from_hf, read_hf
from model.passes import saved_bytes_of
from model.report import recipe_text
from model.rules import settle
from model.tracing import memory_lines
from pagetools import run_cli
from test_window import _module, measured, reference


def random_doc(rng: random.Random) -> dict:
    """A small Phi-3 file whose partial_rotary_factor rotates an even part of each head (in either spelling)."""
    h_kv = rng.choice([1, 2])
    h, L, d_head = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 4), 2 * rng.randrange(2, 7)
    d_rot = 2 * rng.randrange(1, d_head // 2)
    doc = {"model_type": "phi3", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L, "num_attention_heads": h,
           "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(4, 40), "hidden_size": h * d_head,
           "max_position_embeddings": 64, "tie_word_embeddings": rng.random() < 0.5, "pad_token_id": 0,
           "sliding_window": rng.choice([None, rng.randrange(2, 9)])}
    factor = d_rot / d_head
    if rng.random() < 0.5:
        doc["partial_rotary_factor"] = factor
    else:
        doc["rope_parameters"] = {"rope_type": "default", "rope_theta": 10_000.0, "partial_rotary_factor": factor}
    return doc


@pytest.mark.parametrize("seed", range(8))
def test_random_phi3_files_match_transformers_parameters_cache_and_flops(seed):
    rng = random.Random(f"rotary-{seed}")
    doc = random_doc(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 13)
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.rotary_dim is not None and cfg.rotary_dim < cfg.d_head
    assert measured(cfg) == reference(doc, B, T)


TINY = {"model_type": "phi3", "vocab_size": 40, "hidden_size": 48, "intermediate_size": 24, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
        "pad_token_id": 0, "rope_parameters": {"rope_type": "default", "rope_theta": 10_000.0,
                                               "partial_rotary_factor": 0.5}}  # d_head 12, d_rot 6


def test_phi3s_logits_with_partial_rotary_equal_transformers():
    """Weights copied from transformers' Phi-3: the same logits; rotating all of each head gives others."""
    torch.manual_seed(0)
    ref = _module(TINY, "cpu").eval()
    ours = GPT(replace(from_hf(TINY, B=2, T=10), attention="eager")).eval()
    assert ours.cfg.rotary_dim == 6
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.3)
        ours.wte.weight.copy_(ref.model.embed_tokens.weight)
        ours.head.weight.copy_(ref.lm_head.weight)
        ours.ln_f.weight.copy_(ref.model.norm.weight)
        for block, layer in zip(ours.blocks, ref.model.layers):
            block.attn.qkv.weight.copy_(layer.self_attn.qkv_proj.weight)  # q's h heads, then k's, then v's
            block.attn.proj.weight.copy_(layer.self_attn.o_proj.weight)
            gate, up = layer.mlp.gate_up_proj.weight.chunk(2)
            block.mlp.gate.weight.copy_(gate)
            block.mlp.up.weight.copy_(up)
            block.mlp.proj.weight.copy_(layer.mlp.down_proj.weight)
            block.ln_1.weight.copy_(layer.input_layernorm.weight)
            block.ln_2.weight.copy_(layer.post_attention_layernorm.weight)
        idx = torch.randint(0, 40, (2, 10))
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-5, rtol=1e-5)
        whole = GPT(replace(ours.cfg, rotary_dim=None))
        whole.load_state_dict(ours.state_dict())
        assert not torch.allclose(whole(idx)[0], expected, atol=1e-3)


LIKE_PHI = Config(B=2, T=5, d=64, h=4, L=2, V=50, norm="rmsnorm", positions="rope", mlp="swiglu", bias="none",
                  kv_heads=2, rotary_dim=8)


@pytest.mark.parametrize("attention", ["eager", "fused"])
def test_saved_bytes_equal_autograd_on_cpu(attention):
    cfg = replace(LIKE_PHI, attention=attention, B=3, T=7, head_dim=12, rotary_dim=4)
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_memory_formulas_hold_at_every_structure():
    """memory_lines checks each formula against the pass it measured (check_lines raises otherwise)."""
    sizes = itertools.product(("eager", "fused"), (1, 2, 4), ("fp32", "bf16"), (1, 3), (1, 2, 6), (None, 12), (2, 8))
    for attention, kv, dtype, B, T, d_head, d_rot in sizes:
        cfg = replace(LIKE_PHI, attention=attention, kv_heads=kv, B=B, T=T, head_dim=d_head, rotary_dim=d_rot)
        lines = {x.key: x for x in memory_lines(trace(cfg, dtype))}
        assert "d_rot" in lines["memory/saved"].formula


def test_the_trace_the_reports_the_changes_and_the_cli_name_it(capsys):
    rows = {r.local: r for r in trace(LIKE_PHI).rows}
    assert rows["rope.cos"].symbolic == "(T, d_rot)" and "first d_rot features rotated" in rows["attn.q_rot"].label
    assert "partial RoPE (d_rot = 8 of d_head = 16)" in recipe_text(LIKE_PHI)
    step = next(s for s in changes(LIKE_PHI).steps if s.key == "positions")
    assert step.title.startswith("partial RoPE instead of the learned table W_pe: d_rot = 8 of each head's d_head")
    status, out, _ = run_cli(["--preset", "llama3-8b", "--d-rot", "64", "--json"], capsys)
    assert status == 0 and json.loads(out)["config"]["rotary_dim"] == 64
    status, out, err = run_cli(["--preset", "llama3-8b", "--d-rot", "63"], capsys)
    assert status == 2 and "d_rot=63: RoPE rotates pairs" in err and err.count("\n") == 1


@pytest.mark.parametrize("change, rotary, notice", [
    ({"positions": "learned"}, None, "d_rot = 8 dropped: partial RoPE rotates part of each head's q and k, and "
                                     "positions are now learned (the table W_pe)"),
    ({"h": 16}, None, "d_rot must be at most d_head = 4 (RoPE now rotates all of each head)"),
    ({"rotary_dim": 7}, 8, "d_rot snapped 7 → 8: RoPE rotates pairs of features, so d_rot must be even"),
])
def test_the_pages_rules_keep_d_rot_valid(change, rotary, notice):
    asked = {"B": 2, "T": 5, "d": 64, "h": 4, "L": 2, "V": 50, "T_max": 64, "tie": True, "norm": "rmsnorm",
             "positions": "rope", "mlp": "swiglu", "bias": "none", "rotary_dim": 8, **change}
    cfg, notes = settle(asked)
    assert cfg.rotary_dim == rotary and any(notice in n for n in notes), notes


def test_an_odd_part_of_a_head_rotates_one_feature_more_as_transformers_does():
    """int(12 · 0.3) = 3: RoPE's frequencies arange(0, 3, 2) make cos and sin 4 wide, and 4 features are rotated."""
    doc = {**TINY, "rope_parameters": None, "partial_rotary_factor": 0.3}
    cfg = from_hf(doc, B=2, T=5)
    assert cfg.rotary_dim == 4 and any("int(d_head · 0.3) = 3, odd" in n for n in read_hf(doc).notes)
    assert measured(cfg) == reference(doc, 2, 5)
    with pytest.raises(HFConfigError, match=r"partial_rotary_factor=0.05 rotates int\(d_head · 0.05\) = 0 of each"):
        from_hf({**doc, "partial_rotary_factor": 0.05})


@pytest.mark.parametrize("seed", range(4))
def test_random_glm_files_match_transformers(seed):
    """GLM-4 (glm): RoPE on half of each head by default (GlmConfig's 0.5, or the file's), q, k, v biases."""
    rng = random.Random(f"glm-{seed}")
    doc = {**random_doc(rng), "model_type": "glm", "attention_bias": rng.random() < 0.5}
    doc.pop("sliding_window")
    if rng.random() < 0.5:
        doc.pop("partial_rotary_factor", None)
        doc.pop("rope_parameters", None)
    B, T = rng.randrange(1, 4), rng.randrange(1, 13)
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.rotary_dim is not None
    assert measured(cfg) == reference(doc, B, T)


# microsoft/Phi-4-mini-instruct's config.json, its shape keys (its rope_scaling: longrope's factors, values only)
PHI4_MINI = {"model_type": "phi3", "vocab_size": 200_064, "hidden_size": 3_072, "intermediate_size": 8_192,
             "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8,
             "max_position_embeddings": 131_072, "original_max_position_embeddings": 4_096,
             "partial_rotary_factor": 0.75, "tie_word_embeddings": True, "pad_token_id": 199_999,
             "sliding_window": 262_144, "rope_theta": 10_000.0}


def test_phi_4_mini_is_its_config_json_and_its_published_count():
    preset = TABLE_PRESETS["phi-4-mini"]
    assert read_hf(PHI4_MINI, B=preset.B, T=preset.T).config == preset
    module = _module(PHI4_MINI, "meta")
    assert budget(preset).params_exact == sum(p.numel() for p in module.parameters()) == 3_836_021_760


@pytest.mark.parametrize("key", ["num_key_value_heads", "head_dim"])
def test_a_null_glms_class_keeps_and_its_module_cannot_run_is_refused(key):
    doc = {**TINY, "model_type": "glm", key: None}
    with pytest.raises(Exception):
        reference(doc, 1, 3)
    with pytest.raises(HFConfigError, match=f"{key}=null: glm's config class keeps it null and its module cannot run"):
        from_hf(doc)


def glm4_moe_doc(rng: random.Random) -> dict:
    """A tiny GLM-4.5 file: grouped-query attention with partial RoPE, dense first blocks, shared and routed experts
    chosen by groups (each of at least two experts), QK-norm or not."""
    groups = rng.choice([1, 2])
    E = groups * rng.randrange(2, 4)
    topk_group = rng.randrange(1, groups + 1)
    h_kv = rng.choice([1, 2])
    h, L, d_head = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 4), 2 * rng.randrange(2, 6)
    return {"model_type": "glm4_moe", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
            "num_attention_heads": h, "num_key_value_heads": h_kv, "head_dim": d_head,
            "hidden_size": rng.randrange(4, 24), "intermediate_size": rng.randrange(2, 20),
            "moe_intermediate_size": rng.randrange(2, 12), "n_routed_experts": E, "n_group": groups,
            "topk_group": topk_group, "num_experts_per_tok": rng.randrange(1, topk_group * E // groups + 1),
            "n_shared_experts": rng.randrange(0, 3), "first_k_dense_replace": rng.randrange(0, L),
            "max_position_embeddings": 64, "tie_word_embeddings": rng.random() < 0.3,
            "attention_bias": rng.random() < 0.5, "use_qk_norm": rng.random() < 0.5,
            "partial_rotary_factor": rng.choice([0.25, 0.5, 0.75])}


@pytest.mark.parametrize("seed", range(6))
def test_random_glm4_moe_files_match_transformers(seed):
    from test_moe import _module as moe_module  # eager experts on the CPU, batched on the meta device

    rng = random.Random(f"glm4_moe-{seed}")
    doc = glm4_moe_doc(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 10)
    cfg = from_hf(doc, B=B, T=T)
    assert measured(cfg) == reference(doc, B, T, build=moe_module), doc


# zai-org/GLM-4.5-Air's config.json, its shape keys and router's settings
GLM_45_AIR = {"model_type": "glm4_moe", "vocab_size": 151_552, "hidden_size": 4_096, "intermediate_size": 10_944,
              "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128,
              "max_position_embeddings": 131_072, "moe_intermediate_size": 1_408, "n_routed_experts": 128,
              "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1, "attention_bias": True,
              "use_qk_norm": False, "partial_rotary_factor": 0.5, "tie_word_embeddings": False,
              "num_nextn_predict_layers": 1, "n_group": 1, "topk_group": 1, "norm_topk_prob": True,
              "routed_scaling_factor": 1.0, "rope_theta": 1_000_000}


def test_glm_4_5_air_is_its_config_json_and_transformers_count():
    """106,852,245,504 (its card: "106B total, 12B active"); the class's own defaults, head_dim d // h = 42 and d_rot
    22 (an odd 21 rounded up, as its frequencies are), read exactly too."""
    preset = PRESETS["glm-4.5-air"]
    reading = read_hf(GLM_45_AIR, B=preset.B, T=preset.T)
    assert reading.config == preset
    module = _module(GLM_45_AIR, "meta")
    b = budget(preset)
    assert b.params_exact == sum(p.numel() for p in module.parameters()) == 106_852_245_504
    assert round((b.params_active - 2 * preset.V * preset.d) / 1e9) == 12  # its card's 12B: no token table or head
    assert any("without the multi-token-prediction layer (num_nextn_predict_layers = 1)" in n for n in reading.notes)
    defaults = read_hf({"model_type": "glm4_moe"}).config
    assert (defaults.head_dim, defaults.rotary_dim) == (42, 22)
    assert budget(defaults).params_exact == 103_481_200_640  # Glm4MoeConfig()'s module (issue 40)


@pytest.mark.parametrize("seed", range(6))
def test_random_minimax_m2_files_match_transformers(seed):
    """MiniMax-M2: every block a mixture of experts, QK-norm over all heads' width, RoPE on rotary_dim features."""
    from test_moe import _module as moe_module

    rng = random.Random(f"minimax_m2-{seed}")
    h_kv = rng.choice([1, 2])
    h, d_head, E = h_kv * rng.choice([1, 2, 3]), 2 * rng.randrange(2, 6), rng.randrange(1, 6)
    doc = {"model_type": "minimax_m2", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
           "num_attention_heads": h, "num_key_value_heads": h_kv, "head_dim": d_head,
           "hidden_size": rng.randrange(4, 24), "intermediate_size": rng.randrange(2, 20), "num_local_experts": E,
           "num_experts_per_tok": rng.randrange(1, E + 1), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.3, "rotary_dim": rng.choice([None, 2 * rng.randrange(1, d_head // 2)])}
    B, T = rng.randrange(1, 4), rng.randrange(1, 10)
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.qk_norm_wide and cfg.rotary_dim == doc["rotary_dim"]
    assert measured(cfg) == reference(doc, B, T, build=moe_module), doc


# MiniMaxAI/MiniMax-M2's config.json, its shape keys (use_qk_norm, qk_norm_type, scoring_func and its
# multi-token-prediction keys are none of MiniMaxM2Config's: transformers builds the same model without them)
MINIMAX_M2 = {"model_type": "minimax_m2", "vocab_size": 200_064, "hidden_size": 3_072, "intermediate_size": 1_536,
              "num_hidden_layers": 62, "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128,
              "max_position_embeddings": 196_608, "num_local_experts": 256, "num_experts_per_tok": 8, "rotary_dim": 64,
              "tie_word_embeddings": False, "rope_theta": 5_000_000, "use_qk_norm": True, "qk_norm_type": "per_layer",
              "scoring_func": "sigmoid", "use_routing_bias": True, "num_mtp_modules": 3}


def test_minimax_m2_is_its_config_json_and_transformers_count():
    """228,689,748,992 (its card: "230B total, 10B active"), its class's defaults' count (issue 40)."""
    preset = PRESETS["minimax-m2"]
    assert read_hf(MINIMAX_M2, B=preset.B, T=preset.T).config == preset
    module = _module(MINIMAX_M2, "meta")
    b = budget(preset)
    assert b.params_exact == sum(p.numel() for p in module.parameters()) == 228_689_748_992
    assert round((b.params_active - 2 * preset.V * preset.d) / 1e9) == 10


@pytest.mark.parametrize("model_type", ["llama", "mistral", "qwen2", "qwen3", "olmo2", "granite", "smollm3"])
@pytest.mark.parametrize("rope_type", ["default", "linear", "yarn"])
def test_a_factor_below_1_is_read_as_the_module_runs_it(model_type, rope_type):
    """A type that rotates all of each head ignores partial_rotary_factor under its default RoPE (read, with a note);
    a scaled RoPE reads the factor and makes angles for fewer features than its attention rotates, which transformers
    cannot run: refused in one line, never read as if ignored."""
    import torch
    from test_window import _module

    rope = {"rope_type": rope_type, "rope_theta": 10_000.0, "partial_rotary_factor": 0.5,
            **({"factor": 2.0} if rope_type != "default" else {}),
            **({"original_max_position_embeddings": 32} if rope_type == "yarn" else {})}
    doc = {"model_type": model_type, "vocab_size": 40, "hidden_size": 32, "intermediate_size": 24,
           "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
           "pad_token_id": 0, "rope_parameters": rope}
    try:
        _module(doc, "cpu")(input_ids=torch.zeros(1, 5, dtype=torch.long))
    except Exception:  # noqa: BLE001 - transformers cannot run it: neither does the reader
        with pytest.raises(HFConfigError, match=r"partial_rotary_factor=0.5 gives RoPE (4 of d_head = 8|64 of d_head = 128) features") as e:
            from_hf(doc)
        assert "\n" not in str(e.value)
        return
    assert rope_type == "default" and from_hf(doc).rotary_dim is None
    assert any("ignored, as transformers'" in n for n in read_hf(doc).notes)
