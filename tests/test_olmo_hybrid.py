"""OLMo Hybrid (olmo_hybrid): OLMo 3's attention blocks (post-norm, QK-norm over all heads' width) beside Gated DeltaNet
blocks wired pre-norm (`model.parts.postnorm`: post-norm is the attention blocks' wiring), every fourth block
attention by its class's default. Random small files read as transformers reads them: N on the meta device, the bytes
of its real cache after a prefill (K, V and the states) and forward FLOPs equal to FlopCounterMode on its eager CPU
forward; logits equal with the weights copied in (its separate q, k, v, g, a and b projections laid out as the fused
ones); saved bytes equal autograd's; the class's rules for its null sizes and blocks.
"""
from __future__ import annotations

import json
import random
from dataclasses import replace

import copied
import pytest
import torch
from transformers import CONFIG_MAPPING

from model import GPT, budget, trace
from model.config import HFConfigError, from_hf, read_hf
from model.passes import saved_bytes_of
from model.report import recipe_text
from test_window import _module, measured, reference


def olmo_hybrid_doc(rng: random.Random) -> dict:
    """A tiny OLMo Hybrid: heads, widths, biases and the tie drawn; its blocks by layer_types (one of each kind at
    least) or by its class's default; its Gated DeltaNet sizes drawn (h_lv a multiple of h_lk) or left null (its
    rules: h, ⌊0.75·d / h_lk⌋, 2·d_lk)."""
    h_kv = rng.choice([1, 2])
    h, L = h_kv * rng.choice([1, 2]), rng.randrange(2, 6)
    doc = {"model_type": "olmo_hybrid", "vocab_size": rng.randrange(8, 60), "hidden_size": 4 * h * rng.randrange(1, 4),
           "num_hidden_layers": L, "num_attention_heads": h, "num_key_value_heads": h_kv,
           "intermediate_size": rng.randrange(2, 30), "max_position_embeddings": 256,
           "tie_word_embeddings": rng.random() < 0.3, "attention_bias": rng.random() < 0.5, "pad_token_id": 0}
    if rng.random() < 0.6:
        linear, full = rng.sample(range(L), 2)
        types = [rng.choice(["linear_attention", "full_attention"]) for _ in range(L)]
        types[linear], types[full] = "linear_attention", "full_attention"
        doc["layer_types"] = types
    if rng.random() < 0.7:
        h_lk = rng.randrange(1, 3)
        doc.update(linear_num_key_heads=h_lk, linear_num_value_heads=h_lk * rng.randrange(1, 3),
                   linear_key_head_dim=rng.randrange(2, 9), linear_value_head_dim=rng.randrange(2, 9),
                   linear_conv_kernel_dim=rng.randrange(2, 5))
    return doc


@pytest.mark.parametrize("seed", range(8))
def test_random_files_match_transformers_parameters_cache_and_flops(seed):
    """N, the whole cache after a prefill (fp32: K and V of the attention blocks, the Gated DeltaNet blocks'
    convolution and recurrent states) and the forward FLOPs (T across the chunks of 64) equal transformers'."""
    rng = random.Random(f"olmo_hybrid-{seed}")
    doc = olmo_hybrid_doc(rng)
    B, T = rng.randrange(1, 3), rng.choice([1, 5, 64, 70, 130])
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.L_lin >= 1 and cfg.post_norm and cfg.qk_norm_wide
    N, kv, flops = measured(cfg)
    ref_N, ref_kv, ref_flops = reference(doc, B, T)
    assert (N, kv) == (ref_N, ref_kv), doc
    assert flops == pytest.approx(ref_flops, rel=1e-12), doc


def test_the_class_defaults_are_its_module():
    """OlmoHybridConfig's defaults (its 7B's shape): N = transformers' module = 7,430,870,688; 24 Gated DeltaNet
    blocks of 30 heads of 96 × 192 (its rules from h and d), attention in blocks 3, 7, …, 31."""
    doc = {**json.loads(CONFIG_MAPPING["olmo_hybrid"]().to_json_string()), "model_type": "olmo_hybrid"}
    for file in (doc, {"model_type": "olmo_hybrid"}):  # as the class writes it, and with every default left null
        cfg = from_hf(file)
        assert budget(cfg).params_exact == sum(p.numel() for p in _module(doc, "meta").parameters()) == 7_430_870_688
        assert (cfg.linear_k_heads, cfg.linear_v_heads, cfg.linear_k_dim, cfg.linear_v_dim) == (30, 30, 96, 192)
        assert [i for i in range(32) if i not in cfg.linear_layers] == list(range(3, 32, 4))
    notes = read_hf({"model_type": "olmo_hybrid"}).notes
    assert any("OlmoHybridConfig's rules: linear_num_key_heads = h = 30" in n and "2·d_lk = 192" in n for n in notes)
    assert from_hf({"model_type": "olmo_hybrid", "num_hidden_layers": 3}).linear_layers == (0, 1)  # the last full


