"""Mixtures of experts (issue 26): the presets counted total and active; random mixtral, qwen2_moe and qwen3_moe
files against transformers' own modules (total parameters on the meta device, forward FLOPs on CPU with eager
experts, the parameters one token uses from the router's k); the grouped matmul counted as torch counts a matmul;
autograd's saved bytes on real CPU tensors; the step's peak against full-depth steps; the collapsed groups of
blocks; the change's line; every table of the CLI for both presets."""
from __future__ import annotations

import json
import logging
import random
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from model import GPT, PRESETS, Config, budget, trace
from model.budgeting import chart, chart_note
from model.changes import changes
from model.config import from_hf
from model.grouped import grouped_mm
from model.passes import saved_bytes_of
from model.training import TrainSetup, plan, step_phases
from pagetools import run_cli
from test_training import check_a_real_step_on_cpu_tensors, meta_step  # a whole step on the meta device; a real one

transformers = pytest.importorskip("transformers")
from transformers import CONFIG_MAPPING, AutoModelForCausalLM  # noqa: E402

logging.getLogger("transformers").setLevel(logging.ERROR)
PUBLISHED = Path(__file__).parent / "hf" / "published"
COUNTS = json.loads((PUBLISHED / "counts.json").read_text())
PRESET_COUNTS = {"mixtral-8x7b": (46_702_792_704, 12_879_925_248), "qwen3-30b-a3b": (30_532_122_624, 3_353_032_704)}


# --- the presets, to the parameter ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", PRESET_COUNTS)
def test_the_presets_total_and_active(name):
    b = budget(PRESETS[name])
    assert (b.params_exact, b.params_active) == PRESET_COUNTS[name]
    assert b.params_exact == COUNTS[name]["parameters"]  # transformers' module of the published file
    assert (b.flops_fwd_per_token, b.flops_fwd_active_per_token) == (2 * b.params_exact, 2 * b.params_active)
    assert b.flops_train_active_per_token == 6 * b.params_active


@pytest.mark.parametrize("cfg", [PRESETS["mixtral-8x7b"], PRESETS["qwen3-30b-a3b"],
                                 replace(PRESETS["qwen3-30b-a3b"], shared_experts=1, shared_dim=512, shared_gate=True,
                                         dense_first=2, ff_dim=6_144)])
def test_the_chart_splits_n_into_routed_and_shared_experts_routers_attention_and_embeddings(cfg):
    b = budget(cfg)
    bars = {key: (b.line(key).value, in_sum) for key, _, in_sum in chart(b)}
    assert sum(v for v, in_sum in bars.values() if in_sum) == b.params_exact
    L, d, E, k = cfg.L, cfg.d, cfg.E, cfg.k
    assert bars["params/experts"][0] == cfg.L_moe * 3 * E * d * cfg.d_expert
    assert bars["params/experts_active"] == (cfg.L_moe * 3 * k * d * cfg.d_expert, False)
    assert bars["params/routers"][0] == cfg.L_moe * d * E and bars["params/attention"][0] == L * b.params_attn_block
    assert ("params/shared" in bars) == bool(cfg.E_shared) and ("params/dense_mlps" in bars) == ("dense" in cfg.block_kinds)
    if cfg.E_shared:
        assert bars["params/shared"][0] == cfg.L_moe * (3 * d * cfg.d_shared + d)  # and the gate (d, 1)
    assert b.params_active == b.params_exact - bars["params/experts"][0] + bars["params/experts_active"][0]


# --- transformers' modules ----------------------------------------------------------------------------------------

def _module(doc: dict, device: str) -> torch.nn.Module:
    config = CONFIG_MAPPING[doc["model_type"]](**{k: v for k, v in doc.items() if k != "model_type"})
    experts = "eager" if device == "cpu" else "batched_mm"  # the meta device cannot follow eager's routing loop
    with torch.device(device):
        return AutoModelForCausalLM.from_config(config, attn_implementation="eager", experts_implementation=experts)


