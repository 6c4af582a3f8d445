"""Gemma 1, Gemma 2 and Gemma 3's text model (issue 27, stage 2; Gemma 1 issue 40) against transformers: the presets to the parameter from their
published config.json, a random sweep of tiny gemma2 and gemma3_text files (parameters on the meta device, the real
cache's bytes after a prefill, FlopCounterMode on the eager forward), Gemma 2's logits with its weights copied, saved
bytes against autograd, and the tensors its extras add to the trace."""
from __future__ import annotations

import json
import logging
import random
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from model import GPT, budget, trace
from model.config import TABLE_PRESETS, Config, from_hf, read_hf
from model.memory import kv_cache_lines
from model.passes import saved_bytes_of
from pagetools import run_cli
from test_window import _module, reference

CONFIGS = Path(__file__).parent / "hf" / "published"  # the published files, with transformers' counts (its README)
logging.getLogger("transformers").setLevel(logging.ERROR)
PRESET_COUNTS = {"gemma-3-1b": 999_885_952, "gemma-3-27b": 27_009_346_304}


@pytest.mark.parametrize("name", PRESET_COUNTS)
def test_the_presets_are_their_published_files_to_the_parameter(name):
    doc = json.loads((CONFIGS / f"{name}.json").read_text())
    counts = json.loads((CONFIGS / "counts.json").read_text())
    preset = TABLE_PRESETS[name]
    assert read_hf(doc, B=preset.B, T=preset.T).config == preset
    assert budget(preset).params_exact == PRESET_COUNTS[name] == counts[name]["parameters"]


def test_gemma_3_27b_caches_its_windowed_blocks_w_minus_1_tokens():
    cfg = TABLE_PRESETS["gemma-3-27b"]  # 52 of 62 blocks windowed, W = 1,024; 16 K/V heads of 128 at bf16
    lines = {x.key: x.value for x in kv_cache_lines(cfg, "bf16")}
    assert (cfg.L_W, cfg.W, cfg.T) == (52, 1_024, 8_192)
    assert lines["memory/kv_cache_window"] == 2 * 52 * cfg.B * 1_023 * 16 * 128 * 2
    assert lines["memory/kv_cache_per_token"] == 2 * 10 * 16 * 128 * 2  # 81,920: the 10 full blocks
    assert lines["memory/kv_cache"] == lines["memory/kv_cache_window"] + 2 * 10 * cfg.B * 8_192 * 16 * 128 * 2


def random_doc(rng: random.Random, model_type: str) -> dict:
    h_kv = rng.choice([1, 2])
    h, L = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 5)
    doc = {"model_type": model_type, "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(4, 40),
           "hidden_size": h * rng.randrange(1, 5), "head_dim": 2 * rng.randrange(1, 5), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.7, "sliding_window": rng.randrange(1, 10),
           "query_pre_attn_scalar": rng.randrange(1, 300), "attention_bias": rng.random() < 0.3,
           "final_logit_softcapping": rng.choice([None, 30.0])}
    if model_type == "gemma":  # Gemma 1: no window, no soft-caps, no query_pre_attn_scalar
        for key in ("sliding_window", "query_pre_attn_scalar", "final_logit_softcapping"):
            del doc[key]
        doc["hidden_act"] = rng.choice(["gelu", "gelu_pytorch_tanh"])
    elif model_type == "gemma2":
        doc["attn_logit_softcapping"] = rng.choice([None, 50.0])
    else:
        doc["sliding_window_pattern"] = rng.randrange(1, 4)
    return doc


SWEEP = [(t, i) for t in ("gemma", "gemma2", "gemma3_text") for i in range(4)]


@pytest.mark.parametrize("model_type, seed", SWEEP, ids=[f"{t}-{i}" for t, i in SWEEP])
def test_random_gemma_files_match_transformers_parameters_cache_and_flops(model_type, seed):
    rng = random.Random(f"gemma-{model_type}-{seed}")
    doc = random_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 13)
    try:
        expected = reference(doc, B, T)
    except ValueError:  # transformers refuses (Gemma 3's every block full: no window to build) and so must we
        with pytest.raises(ValueError):
            from_hf(doc, B=B, T=T)
        return
    cfg = from_hf(doc, B=B, T=T)
    b = budget(cfg)
    assert (b.params_exact, kv_cache_lines(cfg, "fp32")[0].value, b.flops_fwd_measured_per_token * B * T) == expected


GEMMA2 = {"model_type": "gemma2", "vocab_size": 40, "hidden_size": 24, "intermediate_size": 20, "num_hidden_layers": 3,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 64,
          "sliding_window": 4, "query_pre_attn_scalar": 12, "final_logit_softcapping": 3.0,
          "attn_logit_softcapping": 2.0, "rms_norm_eps": 1e-5}  # small caps, so that they bind; this module's ε


