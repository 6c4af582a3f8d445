"""The ReLU² MLP (mlp="relu2"): GELU's two matrices with max(0, x)² in GELU's place, as Arcee's AFM (arcee) and Jais 2
(jais2) run it. Their files read exactly as transformers reads them: logits with the weights copied in, N, the real
cache and FlopCounterMode's FLOPs; saved bytes equal autograd's; its rows, formulas, words and changes step.
"""
from __future__ import annotations

import itertools
import json
import random
from dataclasses import replace

import copied
import pytest
import torch

from model import GPT, budget, trace
from model.changes import changes
from model.config import Config, HFConfigError, from_hf, read_hf
from model.passes import saved_bytes_of
from model.report import recipe_text
from model.tracing import memory_lines
from pagetools import run_cli
from test_window import _module, measured, reference

TINY = {"vocab_size": 40, "hidden_size": 32, "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "max_position_embeddings": 64, "rope_theta": 10_000.0, "pad_token_id": 0}


def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    ref, ours = copied.pair(doc)
    with torch.no_grad():
        for block, layer in zip(ours.blocks, ref.model.layers):
            copied.attention(block, layer.self_attn)
            block.ln_1.load_state_dict(layer.input_layernorm.state_dict())
            block.ln_2.load_state_dict(layer.post_attention_layernorm.state_dict())
            block.mlp.fc.load_state_dict(layer.mlp.up_proj.state_dict())
            block.mlp.proj.load_state_dict(layer.mlp.down_proj.state_dict())
    return ref, ours

@pytest.mark.parametrize("doc", [{**TINY, "model_type": "arcee", "rms_norm_eps": 1e-5},
                                 {**TINY, "model_type": "jais2", "layer_norm_eps": 1e-5}], ids=["arcee", "jais2"])
def test_their_logits_equal_transformers(doc):
    """Weights copied: the same logits; with GELU in ReLU²'s place they differ."""
    ref, ours = _copied(doc)
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-4, rtol=1e-4)
        gelu = GPT(replace(ours.cfg, mlp="gelu"))
        gelu.load_state_dict(ours.state_dict())
        assert not torch.allclose(gelu(idx)[0], expected, atol=1e-2)


def relu2_doc(rng: random.Random, model_type: str) -> dict:
    h_kv = rng.choice([1, 2])
    h, d_head = h_kv * rng.choice([1, 2, 3]), 2 * rng.randrange(1, 5)
    both = rng.random() < 0.5 if model_type == "arcee" else True  # Jais 2: its biases on, as its LayerNorms'
    doc = {"model_type": model_type, "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
           "num_attention_heads": h, "num_key_value_heads": h_kv, "hidden_size": h * d_head,
           "intermediate_size": rng.randrange(4, 40), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.5, "pad_token_id": 0, "attention_bias": both, "mlp_bias": both}
    if rng.random() < 0.4:
        doc["head_dim"] = 2 * rng.randrange(1, 6)
    return doc


SWEEP = [(t, i) for t in ("arcee", "jais2") for i in range(5)]


@pytest.mark.parametrize("model_type, seed", SWEEP, ids=[f"{t}-{i}" for t, i in SWEEP])
def test_random_files_match_transformers_parameters_cache_and_flops(model_type, seed):
    rng = random.Random(f"{model_type}-{seed}")
    doc = relu2_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T), doc


@pytest.mark.parametrize("model_type, N", [("arcee", 4_022_766_080), ("jais2", 8_090_401_280)])
def test_their_class_defaults_are_their_modules(model_type, N):
    reading = read_hf({"model_type": model_type})
    module = _module({"model_type": model_type}, "meta")
    assert budget(reading.config).params_exact == sum(p.numel() for p in module.parameters()) == N
    assert reading.config.mlp == "relu2" and reading.config.d_ff == reading.config.ff_dim


RELU2 = Config(B=2, T=7, d=16, h=4, L=2, V=11, norm="rmsnorm", positions="rope", mlp="relu2", bias="none", kv_heads=2,
               attention="eager")


@pytest.mark.parametrize("cfg", [RELU2, replace(RELU2, attention="fused"), replace(RELU2, norm="layernorm", bias="all")],
                         ids=["eager", "fused", "jais2-like"])
def test_saved_bytes_equal_autograd_on_cpu(cfg):
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_memory_formulas_hold_at_every_structure():
    """memory_lines checks each formula against the pass it measured (check_lines raises otherwise)."""
    for attention, kv, dtype, B, T in itertools.product(("eager", "fused"), (1, 2, 4), ("fp32", "bf16"), (1, 3),
                                                        (1, 2, 6)):
        memory_lines(trace(replace(RELU2, attention=attention, kv_heads=kv, B=B, T=T), dtype))


def test_the_trace_the_reports_the_changes_and_the_cli_name_it(capsys):
    rows = {r.local: r for r in trace(RELU2).rows}
    assert rows["mlp.squared"].label == "ReLU²: max(0, x)², squared" and rows["mlp.relu"].symbolic == "(B, T, d_ff)"
    assert "ReLU²" in recipe_text(RELU2) and RELU2.d_ff == 4 * 16  # GELU's default width, 4d
    step = next(s for s in changes(RELU2).steps if s.key == "mlp")
    assert step.title == "ReLU² at d_ff = 64: GELU's two matrices, 2·d·d_ff, with max(0, x)² in GELU's place"
    status, out, _ = run_cli(["--preset", "llama3.2-1b", "--mlp", "relu2", "--json"], capsys)
    assert status == 0 and json.loads(out)["config"]["mlp"] == "relu2"


@pytest.mark.parametrize("doc, message", [
    ({"model_type": "jais2", "mlp_bias": False}, "Jais 2's LayerNorms keep their biases while some matrices lose"),
    ({"model_type": "arcee", "hidden_act": "silu"}, "hidden_act='silu': arcee's MLP here runs 'relu2'"),
])
def test_files_this_module_cannot_build_are_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)