def reference(doc: dict, B: int, T: int) -> tuple[int, int, int]:
    """transformers' module of `doc`: (parameters on the meta device, parameters one token uses, forward FLOPs of a
    CPU pass at B, T with eager attention and eager experts). A token uses every parameter but, in each MoE block,
    the E − k experts its router (`mlp.gate.top_k`) does not pick."""
    meta = _module(doc, "meta")
    total = sum(p.numel() for p in meta.parameters())
    skipped = 0
    for layer in meta.model.layers:
        experts = getattr(layer.mlp, "experts", None)
        if experts is not None:
            E, k = experts.num_experts, layer.mlp.gate.top_k
            skipped += sum(p.numel() for p in experts.parameters()) * (E - k) // E
    torch.manual_seed(0)
    cpu = _module(doc, "cpu")
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        cpu(input_ids=torch.randint(0, doc["vocab_size"], (B, T)), use_cache=False)
    return total, total - skipped, counter.get_total_flops()


def random_doc(rng: random.Random, model_type: str) -> dict:
    """A small random file of `model_type`: experts, k, widths and (Qwen) which blocks are MoE drawn."""
    h_kv = rng.choice([1, 2])
    h = h_kv * rng.choice([1, 2, 3])
    L, E = rng.randrange(1, 5), rng.randrange(2, 9)
    doc = {"model_type": model_type, "vocab_size": rng.randrange(8, 80), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(4, 40),
           "max_position_embeddings": 64, "tie_word_embeddings": rng.random() < 0.5,
           "num_experts_per_tok": rng.randrange(1, E + 1), "hidden_size": h * 2 * rng.randrange(1, 5)}
    doc["num_local_experts" if model_type == "mixtral" else "num_experts"] = E
    if model_type != "mixtral":
        doc.update(moe_intermediate_size=rng.randrange(2, 30), decoder_sparse_step=rng.randrange(1, 3),
                   mlp_only_layers=rng.sample(range(L), rng.randrange(0, L)), norm_topk_prob=rng.random() < 0.5)
    if model_type == "qwen2_moe":
        doc.update(shared_expert_intermediate_size=rng.randrange(2, 30), qkv_bias=rng.random() < 0.5)
    if model_type == "qwen3_moe":
        doc["attention_bias"] = rng.random() < 0.5
    return doc


SWEEP = [(t, i) for t in ("mixtral", "qwen2_moe", "qwen3_moe") for i in range(6)]


@pytest.mark.parametrize("model_type, seed", SWEEP, ids=[f"{t}-{i}" for t, i in SWEEP])
def test_random_files_match_transformers_total_active_and_forward_flops(model_type, seed):
    rng = random.Random(f"{model_type}-{seed}")
    doc = random_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 9)
    cfg = from_hf(doc, B=B, T=T)
    b = budget(cfg)
    assert (b.params_exact, b.params_active, b.flops_fwd_measured_per_token * B * T) == reference(doc, B, T), doc


def test_the_issues_tiny_mixtral_is_259584_flops_per_token_with_its_experts():
    doc = {"model_type": "mixtral", "vocab_size": 128, "hidden_size": 64, "intermediate_size": 128,
           "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "num_local_experts": 8,
           "num_experts_per_tok": 2, "max_position_embeddings": 64}
    total, active, flops = reference(doc, 1, 8)
    b = budget(from_hf(doc, B=1, T=8))
    assert flops == b.flops_fwd_measured_per_token * 8
    assert (b.params_exact, b.params_active) == (total, active)


# --- the grouped matmul and the pass ----------------------------------------------------------------------------