def test_gemma_2s_logits_equal_transformers():
    """Weights copied (Gemma's RMSNorm gain is 1 + g): the same logits through GeGLU, sandwich norms, tok · √d, a
    window of 4 on every other block, 1/√query_pre_attn_scalar and both soft-caps."""
    torch.manual_seed(0)
    ref = _module(GEMMA2, "cpu").eval()
    cfg = from_hf(GEMMA2, B=2, T=10)
    assert (cfg.attention, cfg.attn_kinds) == ("eager", ("sliding", "full", "sliding"))
    ours = GPT(cfg).eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.3)
        ours.wte.weight.copy_(ref.model.embed_tokens.weight)
        ours.ln_f.weight.copy_(1 + ref.model.norm.weight)
        for block, layer in zip(ours.blocks, ref.model.layers):
            a, m = layer.self_attn, layer.mlp
            block.attn.qkv.weight.copy_(torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]))
            block.attn.proj.weight.copy_(a.o_proj.weight)
            for ours_norm, theirs in ((block.ln_1, layer.input_layernorm), (block.post_ln_1, layer.post_attention_layernorm),
                                      (block.ln_2, layer.pre_feedforward_layernorm),
                                      (block.post_ln_2, layer.post_feedforward_layernorm)):
                ours_norm.weight.copy_(1 + theirs.weight)
            block.mlp.gate.weight.copy_(m.gate_proj.weight)
            block.mlp.up.weight.copy_(m.up_proj.weight)
            block.mlp.proj.weight.copy_(m.down_proj.weight)
        idx = torch.randint(0, 40, (2, 10))
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-5, rtol=1e-5)
        uncapped = GPT(replace(cfg, attn_softcap=None, final_softcap=None))
        uncapped.load_state_dict(ours.state_dict())
        assert not torch.allclose(uncapped(idx)[0], expected, atol=1e-2)  # the caps bind: values, not shapes


LIKE_GEMMA = Config(B=2, T=9, d=16, h=4, L=3, V=10, norm="rmsnorm", positions="rope", mlp="geglu", bias="none",
                    kv_heads=2, head_dim=8, qk_norm=True, post_norms=True, embed_scale=True, query_scale=12,
                    final_softcap=30.0, window=4, full_layers=(2,), attention="fused")


@pytest.mark.parametrize("cfg", [LIKE_GEMMA, replace(LIKE_GEMMA, attention="eager", attn_softcap=50.0)],
                         ids=["fused", "eager-softcap"])
def test_saved_bytes_equal_autograd_on_cpu(cfg):
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_trace_shows_what_gemma_adds():
    rows = {r.local: r for r in trace(replace(LIKE_GEMMA, attention="eager", attn_softcap=50.0)).rows}
    assert rows["scaled"].symbolic == "(B, T, d)" and "√d" in rows["scaled"].label
    assert rows["attn.capped"].symbolic == "(B, h, T, T)" and "c·tanh(scores / c)" in rows["attn.capped"].label
    assert {"post_ln_1", "post_ln_2", "post_ln_1.rstd"} <= set(rows) and rows["capped"].symbolic == "(B, T, V)"
    assert rows["mlp.gated"].label == "GELU(gate) · up"
    assert budget(LIKE_GEMMA).line("params/norms").formula == "(4L + 1)·d"


def test_config_refuses_what_it_cannot_build():
    with pytest.raises(ValueError, match="attn_softcap=50 soft-caps the scores, which a fused kernel never makes"):
        replace(LIKE_GEMMA, attn_softcap=50.0)
    with pytest.raises(ValueError, match="GeGLU experts are not modelled"):
        replace(LIKE_GEMMA, experts=4, top_k=2, expert_dim=8)
    with pytest.raises(ValueError, match="query_scale=0 is out of range: query_scale .* must be from 1 to 1,048,576"):
        replace(LIKE_GEMMA, query_scale=0)
    with pytest.raises(ValueError, match="query_scale must be a whole number from 1 to 1,048,576, got 2.5"):
        replace(LIKE_GEMMA, query_scale=2.5)


def test_the_cli_takes_the_presets_and_the_live_page_reads_gemma(tmp_path, capsys):
    from app.cards.recipe.view import read_config_json

    code, out, _ = run_cli(["--preset", "gemma-3-1b", "--table", "kv", "--json", "--dtype", "bf16"], capsys)
    kv = {x["key"]: x["value"] for x in json.loads(out)["kv"]}
    assert code == 0 and kv["memory/kv_cache_window"] == 2 * 22 * 8 * 511 * 256 * 2  # W − 1 = 511, h_kv·d_head = 256
    doc = {**GEMMA2, "sliding_window": None, "layer_types": ["full_attention"] * 3}
    cfg, notice = read_config_json(json.dumps(doc), Config(B=2, T=8, d=24, h=4, L=1, V=40))
    assert cfg.gemma and cfg.mlp == "geglu" and notice.startswith("read gemma2 config.json")


@pytest.mark.parametrize("table", ["shapes", "budget", "train", "changes"])
def test_every_table_prints_for_a_windowed_gemma(table, tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**GEMMA2, "model_type": "gemma3_text", "attn_logit_softcapping": None,
                                "sliding_window_pattern": 2}))
    code, out, err = run_cli(["--hf-config", str(path), "--table", table, "--T", "9"], capsys)
    assert code == 0 and "Traceback" not in err and "N = " in out
    if table == "changes":
        assert "Gemma's extras: sandwich norms" in out and "a window of W = 4 on 2 of 3 blocks" in out


@pytest.mark.parametrize("cfg", [LIKE_GEMMA, replace(LIKE_GEMMA, attention="eager", attn_softcap=50.0)],
                         ids=["fused", "eager-softcap"])
def test_each_phases_peak_equals_a_full_depth_step_on_the_meta_device(cfg):
    """The training step's peaks of one windowed block of each kind (the plan's) against all L blocks, two windowed
    and one full, on the meta device."""
    from model.training import TrainSetup, step_phases
    from test_training import meta_step

    predicted = {x.name: x.value for x in step_phases(cfg, TrainSetup(optimizer="adam-fp32", gpus=1))}
    measured = meta_step(cfg, "fp32")
    assert max(predicted["forward"], predicted["loss"]) == measured["forward"]
    assert predicted["backward"] == measured["backward"] and predicted["optimizer"] == measured["optimizer"]
