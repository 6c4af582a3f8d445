"""Inference (model.inference): the decode step's real pass against the module's own full forward and against
transformers' eager forward over a real past_key_values; prefill FLOPs; bytes, roofline and quantization; the CLI;
a mixture of experts: top-k FLOPs against eager experts, each kind of block, the experts a step touches (k at B = 1,
all E at large B) and its weight bytes against transformers' modules to the byte."""
from __future__ import annotations

import itertools
import json
import logging
import random
from dataclasses import replace

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import CONFIG_MAPPING, AutoModelForCausalLM

from model import PRESETS, budget
from model.config import Config, from_hf
from model.gpt import GPT
from model.inference import (KV, WEIGHTS, InferSetup, by_batch, by_context, decode_pass, infer,
                             quantized)
from model.memory import kv_cache_lines
from model.parts.moe import touched
from model.formula import evaluate_shape as evaluate
from model.training import GPUS
from pagetools import run_cli
from test_moe import _module, random_doc  # transformers' MoE module of a file; small random files

logging.getLogger("transformers").setLevel(logging.ERROR)
RECIPES = [dict(), dict(norm="rmsnorm", positions="rope", mlp="swiglu", bias="none", kv_heads=2),
           dict(norm="rmsnorm", positions="rope", mlp="swiglu", bias="none", kv_heads=1, head_dim=6, qk_norm=True)]


def small(recipe: dict, attention: str) -> Config:
    return Config(B=2, T=5, d=24, h=4, L=2, V=37, T_max=16, attention=attention, **recipe)