def test_the_grouped_matmul_is_each_experts_matmul_and_is_counted_as_one():
    torch.manual_seed(0)
    x, w = torch.randn(10, 6, requires_grad=True), torch.randn(3, 6, 4, requires_grad=True)
    counts = torch.tensor([4, 0, 6])
    out = grouped_mm(x, w, counts)
    assert torch.allclose(out, torch.cat([x[:4] @ w[0], x[4:] @ w[2]]))
    out.sum().backward()
    assert torch.allclose(w.grad[1], torch.zeros(6, 4)) and torch.allclose(w.grad[0], x[:4].T.detach() @ torch.ones(4, 4))
    with FlopCounterMode(display=False) as counter:
        grouped_mm(x, w, counts).sum().backward()
    assert counter.get_total_flops() == 3 * 2 * 10 * 6 * 4  # forward 2·M·n_in·n_out, backward twice that


MOE = Config(B=2, T=5, d=16, h=4, L=2, V=23, T_max=16, norm="rmsnorm", positions="rope", mlp="swiglu", kv_heads=2,
             bias="none", experts=4, top_k=2, expert_dim=12)
SMALL = [MOE, replace(MOE, attention="fused", top_k=1, tie=False),
         replace(MOE, L=3, shared_experts=2, shared_dim=6, shared_gate=True, bias="qkv", moe_step=2, ff_dim=10),
         replace(MOE, L=4, dense_first=1, dense_layers=(3,), ff_dim=20, qk_norm=True, top_k=4),
         Config(B=3, T=4, d=12, h=3, L=2, V=9, T_max=8, experts=3, top_k=2, expert_dim=8)]  # GPT-2's recipe, GELU


def _ids(c: Config) -> str:
    return f"{c.norm}-{c.attention}-E{c.E}k{c.k}-kinds{''.join(x[0] for x in c.block_kinds)}"


@pytest.mark.parametrize("cfg", SMALL, ids=_ids)
def test_the_cpu_module_counts_the_measured_flops_with_its_real_routing(cfg):
    torch.manual_seed(0)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        GPT(cfg)(torch.randint(0, cfg.V, (cfg.B, cfg.T)))
    assert counter.get_total_flops() == budget(cfg).flops_fwd_measured_per_token * cfg.B * cfg.T


@pytest.mark.parametrize("cfg, dtype", [(c, d) for c in SMALL for d in ("fp32", "bf16")
                                        if c.norm == "rmsnorm" or d == "fp32"], ids=lambda x: x if isinstance(x, str)
                         else _ids(x))
def test_saved_bytes_equal_autograd_on_real_cpu_tensors(cfg, dtype):
    """Every block on CPU, routed by real values, against one block of each kind on the meta device (LayerNorm at
    fp32 only: CPU's fused LayerNorm keeps 16-bit statistics for 16-bit input, tests/test_lines.py)."""
    torch.manual_seed(0)
    m = GPT(cfg).to({"fp32": torch.float32, "bf16": torch.bfloat16}[dtype])
    assert saved_bytes_of(m, torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg, dtype).saved_bytes


@pytest.mark.parametrize("cfg", SMALL[:4], ids=_ids)
def test_each_phases_peak_equals_a_full_depth_step_on_the_meta_device(cfg):
    setup = TrainSetup(optimizer="adam-fp32", gpus=1)
    predicted = {x.name: x.value for x in step_phases(cfg, setup)}
    measured = meta_step(cfg, "fp32")
    assert max(predicted["forward"], predicted["loss"]) == measured["forward"]
    assert predicted["backward"] == measured["backward"] and predicted["optimizer"] == measured["optimizer"]


@pytest.mark.parametrize("cfg", SMALL[:4:3], ids=_ids)
def test_the_peak_equals_a_real_step_on_cpu_tensors(cfg):
    check_a_real_step_on_cpu_tensors(cfg)


