"""OLMo 1, 2 and 3 (issue 40). OLMo 1: LayerNorms of neither a gain nor a bias (`norm_plain`), its logits, N, rows,
line, notices and changes step. OLMo 2 and 3: post-norm wiring (`model.parts.postnorm`: x = x + ln_1(Attn(x)); x = x + ln_2(MLP(x))) and
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


OLMO1 = {"model_type": "olmo", "vocab_size": 40, "hidden_size": 32, "intermediate_size": 24, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "attention_bias": True,
         "rope_parameters": {"rope_type": "default", "rope_theta": 10_000.0}}


def test_olmo1s_logits_equal_transformers_with_norms_of_no_parameters():
    """Weights copied (its norms have none): the same logits; with gains (LayerNorm's own, ones) they are the same
    numbers from more parameters, with GPT-2's LayerNorm set to other gains they differ."""
    ref, ours = copied.pair(OLMO1)
    with torch.no_grad():
        for block, layer in zip(ours.blocks, ref.model.layers):
            copied.attention(block, layer.self_attn)
            copied.gated(block.mlp, layer.mlp)
        idx = torch.randint(0, 40, (2, 10))
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-5, rtol=1e-5)
        gained = GPT(replace(ours.cfg, norm_plain=False))
        gained.load_state_dict(ours.state_dict(), strict=False)
        for m in gained.modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.fill_(2.0)
        assert not torch.allclose(gained(idx)[0], expected, atol=1e-2)
    assert [p for n, p in ours.named_parameters() if "ln" in n] == []
    assert budget(ours.cfg).params_exact == sum(p.numel() for p in ref.parameters())


def test_olmo1s_class_defaults_line_words_and_changes_step():
    from model.changes import changes

    cfg = from_hf({"model_type": "olmo"})
    assert (cfg.norm, cfg.norm_plain, cfg.mlp, cfg.bias) == ("layernorm", True, "swiglu", "none")
    b = budget(cfg)
    assert b.params_exact == 6_888_095_744 and b.line("params/norms").value == 0
    assert b.line("params/norms").label == ("LayerNorms without a gain or a bias (no parameters), 2 per block and a "
                                            "final one")
    assert recipe_text(cfg).startswith("LayerNorm without a gain or a bias, RoPE")
    step = next(s for s in changes(replace(cfg, B=1, T=8)).steps if s.key == "bias")
    assert step.title == ("no biases on the linears; the norms lose their gains too (no parameters: OLMo 1's "
                          "LayerNorms, nanochat's RMSNorms)")
    d = 4_096  # from the twin's: each block's biases (W_qkv 3d, W_o d, the MLP's 4d and d at the twin's 4d) and
    assert step.lines[0].value == -(32 * (9 * d + 2 * 2 * d) + 2 * d)  # LayerNorms' gains and biases, 2 a block + 1
    assert "norm" not in {s.key for s in changes(replace(cfg, B=1, T=8)).steps}  # LayerNorm it stays


@pytest.mark.parametrize("change, notice", [({"bias": "all"}, "bias = all gives every LayerNorm its gain and bias")])
def test_the_page_drops_norm_plain_where_the_norms_keep_parameters(change, notice):
    from model.rules import settle

    olmo = from_hf({"model_type": "olmo"})
    asked = {**{k: getattr(olmo, k) for k in ("B", "T", "d", "h", "L", "V", "T_max", "tie", "norm", "positions",
                                              "mlp", "bias")}, "norm_plain": True}
    cfg, notes = settle({**asked, **change})
    assert not cfg.norm_plain and notes == [f"norms without a gain or a bias (norm_plain) dropped: {notice}"]
    assert settle(asked)[0].norm_plain and settle(asked)[1] == []
    rms, notes = settle({**asked, "norm": "rmsnorm"})  # RMSNorms without a gain (nanochat's): kept
    assert rms.norm_plain and notes == [] and budget(rms).line("params/norms").value == 0


@pytest.mark.parametrize("fields, message", [
    ({"bias": "all"}, "norm_plain is set with bias=all"),
    ({"bias": "none", "norm_biased": True}, "norm_plain is set with norm_biased"),
])
def test_norms_of_no_parameters_beside_what_gives_them_some_are_refused_in_one_line(fields, message):
    with pytest.raises(ValueError, match=message) as e:
        Config(B=1, T=4, d=16, h=4, L=2, V=11, **{"norm": "layernorm", "norm_plain": True, **fields})
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("attention", ["eager", "fused"])
def test_olmo1s_saved_bytes_equal_autograd_on_cpu(attention):
    """At fp32 (the CPU's bf16 LayerNorm keeps other statistics than the meta device's, as for every LayerNorm)."""
    cfg = replace(from_hf(OLMO1, B=2, T=7), attention=attention)
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes
