"""Falcon (falcon): Falcon-7B's parallel block on one LayerNorm with one K/V head (multi_query), Falcon-40B's and 180B's
new_decoder_architecture (grouped K/V heads, a LayerNorm each for attention and the MLP: `parallel_norms`), and the
lesson's sequential block where parallel_attn is false; LayerNorms with biases, the matrices' biases by `bias`, GELU,
RoPE. Random small files read as transformers reads them: N on the meta device, the bytes of its real cache after a
prefill and forward FLOPs equal to FlopCounterMode on its eager CPU forward; logits equal with the weights copied in
(its fused q, k, v rows reordered); ALiBi and what its layer cannot run refused in one line.
"""
from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
import torch
from transformers import CONFIG_MAPPING

from model import GPT, budget, hf, trace
from model.config import HFConfigError, from_hf, read_hf
from model.passes import saved_bytes_of
from test_window import _module, measured, reference


def falcon_doc(rng: random.Random) -> dict:
    """A tiny Falcon of one of its three layers (multi_query's, new_decoder_architecture's with 1 or 2 LayerNorms, a
    sequential one), heads, widths, biases and the tie drawn."""
    h_kv = rng.choice([1, 2])
    h, d_head = h_kv * rng.choice([1, 2, 3]), 2 * rng.randrange(1, 5)
    doc = {"model_type": "falcon", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
           "num_attention_heads": h, "hidden_size": h * d_head, "max_position_embeddings": 64,
           "ffn_hidden_size": rng.choice([None, rng.randrange(2, 40)]), "tie_word_embeddings": rng.random() < 0.5,
           "bias": rng.random() < 0.5, "activation": rng.choice(["gelu", "gelu_new"])}
    layer = rng.choice(["multi_query", "new", "new_one_norm", "sequential"])
    doc.update({"multi_query": {"multi_query": True, "parallel_attn": True},
                "new": {"new_decoder_architecture": True, "num_kv_heads": h_kv, "parallel_attn": True},
                "new_one_norm": {"new_decoder_architecture": True, "num_kv_heads": h_kv, "parallel_attn": True,
                                 "num_ln_in_parallel_attn": 1},
                "sequential": {"multi_query": rng.random() < 0.5, "parallel_attn": False}}[layer])
    return doc


