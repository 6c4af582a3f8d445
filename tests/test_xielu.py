"""The xIELU MLP (mlp="xielu"): GELU's two matrices with xIELU in GELU's place and its two learned gains α_p, α_n, as
Apertus (apertus) runs it beside QK-norm. Its files read exactly as transformers reads them: logits with the weights
copied in, N, the real cache and FlopCounterMode's FLOPs; saved bytes equal autograd's; its rows, line, words and
changes step.
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

TINY = {"model_type": "apertus", "vocab_size": 40, "hidden_size": 32, "intermediate_size": 24, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "pad_token_id": 0,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10_000.0}}


@torch.no_grad()
def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    ref, ours = copied.pair(doc)
    for block, layer in zip(ours.blocks, ref.model.layers):
        copied.attention(block, layer.self_attn)
        block.attn.q_norm.weight.copy_(layer.self_attn.q_norm.weight)
        block.attn.k_norm.weight.copy_(layer.self_attn.k_norm.weight)
        block.ln_1.load_state_dict(layer.attention_layernorm.state_dict())
        block.ln_2.load_state_dict(layer.feedforward_layernorm.state_dict())
        block.mlp.fc.load_state_dict(layer.mlp.up_proj.state_dict())
        block.mlp.proj.load_state_dict(layer.mlp.down_proj.state_dict())
        block.mlp.xielu.alpha_p.copy_(layer.mlp.act_fn.alpha_p)
        block.mlp.xielu.alpha_n.copy_(layer.mlp.act_fn.alpha_n)
    return ref, ours


def test_apertus_logits_equal_transformers_and_the_gains_matter():
    """Weights copied (the two gains drawn at random as every other weight): the same logits; with ReLU² in xIELU's
    place, or the gains at their starting values, they differ."""
    ref, ours = _copied(TINY)
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-4, rtol=1e-4)
        for block in ours.blocks:
            block.mlp.xielu.alpha_p.fill_(0.5)
        assert not torch.allclose(ours(idx)[0], expected, atol=1e-2)
        relu2 = GPT(replace(ours.cfg, mlp="relu2"))
        relu2.load_state_dict({k: v for k, v in ours.state_dict().items() if "xielu" not in k})
        assert not torch.allclose(relu2(idx)[0], expected, atol=1e-2)


def apertus_doc(rng: random.Random) -> dict:
    """A random Apertus file: K/V heads, head_dim apart from d / h (its attention's getattr), biases on attention."""
    h_kv = rng.choice([1, 2])
    h, d_head = h_kv * rng.choice([1, 2, 3]), 2 * rng.randrange(1, 5)
    doc = {"model_type": "apertus", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
           "num_attention_heads": h, "num_key_value_heads": rng.choice([h_kv, None]) if h_kv == h else h_kv,
           "hidden_size": h * d_head, "intermediate_size": rng.randrange(4, 40), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.5, "pad_token_id": 0, "attention_bias": rng.random() < 0.5}
    if rng.random() < 0.4:
        doc["head_dim"] = 2 * rng.randrange(1, 6)
    return doc


@pytest.mark.parametrize("seed", range(5))
def test_random_files_match_transformers_parameters_cache_and_flops(seed):
    rng = random.Random(f"apertus-{seed}")
    doc = apertus_doc(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T), doc


def test_the_class_defaults_are_its_module_and_apertus_8b():
    """ApertusConfig's defaults are Apertus-8B's shape: N = transformers' module = 6,979,596,352 (8B on its card)."""
    reading = read_hf({"model_type": "apertus"})
    module = _module({"model_type": "apertus"}, "meta")
    assert budget(reading.config).params_exact == sum(p.numel() for p in module.parameters()) == 6_979_596_352
    assert (reading.config.mlp, reading.config.qk_norm, reading.config.d_ff) == ("xielu", True, 14_336)


@pytest.mark.parametrize("seed", range(3))
def test_apertus_1_5_random_files_match_transformers_parameters_cache_and_flops(seed):
    """Apertus 1.5's text model (apertus1p5_text): Apertus' block in its own module."""
    rng = random.Random(f"apertus1p5_text-{seed}")
    doc = {**apertus_doc(rng), "model_type": "apertus1p5_text"}
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T), doc


