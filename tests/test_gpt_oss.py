"""gpt-oss (issue 27, stage 3) against transformers: the preset to the parameter from its published config.json, a random
sweep of tiny gpt_oss files (parameters on the meta device, the real cache's bytes after a prefill, FlopCounterMode on
the eager forward with eager experts), logits with its weights copied (sinks, biases, the clamped SwiGLU), saved bytes
against autograd, and the tensors the sinks add to the trace."""
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
from test_moe import _module  # eager experts on the CPU, batched on the meta device
from test_window import copy_shared_weights, reference as windowed_reference

transformers = pytest.importorskip("transformers")

CONFIGS = Path(__file__).parent / "hf" / "published"  # the published files, with transformers' counts (its README)
logging.getLogger("transformers").setLevel(logging.ERROR)
GPT_OSS_20B = 20_914_757_184


def reference(doc: dict, B: int, T: int) -> tuple[int, int, int]:
    """transformers' gpt_oss module of `doc`: parameters on the meta device, its real cache's bytes after a prefill at
    B, T, and FlopCounterMode on its eager CPU forward with eager experts (`test_window.reference`)."""
    return windowed_reference(doc, B, T, build=_module)


def test_gpt_oss_20b_is_its_published_file_to_the_parameter():
    doc = json.loads((CONFIGS / "gpt-oss-20b.json").read_text())
    counts = json.loads((CONFIGS / "counts.json").read_text())
    preset = TABLE_PRESETS["gpt-oss-20b"]
    reading = read_hf(doc, B=preset.B, T=preset.T)
    assert reading.config == preset
    assert budget(preset).params_exact == GPT_OSS_20B == counts["gpt-oss-20b"]["parameters"]
    assert any("sinks join each softmax row" in note for note in reading.notes)
    lines = {x.key: x.value for x in kv_cache_lines(preset, "bf16")}  # 12 of 24 blocks keep W − 1 = 127 tokens
    assert lines["memory/kv_cache_per_token"] == 2 * 12 * 8 * 64 * 2
    assert lines["memory/kv_cache_window"] == 2 * 12 * preset.B * 127 * 8 * 64 * 2


def random_doc(rng: random.Random) -> dict:
    h_kv = rng.choice([1, 2])
    h, L = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 5)
    E = rng.randrange(2, 6)
    doc = {"model_type": "gpt_oss", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(2, 20),
           "hidden_size": rng.randrange(4, 24), "head_dim": 2 * rng.randrange(1, 5), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.3, "sliding_window": rng.randrange(1, 10),
           "num_local_experts": E, "num_experts_per_tok": rng.randrange(1, E + 1), "attention_bias": rng.random() < 0.7,
           "swiglu_limit": rng.choice([7.0, 2.5])}
    if rng.random() < 0.5:
        doc["layer_types"] = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(L)]
    return doc


@pytest.mark.parametrize("seed", range(4))
def test_random_gpt_oss_files_match_transformers_parameters_cache_and_flops(seed):
    rng = random.Random(f"gpt-oss-{seed}")
    doc = random_doc(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 13)
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.sinks and cfg.expert_bias and cfg.attention == "eager"
    b = budget(cfg)
    kv = kv_cache_lines(cfg, "fp32")[0].value
    assert (b.params_exact, kv, b.flops_fwd_measured_per_token * B * T) == reference(doc, B, T), doc


TINY = {"model_type": "gpt_oss", "vocab_size": 40, "hidden_size": 16, "intermediate_size": 6, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4, "max_position_embeddings": 64,
        "sliding_window": 4, "num_local_experts": 4, "num_experts_per_tok": 2, "swiglu_limit": 0.5,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10_000.0}}  # this module's θ; the limit binds


def test_logits_equal_transformers_with_its_weights():
    """Sinks, attention biases, the router's and experts' biases and the clamped SwiGLU, every value set at random:
    gpt-oss's interleaved gate_up is this module's W_gate and W_up."""
    torch.manual_seed(0)
    ref = _module(TINY, "cpu").eval()
    for p in ref.parameters():
        torch.nn.init.normal_(p, std=0.5)
    ours = GPT(from_hf(TINY, B=2, T=9)).eval()
    copy_shared_weights(ours, ref)
    with torch.no_grad():
        for block, layer in zip(ours.blocks, ref.model.layers):
            a, m = layer.self_attn, layer.mlp
            block.attn.sinks.copy_(a.sinks)
            block.moe.router.weight.copy_(m.router.weight)
            block.moe.router.bias.copy_(m.router.bias)
            e = block.moe.experts
            e.w_gate.copy_(m.experts.gate_up_proj[..., ::2])
            e.w_up.copy_(m.experts.gate_up_proj[..., 1::2])
            e.b_gate.copy_(m.experts.gate_up_proj_bias[..., ::2])
            e.b_up.copy_(m.experts.gate_up_proj_bias[..., 1::2])
            e.w_down.copy_(m.experts.down_proj)
            e.b_down.copy_(m.experts.down_proj_bias)
        idx = torch.randint(0, 40, (2, 9))
        torch.testing.assert_close(ours(idx)[0], ref(input_ids=idx).logits, rtol=1e-4, atol=1e-4)


OSS = Config(B=2, T=7, d=12, h=4, L=2, V=11, norm="rmsnorm", positions="rope", mlp="swiglu", bias="attn", kv_heads=2,
             head_dim=4, experts=4, top_k=2, expert_dim=6, window=3, full_layers=(1,), sinks=True, expert_bias=True,
             swiglu_limit=7.0)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_saved_bytes_of_a_gpt_oss_model_equal_autograd_on_cpu(dtype):
    torch.manual_seed(0)
    model = GPT(OSS).to({"fp32": torch.float32, "bf16": torch.bfloat16}[dtype])
    assert saved_bytes_of(model, torch.randint(0, OSS.V, (OSS.B, OSS.T))) == trace(OSS, dtype).saved_bytes


def test_the_trace_gives_the_sink_its_rows():
    rows = {r.local: r for r in trace(OSS).rows}
    sink = rows["attn.with_sink"]
    assert (sink.symbolic, sink.shape) == ("(B, h, T, T + 1)", (2, 4, 7, 8)) and "sink logit s" in sink.label
    assert rows["attn.sink"].shape == (2, 4, 7, 1) and "sink logit s" in rows["attn.sink"].label
    assert rows["attn.attn"].shape == (2, 4, 7, 7) and "clamped SwiGLU" in rows["moe.experts.gated"].label


def test_the_config_refuses_what_gpt_oss_cannot_be():
    with pytest.raises(ValueError, match="set attention to eager"):
        replace(OSS, attention="fused")
    with pytest.raises(ValueError, match="expert_bias is set but experts is not"):
        Config(B=1, T=1, d=4, h=1, L=1, V=4, expert_bias=True)
    with pytest.raises(ValueError, match="swiglu_alpha.*swiglu_limit is not set"):
        replace(OSS, swiglu_limit=None, swiglu_alpha=2.0)


@pytest.mark.parametrize("table", ["budget", "kv"])
def test_the_cli_prints_gpt_oss_20b(table, capsys):
    code, out, err = run_cli(["--preset", "gpt-oss-20b", "--table", table], capsys)
    assert code == 0 and not err
    assert ("20,914,757,184" if table == "budget" else "windowed blocks") in out
