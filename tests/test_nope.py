"""NoPE blocks (`nope_layers`, a field of the positions part): blocks whose q and k RoPE leaves unrotated while the
others rotate theirs, as SmolLM3 (smollm3) leaves every fourth. They are a kind of block of their own (their tensors
lack the rotated q and k), counted by L_nope; SmolLM3's files read exactly as transformers reads them: logits with
its weights copied in, N, the real cache and FlopCounterMode's FLOPs, and saved bytes equal to autograd's.
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
from model.memory import saved_formula, structure
from model.passes import saved_bytes_of
from model.report import recipe_text
from model.rules import settle
from model.tracing import memory_lines
from pagetools import run_cli
from test_window import _module, measured, reference

TINY = {"model_type": "smollm3", "vocab_size": 40, "hidden_size": 32, "intermediate_size": 24, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
        "rope_theta": 10_000.0, "no_rope_layer_interval": 2, "pad_token_id": 0}  # this module's RMSNorm ε and RoPE base; blocks 1, 3 NoPE


def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    ref, ours = copied.pair(doc)
    with torch.no_grad():
        for block, layer in zip(ours.blocks, ref.model.layers):
            copied.attention(block, layer.self_attn)
            block.ln_1.weight.copy_(layer.input_layernorm.weight)
            block.ln_2.weight.copy_(layer.post_attention_layernorm.weight)
            copied.gated(block.mlp, layer.mlp)
    return ref, ours

@pytest.mark.parametrize("more", [{}, {"use_sliding_window": True, "sliding_window": 3},
                                  {"no_rope_layers": [0, 1, 1, 0]}], ids=["every-2nd", "windowed-nope", "listed"])
def test_smollm3s_logits_equal_transformers(more):
    """Weights copied: the same logits (the NoPE blocks windowed where SmolLM3 windows them); with RoPE in every
    block they differ."""
    ref, ours = _copied({**TINY, **more})
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-5, rtol=1e-5)
        everywhere = GPT(replace(ours.cfg, nope_layers=()))
        everywhere.load_state_dict(ours.state_dict())
        assert not torch.allclose(everywhere(idx)[0], expected, atol=1e-2)


def smollm3_doc(rng: random.Random) -> dict:
    """A tiny SmolLM3 file: its NoPE blocks by interval or by list, windowed or not, biases or not."""
    h_kv = rng.choice([1, 2])
    h, L, d_head = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 6), 2 * rng.randrange(1, 5)
    doc = {"model_type": "smollm3", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h_kv, "hidden_size": h * d_head,
           "intermediate_size": rng.randrange(4, 40), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.5, "pad_token_id": 0, "attention_bias": rng.random() < 0.3,
           "mlp_bias": rng.random() < 0.3}
    if rng.random() < 0.5:
        doc["no_rope_layers"] = [rng.choice([0, 1]) for _ in range(L)]
    else:
        doc["no_rope_layer_interval"] = rng.randrange(1, 4)
    if rng.random() < 0.4:
        doc.update(use_sliding_window=True, sliding_window=rng.randrange(2, 6))
    return doc


@pytest.mark.parametrize("seed", range(8))
def test_random_smollm3_files_match_transformers_parameters_cache_and_flops(seed):
    rng = random.Random(f"smollm3-{seed}")
    doc = smollm3_doc(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T), doc


def test_smollm3s_defaults_are_its_module():
    """SmolLM3Config's defaults (SmolLM3-3B): 3,075,098,624 parameters, transformers' module; blocks 3, 7, …, 35
    without RoPE."""
    reading = read_hf({"model_type": "smollm3"})
    assert reading.config.nope_layers == tuple(range(3, 36, 4)) and reading.config.L_nope == 9
    module = _module({"model_type": "smollm3"}, "meta")
    assert budget(reading.config).params_exact == sum(p.numel() for p in module.parameters()) == 3_075_098_624
    assert any(n.startswith("NoPE in 9 of the 36 blocks (from no_rope_layer_interval = 4)") for n in reading.notes)


NOPE = Config(B=2, T=7, d=16, h=4, L=4, V=11, norm="rmsnorm", positions="rope", mlp="swiglu", bias="none", kv_heads=2,
              nope_layers=(1, 3), attention="eager")
NOPE_MOE = replace(NOPE, experts=4, top_k=2, expert_dim=6, dense_first=1, nope_layers=(3,))


@pytest.mark.parametrize("cfg", [NOPE, replace(NOPE, attention="fused"), replace(NOPE, rotary_dim=2), NOPE_MOE,
                                 replace(NOPE, nope_layers=(0, 1, 2, 3)), replace(NOPE, window=3, full_layers=(1, 3))],
                         ids=["eager", "fused", "partial", "moe", "all-nope", "windowed"])
def test_saved_bytes_equal_autograd_on_cpu(cfg):
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_memory_formulas_hold_at_every_structure():
    """memory_lines checks each formula against the pass it measured (check_lines raises otherwise); a NoPE block
    keeps what a RoPE block keeps (its unrotated q and k in place of the rotated ones), so where RoPE rotates all of
    each head the formula is RoPE's, written once under L."""
    sizes = itertools.product(("eager", "fused"), (1, 2), ("fp32", "bf16"), (1, 3), (1, 2, 6), (None, 2), ((1, 3), (0,)))
    for attention, kv, dtype, B, T, d_rot, nope in sizes:
        cfg = replace(NOPE, attention=attention, kv_heads=kv, B=B, T=T, rotary_dim=d_rot, nope_layers=nope)
        memory_lines(trace(cfg, dtype))
    assert saved_formula(structure(NOPE, "fp32")) == saved_formula(structure(replace(NOPE, nope_layers=()), "fp32"))
    partial = saved_formula(structure(replace(NOPE, rotary_dim=2), "fp32"))
    assert "d_rot" in partial and "L_nope" not in partial