@pytest.mark.parametrize("doc, message", [
    ({"layer_types": ["full_attention"] * 4}, "OLMo Hybrid's config class refuses that"),
    ({"layer_types": ["linear_attention"] * 4}, "OLMo Hybrid's config class refuses that"),
    ({"layer_types": ["sliding_attention"] * 2 + ["linear_attention", "full_attention"]}, "sliding_attention"),
    ({"linear_num_key_heads": 3, "linear_num_value_heads": 4}, "not a multiple of linear_num_key_heads"),
])
def test_files_its_module_cannot_build_are_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf({"model_type": "olmo_hybrid", "num_hidden_layers": 4, **doc})
    assert "\n" not in str(e.value)


TINY = {"model_type": "olmo_hybrid", "vocab_size": 40, "hidden_size": 32, "intermediate_size": 24,
        "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
        "rms_norm_eps": 1e-5, "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 6,
        "linear_value_head_dim": 5, "linear_conv_kernel_dim": 3, "linear_allow_neg_eigval": False,
        "layer_types": ["linear_attention", "full_attention", "linear_attention", "full_attention"], "pad_token_id": 0}


@torch.no_grad()
def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    """OLMo Hybrid's weights in this module: an attention block's norms on its outputs (post-norm), a Gated DeltaNet
    block's before its mixer and its MLP; q, k, v and g (OLMo's gate) rows into W_qkvz grouped by q/k head, b and a
    into W_ba likewise; the convolution, A_log, dt's bias, the output norm and W_o as they are (the output norm's ε
    set to this module's)."""
    ref, ours = copied.pair(doc)
    r = doc["linear_num_value_heads"] // doc["linear_num_key_heads"]
    for block, layer in zip(ours.blocks, ref.model.layers):
        copied.gated(block.mlp, layer.mlp)
        if block.attends:
            a = layer.self_attn
            copied.attention(block, a)
            block.attn.q_norm.weight.copy_(a.q_norm.weight)
            block.attn.k_norm.weight.copy_(a.k_norm.weight)
            block.ln_1.weight.copy_(layer.post_attention_layernorm.weight)
            block.ln_2.weight.copy_(layer.post_feedforward_layernorm.weight)
            continue
        m, lin = layer.linear_attn, block.lin
        block.ln_1.weight.copy_(layer.input_layernorm.weight)
        block.ln_2.weight.copy_(layer.post_attention_layernorm.weight)
        q, k = (w.weight.view(lin.h_k, lin.d_k, -1) for w in (m.q_proj, m.k_proj))
        v, g = (w.weight.view(lin.h_k, r * lin.d_v, -1) for w in (m.v_proj, m.g_proj))
        lin.qkvz.weight.copy_(torch.cat([q, k, v, g], dim=1).reshape(-1, doc["hidden_size"]))
        b, a = (w.weight.view(lin.h_k, r, -1) for w in (m.b_proj, m.a_proj))
        lin.ba.weight.copy_(torch.cat([b, a], dim=1).reshape(-1, doc["hidden_size"]))
        lin.conv_weight.copy_(m.conv1d.weight.squeeze(1))
        lin.A_log.copy_(m.A_log)
        lin.dt_bias.copy_(m.dt_bias)
        lin.norm_weight.copy_(m.o_norm.weight)
        m.o_norm.variance_epsilon = 1e-6  # its output norm's ε, 1e-5: a value (this module's is Qwen3-Next's 1e-6)
        lin.out_proj.weight.copy_(m.o_proj.weight)
    return ref, ours


def test_logits_equal_transformers_with_the_weights_copied():
    """The same logits (β not doubled: linear_allow_neg_eigval false, a value this module does not take); wired
    post-norm in every block, or pre-norm in every block, they differ."""
    ref, ours = _copied(TINY)
    assert ours.cfg.linear_layers == (0, 2) and [b.attends for b in ours.blocks] == [False, True, False, True]
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-4, rtol=1e-4)
        pre = GPT(replace(ours.cfg, post_norm=False)).eval()
        pre.load_state_dict(ours.state_dict())
        assert not torch.allclose(pre(idx)[0], expected, atol=1e-3)


@pytest.mark.parametrize("attention", ["eager", "fused"])
def test_saved_bytes_equal_autograd_on_real_cpu_tensors(attention):
    cfg = replace(from_hf(TINY, B=2, T=70), attention=attention)
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_rows_and_words_say_which_blocks_are_post_norm():
    cfg = from_hf(TINY, B=1, T=8)
    rows = {r.local: r for r in trace(cfg).rows}
    assert rows["ln_1"].label == ("RMSNorm: on attention's output (post-norm) in an attention block, before the "
                                  "mixer in a block with a fixed state")
    assert "post-norm (a norm on each output, none before) in the attention blocks" in recipe_text(cfg)
