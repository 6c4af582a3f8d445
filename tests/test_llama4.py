"""Llama 4 (llama4_text, and the llama4 wrapper's text_config): chunked attention (`chunked`: each query sees its own
chunk of W tokens; the cache a window's), NoPE blocks with full attention and an attention temperature, QK-norm
without a gain after RoPE (`qk_l2`), and MoE blocks of E experts, k per token, beside one shared expert, interleaved
with dense blocks of their own width. Read as transformers reads them: N, the real cache after a prefill, and forward
FLOPs (transformers' module runs every expert on every token, scaled by 0 where not chosen: its count less the other
E − k experts' matmuls is this module's); logits equal with the weights copied in (dense blocks: the routers differ in
values only); saved bytes equal autograd's.
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
from test_window import _module, measured, reference

SCOUT_TEXT = 107_769_861_120  # Llama4TextConfig's defaults (Llama 4 Scout's text model): transformers' module


def llama4_doc(rng: random.Random) -> dict:
    """A tiny Llama 4: chunks or none, NoPE blocks by interval or list, MoE blocks by step or list, QK-norm and the
    temperature on or off, biases or not."""
    h_kv = rng.choice([1, 2])
    h, L, d_head = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 6), 2 * rng.randrange(1, 5)
    E = rng.randrange(1, 5)
    doc = {"model_type": "llama4_text", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h_kv, "head_dim": d_head, "hidden_size": rng.randrange(4, 24),
           "intermediate_size": rng.randrange(2, 20), "intermediate_size_mlp": rng.randrange(2, 30),
           "num_local_experts": E, "num_experts_per_tok": rng.randrange(1, E + 1), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.3, "attention_bias": rng.random() < 0.3,
           "use_qk_norm": rng.random() < 0.7, "attn_temperature_tuning": rng.random() < 0.7,
           "attention_chunk_size": rng.choice([None, rng.randrange(2, 6)])}
    if rng.random() < 0.5:
        doc["no_rope_layers"] = [rng.choice([0, 1]) for _ in range(L)]
    else:
        doc["no_rope_layer_interval"] = rng.randrange(1, 4)
    if rng.random() < 0.5:
        doc["moe_layers"] = sorted(rng.sample(range(L), rng.randrange(0, L + 1)))
    else:
        doc["interleave_moe_layer_step"] = rng.randrange(1, 3)
    return doc


def _mixed(doc: dict) -> bool:
    try:
        from_hf(doc)
    except HFConfigError as e:
        return "lists dense and MoE blocks alike" in str(e)
    return False


def test_nope_blocks_of_two_mlp_kinds_are_refused_in_one_line():
    """Llama 4's layouts put every NoPE block in one kind of MLP (Scout: every block MoE; Maverick: MoE blocks 1, 3,
    …, NoPE blocks 3, 7, …); a file that mixes them is refused, naming the limit, never read with a wrong figure."""
    with pytest.raises(HFConfigError, match="lists dense and MoE blocks alike: this explorer counts NoPE blocks of one "
                                            "kind of MLP"):
        from_hf({**TINY, "moe_layers": [1], "no_rope_layers": [1, 0, 1, 0]})


def every_expert(doc: dict, cfg: Config) -> int:
    """The FLOPs transformers' module adds running the E − k experts each token's router did not choose: 6·d·d_expert
    a token and expert (W_gate, W_up, W_down) in every MoE block."""
    if cfg.experts is None:
        return 0
    return cfg.L_moe * (cfg.E - cfg.k) * cfg.B * cfg.T * 6 * cfg.d * cfg.d_expert


@pytest.mark.parametrize("seed", range(10))
def test_random_files_match_transformers_parameters_cache_and_flops(seed):
    rng = random.Random(f"llama4-{seed}")
    doc = llama4_doc(rng)
    while _mixed(doc):  # NoPE blocks both dense and MoE: refused (test_nope_blocks_of_two_mlp_kinds_are_refused)
        doc = llama4_doc(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    cfg = from_hf(doc, B=B, T=T)
    N, kv, flops = measured(cfg)
    assert (N, kv, flops + every_expert(doc, cfg)) == reference(doc, B, T), doc


TINY = {"model_type": "llama4_text", "vocab_size": 40, "hidden_size": 32, "intermediate_size": 16,
        "intermediate_size_mlp": 24, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 8, "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10_000.0,
        "no_rope_layer_interval": 2, "attention_chunk_size": 3, "moe_layers": [], "pad_token_id": 0}


def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    """A dense Llama 4's weights in this module, q's and k's rows in this module's RoPE layout (`_halves`)."""
    ref, ours = copied.pair(doc)
    with torch.no_grad():
        for block, layer in zip(ours.blocks, ref.model.layers):
            a = layer.self_attn
            copied.attention(block, a, _halves(a.q_proj.weight, 4), _halves(a.k_proj.weight, 2))
            block.ln_1.weight.copy_(layer.input_layernorm.weight)
            block.ln_2.weight.copy_(layer.post_attention_layernorm.weight)
            copied.gated(block.mlp, layer.feed_forward)
    return ref, ours

def _halves(w: torch.Tensor, heads: int) -> torch.Tensor:
    """q's or k's projection with each head's rows reordered (0, 2, 4, …, 1, 3, …): Llama 4 rotates RoPE's pairs
    (2i, 2i + 1) as complex numbers, this module the halves (i, i + d_head/2), the same rotation of these rows (q·k
    unchanged)."""
    d_head = w.shape[0] // heads
    order = torch.cat([torch.arange(0, d_head, 2), torch.arange(1, d_head, 2)])
    return w.view(heads, d_head, -1)[:, order].reshape_as(w)


@pytest.mark.parametrize("more", [{}, {"attention_chunk_size": None}, {"use_qk_norm": False},
                                  {"no_rope_layers": [1, 1, 0, 1]}], ids=["chunks", "no-chunks", "no-qk-norm", "listed"])
def test_dense_llama4_logits_equal_transformers(more):
    """Weights copied (q's and k's rows in this module's RoPE layout): the same logits through chunks of 3 tokens,
    NoPE blocks and the QK-norm without a gain; with a sliding window in the chunks' place they differ."""
    ref, ours = _copied({**TINY, **more})
    with torch.no_grad():
        idx = torch.randint(0, 40, (2, 10))
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-4, rtol=1e-4)
        if ours.cfg.chunked:
            sliding = GPT(replace(ours.cfg, chunked=False)).eval()
            sliding.load_state_dict(ours.state_dict())
            assert not torch.allclose(sliding(idx)[0], expected, atol=1e-3)