def test_the_trace_the_reports_the_changes_and_the_cli_name_it(capsys):
    t = trace(NOPE)
    rows = {r.name for r in t.rows}
    assert "blocks.0.attn.q_rot" in rows and not any(n.startswith("blocks.1.attn.q_rot") for n in rows)
    assert [g.title for g in t.groups] == ["blocks 0, 2: dense, × 2", "blocks 1, 3: dense, NoPE, × 2"]
    assert "RoPE, NoPE in blocks 1, 3" in recipe_text(NOPE)
    step = next(s for s in changes(NOPE).steps if s.key == "positions")
    assert step.title == ("RoPE instead of the learned table W_pe, but not in the L_nope = 2 NoPE blocks (blocks 1, 3), "
                          "whose q and k see no position: no parameters")
    status, out, _ = run_cli(["--preset", "llama3.2-1b", "--nope-layers", "3,7", "--json"], capsys)
    assert status == 0 and json.loads(out)["config"]["nope_layers"] == [3, 7]
    status, _, err = run_cli(["--preset", "gpt2-small", "--nope-layers", "3"], capsys)
    assert status == 2 and "nope_layers=[3] lists blocks without RoPE, but the positions are learned" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("change, nope, notice", [
    ({"positions": "learned"}, (), "nope_layers 1,3 dropped: NoPE blocks leave out RoPE where the others use it, and "
                                   "positions are now learned (the table W_pe)"),
    ({"L": 2}, (1,), "nope_layers 1,3 → 1: the blocks are 0 … 1 at L = 2, so blocks past them are no NoPE blocks"),
])
def test_the_pages_rules_keep_the_nope_blocks_valid(change, nope, notice):
    asked = {f: getattr(NOPE, f) for f in NOPE.__dataclass_fields__}
    cfg, notes = settle({**asked, **change})
    assert cfg.nope_layers == nope and len(notes) == 1 and notes[0].startswith(notice)


@pytest.mark.parametrize("doc, message", [
    ({**TINY, "no_rope_layers": [1, 0]}, "no_rope_layers lists 2 blocks, but num_hidden_layers = 4: give one 1 .RoPE."),
    ({**TINY, "no_rope_layers": [1, 2, 1, 0]}, "no_rope_layers=.*must be a list of 1 .RoPE. and 0 .none., one per block"),
    ({**TINY, "no_rope_layer_interval": 0}, "no_rope_layer_interval=0: .* must be a whole number of at least 1"),
])
def test_files_its_class_cannot_build_are_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)


def test_nope_blocks_of_two_mlp_kinds_are_refused():
    with pytest.raises(ValueError, match="lists dense and MoE blocks alike"):
        replace(NOPE_MOE, nope_layers=(0, 3))


def _permuted(w: torch.Tensor, heads: int) -> torch.Tensor:
    """q's or k's projection with each head's features reordered (0, 2, 4, …, 1, 3, …): Cohere's RoPE rotates
    interleaved pairs (2i, 2i + 1), this module's the halves (i, i + d_head/2), the same rotation of these rows."""
    d_head = w.shape[0] // heads
    order = torch.cat([torch.arange(0, d_head, 2), torch.arange(1, d_head, 2)])
    return w.view(heads, d_head, -1)[:, order].reshape_as(w)