@pytest.mark.parametrize("attention", ["eager", "fused"])
@pytest.mark.parametrize("recipe", RECIPES, ids=["gpt2", "gqa", "mqa-qknorm"])
def test_a_decode_step_over_the_cache_gives_the_full_forwards_last_logits(recipe, attention):
    """Real CPU tensors: the K and V a forward pass over T + 1 tokens makes, cut to the first T, are the cache; one
    decode step of the last token then gives the same logits as the full pass at its last position."""
    cfg = small(recipe, attention)
    torch.manual_seed(0)
    model = GPT(cfg).eval()
    idx = torch.randint(0, cfg.V, (cfg.B, cfg.T + 1))
    kept: dict[int, dict[str, torch.Tensor]] = {}
    rope = cfg.positions == "rope"
    for i, block in enumerate(model.blocks):
        for name in ("k", "v"):
            tap = getattr(block.attn, f"{name}_rot" if rope and name == "k" else name)
            tap.register_forward_hook(lambda _m, _i, out, i=i, name=name: kept.setdefault(i, {}).__setitem__(name, out))
    with torch.no_grad():
        full, _ = model(idx)
        past = [(kept[i]["k"][:, :, :cfg.T], kept[i]["v"][:, :, :cfg.T]) for i in range(cfg.L)]
        step = model.decode(idx[:, cfg.T:], past)
    assert step.shape == (cfg.B, 1, cfg.V)
    torch.testing.assert_close(step[:, 0], full[:, -1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attention", ["eager", "fused"])
@pytest.mark.parametrize("recipe", RECIPES, ids=["gpt2", "gqa", "mqa-qknorm"])
def test_the_decode_rows_lesson_shapes_are_their_concrete_shapes(recipe, attention):
    cfg = small(recipe, attention)
    p = decode_pass(cfg, "fp32")
    names = {r.name for r in p.rows}
    assert {"idx", "blocks.0.attn.q", "blocks.0.attn.k_cache", "blocks.0.attn.v_cache", "logits"} <= names
    assert ("blocks.0.attn.scores" in names) == (attention == "eager") == ("blocks.0.attn.lse" not in names)
    for r in p.rows:
        assert evaluate(r.symbolic, cfg.symbols()) == r.shape, r
    assert next(r for r in p.rows if r.name == "blocks.0.attn.k_cache").shape == (2, cfg.h_kv, cfg.T + 1, cfg.d_head)


def hf_doc(rng: random.Random, model_type: str) -> dict:
    """A small random config.json of `model_type` (gpt2 for GPT-2's recipe, llama or qwen3 for the modern one)."""
    L, V = rng.randrange(1, 4), rng.randrange(8, 200)
    if model_type == "gpt2":
        h = rng.randrange(1, 5)
        return {"model_type": "gpt2", "n_embd": h * rng.randrange(2, 12), "n_head": h, "n_layer": L,
                "vocab_size": V, "n_positions": rng.randrange(32, 128), "tie_word_embeddings": rng.random() < 0.5}
    h_kv = rng.choice([1, 2, 4])
    h = h_kv * rng.choice([1, 2, 3])
    return {"model_type": model_type, "hidden_size": h * 2 * rng.randrange(1, 8), "num_attention_heads": h,
            "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(8, 100), "num_hidden_layers": L,
            "vocab_size": V, "max_position_embeddings": 4096, "tie_word_embeddings": rng.random() < 0.5,
            **({"head_dim": 2 * rng.randrange(1, 10)} if rng.random() < 0.5 else {})}


def reference_flops(doc: dict, B: int, T: int) -> tuple[int, int]:
    """FlopCounterMode on transformers' eager forward (eager experts for a mixture of experts): (the prefill over T
    tokens, one new token over its cache)."""
    config = CONFIG_MAPPING[doc["model_type"]](**{k: v for k, v in doc.items() if k != "model_type"})
    experts = {"experts_implementation": "eager"} if "num_experts_per_tok" in doc else {}  # one matmul per expert
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager", **experts).eval()
    ids = torch.zeros(B, T + 1, dtype=torch.long)
    with torch.no_grad():
        with FlopCounterMode(display=False) as prefill:
            out = model(input_ids=ids[:, :T], use_cache=True)
        assert out.past_key_values.get_seq_length() == T
        with FlopCounterMode(display=False) as decode:
            model(input_ids=ids[:, T:], cache=out.past_key_values, use_cache=True)
    return prefill.get_total_flops(), decode.get_total_flops()


@pytest.mark.parametrize("model_type", ["gpt2", "llama", "qwen3"])
def test_prefill_and_decode_flops_equal_transformers_eager_forward_over_a_real_cache(model_type):
    rng = random.Random(model_type)
    for _ in range(6):
        doc, B, T = hf_doc(rng, model_type), rng.randrange(1, 4), rng.randrange(2, 24)
        cfg = from_hf(doc, B=B, T=T)
        for attention in ("eager", "fused"):
            r = infer(replace(cfg, attention=attention), InferSetup())
            assert (r.prefill_flops, r.decode_flops) == reference_flops(doc, B, T), doc


def test_llama3_8b_at_b1_t4096_reads_its_bf16_weights_and_its_cache_at_the_roofline():
    cfg = replace(PRESETS["llama3-8b"], B=1, T=4096)
    r = infer(cfg, InferSetup(gpu="h100-sxm"))
    N, (V, d, L, h_kv, d_head) = budget(cfg).params_exact, (cfg.V, cfg.d, cfg.L, cfg.h_kv, cfg.d_head)
    assert r.weight_bytes == 2 * N
    cache = 2 * L * 4096 * h_kv * d_head * 2
    assert cache == kv_cache_lines(cfg, "bf16")[0].value == 512 * 2**20
    x = {line.key: line.value for line in r.lines}
    assert x["infer/decode_weights_read"] == 2 * N - 2 * (V - 1) * d  # the untied token table: one row looked up
    assert x["infer/decode_cache_read"] == cache and x["infer/decode_cache_write"] == cache // 4096
    assert r.decode_bytes == 2 * N - 2 * (V - 1) * d + cache + cache // 4096 + x["infer/decode_activations"]
    P, BW = 989e12, 3.35e12
    assert (r.gpu_flops_per_s, r.gpu_bytes_per_s) == (P, BW)
    assert r.decode_tokens_per_s == 1 / max(r.decode_flops / P, r.decode_bytes / BW) == 1 / (r.decode_bytes / BW)
    assert r.ttft_s == r.prefill_flops / P  # compute-bound
    assert r.decode_flops == L * (4 * (cfg.h + h_kv) * d_head * d + 6 * d * cfg.d_ff + 4 * 4097 * cfg.h * d_head) \
        + 2 * V * d
    assert r.knee_B is None  # at 4,096 tokens each sequence's cache costs more time than its FLOPs


def test_int4_weights_are_a_quarter_of_bf16s_plus_scales_and_the_rest_at_16_bits():
    cfg = replace(PRESETS["llama3-8b"], B=1, T=4096)
    N = budget(cfg).params_exact
    N_q, S_q, _, _ = quantized(cfg, 128)
    assert N_q == cfg.L * (2 * (cfg.h + cfg.h_kv) * cfg.d_head * cfg.d + 3 * cfg.d * cfg.d_ff)
    assert S_q == N_q // 128
    bf16, int4 = (infer(cfg, InferSetup(weights=w)).weight_bytes for w in ("bf16", "int4"))
    assert int4 == 2 * (N - N_q) + N_q // 2 + 2 * S_q
    assert (int4 - 2 * (N - N_q) - 2 * S_q) * 4 == bf16 - 2 * (N - N_q)  # the matrices: a quarter of bf16's
    assert 0.3 < int4 / bf16 < 0.36  # the embeddings and the head stay at 16 bits


@pytest.mark.parametrize("weights", list(WEIGHTS))
@pytest.mark.parametrize("kv", list(KV))
def test_every_line_is_its_formula_and_formats_feed_the_bytes(weights, kv):
    rng = random.Random(weights + kv)
    for _ in range(4):
        doc = hf_doc(rng, rng.choice(["gpt2", "llama", "qwen3"]))
        cfg = from_hf(doc, B=rng.randrange(1, 64), T=rng.randrange(1, 30))
        r = infer(cfg, InferSetup(weights=weights, kv_dtype=kv, group=rng.choice([32, 64, 128]),
                                  gpu=rng.choice(list(GPUS))))  # infer checks every formula against its value
        base = infer(cfg, InferSetup(group=r.setup.group, gpu=r.setup.gpu))
        assert (r.weight_bytes <= base.weight_bytes) and (r.decode_bytes <= base.decode_bytes)
        assert r.decode_flops == base.decode_flops  # the formats change bytes, not FLOPs


def test_at_T_max_a_learned_position_table_serves_after_T_max_minus_one_tokens_and_says_so(capsys):
    """GPT-2's preset runs T = T_max = 1,024: its figures are those at T = 1,023 (the longest context a decode step
    can follow: the new token takes position T), the same as asked at --T 1023, with the note that says so."""
    code, out, err = run_cli(["--preset", "gpt2-small", "--table", "infer", "--json"], capsys)
    at_max = json.loads(out)["infer"]
    code1, out1, _ = run_cli(["--preset", "gpt2-small", "--T", "1023", "--table", "infer", "--json"], capsys)
    below = json.loads(out1)["infer"]
    assert code == code1 == 0 and at_max["T"] == below["T"] == 1023 and below["note"] is None
    assert "serving is figured at T = T_max − 1 = 1,023" in at_max["note"]
    assert {k: v for k, v in at_max.items() if k != "note"} == {k: v for k, v in below.items() if k != "note"}
    code, out, _ = run_cli(["--preset", "gpt2-small", "--table", "infer"], capsys)
    assert code == 0 and "(8, 12, 1024, 64)" in out and "Note   T = T_max = 1,024" in out  # K, V of 1,023 + 1


@pytest.mark.parametrize("fmt", ["text", "--json", "--markdown", "--csv"])
def test_the_infer_table_prints_in_every_format(fmt, capsys):
    argv = ["--preset", "llama3-8b", "--B", "1", "--T", "4096", "--table", "infer", "--weights", "int4",
            *([] if fmt == "text" else [fmt])]
    code, out, err = run_cli(argv, capsys)
    assert (code, err) == (0, "")
    if fmt == "--json":
        doc = json.loads(out)["infer"]
        expected = infer(replace(PRESETS["llama3-8b"], B=1, T=4096), InferSetup(weights="int4"))
        for key in ("prefill_flops", "decode_flops", "decode_bytes", "decode_tokens_per_s", "ttft_s", "weight_bytes",
                    "gpu_flops_per_s", "gpu_bytes_per_s"):
            assert doc[key] == getattr(expected, key), key
    elif fmt == "text":
        assert "(B, h_kv, T + 1, d_head)" in out and "tokens/s" in out


@pytest.mark.parametrize("argv, message", [
    (["--table", "infer", "--weights", "int3"], "argument --weights: invalid choice: 'int3'"),
    (["--table", "infer", "--kv-dtype", "int4"], "argument --kv-dtype: invalid choice: 'int4'"),
    (["--table", "infer", "--efficiency", "2"], "--efficiency 2.0 is out of range"),
    (["--table", "infer", "--group", "0"], "--group 0 is out of range"),
    (["--table", "infer", "--gpu", "custom"], "a custom GPU needs --gpu-peak, --gpu-memory and --gpu-bandwidth"),
    (["--table", "infer", "--gpu-bandwidth", "-1"], "a custom GPU needs"),
    (["--table", "infer", "--zero", "3"], "--zero describe a training run: use --table train"),
    (["--weights", "int4"], "--weights describe serving: add --table infer"),
])
def test_bad_serving_options_give_one_line_and_status_2(argv, message, capsys):
    code, out, err = run_cli(["--preset", "llama3-8b", *argv], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_the_charts_points_are_the_figures_at_each_b_and_t_and_turn_at_the_knee():
    cfg = replace(PRESETS["llama3-8b"], B=1, T=128)
    knee = infer(cfg).knee_B
    points = by_batch(cfg)
    assert knee is not None and points[0]["tokens_per_s"] == infer(cfg).decode_tokens_per_s
    assert all(a["tokens_per_s"] < b["tokens_per_s"] for a, b in zip(points, points[1:]))  # more B, more tokens/s
    assert all(p["compute_bound"] == (p["B"] >= knee) for p in points)
    context = by_context(replace(cfg, B=8))
    assert [p["T"] for p in context][:3] == [128, 256, 512] and context[-1]["T"] == cfg.T_max
    assert all(a["step_s"] <= b["step_s"] for a, b in zip(context, context[1:]))  # a longer cache, a longer step
    assert context[2]["step_s"] == infer(replace(cfg, B=8, T=512)).decode_step_s
    assert by_context(PRESETS["gpt2-small"])[-1]["T"] == 1023  # W_pe's last row


@pytest.mark.parametrize("name", ["llama3-8b", "qwen3-30b-a3b", "qwen3-next-80b-a3b", "deepseek-v3.2", "gpt2-small"])
def test_the_b_chart_s_one_budget_gives_each_b_its_own_figures(name):
    """`by_batch` hands its points the budget at cfg's B (N and the forward FLOPs per token do not depend on B): at B =
    1 and 1,024, `infer` with it gives every line that its own budget at that B gives (GPT-2 small's at T = T_max:
    the figures at T_max − 1)."""
    from model.budgeting import budget
    from model.inference import decode_context
    cfg = replace(PRESETS[name], T=96 if name != "gpt2-small" else 1024)
    shared = budget(decode_context(cfg)[0])
    for B in (1, 1024):
        at = replace(cfg, B=B)
        assert infer(at, check=False, b=shared).lines == infer(at, check=False).lines, (name, B)


# --- a mixture of experts: the decode step reads the experts its B·k choices touch ---------------------------------

MOE_SWEEP = [(t, i) for t in ("mixtral", "qwen2_moe", "qwen3_moe") for i in range(2)]


@pytest.mark.parametrize("model_type, seed", MOE_SWEEP, ids=[f"{t}-{i}" for t, i in MOE_SWEEP])
def test_a_mixture_of_experts_prefill_and_decode_flops_equal_transformers_eager_experts_over_a_real_cache(model_type,
                                                                                                          seed):
    """Top-k FLOPs: B·k rows through the experts at decode, B·T·k at the prefill, the routers, shared experts and
    dense blocks (Qwen's decoder_sparse_step and mlp_only_layers) each counted per kind of block."""
    rng = random.Random(f"serve-{model_type}-{seed}")
    doc, B, T = random_doc(rng, model_type), rng.randrange(1, 4), rng.randrange(2, 12)
    r = infer(from_hf(doc, B=B, T=T), InferSetup())
    assert (r.prefill_flops, r.decode_flops) == reference_flops(doc, B, T), doc


@pytest.mark.parametrize("layout", [dict(dense_first=1, ff_dim=40), dict(moe_step=2, ff_dim=40),
                                    dict(dense_layers=(2,), ff_dim=40, shared_experts=1, shared_gate=True),
                                    dict(bias="attn", sinks=True, expert_bias=True, swiglu_limit=7.0, window=4,
                                         full_layers=(1,))],  # gpt-oss's: every block MoE, two attention kinds
                         ids=["dense_first", "moe_step", "shared", "gpt-oss"])
def test_a_decode_step_counts_each_kind_of_block_as_the_whole_models_meta_decode(layout):
    cfg = Config(B=3, T=7, d=16, h=4, L=4, V=50, T_max=64, **{**dict(norm="rmsnorm", positions="rope", mlp="swiglu",
                 bias="none", kv_heads=2, experts=6, top_k=2, expert_dim=12), **layout})
    with torch.device("meta"):
        model = GPT(cfg).to(torch.bfloat16).requires_grad_(False)  # gpt-oss's sinks: no gradient asked
    past = [tuple(torch.zeros(cfg.B, cfg.h_kv, cfg.T if kind == "full" else cfg.T_W, cfg.d_head, device="meta",
                              dtype=torch.bfloat16) for _ in "kv") for kind in cfg.attn_kinds]
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model.decode(torch.zeros(cfg.B, 1, dtype=torch.long, device="meta"), past, start=cfg.T)
    assert decode_pass(cfg).flops == counter.get_total_flops()
    assert (0 < cfg.L_moe < cfg.L) != (cfg.window is not None)
    r = infer(cfg, InferSetup(weights="int4", group=5))  # every line its formula, an expert's biases at 16 bits
    assert r.line("infer/expert_bytes").value == r.line("infer/n_e").value / 2 + 2 * r.line("infer/s_e").value \
        + 2 * cfg.expert_bias * (2 * cfg.d_expert + cfg.d)


def quantized_by_transformers(doc: dict, group: int) -> tuple[int, int, int]:
    """transformers' module of `doc` on the meta device: (N, N_q, S_q). Quantized: every matrix of the blocks, the
    experts' stacked (E, out, in) ones included, but the routers (mlp.gate) and the shared experts' gate; a scale
    per `group` of a row's inputs."""
    meta = _module(doc, "meta")
    N = N_q = S_q = 0
    for name, p in meta.named_parameters():
        N += p.numel()
        routers = name.endswith(("mlp.gate.weight", "shared_expert_gate.weight"))
        if p.dim() < 2 or not name.startswith("model.layers.") or routers:
            continue
        N_q += p.numel()
        S_q += p.numel() // p.shape[-1] * -(-p.shape[-1] // group)
    return N, N_q, S_q


@pytest.mark.parametrize("model_type, seed", MOE_SWEEP, ids=[f"{t}-{i}" for t, i in MOE_SWEEP])
def test_a_mixture_of_experts_weight_bytes_are_every_parameter_of_transformers_module_to_the_byte(model_type, seed):
    rng = random.Random(f"bytes-{model_type}-{seed}")
    doc = random_doc(rng, model_type)
    cfg = from_hf(doc, B=1, T=4)
    for group in (3, 128):
        N, N_q, S_q = quantized_by_transformers(doc, group)
        assert quantized(cfg, group)[:2] == (N_q, S_q)
        bytes_at = {w: infer(cfg, InferSetup(weights=w, group=group)).weight_bytes for w in ("bf16", "int8", "int4")}
        assert bytes_at == {"bf16": 2 * N, "int8": 2 * (N - N_q) + N_q + 2 * S_q,
                            "int4": 2 * (N - N_q) + N_q // 2 + 2 * S_q}, doc


def test_the_experts_touched_are_the_expected_distinct_experts_of_uniform_routing():
    """E·(1 − (1 − k/E)^B): the mean, over every way B tokens each pick k of E experts, of the experts picked."""
    cfg = replace(PRESETS["mixtral-8x7b"], experts=5, top_k=2)
    for B in (1, 2, 3):
        picks = list(itertools.product(itertools.combinations(range(cfg.E), cfg.k), repeat=B))
        mean = sum(len(set().union(*p)) for p in picks) / len(picks)
        assert touched(cfg, B) == pytest.approx(mean, rel=1e-12)


@pytest.mark.parametrize("name", ["mixtral-8x7b", "qwen3-30b-a3b"])
def test_a_decode_step_reads_k_experts_at_b1_and_every_expert_at_large_b(name):
    """At B = 1 a step reads exactly the weights one token uses (2N_active at bf16, the token table's one row), at
    B = 1,024 every weight; its FLOPs are 2N_active per token (but the norms' gains and the token table's lookup)
    plus attention over the T + 1 keys."""
    b = budget(PRESETS[name])
    for B, read in ((1, 2 * b.params_active), (1024, 2 * b.params_exact)):
        cfg = replace(PRESETS[name], B=B, T=4096)
        r = infer(cfg, InferSetup(weights="bf16"))
        assert r.line("infer/experts_touched").value == (cfg.k if B == 1 else cfg.E)
        assert r.line("infer/decode_weights_read").value == read - 2 * (cfg.V - B) * cfg.d
        gains = b.params_norms + cfg.qk_norm * cfg.L * 2 * cfg.d_head  # the norms' (Qwen3's q and k norms too)
        matmuls = b.params_active - gains - cfg.V * cfg.d  # the untied token table is a lookup
        assert r.decode_flops == B * (2 * matmuls + 4 * cfg.L * 4097 * cfg.h * cfg.d_head)
        assert r.weight_bytes == 2 * b.params_exact
    int4 = infer(replace(PRESETS[name], B=1, T=4096), InferSetup(weights="int4"))
    N_q, S_q, N_e, S_e = quantized(PRESETS[name], 128)
    assert int4.line("infer/expert_bytes").value == N_e / 2 + 2 * S_e
    assert N_e == 3 * cfg.d * cfg.d_expert and S_e == N_e // 128


@pytest.mark.parametrize("name", ["mixtral-8x7b", "qwen3-30b-a3b"])
def test_the_infer_table_of_a_mixture_of_experts_prints_and_its_json_carries_it(name, capsys):
    code, out, err = run_cli(["--preset", name, "--table", "infer", "--B", "64", "--T", "4096", "--weights", "int4"],
                             capsys)
    assert (code, err) == (0, "") and "E_B, the routed experts" in out and "(B·k, d)" in out
    code, out, err = run_cli(["--preset", name, "--table", "infer", "--B", "64", "--T", "4096", "--weights", "int4",
                              "--json"], capsys)
    doc = json.loads(out)["infer"]
    r = infer(replace(PRESETS[name], B=64, T=4096), InferSetup(weights="int4"))
    assert (code, doc["decode_bytes"], doc["decode_flops"], doc["ttft_s"]) == (0, r.decode_bytes, r.decode_flops,
                                                                             r.ttft_s)
    assert {x["key"]: x["value"] for x in doc["lines"]} == {x.key: x.value for x in r.lines} and len(doc["by_B"]) == 11
    assert doc["by_T"][-1]["T"] == r.cfg.T_max  # Qwen3's 40,960, beyond 32,768


def test_a_long_context_serves_within_the_sizes_a_pass_takes():
    """T up to the model's context (`model.config.check_sizes`): Qwen3-Next at B = 1 and T = 262,144, its cache at bf16
    the attention blocks' K and V of 262,144 tokens and the Gated DeltaNet blocks' states (the figure of issue 41's
    note); Llama 4 Scout's T chart runs to its 10,485,760 in at most ten points; at T = 4,194,304 the B chart stops at
    B = 32, the most sequences a pass of that many tokens takes."""
    from model.memory import kv_cache_lines
    qwen = replace(PRESETS["qwen3-next-80b-a3b"], B=1, T=262_144)
    assert kv_cache_lines(qwen, "bf16")[0].value == 6_520_307_712
    assert infer(qwen).line("infer/kv_cache").value == 6_520_307_712
    scout = PRESETS["llama4-scout"]
    Ts = [p["T"] for p in by_context(scout)]
    assert Ts[-2:] == [8_388_608, 10_485_760] and len(Ts) <= 10
    assert [p["B"] for p in by_batch(replace(scout, B=1, T=4_194_304))] == [1, 2, 4, 8, 16, 32]


def test_a_mixture_of_experts_knee_is_where_its_step_turns_compute_bound():
    """Mixtral at T = 128 with int4 weights: the weights a step reads grow with the experts touched, so the knee is
    bisected; a step is memory-bound one sequence below it and compute-bound at it."""
    cfg, setup = replace(PRESETS["mixtral-8x7b"], B=1, T=128), InferSetup(weights="int4")
    knee = infer(cfg, setup).knee_B

    def compute_bound(B: int) -> bool:
        r = infer(replace(cfg, B=B), setup)
        return r.decode_flops / r.gpu_flops_per_s >= r.decode_bytes / r.gpu_bytes_per_s

    assert knee == 413 and compute_bound(knee) and not compute_bound(knee - 1)


def test_every_preset_off_the_menu_serves_with_its_lines_checked():
    """The serving figures (`infer` checks every line's formula against its value) of each preset the page's menu
    leaves out; tests/test_app_views.py checks those of the menu's presets as their pages build."""
    from model.config import ALL_PRESETS
    from model.inference import serving
    left_out = {name: cfg for name, cfg in ALL_PRESETS.items() if name not in PRESETS}
    assert left_out
    for name, cfg in left_out.items():
        served = serving(cfg)  # the figures, and the charts' rows over B and over T
        assert served.result.decode_flops > 0 and served.by_B and served.by_T, name