def test_training_memory_holds_every_expert_and_k_experts_activations():
    cfg = PRESETS["mixtral-8x7b"]
    b, p = budget(cfg), plan(cfg, TrainSetup(gpus=8, zero=3))
    assert p.N == b.params_exact and p.N_active == b.params_active
    assert p.memory.weights == 2 * b.params_exact / 8 and p.memory.optimizer == 12 * b.params_exact / 8
    assert p.C_6ND == 6 * b.params_active * p.D and p.D == 20 * b.params_active
    lines = {x.key: x for x in p.lines}
    assert "(all N: every expert)" in lines["memory/weights"].label
    assert "the cache is attention's, as a dense model's" in lines["serve/kv_cache"].label
    dense = replace(cfg, experts=None, top_k=None, expert_dim=None, ff_dim=14_336)  # Mistral 7B's blocks
    assert p.kv_cache_bytes == plan(dense, TrainSetup(gpus=8, zero=3)).kv_cache_bytes
    assert p.memory.activations == trace(cfg, "bf16").saved_bytes  # k experts' rows per token, measured


# --- tables -----------------------------------------------------------------------------------------------------

def test_the_shapes_table_collapses_the_identical_blocks_of_each_kind(capsys):
    cfg = replace(MOE, L=6, dense_first=2, dense_layers=(5,), ff_dim=20)
    argv = ["--d", "16", "--h", "4", "--L", "6", "--V", "23", "--T", "5", "--T-max", "16", "--norm", "rmsnorm",
            "--positions", "rope", "--mlp", "swiglu", "--h-kv", "2", "--bias", "none", "--d-ff", "20",
            "--experts", "4", "--top-k", "2", "--d-expert", "12", "--dense-first", "2", "--dense-layers", "5",
            "--B", "2", "--table", "shapes"]
    code, out, err = run_cli(argv, capsys)
    assert (code, err) == (0, "")
    assert cfg.block_kinds == ("dense", "dense", "moe", "moe", "moe", "dense")
    heads = [x.strip() for x in out.splitlines() if x.strip().startswith("-- block")]
    # one group per kind of block, its rows listed once: every block of a kind has the same shapes
    assert heads == ["-- blocks 0, 1, 5: dense, × 3 --", "-- blocks 2 … 4: MoE, × 3 --"]
    code, out, _ = run_cli([*argv, "--expand"], capsys)
    heads = [x.strip() for x in out.splitlines() if x.strip().startswith("-- block")]
    assert heads == [f"-- block {i}: {'MoE' if 2 <= i <= 4 else 'dense'} --" for i in range(6)]


def test_what_each_change_buys_gains_the_mixture_of_experts_line():
    c = changes(PRESETS["mixtral-8x7b"], "bf16")
    group = next(g for g in c.groups if g.key == "moe")
    ratio = next(x for x in group.lines if x.key == "changes/moe/params_ratio")
    assert ratio.value == 4 and ratio.formula == "E/k"
    lines = {x.key: x.value for x in group.lines}
    assert lines["changes/moe/params"] == 32 * 3 * (8 - 2) * 4096 * 14_336 + 32 * 8 * 4096  # E − k more experts and the routers
    assert lines["changes/moe/flops"] == 2 * 32 * 8 * 4096  # the routers' matmuls only: the same FLOPs per token otherwise
    assert "E/k = 4 times" in group.title and "the KV cache is unchanged" in group.title


@pytest.mark.parametrize("name", PRESET_COUNTS)
@pytest.mark.parametrize("table", [["--table", "shapes"], ["--table", "budget"], ["--table", "train"],
                                   ["--table", "changes"], ["--table", "kv"], ["--values", "--text", "The cat sat on the mat."], ["--json"],
                                   ["--table", "train", "--json"], ["--table", "shapes", "--expand"]])
def test_every_table_prints_for_both_presets(name, table, capsys):
    code, out, err = run_cli(["--preset", name, *table], capsys)
    assert (code, err) == (0, "") and "Traceback" not in out
    total, active = PRESET_COUNTS[name]
    if "--json" in table:
        doc = json.loads(out)
        if "budget" in doc:
            assert (doc["budget"]["params_exact"], doc["budget"]["params_active"]) == (total, active)
            assert sum(x["value"] for x in doc["chart"]["bars"] if x["adds_to_N"]) == total
    elif "--values" in table:  # a real pass of a scaled-down copy (its own N in its header), routed at init
        assert "Scaled-down copy of the model asked for" in out and "Tokens per expert at init" in out
    else:
        assert f"N = {total:,} · N_active = {active:,}" in out.splitlines()[0]