@pytest.mark.parametrize("seed", range(10))
def test_random_files_match_transformers_parameters_cache_and_flops(seed):
    """N and the FLOPs equal transformers'; the KV cache is the model's h_kv heads, where transformers' module (new
    decoder architecture) caches K and V broadcast to all h heads: h / h_kv times it, as the reading's note says."""
    rng = random.Random(f"falcon-{seed}")
    doc = falcon_doc(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    cfg = from_hf(doc, B=B, T=T)
    N, kv, flops = measured(cfg)
    ref_N, ref_kv, ref_flops = reference(doc, B, T)
    broadcast = cfg.h // cfg.h_kv if doc.get("new_decoder_architecture") else 1  # its module's cache: h heads
    assert (N, kv * broadcast, flops) == (ref_N, ref_kv, ref_flops), doc
    assert any("broadcasts them to all h" in n for n in read_hf(doc).notes) == (broadcast > 1)


@pytest.mark.parametrize("shape, N", [({}, 6_921_720_704),
                                      ({"new_decoder_architecture": True, "num_kv_heads": 8, "hidden_size": 8_192,
                                        "num_attention_heads": 128, "num_hidden_layers": 60}, 41_303_293_952)],
                         ids=["falcon-7b", "falcon-40b"])
def test_falcon_7b_and_40b_shapes_are_their_modules(shape, N):
    """FalconConfig's defaults (Falcon-7B's shape) and Falcon-40B's: N = transformers' module."""
    doc = {**json.loads(CONFIG_MAPPING["falcon"](**shape).to_json_string()), "model_type": "falcon"}
    cfg = from_hf(doc)
    assert budget(cfg).params_exact == sum(p.numel() for p in _module(doc, "meta").parameters()) == N
    assert (cfg.h_kv, cfg.parallel, cfg.parallel_norms) == ((1, True, False) if not shape else (8, False, True))


@torch.no_grad()
def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    """Falcon's weights in this module: its fused rows (per K/V group: the group's queries, then k, then v; or every
    query, then k, then v with multi_query; or each head's q, k, v) as W_qkv's (every query, every k, every v)."""
    torch.manual_seed(0)
    ref = _module(doc, "cpu").eval()
    for p in ref.parameters():
        p.normal_(0, 0.3)
    ours = GPT(replace(from_hf(doc, B=2, T=10), attention="eager")).eval()
    t, cfg = ref.transformer, ours.cfg
    ours.wte.weight.copy_(t.word_embeddings.weight)
    ours.ln_f.load_state_dict(t.ln_f.state_dict())
    ours.head.weight.copy_(ref.lm_head.weight)
    h, h_kv, d_head = cfg.h, cfg.h_kv, cfg.d_head
    for block, layer in zip(ours.blocks, t.h):
        a = layer.self_attention
        fused = {"weight": a.query_key_value.weight, "bias": a.query_key_value.bias}
        for name, w in fused.items():
            if w is None:
                continue
            if cfg.h_kv not in (1, h) or doc.get("new_decoder_architecture"):  # groups: queries, k, v
                g = w.view(h_kv, h // h_kv + 2, d_head, *w.shape[1:])
                q, k, v = g[:, :-2].reshape(-1, *w.shape[1:]), g[:, -2].reshape(-1, *w.shape[1:]), g[:, -1].reshape(
                    -1, *w.shape[1:])
            elif h_kv == 1:
                q, k, v = w[:h * d_head], w[h * d_head:(h + 1) * d_head], w[(h + 1) * d_head:]
            else:
                g = w.view(h, 3, d_head, *w.shape[1:])
                q, k, v = (g[:, i].reshape(-1, *w.shape[1:]) for i in range(3))
            getattr(block.attn.qkv, name).copy_(torch.cat([q, k, v]))
        block.attn.proj.load_state_dict(a.dense.state_dict())
        block.mlp.fc.load_state_dict(layer.mlp.dense_h_to_4h.state_dict())
        block.mlp.proj.load_state_dict(layer.mlp.dense_4h_to_h.state_dict())
        if cfg.parallel_norms:
            block.ln_1.load_state_dict(layer.ln_attn.state_dict())
            block.ln_2.load_state_dict(layer.ln_mlp.state_dict())
        else:
            block.ln_1.load_state_dict(layer.input_layernorm.state_dict())
            if not cfg.parallel:
                block.ln_2.load_state_dict(layer.post_attention_layernorm.state_dict())
    return ref, ours


SMALL = {"model_type": "falcon", "vocab_size": 40, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
         "max_position_embeddings": 64, "ffn_hidden_size": 24}
LAYERS = {"7b": {}, "40b": {"new_decoder_architecture": True, "num_kv_heads": 2},
          "sequential": {"parallel_attn": False, "multi_query": False, "bias": True}}


@pytest.mark.parametrize("layer", LAYERS)
def test_logits_equal_transformers_with_the_weights_copied(layer):
    """The same logits (to fp32's rounding of another order of sums); wired as the lesson's block (the parallel ones)
    or in parallel (the sequential one), the same weights give others."""
    ref, ours = _copied({**SMALL, **LAYERS[layer]})
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-3, rtol=1e-3)
        cfg = ours.cfg
        other = GPT(replace(cfg, parallel=False, parallel_norms=False) if cfg.parallel or cfg.parallel_norms else
                    replace(cfg, parallel_norms=True)).eval()
        other.load_state_dict(ours.state_dict(), strict=False)
        assert not torch.allclose(other(idx)[0], expected, atol=1e-2)


@pytest.mark.parametrize("layer", LAYERS)
def test_saved_bytes_equal_autograd_on_cpu(layer):
    cfg = from_hf({**SMALL, **LAYERS[layer]}, B=2, T=7)
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


@pytest.mark.parametrize("doc, message", [
    ({"new_decoder_architecture": True, "parallel_attn": False}, "its new architecture is a parallel block"),
    ({"num_ln_in_parallel_attn": 2}, "a LayerNorm each needs it"),
    ({"multi_query": False, "num_kv_heads": 2}, "set new_decoder_architecture true for grouped K/V heads"),
    ({"hidden_size": 30}, "hidden_size=30 is not a multiple of num_attention_heads=4"),
    ({"activation": "relu"}, "activation='relu'"),
])
def test_layers_its_module_cannot_run_are_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf({**SMALL, **doc})
    assert "\n" not in str(e.value)


def test_alibi_is_a_part_not_built():
    with pytest.raises(hf.PartNotBuilt, match="alibi=true: Falcon's ALiBi"):
        from_hf({**SMALL, "alibi": True})