def test_apertus_1_5_class_defaults_and_its_pruned_head():
    """Apertus1p5TextConfig's defaults: N = transformers' module = 8,091,086,912; a head pruned to output_vocab_size
    rows is a part not built, named in one line (more rows than the vocabulary: refused as its class refuses them)."""
    from model import hf

    doc = {"model_type": "apertus1p5_text"}
    assert budget(from_hf(doc)).params_exact == sum(p.numel() for p in _module(doc, "meta").parameters()) \
        == 8_091_086_912
    assert from_hf({**doc, "output_vocab_size": 266_752}).V == 266_752  # the full head, as its class reads it
    with pytest.raises(hf.PartNotBuilt, match="output_vocab_size=131,272: Apertus 1.5's head pruned"):
        from_hf({**doc, "output_vocab_size": 131_272})
    with pytest.raises(HFConfigError, match="output_vocab_size=300,000 is more than vocab_size"):
        from_hf({**doc, "output_vocab_size": 300_000})


XIELU = Config(B=2, T=7, d=16, h=4, L=2, V=11, norm="rmsnorm", positions="rope", mlp="xielu", bias="none", kv_heads=2,
               qk_norm=True, attention="eager")


@pytest.mark.parametrize("cfg", [XIELU, replace(XIELU, attention="fused"), replace(XIELU, bias="all", norm="layernorm")],
                         ids=["eager", "fused", "biased"])
def test_saved_bytes_equal_autograd_on_cpu(cfg):
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_memory_formulas_hold_at_every_structure():
    """memory_lines checks each formula against the pass it measured (check_lines raises otherwise)."""
    for attention, dtype, B, T in itertools.product(("eager", "fused"), ("fp32", "bf16"), (1, 3), (1, 2, 6)):
        memory_lines(trace(replace(XIELU, attention=attention, B=B, T=T), dtype))


def test_its_row_line_words_changes_step_and_cli(capsys):
    rows = {r.local: r for r in trace(XIELU).rows}
    assert rows["mlp.xielu"].symbolic == "(B, T, d_ff)" and rows["mlp.xielu"].label.startswith("xIELU: α_p·x² + β·x")
    b = budget(XIELU)
    line = next(ln for ln in b.lines if ln.key.startswith("params/mlp"))
    assert line.label == "xIELU MLP, one block: (d, d_ff) and (d_ff, d), and xIELU's gains α_p, α_n"
    assert line.value == 2 * 16 * 64 + 2  # two matrices at d_ff = 4d, and the two gains
    labels = {ln.label for ln in b.lines}  # the gains are neither matrices nor norms, and the lines say so
    assert {"N, matrices only (no biases, no norms, no xIELU α_p, α_n)",
            "− biases and norm gains and xIELU's α_p, α_n: no matmul weights"} <= labels
    assert "xIELU" in recipe_text(XIELU)
    step = next(s for s in changes(XIELU).steps if s.key == "mlp")
    assert step.title == ("xIELU at d_ff = 64: GELU's two matrices, 2·d·d_ff, with xIELU in GELU's place and its two "
                          "learned gains α_p, α_n")
    status, out, _ = run_cli(["--preset", "llama3.2-1b", "--mlp", "xielu", "--json"], capsys)
    assert status == 0 and json.loads(out)["config"]["mlp"] == "xielu"


@pytest.mark.parametrize("doc, message", [
    ({"model_type": "apertus", "hidden_act": "silu"}, "hidden_act='silu': apertus's MLP here runs 'xielu'"),
    ({"model_type": "apertus", "head_dim": None}, "head_dim"),
])
def test_files_this_module_cannot_build_are_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)


def test_xielu_experts_are_refused_in_one_line():
    with pytest.raises(ValueError, match="mlp=xielu with experts: xIELU experts are not modelled"):
        replace(XIELU, experts=4, top_k=2, expert_dim=8)
