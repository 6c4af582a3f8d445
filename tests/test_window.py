"""Sliding windows and per-block attention kinds (issue 27, stage 1) against transformers: parameters on the meta
device, the KV cache equal to the bytes of transformers' real cache after a prefill, forward FLOPs equal to
FlopCounterMode on its eager forward, logits and a decode step equal to its module's, saved bytes equal to autograd's,
and the lines (cache per kind of block, a windowed kernel's FLOPs, the changes card) true to their formulas."""
from __future__ import annotations

import json
import logging
import random
from dataclasses import replace

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from model import GPT, budget, trace
from model.changes import changes
from model.config import MODERN, TABLE_PRESETS, Config, config_dict, from_hf, read_hf
from model.figures import check_lines
from model.parts.attention import hidden_keys
from model.memory import kv_cache_lines
from model.passes import saved_bytes_of
from pagetools import run_cli

transformers = pytest.importorskip("transformers")
from transformers import CONFIG_MAPPING, AutoModelForCausalLM  # noqa: E402
from transformers.masking_utils import causal_mask_function, sliding_window_overlay  # noqa: E402

logging.getLogger("transformers").setLevel(logging.ERROR)


def _module(doc: dict, device: str) -> torch.nn.Module:
    config = CONFIG_MAPPING[doc["model_type"]](**{k: v for k, v in doc.items() if k != "model_type"})
    with torch.device(device):
        return AutoModelForCausalLM.from_config(config, attn_implementation="eager")


def cache_bytes(cache) -> int:
    """The bytes a transformers cache holds: each attention layer's K and V (and an indexed layer's indexer keys,
    DynamicIndexedLayer's), each linear-attention layer's (LinearAttentionLayer) convolution and recurrent states."""
    tensors = [t for layer in cache.layers for t in (getattr(layer, "keys", None), getattr(layer, "values", None),
                                                     getattr(layer, "indexer_keys", None),
                                                     *getattr(layer, "conv_states", {}).values(),
                                                     *getattr(layer, "recurrent_states", {}).values())]
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def reference(doc: dict, B: int, T: int, build=_module) -> tuple[int, int, int]:
    """transformers' module of `doc` (made by `build(doc, device)`): (parameters on the meta device, the bytes of its
    real cache after a prefill of B sequences of T tokens there, forward FLOPs of its eager CPU pass at B, T)."""
    meta = build(doc, "meta")
    out = meta(input_ids=torch.zeros(B, T, dtype=torch.long, device="meta"), use_cache=True)
    kv = cache_bytes(out.past_key_values)
    torch.manual_seed(0)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        build(doc, "cpu")(input_ids=torch.randint(0, doc["vocab_size"], (B, T)), use_cache=False)
    return sum(p.numel() for p in meta.parameters()), kv, counter.get_total_flops()


def measured(cfg: Config) -> tuple[int, int, int]:
    """The explorer's figures that `reference` measures, at cfg's B and T: (N, the KV cache's bytes at fp32, forward
    FLOPs of the pass)."""
    b = budget(cfg)
    return b.params_exact, kv_cache_lines(cfg, "fp32")[0].value, b.flops_fwd_measured_per_token * cfg.B * cfg.T


def random_doc(rng: random.Random, model_type: str) -> dict:
    """A small random windowed file: Mistral's (and Ministral 3's, Phi-3's) window on every block; Qwen2's and Qwen3's from max_window_layers on,
    or as a random layer_types lists them."""
    h_kv = rng.choice([1, 2])
    h, L = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 5)
    doc = {"model_type": model_type, "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(4, 40),
           "hidden_size": h * 2 * rng.randrange(1, 5), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.5, "sliding_window": rng.randrange(1, 10)}
    if model_type in ("ministral3", "phi3"):  # their class's pad_token_id (11, 32,000) must be a row of the table
        doc["pad_token_id"] = rng.randrange(0, doc["vocab_size"])
    if model_type not in ("mistral", "ministral3", "phi3"):
        doc["use_sliding_window"] = True
        if rng.random() < 0.5:
            doc["max_window_layers"] = rng.randrange(0, L)
        else:
            kinds = ["sliding_attention" if rng.random() < 0.6 else "full_attention" for _ in range(L)]
            doc["layer_types"] = kinds if "sliding_attention" in kinds else ["sliding_attention"] * L
    return doc