def test_the_pages_list_the_mixtures_of_experts_in_their_families():
    from app.query import parse_query, to_query
    from app.state import preset_labels as live_labels
    from model.families import PAGE_PRESETS, family_of, menu_groups, menu_label

    # every exported page carries the dense presets' figures; a mixture of experts' only where it is the page's own
    assert set(PRESET_COUNTS) <= set(PRESETS) and not set(PRESET_COUNTS) & set(PAGE_PRESETS)
    assert set(PRESET_COUNTS) <= set(live_labels().values())  # the live page's menu, and the exported page's
    for name in PRESET_COUNTS:
        assert menu_label(name) in menu_groups(moe=True)[family_of(name)]
        q = parse_query(f"?preset={name}")
        assert q.config == PRESETS[name] and q.notices == ()
        assert parse_query(to_query(q.config)).config == PRESETS[name]  # a link reproduces it


def test_the_mlp_switch_makes_mistral_mixtral_and_back():
    from app.query import parse_query
    from model.families import moe_fields

    mistral, mixtral = PRESETS["mistral-7b"], PRESETS["mixtral-8x7b"]
    assert replace(mistral, **moe_fields(mistral, True)) == mixtral
    assert replace(mixtral, **moe_fields(mixtral, False)) == mistral
    assert moe_fields(mixtral, True) == {} and moe_fields(mistral, False) == {}
    from model.rules import preset_of
    assert preset_of(replace(mixtral, experts=16)) == preset_of(replace(mixtral, top_k=1)) == "custom"  # not Mixtral
    assert parse_query("?preset=mistral-7b&moe=1").config == mixtral
    assert parse_query("?preset=mixtral-8x7b&moe=0").config == mistral


@pytest.mark.parametrize("query, config, notice", [
    ("?preset=mixtral-8x7b&k=abc", {}, 'k="abc" is not a whole number from 1 to 4,096; using k=2'),
    ("?preset=mixtral-8x7b&k=9", {"top_k": 8}, "k clamped 9 → 8: each token goes to k of the E = 8 experts, so k "
                                               "cannot exceed E"),
    ("?preset=mixtral-8x7b&E=0", {}, "E=0 is out of range: E must be from 1 to 4,096; using E=8"),
    ("?preset=mixtral-8x7b&d_expert=", {}, "d_expert has no value; using d_expert=14,336"),
    ("?preset=qwen3-30b-a3b&moe_step=99", {}, "moe_step=99 exceeds L=48: block i is MoE when (i + 1) is a multiple of "
                                              "moe_step, so no block would be; set moe_step from 1 to 48; showing every "
                                              "block MoE"),
    ("?preset=mixtral-8x7b&dense_layers=0,x", {}, 'dense_layers="0,x" is not a list of block indices (0,1,2: whole '
                                                  'numbers from 0 to L − 1, or none); using dense_layers=none'),
    ("?preset=gpt2-small&k=3&moe=0", None, "k: ignored with moe=0 (a dense MLP has no experts)"),
    ("?preset=mixtral-8x7b&moe=maybe", {}, 'moe="maybe" is not 1 or 0 (moe=1: the MLP is a mixture of experts (E, k, '
                                           'd_expert); 0: a dense MLP); using moe=1'),
])
def test_a_bad_mixture_of_experts_in_a_link_is_one_notice(query, config, notice):
    from app.query import parse_query

    q = parse_query(query)
    assert q.notices == (notice,)
    base = PRESETS[query.split("=", 2)[1].split("&")[0]]
    assert q.config == (base if config is None else replace(base, **config))


