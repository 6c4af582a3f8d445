"""OLMo 2 and 3 (issue 40): post-norm wiring (`model.parts.postnorm`: x = x + ln_1(Attn(x)); x = x + ln_2(MLP(x))) and
QK-norm over all heads' width (`qk_norm_wide`: an RMSNorm over h·d_head on q, h_kv·d_head on k, before the heads are
split). With transformers' weights copied in, this module gives its logits; saved bytes equal autograd's on real CPU
tensors; the trace, the recipe's words and the command line name both. Random files against transformers' parameters,
cache and FLOPs: tests/test_families.py."""
from __future__ import annotations

import json
from dataclasses import replace

import copied
import pytest
import torch

from model import GPT, budget, trace
from model.config import Config, HFConfigError, from_hf, read_hf
from model.passes import saved_bytes_of
from model.report import recipe_text
from pagetools import run_cli

TINY = {"model_type": "olmo2", "vocab_size": 40, "hidden_size": 32, "intermediate_size": 24, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
        "rope_theta": 10_000.0}  # this module's RMSNorm ε and RoPE base


def _copied(doc: dict) -> tuple[torch.nn.Module, GPT]:
    """OLMo's weights in this module: its norms on each output are this module's post-norm ln_1 and ln_2."""
    ref, ours = copied.pair(doc)
    with torch.no_grad():
        for block, layer in zip(ours.blocks, ref.model.layers):
            copied.attention(block, layer.self_attn)
            block.attn.q_norm.weight.copy_(layer.self_attn.q_norm.weight)
            block.attn.k_norm.weight.copy_(layer.self_attn.k_norm.weight)
            block.ln_1.weight.copy_(layer.post_attention_layernorm.weight)
            block.ln_2.weight.copy_(layer.post_feedforward_layernorm.weight)
            copied.gated(block.mlp, layer.mlp)
    return ref, ours

def test_olmo2s_logits_equal_transformers():
    """Weights copied: the same logits; wired pre-norm, or with QK-norm per head, they differ."""
    ref, ours = _copied(TINY)
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-5, rtol=1e-5)
        pre = GPT(replace(ours.cfg, post_norm=False))
        pre.load_state_dict(ours.state_dict())
        assert not torch.allclose(pre(idx)[0], expected, atol=1e-2)
    assert tuple(ours.blocks[0].attn.q_norm.weight.shape) == (4 * 8,)  # h·d_head, not d_head
    assert tuple(ours.blocks[0].attn.k_norm.weight.shape) == (2 * 8,)  # h_kv·d_head


def test_olmo3s_windowed_blocks_give_transformers_logits():
    doc = {**TINY, "model_type": "olmo3", "num_hidden_layers": 4, "sliding_window": 3,
           "rope_parameters": dict.fromkeys(("full_attention", "sliding_attention"),
                                            {"rope_type": "default", "rope_theta": 10_000.0})}  # θ per kind of block
    ref, ours = _copied(doc)
    assert ours.cfg.window == 3 and ours.cfg.full_layers == (3,)
    idx = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        torch.testing.assert_close(ours(idx)[0], ref(input_ids=idx).logits, atol=1e-5, rtol=1e-5)


LIKE_OLMO = Config(B=2, T=7, d=16, h=4, L=2, V=11, norm="rmsnorm", positions="rope", mlp="swiglu", bias="none",
                   kv_heads=2, post_norm=True, qk_norm_wide=True, attention="eager")


@pytest.mark.parametrize("cfg", [LIKE_OLMO, replace(LIKE_OLMO, attention="fused"), replace(LIKE_OLMO, kv_heads=1)],
                         ids=["eager", "fused", "mqa"])
def test_saved_bytes_equal_autograd_on_cpu(cfg):
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_trace_the_reports_and_the_cli_name_it(capsys):
    rows = {r.local: r for r in trace(LIKE_OLMO).rows}
    assert "on attention's output (post-norm)" in rows["ln_1"].label and "x + ln_2(MLP(x))" in rows["resid_2"].label
    assert rows["attn.q_norm"].symbolic == "(B, T, h·d_head)" and rows["attn.k_norm"].symbolic == "(B, T, h_kv·d_head)"
    words = recipe_text(LIKE_OLMO)
    assert "post-norm (a norm on each output, none before)" in words and "QK-norm over all heads" in words
    # the norms move, the count stays; the wide QK-norm's gains are (h + h_kv)·d_head = 24 a block
    assert budget(LIKE_OLMO).params_exact == budget(replace(LIKE_OLMO, post_norm=False, qk_norm_wide=False)) \
        .params_exact + 2 * 24
    status, out, _ = run_cli(["--preset", "llama3.2-1b", "--post-norm", "--qk-norm-wide", "--json"], capsys)
    doc = json.loads(out)
    assert status == 0 and doc["config"]["post_norm"] is True and doc["config"]["qk_norm_wide"] is True


@pytest.mark.parametrize("fields, message", [
    ({"post_norm": True, "parallel": True}, "post_norm and parallel each wire the block their own way"),
    ({"qk_norm": True, "qk_norm_wide": True}, "are three QK-norms: set one of them"),
])
def test_two_wirings_or_two_qk_norms_are_refused_in_one_line(fields, message):
    with pytest.raises(ValueError, match=message):
        replace(LIKE_OLMO, **{"post_norm": False, "qk_norm_wide": False, **fields})


def test_a_file_says_what_it_read():
    notes = read_hf({"model_type": "olmo3", "num_hidden_layers": 8}).notes
    assert any(n.startswith("a sliding window W = 4,096") and "6 of the 8 blocks" in n for n in notes)
    with pytest.raises(HFConfigError, match="layer_types lists sliding_attention blocks but no window applies"):
        from_hf({"model_type": "olmo3", "sliding_window": None, "layer_types": ["sliding_attention"] * 32})