SWEEP = [(t, i) for t in ("mistral", "ministral3", "phi3", "qwen2", "qwen3") for i in range(4)]


@pytest.mark.parametrize("model_type, seed", SWEEP, ids=[f"{t}-{i}" for t, i in SWEEP])
def test_random_windowed_files_match_transformers_parameters_cache_and_flops(model_type, seed):
    rng = random.Random(f"window-{model_type}-{seed}")
    doc = random_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 13)
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.window == doc["sliding_window"] and cfg.L_W >= 1
    assert measured(cfg) == reference(doc, B, T), doc


TINY = {"model_type": "mistral", "vocab_size": 50, "hidden_size": 32, "intermediate_size": 20, "num_hidden_layers": 3,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "sliding_window": 5,
        "rms_norm_eps": 1e-5}  # this module's RMSNorm ε


@torch.no_grad()
def copy_shared_weights(ours: GPT, ref: torch.nn.Module) -> None:
    """transformers' token table, head, final norm and each block's attention (its biases where `ref` has them) and
    norms into this module, `ours`."""
    ours.wte.weight.copy_(ref.model.embed_tokens.weight)
    ours.head.weight.copy_(ref.lm_head.weight)
    ours.ln_f.weight.copy_(ref.model.norm.weight)
    for block, layer in zip(ours.blocks, ref.model.layers):
        a = layer.self_attn
        block.attn.qkv.weight.copy_(torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]))
        block.attn.proj.weight.copy_(a.o_proj.weight)
        if a.q_proj.bias is not None:
            block.attn.qkv.bias.copy_(torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]))
        if a.o_proj.bias is not None:
            block.attn.proj.bias.copy_(a.o_proj.bias)
        block.ln_1.weight.copy_(layer.input_layernorm.weight)
        block.ln_2.weight.copy_(layer.post_attention_layernorm.weight)


def _copied(doc: dict, attention: str) -> tuple[torch.nn.Module, GPT]:
    """transformers' Mistral of `doc` and this module with its weights."""
    torch.manual_seed(0)
    ref = _module(doc, "cpu").eval()
    ours = GPT(replace(from_hf(doc, B=2, T=12), attention=attention)).eval()
    copy_shared_weights(ours, ref)
    with torch.no_grad():
        for block, layer in zip(ours.blocks, ref.model.layers):
            m = layer.mlp
            block.mlp.gate.weight.copy_(m.gate_proj.weight)
            block.mlp.up.weight.copy_(m.up_proj.weight)
            block.mlp.proj.weight.copy_(m.down_proj.weight)
    return ref, ours


@pytest.mark.parametrize("attention", ["eager", "fused"])
def test_logits_and_a_decode_step_over_the_windowed_cache_equal_transformers(attention):
    """A prefill of T = 12 through a window of 5 (full attention would differ), then one decode step over
    transformers' own cache, which keeps W − 1 = 4 tokens per block."""
    ref, ours = _copied(TINY, attention)
    idx, new = torch.randint(0, 50, (2, 12)), torch.randint(0, 50, (2, 1))
    with torch.no_grad():
        out = ref(input_ids=idx, use_cache=True)
        past = [(layer.keys.clone(), layer.values.clone()) for layer in out.past_key_values.layers]
        assert [tuple(k.shape) for k, _ in past] == [(2, 2, 4, 8)] * 3
        torch.testing.assert_close(ours(idx)[0], out.logits)
        full = GPT(replace(ours.cfg, window=None))
        full.load_state_dict(ours.state_dict())
        assert not torch.allclose(full(idx)[0], out.logits, atol=1e-3)  # the window binds
        step = ref(input_ids=new, past_key_values=out.past_key_values).logits
        torch.testing.assert_close(ours.decode(new, past, start=12), step)


@pytest.mark.parametrize("T, S, W", [(7, 7, 3), (5, 5, 1), (4, 4, 9), (1, 5, 3), (3, 8, 4)])
def test_the_mask_is_transformers_band(T, S, W):
    """Query i at position S − T + i sees key j where transformers' causal mask and sliding_window_overlay agree."""
    sees = sliding_window_overlay(W)
    expected = torch.tensor([[bool(causal_mask_function(0, 0, S - T + i, j)) and bool(sees(0, 0, S - T + i, j))
                              for j in range(S)] for i in range(T)])
    assert torch.equal(~hidden_keys(T, S, W, torch.device("cpu")), expected)