def _copied_cohere2_or_exaone4(doc: dict) -> tuple[torch.nn.Module, GPT]:
    ref, ours = copied.pair(doc)
    cohere = doc["model_type"] == "cohere2"
    with torch.no_grad():
        for block, layer in zip(ours.blocks, ref.model.layers):
            a = layer.self_attn
            copied.attention(block, a, *((_permuted(a.q_proj.weight, 4), _permuted(a.k_proj.weight, 2)) if cohere
                                         else ()))
            if cohere:
                block.ln_1.weight.copy_(layer.input_layernorm.weight)
            else:
                block.ln_1.weight.copy_(layer.post_attention_layernorm.weight)
                block.ln_2.weight.copy_(layer.post_feedforward_layernorm.weight)
                block.attn.q_norm.weight.copy_(a.q_norm.weight)
                block.attn.k_norm.weight.copy_(a.k_norm.weight)
            copied.gated(block.mlp, layer.mlp)
    return ref, ours

WINDOWED = {**{k: v for k, v in TINY.items() if k not in ("no_rope_layer_interval", "rms_norm_eps")},
            "sliding_window": 3, "sliding_window_pattern": 2}


@pytest.mark.parametrize("doc", [{**WINDOWED, "model_type": "cohere2", "logit_scale": 1.0, "layer_norm_eps": 1e-5},
                                 {**WINDOWED, "model_type": "exaone4", "rms_norm_eps": 1e-5}],
                         ids=["cohere2", "exaone4"])
def test_command_a_and_exaone_4s_full_blocks_go_without_rope(doc):
    """Command A (cohere2) and EXAONE 4 (exaone4) rotate q and k in their windowed blocks only: their full blocks,
    here 1 and 3, are NoPE blocks; with its weights copied, each module's logits (Cohere's logit_scale 1 here: a
    value only) equal this module's."""
    ref, ours = _copied_cohere2_or_exaone4(doc)
    assert ours.cfg.nope_layers == ours.cfg.full_layers == (1, 3) and ours.cfg.window == 3
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        torch.testing.assert_close(ours(idx)[0], ref(input_ids=idx).logits, atol=1e-4, rtol=1e-4)


def cohere2_or_exaone4_doc(rng: random.Random, model_type: str) -> dict:
    h_kv = rng.choice([1, 2])
    h, L, d_head = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 6), 2 * rng.randrange(1, 5)
    doc = {"model_type": model_type, "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h_kv, "hidden_size": h * d_head,
           "intermediate_size": rng.randrange(4, 40), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.5, "pad_token_id": 0, "sliding_window": rng.randrange(2, 6),
           "sliding_window_pattern": rng.randrange(1, 4)}
    if rng.random() < 0.3:
        doc["layer_types"] = [rng.choice(["full_attention", "sliding_attention"]) for _ in range(L)]
    if model_type == "cohere2":
        doc["attention_bias"] = rng.random() < 0.3
    return doc


SWEEP = [(t, i) for t in ("cohere2", "exaone4") for i in range(5)]


@pytest.mark.parametrize("model_type, seed", SWEEP, ids=[f"{t}-{i}" for t, i in SWEEP])
def test_random_cohere2_and_exaone4_files_match_transformers(model_type, seed):
    rng = random.Random(f"{model_type}-{seed}")
    doc = cohere2_or_exaone4_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T), doc


@pytest.mark.parametrize("model_type, N", [("cohere2", 34_980_831_232), ("exaone4", 9_429_069_824)])
def test_their_class_defaults_are_their_modules(model_type, N):
    reading = read_hf({"model_type": model_type})
    module = _module({"model_type": model_type}, "meta")
    assert budget(reading.config).params_exact == sum(p.numel() for p in module.parameters()) == N
    assert reading.config.nope_layers == reading.config.full_layers != ()


def test_exaone4s_pattern_in_words_is_not_read_beside_layer_types():
    kinds = ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"]
    reading = read_hf({"model_type": "exaone4", "num_hidden_layers": 4, "sliding_window_pattern": "LLLG",
                       "layer_types": kinds})
    assert reading.config.nope_layers == (3,)
    assert "sliding_window_pattern = 'LLLG' is not read: layer_types lists each block's attention" in reading.notes
    with pytest.raises(HFConfigError, match="sliding_window is null and layer_types is not in the file: Exaone4Config then cannot list"):
        from_hf({"model_type": "exaone4", "sliding_window": None})
