"""nanochat (nanochat): RMSNorms without a gain (`norm_plain`), one more on the token embeddings before the first block
(`embed_norm`), QK-norm without a gain after RoPE (`qk_l2`), a ReLU² MLP and soft-capped logits. Random small files
read as transformers reads them: N on the meta device, the bytes of its real cache after a prefill and forward FLOPs
equal to FlopCounterMode on its eager CPU forward; logits equal with the weights copied in; saved bytes equal
autograd's; the embeddings' norm in the rows, the lines, the words and the changes card.
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
from model.changes import changes
from model.config import Config, from_hf
from model.passes import saved_bytes_of
from model.report import recipe_text
from test_window import _module, measured, reference


def nanochat_doc(rng: random.Random) -> dict:
    h_kv = rng.choice([1, 2])
    h, d_head = h_kv * rng.choice([1, 2, 3]), 2 * rng.randrange(1, 5)
    return {"model_type": "nanochat", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
            "num_attention_heads": h, "num_key_value_heads": h_kv, "hidden_size": h * d_head,
            "intermediate_size": rng.randrange(2, 40), "max_position_embeddings": 64, "pad_token_id": 0,
            "tie_word_embeddings": rng.random() < 0.3, "attention_bias": rng.random() < 0.5,
            "final_logit_softcapping": rng.choice([None, 15.0])}


@pytest.mark.parametrize("seed", range(5))
def test_random_files_match_transformers_parameters_cache_and_flops(seed):
    rng = random.Random(f"nanochat-{seed}")
    doc = nanochat_doc(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T), doc


def test_the_class_defaults_are_its_module():
    """NanoChatConfig's defaults (nanochat d12): N = transformers' module = 256,573,440, no norm with a parameter."""
    doc = {**json.loads(CONFIG_MAPPING["nanochat"]().to_json_string()), "model_type": "nanochat"}
    cfg = from_hf(doc)
    assert budget(cfg).params_exact == sum(p.numel() for p in _module(doc, "meta").parameters()) == 256_573_440
    assert (cfg.norm_plain, cfg.embed_norm, cfg.qk_l2, cfg.mlp, cfg.final_softcap) == (True, True, True, "relu2", 15.0)


TINY = {"model_type": "nanochat", "vocab_size": 40, "hidden_size": 32, "intermediate_size": 24, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "pad_token_id": 0,
        "rms_norm_eps": 1e-5}  # this module's ε


@torch.no_grad()
def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    """nanochat's weights in this module, the second half of each head's q and k rows negated: its RoPE turns q and k
    the other way (a value), and (x1, −x2) turned this module's way is its turn of (x1, x2) with the second half
    negated, which q · k and the norms after RoPE do not see."""
    ref, ours = copied.pair(doc)
    d_head = doc["hidden_size"] // doc["num_attention_heads"]
    turn = torch.ones(d_head)
    turn[d_head // 2:] = -1  # its rotate_half turns the other way: (x1, −x2) rotated as this module rotates

    def turned(w: torch.Tensor) -> torch.Tensor:
        return (w.view(-1, d_head, *w.shape[1:]) * turn.view(1, d_head, *([1] * (w.dim() - 1)))).reshape(w.shape)

    for block, layer in zip(ours.blocks, ref.model.layers):
        a = layer.self_attn
        block.attn.qkv.weight.copy_(torch.cat([turned(a.q_proj.weight), turned(a.k_proj.weight), a.v_proj.weight]))
        block.attn.proj.weight.copy_(a.o_proj.weight)
        block.mlp.fc.weight.copy_(layer.mlp.fc1.weight)
        block.mlp.proj.weight.copy_(layer.mlp.fc2.weight)
    return ref, ours


def test_logits_equal_transformers_and_the_embeddings_norm_matters():
    """Weights copied (its norms have none): the same logits; without the norm on the token embeddings, or without
    its QK-norm, they differ (a gainless QK-norm commutes with RoPE's rotation: before or after is one)."""
    ref, ours = _copied(TINY)
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-4, rtol=1e-4)
        for other in (replace(ours.cfg, embed_norm=False), replace(ours.cfg, qk_l2=False)):
            model = GPT(other).eval()
            model.load_state_dict(ours.state_dict(), strict=False)
            assert not torch.allclose(model(idx)[0], expected, atol=1e-3)


@pytest.mark.parametrize("attention", ["eager", "fused"])
@pytest.mark.parametrize("norm", ["rmsnorm", "layernorm"])
def test_saved_bytes_equal_autograd_on_cpu(attention, norm):
    """nanochat's, and a norm with parameters on the embeddings (a LayerNorm with biases: BLOOM's)."""
    cfg = replace(from_hf(TINY, B=2, T=7), attention=attention)
    if norm == "layernorm":
        cfg = replace(cfg, norm="layernorm", norm_plain=False, bias="all", qk_l2=False)
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_embeddings_norm_in_the_rows_lines_words_and_changes():
    cfg = from_hf(TINY, B=1, T=8)
    rows = [r.local for r in trace(cfg).rows]
    assert rows[:6] == ["idx", "wte", "rope.angles", "rope.cos", "rope.sin", "ln_e.rstd"] and rows[6] == "ln_e"
    assert {r.local: r.label for r in trace(cfg).rows}["ln_e"] == ("RMSNorm of the token embeddings, before the first "
                                                                  "block")
    assert budget(cfg).line("params/norms").label == ("RMSNorms without a gain or a bias (no parameters), 2 per block, "
                                                      "one on the token embeddings and a final one")
    assert recipe_text(cfg).startswith("RMSNorm without a gain or a bias, a norm on the token embeddings, RoPE")
    titles = {s.key: s.title for s in changes(cfg).steps}
    assert titles["norm"].endswith("and one more on the token embeddings, before the first block (nanochat's)")
    with_gains = Config(B=1, T=8, d=16, h=4, L=3, V=11, norm="rmsnorm", embed_norm=True)
    assert budget(with_gains).line("params/norms").value == (2 * 3 + 2) * 16  # 2 a block, the embeddings', the last
    layer = replace(with_gains, norm="layernorm")
    assert {s.key: s.title for s in changes(layer).steps}["norm"] == ("one more LayerNorm, on the token embeddings "
                                                                      "before the first block")