HYBRID = Config(B=2, T=11, d=16, h=4, L=4, V=10, **MODERN, kv_heads=2, window=4, full_layers=(1, 3))


@pytest.mark.parametrize("attention, dtype", [("eager", "fp32"), ("fused", "fp32"), ("eager", "bf16"),
                                              ("fused", "bf16")])
def test_saved_bytes_of_a_hybrid_model_equal_autograd_on_cpu(attention, dtype):
    """Every block on CPU (two windowed, two full) against the one windowed block the trace runs: the fused kernel's
    band is one tensor of the pass, the eager mask one per block whatever its kind."""
    cfg = replace(HYBRID, attention=attention)
    torch.manual_seed(0)
    model = GPT(cfg).to({"fp32": torch.float32, "bf16": torch.bfloat16}[dtype])
    assert saved_bytes_of(model, torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg, dtype).saved_bytes


def test_the_trace_shows_the_band_and_the_fused_kernels_mask():
    eager, fused = trace(replace(HYBRID, attention="eager")), trace(HYBRID)
    masked = next(r for r in eager.rows if r.local == "attn.masked")
    assert "a band of W" in masked.label and masked.symbolic == "(B, h, T, T)"
    band = next(r for r in fused.rows if r.name == "window_mask")
    assert (band.symbolic, band.shape, band.block) == ("(T, T)", (11, 11), None)
    assert "window_mask" not in {r.name for r in eager.rows}


@pytest.mark.parametrize("T", [3, 4, 11])
def test_the_cache_lines_per_kind_of_block(T):
    cfg = replace(HYBRID, T=T)
    lines = {x.key: x for x in kv_cache_lines(cfg, "bf16")}
    check_lines(lines.values(), cfg.symbols())
    per_block = 2 * cfg.B * cfg.h_kv * cfg.d_head * 2
    assert lines["memory/kv_cache_window"].value == 2 * per_block * min(T, 3)  # W − 1 = 3 kept after a prefill
    assert lines["memory/kv_cache_full"].value == 2 * per_block * T
    assert lines["memory/kv_cache"].value == lines["memory/kv_cache_window"].value + lines["memory/kv_cache_full"].value
    assert lines["memory/kv_cache_per_token"].value == 2 * 2 * cfg.h_kv * cfg.d_head * 2  # the 2 full blocks only
    assert "keeps the last W − 1 after a prefill" in lines["memory/kv_cache_window"].label


def test_a_windowed_kernel_runs_the_band_only():
    """The windowed kernel's attention FLOPs: 4·h·d_head per (query, key) pair the masks let through, per token."""
    for cfg in (HYBRID, replace(HYBRID, T=3), replace(HYBRID, full_layers=())):
        b = budget(cfg)
        pairs = sum(int((~hidden_keys(cfg.T, cfg.T, cfg.W if kind == "sliding" else None, torch.device("cpu"))).sum())
                    for kind in cfg.attn_kinds)
        assert b.line("flops/attention_windowed").value == pytest.approx(4 * cfg.h * cfg.d_head * pairs / cfg.T)
        assert b.flops_attn_per_token == 4 * cfg.L * cfg.T * cfg.h * cfg.d_head  # measured: all T² pairs


def test_the_changes_card_names_the_window_and_its_cache_ratio():
    group = changes(HYBRID, "bf16").steps[-1]
    assert group.key == "window" and "W = 4 keys on L_W = 2 of the L = 4 blocks" in group.title
    lines = {x.key: x for x in group.lines}
    ratio = lines["changes/window/cache_ratio"]
    assert "a window of W = 4 on 2 of 4 blocks divides those blocks' cache by T/W at T" in ratio.label
    assert ratio.value == pytest.approx(11 / 3)
    assert lines["changes/window/params"].value == lines["changes/window/flops"].value == 0


