"""GPT-J (gptj) and CodeGen (codegen): one LayerNorm read by a parallel block (x + Attn(ln(x)) + MLP(ln(x))), RoPE on
the first rotary_dim features of each head, biases on the MLP, the LayerNorm and the head only. Random small files
read as transformers reads them: N on the meta device, the bytes of its real cache after a prefill and forward FLOPs
equal to FlopCounterMode on its eager CPU forward; GPT-J's logits equal with the weights copied in (its interleaved
RoPE pairs as this module's halves: the same permutation of q's and k's rotated features); the refusals.
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
from model.config import HFConfigError, from_hf
from model.passes import saved_bytes_of
from test_window import _module, measured, reference


def gptj_doc(rng: random.Random, model_type: str) -> dict:
    """A tiny GPT-J or CodeGen: heads (a multiple of 4 for CodeGen's groups), widths, the tie and rotary_dim (even, up
    to d_head: all of it rotates every feature) drawn."""
    h = rng.choice([4, 8]) if model_type == "codegen" else rng.randrange(1, 5)
    d_head = 2 * rng.randrange(1, 5)
    return {"model_type": model_type, "vocab_size": rng.randrange(8, 60), "n_layer": rng.randrange(1, 4),
            "n_head": h, "n_embd": h * d_head, "n_inner": rng.choice([None, rng.randrange(2, 40)]),
            "n_positions": 64, "tie_word_embeddings": rng.random() < 0.3,
            "rotary_dim": 2 * rng.randrange(1, d_head // 2 + 1),
            "activation_function": rng.choice(["gelu_new", "gelu"])}


SWEEP = [(t, i) for t in ("gptj", "codegen") for i in range(5)]


@pytest.mark.parametrize("model_type, seed", SWEEP, ids=[f"{t}-{i}" for t, i in SWEEP])
def test_random_files_match_transformers_parameters_cache_and_flops(model_type, seed):
    rng = random.Random(f"{model_type}-{seed}")
    doc = gptj_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T), doc


@pytest.mark.parametrize("model_type", ["gptj", "codegen"])
def test_the_class_defaults_are_their_modules(model_type):
    """GPTJConfig's and CodeGenConfig's defaults (GPT-J 6B's and CodeGen 6B's shape): N = transformers' module =
    6,050,882,784."""
    doc = {**json.loads(CONFIG_MAPPING[model_type]().to_json_string()), "model_type": model_type}
    cfg = from_hf(doc)
    assert budget(cfg).params_exact == sum(p.numel() for p in _module(doc, "meta").parameters()) == 6_050_882_784
    assert (cfg.parallel, cfg.head_bias, cfg.norm_biased, cfg.bias, cfg.rotary_dim) == (True, True, True, "mlp", 64)


TINY = {"model_type": "gptj", "vocab_size": 40, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64,
        "rotary_dim": 4}


@torch.no_grad()
def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    """GPT-J's weights in this module, q's and k's rows of each head's rotated features reordered (0, 2, 4, …, 1, 3,
    …): its pairs (2j, 2j + 1) become this module's (j, j + d_rot/2), at the same frequency."""
    torch.manual_seed(0)
    ref = _module(doc, "cpu").eval()
    for p in ref.parameters():
        p.normal_(0, 0.3)
    ours = GPT(replace(from_hf(doc, B=2, T=10), attention="eager")).eval()
    t = ref.transformer
    ours.wte.weight.copy_(t.wte.weight)
    ours.ln_f.load_state_dict(t.ln_f.state_dict())
    ours.head.load_state_dict(ref.lm_head.state_dict())
    h, rot, d = doc["n_head"], doc["rotary_dim"], doc["n_embd"]
    d_head = d // h
    order = [*range(0, rot, 2), *range(1, rot, 2), *range(rot, d_head)]
    for block, layer in zip(ours.blocks, t.h):
        a = layer.attn
        q, k = (w.weight.view(h, d_head, d)[:, order].reshape(d, d) for w in (a.q_proj, a.k_proj))
        block.attn.qkv.weight.copy_(torch.cat([q, k, a.v_proj.weight]))
        block.attn.proj.weight.copy_(a.out_proj.weight)
        block.ln_1.load_state_dict(layer.ln_1.state_dict())
        block.mlp.fc.load_state_dict(layer.mlp.fc_in.state_dict())
        block.mlp.proj.load_state_dict(layer.mlp.fc_out.state_dict())
    return ref, ours


def test_gptj_logits_equal_transformers():
    """Weights copied: the same logits; without the reorder (pairs of other features rotated) they differ."""
    ref, ours = _copied(TINY)
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-4, rtol=1e-4)
        q = ours.blocks[0].attn.qkv.weight[:32].view(4, 8, 32)
        q[:, :4] = q[:, [0, 2, 1, 3]]  # undo the reorder in one block
        assert not torch.allclose(ours(idx)[0], expected, atol=1e-3)


@pytest.mark.parametrize("attention", ["eager", "fused"])
def test_saved_bytes_equal_autograd_on_cpu(attention):
    cfg = replace(from_hf(TINY, B=2, T=7), attention=attention)
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


@pytest.mark.parametrize("doc, message", [
    ({"model_type": "gptj", "rotary_dim": 3}, "rotary_dim=3: gptj's attention rotates pairs"),
    ({"model_type": "gptj", "rotary_dim": 512}, "must be even and from 2 to 256"),
    ({"model_type": "codegen", "n_head": 6, "n_embd": 384}, "CodeGen's fused q, k and v are laid out in 4 groups"),
])
def test_files_their_modules_cannot_run_are_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)