def test_the_class_defaults_are_scouts_text_model():
    """Llama4TextConfig's defaults: Llama 4 Scout's text model, 107,769,861,120 parameters (transformers' module); 36
    chunked blocks with RoPE, 12 NoPE blocks of full attention, 16 experts and a shared one in every block."""
    reading = read_hf({"model_type": "llama4_text"})
    cfg = reading.config
    module = _module({"model_type": "llama4_text"}, "meta")
    assert budget(cfg).params_exact == sum(p.numel() for p in module.parameters()) == SCOUT_TEXT
    assert cfg.chunked and cfg.W == 8_192 and cfg.full_layers == cfg.nope_layers == tuple(range(3, 48, 4))
    assert cfg.qk_l2 and cfg.attn_temperature and (cfg.E, cfg.k, cfg.E_shared, cfg.L_moe) == (16, 1, 1, 48)
    assert any(n.startswith("chunked attention: chunks of W = 8,192 (attention_chunk_size) in 36 of the 48 blocks")
               for n in reading.notes)


def test_the_wrapper_reads_its_text_model_and_ties_as_it_does():
    """A llama4 file (Llama4ForConditionalGeneration): its text_config read as llama4_text, the head tied where
    text_config's own tie_word_embeddings says (the wrapper's is not read), the vision tower named as left out."""
    text = {k: v for k, v in TINY.items() if k != "model_type"}
    reading = read_hf({"model_type": "llama4", "tie_word_embeddings": True, "text_config": text})
    assert reading.config.tie is False and reading.config.chunked
    assert any("read as llama4_text" in n and "left out: the vision tower and the multimodal projector" in n
               for n in reading.notes)
    assert read_hf({"model_type": "llama4", "text_config": {**text, "tie_word_embeddings": True}}).config.tie