def test_the_cli_prints_the_cache_of_each_kind_and_json_carries_it(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**TINY, "layer_types": None}))
    code, out, err = run_cli(["--hf-config", str(path), "--table", "kv", "--T", "12"], capsys)
    assert code == 0 and "windowed blocks" in out and "min(T, W − 1)" in out
    code, out, _ = run_cli(["--hf-config", str(path), "--table", "kv", "--T", "12", "--json"], capsys)
    doc = json.loads(out)
    assert doc["config"]["attn_kinds"] == ["sliding"] * 3 and doc["config"]["W"] == 5
    assert {x["key"] for x in doc["kv"]} >= {"memory/kv_cache_window", "memory/kv_cache_window_ratio"}
    assert next(x for x in doc["kv"] if x["key"] == "memory/kv_cache_window")["value"] == 3 * 2 * 8 * 4 * 2 * 8 * 4  # L_W·2·B·T_W·h_kv·d_head·4, B = 8
    code, out, _ = run_cli(["--hf-config", str(path), "--table", "infer", "--T", "12"], capsys)
    assert code == 0 and "(B, h_kv, T_W + 1, d_head)" in out and "the 3 windowed blocks' T_W = min(T, W − 1) = 4" in out


@pytest.mark.parametrize("attention", ["eager", "fused"])
def test_a_decode_step_reads_each_blocks_own_cache(attention):
    """Serving's decode step (one block of each kind × its count) against the whole model's real decode on the meta
    device over caches of T tokens (full blocks) and T_W (windowed): the same FLOPs; the cache read is the cache."""
    from model.inference import decode_pass, infer

    cfg = replace(HYBRID, attention=attention, T=9)
    with torch.device("meta"):
        model = GPT(cfg).to(torch.bfloat16)
    past = [tuple(torch.zeros(cfg.B, cfg.h_kv, cfg.T if kind == "full" else cfg.T_W, cfg.d_head, device="meta",
                              dtype=torch.bfloat16) for _ in "kv") for kind in cfg.attn_kinds]
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model.decode(torch.zeros(cfg.B, 1, dtype=torch.long, device="meta"), past, start=cfg.T)
    assert decode_pass(cfg).flops == counter.get_total_flops()
    served = infer(cfg)
    assert served.line("infer/decode_cache_read").value == kv_cache_lines(cfg, "bf16")[0].value
    assert served.line("infer/decode_cache_write").value == cfg.B * cfg.L * 2 * cfg.h_kv * cfg.d_head * 2


def test_the_live_page_reads_a_window_and_the_exported_page_writes_it(tmp_path):
    from app.cards.recipe.view import read_config_json
    from test_export import export

    cfg, notice = read_config_json(json.dumps(TINY), Config(B=2, T=64, d=32, h=4, L=2, V=50, T_max=1024))
    assert (cfg.window, cfg.L_W) == (5, 3) and notice.startswith("read ")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY))
    done = export(tmp_path / "page.html", "--hf-config", str(path))  # its figures: tests/test_export_window.py
    assert done.returncode == 0 and "wrote" in done.stdout and (tmp_path / "page.html").exists(), done.stderr


def test_config_reads_and_checks_the_window():
    cfg = read_hf({**TINY, "model_type": "qwen3", "use_sliding_window": True, "max_window_layers": 1,
                   "head_dim": 8}, B=1, T=9).config
    assert (cfg.window, cfg.full_layers, cfg.attn_kinds) == (5, (0,), ("full", "sliding", "sliding"))
    assert config_dict(cfg)["T_W"] == 4
    with pytest.raises(ValueError, match="full_layers lists every block"):
        replace(cfg, full_layers=(0, 1, 2))
    with pytest.raises(ValueError, match="set window \\(W\\) or drop full_layers"):
        replace(cfg, window=None)


# Mistral 7B v0.1's config.json (its model card): v0.2's shape with sliding_window = 4,096 on every block
MISTRAL_V01 = {"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
               "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
               "max_position_embeddings": 32768, "sliding_window": 4096, "rope_theta": 10000.0,
               "tie_word_embeddings": False}


def test_mistral_7b_v01_is_its_published_file_to_the_parameter_and_caches_w_minus_1_tokens():
    preset = TABLE_PRESETS["mistral-7b-v0.1"]
    assert read_hf(MISTRAL_V01, B=preset.B, T=preset.T).config == preset
    meta = _module(MISTRAL_V01, "meta")
    assert budget(preset).params_exact == sum(p.numel() for p in meta.parameters()) == 7_241_732_096
    lines = {x.key: x.value for x in kv_cache_lines(preset, "bf16")}
    assert (preset.L_W, preset.W, preset.T) == (32, 4_096, 8_192)
    assert lines["memory/kv_cache"] == 2 * 32 * preset.B * 4_095 * 8 * 128 * 2  # W − 1 tokens in every block
    assert lines["memory/kv_cache_per_token"] == 0  # past the window, no block's cache grows