def test_a_link_with_shared_experts_and_a_layout_comes_back_the_same():
    from app.query import parse_query, to_query

    query = "?preset=qwen3-30b-a3b&E_shared=1&d_shared=512&shared_gate=1&dense_first=2&dense_layers=10,11"
    q = parse_query(query)
    assert q.notices == ()
    cfg = q.config
    assert (cfg.E_shared, cfg.d_shared, cfg.shared_gate, cfg.dense_first, cfg.dense_layers) == (1, 512, True, 2, (10, 11))
    assert cfg.block_kinds[:3] == ("dense", "dense", "moe") and cfg.block_kinds[10:12] == ("dense", "dense")
    assert parse_query(to_query(cfg)).config == cfg


@pytest.mark.parametrize("change, message", [
    ({"experts": None, "top_k": 2, "expert_dim": None}, "top_k=2 is set but experts is not: a dense model has no "
                                                        "mixture of experts; set experts (E) or drop top_k"),
    ({"top_k": None}, "E=4 experts need k, the experts each token goes to: set top_k (1 to 4"),
    ({"top_k": 5}, "k=5 exceeds E=4: each token goes to k of the E experts, so k must be from 1 to 4"),
    ({"expert_dim": None}, "E=4 experts need d_expert, each expert's width: set expert_dim"),
    ({"experts": 0}, "E=0"),
    ({"shared_gate": True}, "shared_gate is set but E_shared=0: there are no shared experts"),
    ({"moe_step": 3}, "moe_step=3 exceeds L=2"),
    ({"dense_layers": (2,)}, "dense_layers lists block 2, but the blocks are 0 … 1: list indices below L=2"),
    ({"dense_layers": "0"}, "dense_layers must be a list of block indices"),
])
def test_a_bad_mixture_of_experts_is_one_line_naming_the_fix(change, message):
    with pytest.raises(ValueError) as e:
        replace(MOE, **change)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("argv, message", [
    (["--top-k", "2"], "top_k=2 is set but experts is not"),
    (["--preset", "mixtral-8x7b", "--dense-layers", "x"], "invalid block list 'x': write indices such as 0,1,2"),
    (["--preset", "mixtral-8x7b", "--dense-layers", "40"], "dense_layers lists block 40, but the blocks are 0 … 31"),
])
def test_bad_moe_options_give_one_line_and_status_2(argv, message, capsys):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_live_values_card_shows_the_tokens_per_expert_and_the_recipe_labels():
    """The values card of a small Mixtral-like model: the CLI's routing rows (model.values_report), and every tensor's
    label from the recipe's notation (the router's, RoPE's), not GPT-2's."""
    from app.cards.tensors.view import experts_html, stats_html
    from model import values as mv
    from model import values_report as vr

    cfg = Config(B=1, T=12, d=64, h=4, L=2, V=256, T_max=64, norm="rmsnorm", positions="rope", mlp="swiglu",
                 bias="none", kv_heads=2, experts=4, top_k=2, expert_dim=96)
    v = mv.values(cfg, list(range(12)))
    html_ = experts_html(v)
    assert vr.expert_title(v).replace("'", "&#x27;") in html_
    assert html_.count("<tr><td class=\"n\">block ") == cfg.L
    assert "moe.router" in stats_html(v, 0) and "rope.angles" in stats_html(v, 0)
    assert experts_html(mv.values(Config(B=1, T=8, d=64, h=4, L=1, V=256, T_max=64), [1, 2, 3])) == ""


def test_the_charts_note_names_shared_experts_only_where_the_model_has_them():
    assert "shared experts" not in chart_note(budget(PRESETS["mixtral-8x7b"]))
    qwen2_like = replace(PRESETS["qwen3-30b-a3b"], shared_experts=1, shared_dim=768)
    assert "the router, the shared experts and k of the E routed experts" in chart_note(budget(qwen2_like))