LIKE = Config(B=2, T=9, d=16, h=4, L=4, V=11, norm="rmsnorm", positions="rope", mlp="swiglu", bias="none", kv_heads=2,
              window=4, full_layers=(3,), chunked=True, nope_layers=(3,), qk_l2=True, attn_temperature=True,
              attention="eager")
LIKE_MOE = replace(LIKE, experts=3, top_k=1, expert_dim=6, shared_experts=1, moe_step=2)


@pytest.mark.parametrize("cfg", [LIKE, replace(LIKE, attention="fused"), LIKE_MOE, replace(LIKE_MOE, attention="fused")],
                         ids=["eager", "fused", "moe", "moe-fused"])
def test_saved_bytes_equal_autograd_on_cpu(cfg):
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_memory_formulas_hold_at_every_structure():
    """memory_lines checks each formula against the pass it measured (check_lines raises otherwise)."""
    for attention, kv, dtype, B, T, moe in itertools.product(("eager", "fused"), (1, 2), ("fp32", "bf16"), (1, 3),
                                                             (1, 2, 6), (False, True)):
        memory_lines(trace(replace(LIKE_MOE if moe else LIKE, attention=attention, kv_heads=kv, B=B, T=T), dtype))


def test_the_trace_the_reports_and_the_changes_name_it():
    rows = {r.name: r for r in trace(LIKE).rows}
    assert rows["blocks.0.attn.q_l2"].symbolic == "(B, h, T, d_head)" and "blocks.3.attn.q_l2" not in rows
    assert rows["blocks.3.attn.temperature"].symbolic == "(T, 1)" and "blocks.0.attn.temperature" not in rows
    assert rows["blocks.0.attn.masked"].label.startswith("chunk mask: −inf above the diagonal and before each query's")
    words = recipe_text(LIKE)
    assert "chunked attention (chunks of W = 4) on 3 of 4 blocks" in words and "QK-norm without a gain" in words
    step = next(s for s in changes(LIKE).steps if s.key == "window")
    assert step.title.startswith("chunked attention: chunks of W = 4 keys on L_W = 3 of the L = 4 blocks")


def test_the_chunks_mask_each_querys_own_chunk():
    from model.parts.attention import hidden_keys

    seen = ~hidden_keys(7, 7, 3, "cpu", chunked=True)
    assert [row.nonzero().flatten().tolist() for row in seen] == [[0], [0, 1], [0, 1, 2], [3], [3, 4], [3, 4, 5], [6]]


@pytest.mark.parametrize("doc, message", [
    ({**TINY, "layer_types": ["sliding_attention"] * 4}, "layer_types lists sliding_attention, which Llama 4's module"),
    ({**TINY, "attention_chunk_size": None, "layer_types": ["chunked_attention"] * 4},
     "layer_types lists chunked_attention but attention_chunk_size is null"),
    ({**TINY, "attention_chunk_size": 1}, "attention_chunk_size=1 lets each query see only itself"),
    ({"model_type": "mistral", "layer_types": ["chunked_attention"] * 32}, "layer_types lists chunked_attention, which "
                                                                           "mistral's module does not mask"),
    ({**TINY, "moe_layers": [1.5]}, "moe_layers=.*must be a list of block indices"),
])
def test_files_its_module_cannot_run_are_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)


def test_the_scout_preset_is_its_text_model_on_every_surface(capsys):
    """Preset llama4-scout: Llama4TextConfig's defaults (Scout's text model) with its 10,485,760-token context, N =
    107,769,861,120 as transformers' module counts it, 17,172,894,720 a token uses (the card's "17B active"; its "109B
    total" counts the vision encoder, which no figure here does); the CLI prints the same."""
    from model import PRESETS
    from pagetools import run_cli

    scout = PRESETS["llama4-scout"]
    doc = {"model_type": "llama4_text", "max_position_embeddings": 10_485_760}
    module = _module(doc, "meta")
    b = budget(scout)
    assert b.params_exact == sum(p.numel() for p in module.parameters()) == SCOUT_TEXT
    assert budget(from_hf(doc)).params_exact == SCOUT_TEXT
    assert b.as_dict()["params_active"] == 17_172_894_720
    status, out, _ = run_cli(["--preset", "llama4-scout", "--table", "budget", "--json"], capsys)
    assert status == 0 and json.loads(out)["budget"]["params_exact"] == SCOUT_TEXT
