"""Multi-head latent attention and DeepSeek-V3 (issue 27) against transformers: the preset to the parameter from its
published config.json (without the multi-token-prediction module, which transformers does not build), its KV cache
of the latent and the rotary key (70,272 bytes a token at bf16), a random sweep of tiny deepseek_v3 files (parameters
on the meta device, the real cache's bytes after a prefill, FlopCounterMode on the eager forward with eager experts),
saved bytes against autograd, the tensors of the trace, the Config's refusals, the pages' one line and the CLI."""
from __future__ import annotations

import json
import logging
import random
import re
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from model import GPT, budget, trace
from model.changes import changes
from model.config import TABLE_PRESETS, Config, HFConfigError, from_hf, read_hf
from model.memory import kv_cache_lines
from model.passes import saved_bytes_of
from pagetools import run_cli
from test_moe import _module  # eager experts on the CPU, batched on the meta device
from test_window import reference

transformers = pytest.importorskip("transformers")

PUBLISHED = Path(__file__).parent / "hf" / "published"  # the published files, with transformers' counts (its README)
logging.getLogger("transformers").setLevel(logging.ERROR)
DEEPSEEK_V3 = 671_026_404_352  # transformers' DeepseekV3ForCausalLM of the published file: no MTP layer


def test_deepseek_v3_is_its_published_file_to_the_parameter():
    doc = json.loads((PUBLISHED / "deepseek-v3.json").read_text())
    counts = json.loads((PUBLISHED / "counts.json").read_text())
    preset = TABLE_PRESETS["deepseek-v3"]
    reading = read_hf(doc, B=preset.B, T=preset.T)
    assert reading.config == preset
    assert budget(preset).params_exact == DEEPSEEK_V3 == counts["deepseek-v3"]["parameters"]
    assert any("without the multi-token-prediction module (num_nextn_predict_layers = 1)" in n for n in reading.notes)
    assert any("e_score_correction_bias" in n and "not in N" in n for n in reading.notes)
    lines = {x.key: x.value for x in kv_cache_lines(preset, "bf16")}
    assert lines["memory/kv_cache_per_token"] == (512 + 64) * 61 * 2 == 70_272
    assert lines["memory/kv_cache_heads"] == 61 * 128 * (128 + 64 + 128) * 2
    assert lines["memory/kv_cache_groups"] == 2.25  # the DeepSeek-V2 paper's "GQA with only 2.25 groups"


def random_doc(rng: random.Random, model_type: str = "deepseek_v3") -> dict:
    """A tiny deepseek_v3 (or deepseek_v2) file: with or without the queries' latent, dense first blocks, shared
    experts, groups (DeepSeek-V2's greedy or group-limited choice; its d a multiple of h, as its class requires)."""
    groups = rng.choice([1, 2])
    E = groups * rng.randrange(2, 4)
    topk_group = rng.randrange(1, groups + 1)
    h, L = rng.randrange(1, 4), rng.randrange(1, 4)
    doc = {"model_type": "deepseek_v3", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h, "hidden_size": rng.randrange(4, 24),
           "intermediate_size": rng.randrange(2, 20), "moe_intermediate_size": rng.randrange(2, 12),
           "kv_lora_rank": rng.randrange(2, 12), "q_lora_rank": rng.choice([None, rng.randrange(2, 12)]),
           "qk_rope_head_dim": 2 * rng.randrange(1, 4), "qk_nope_head_dim": rng.randrange(1, 6),
           "v_head_dim": rng.randrange(1, 8), "n_routed_experts": E, "n_group": groups, "topk_group": topk_group,
           "num_experts_per_tok": rng.randrange(1, topk_group * E // groups + 1), "n_shared_experts": rng.randrange(0, 3),
           "first_k_dense_replace": rng.randrange(0, L), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.3}
    if model_type == "deepseek_v2":  # even d_nope and d_c: its RoPE views fp32 q and k as complex pairs in place
        doc.update(model_type=model_type, hidden_size=h * rng.randrange(2, 8), qk_nope_head_dim=2 * rng.randrange(1, 4),
                   kv_lora_rank=2 * rng.randrange(1, 6), topk_method=rng.choice(["greedy", "group_limited_greedy"]))
    return doc


@pytest.mark.parametrize("model_type, seed", [(t, seed) for t in ("deepseek_v3", "deepseek_v2") for seed in range(6)])
def test_random_deepseek_files_match_transformers_parameters_cache_and_flops(model_type, seed):
    rng = random.Random(f"deepseek-v3-{seed}" if model_type == "deepseek_v3" else f"{model_type}-{seed}")
    doc = random_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 10)
    cfg = from_hf(doc, B=B, T=T)
    assert cfg.mla and cfg.attention == "eager" and cfg.d_cq == doc["q_lora_rank"]
    b = budget(cfg)
    kv = kv_cache_lines(cfg, "fp32")[0].value
    assert (b.params_exact, kv, b.flops_fwd_measured_per_token * B * T) == reference(doc, B, T, build=_module), doc
    if cfg.d % cfg.h == 0 and cfg.d_v % 2 == 0:  # what each change buys: true lines that add up (`changes` checks
        assert changes(cfg).steps[-1].key == "latent"  # both), latent attention last
    elif cfg.d % cfg.h == 0:
        with pytest.raises(ValueError, match=f"no chain of changes at d_v={cfg.d_v}: "):
            changes(cfg)


MLA = Config(B=2, T=5, d=12, h=3, L=2, V=11, norm="rmsnorm", positions="rope", mlp="swiglu", bias="none", ff_dim=8,
             experts=4, top_k=2, expert_dim=6, shared_experts=1, dense_first=1, latent_dim=6, q_latent_dim=5,
             rope_dim=4, nope_dim=3, value_dim=7)


@pytest.mark.parametrize("cfg, dtype", [(MLA, "fp32"), (MLA, "bf16"), (replace(MLA, q_latent_dim=None, T=1), "fp32")],
                         ids=["q-latent-fp32", "q-latent-bf16", "no-q-latent-T1"])
def test_saved_bytes_of_a_latent_attention_model_equal_autograd_on_cpu(cfg, dtype):
    torch.manual_seed(0)
    model = GPT(cfg).to({"fp32": torch.float32, "bf16": torch.bfloat16}[dtype])
    assert saved_bytes_of(model, torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg, dtype).saved_bytes


def test_the_trace_shows_every_latent_attention_tensor():
    rows = {r.local: (r.symbolic, r.shape) for r in trace(MLA).rows if r.block == 0}
    assert rows["attn.q_a"] == ("(B, T, d_cq)", (2, 5, 5))
    assert rows["attn.q_b"] == ("(B, T, h·(d_nope + d_R))", (2, 5, 21))
    assert rows["attn.kv_a_norm"] == ("(B, T, d_c)", (2, 5, 6))  # the latent c_kv, cached
    assert rows["attn.k_rot"] == ("(B, 1, T, d_R)", (2, 1, 5, 4))  # the rotary key, cached
    assert rows["attn.k_nope"] == ("(B, h, T, d_nope)", (2, 3, 5, 3)) and rows["attn.v"] == ("(B, h, T, d_v)", (2, 3, 5, 7))
    assert rows["attn.scores"] == ("(B, h, T, T)", (2, 3, 5, 5)) and rows["attn.attn_v"] == ("(B, h, T, d_v)", (2, 3, 5, 7))
    assert rows["attn.proj"] == ("(B, T, d)", (2, 5, 12)) and "attn.q_proj" not in rows
    assert "attn.q_proj" in {r.local for r in trace(replace(MLA, q_latent_dim=None)).rows}


@pytest.mark.parametrize("change, message", [
    ({"latent_dim": None}, "q_latent_dim=5 is set but latent_dim is not"),
    ({"rope_dim": None}, r"latent attention \(d_c=6\) needs d_R: set rope_dim"),
    ({"rope_dim": 3}, "d_R=3 is odd"),
    ({"attention": "fused"}, "set attention to eager"),
    ({"kv_heads": 1}, "kv_heads=1 with latent attention is not modelled"),
    ({"positions": "learned"}, "set positions to rope"),
])
def test_a_bad_latent_attention_is_one_line_naming_the_fix(change, message):
    with pytest.raises(ValueError, match=message):
        replace(MLA, **change)


def test_both_pages_take_latent_attention(tmp_path):
    """The live page reads a deepseek_v3 config.json; `python -m app export` writes its page (tests/test_export_mla.py
    opens DeepSeek-V3's), and both pages' menus list DeepSeek-V3 under DeepSeek."""
    import subprocess
    import sys

    from app.cards.recipe.view import read_config_json
    from model.families import menu_groups, menu_label

    assert menu_groups(moe=True)["DeepSeek"] == [menu_label("deepseek-v3"), menu_label("deepseek-v3.2")]
    doc = {**random_doc(random.Random(0)), "kv_lora_rank": 6, "qk_rope_head_dim": 4}
    cfg, notice = read_config_json(json.dumps(doc), Config(B=2, T=8, d=24, h=4, L=1, V=40))
    assert cfg is not None and cfg.mla and (cfg.d_c, cfg.d_R) == (6, 4) and notice.startswith("read deepseek_v3")
    (tmp_path / "config.json").write_text(json.dumps(doc))
    out = tmp_path / "page.html"  # a fresh process: the page is built without Panel imported
    done = subprocess.run([sys.executable, "-m", "app", "export", str(out), "--hf-config", str(tmp_path / "config.json")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and f"wrote {out}" in done.stdout and out.stat().st_size > 0, done.stderr


@pytest.mark.parametrize("change, message", [
    ({"num_experts_per_tok": None}, "num_experts_per_tok is null (the default of DeepseekV2Config): the router picks"),
    ({"topk_method": "noaux_tc"}, "topk_method='noaux_tc' is not one of greedy, group_limited_greedy"),
    ({"topk_method": "group_limited_greedy", "n_group": None}, "needs n_group and topk_group"),
    ({"topk_method": "group_limited_greedy", "n_group": 3, "topk_group": 1}, "n_group=3 must divide n_routed_experts=4"),
    ({"mlp_bias": True}, "mlp_bias=true puts biases on DeepSeek-V2's dense and shared MLPs"),
    ({"hidden_size": 10}, "hidden_size=10 is not a multiple of num_attention_heads=4, which transformers' DeepseekV2Config"),
])
def test_a_deepseek_v2_file_transformers_cannot_run_is_one_line(change, message):
    doc = {**V2, **change}
    with pytest.raises(HFConfigError, match=re.escape(message)):
        from_hf(doc)


V2 = {"model_type": "deepseek_v2", "vocab_size": 50, "hidden_size": 32, "intermediate_size": 40, "num_hidden_layers": 3,
      "num_attention_heads": 4, "kv_lora_rank": 8, "q_lora_rank": None, "qk_rope_head_dim": 4, "qk_nope_head_dim": 6,
      "v_head_dim": 6, "moe_intermediate_size": 12, "n_routed_experts": 4, "n_shared_experts": 2,
      "num_experts_per_tok": 2, "first_k_dense_replace": 1, "max_position_embeddings": 64}


def test_a_deepseek_v2_file_through_the_command_line_with_its_notes(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**V2, "head_dim": 64}))
    code, out, err = run_cli(["--hf-config", str(path), "--table", "kv", "--dtype", "bf16"], capsys)
    cfg = from_hf(V2)
    assert code == 0 and f"{budget(cfg).params_exact:,}" in out
    assert "head_dim = 64 is ignored: DeepseekV2Config sets head_dim to qk_rope_head_dim (d_R = 4)" in err
    assert "topk_method = 'greedy' (the default)" in err and "multi-token" not in err  # V2's file has no MTP module
    assert kv_cache_lines(cfg, "bf16")[1].value == 3 * (8 + 4) * 2  # L·(d_c + d_R)·2 bytes a token


def test_what_latent_attention_buys_against_the_multi_head_attention_it_replaces():
    """DeepSeek-V3 beside its GPT-2 twin: d_head = d_v set apart first (the DeepSeek-V2 paper's MHA of h heads of
    d_h = d_v), latent attention last; its KV cache line is 61·576·2 − 2·61·128·128·2 bytes a token, its ratio
    2h·d_v / (d_c + d_R) = 32,768 / 576, and the lines add up to the model minus its twin."""
    cfg = TABLE_PRESETS["deepseek-v3"]
    c = changes(cfg, "bf16")
    assert [s.key for s in c.steps] == ["d_head", "norm", "bias", "positions", "mlp", "moe", "latent"]
    assert c.steps[0].title.startswith("d_head = d_v = 128 set apart from d / h = 56")
    latent = {x.key: x for x in c.steps[-1].lines}
    assert latent["changes/latent/kv_cache"].value == 61 * 576 * 2 - 2 * 61 * 128 * 128 * 2 == -3_927_424
    assert latent["changes/latent/cache_ratio"].value == 32_768 / 576
    assert "caches d_c + d_R = 576 numbers per token, where K and V of h heads held 2h·d_v = 32,768" in c.steps[-1].title
    this = {x.key: x.value for x in c.this.lines}
    assert this["changes/this/params"] == DEEPSEEK_V3 and this["changes/this/kv_cache"] == 70_272
    direct = changes(replace(cfg, q_latent_dim=None), "bf16").steps[-1].title
    same = changes(replace(MLA, d=24, value_dim=8))  # d_v = d / h: no d_head change, the twin's heads are the MHA's
    assert [s.key for s in same.steps][0] == "norm" and same.steps[-1].key == "latent"
    assert direct.startswith("multi-head latent attention: q projected from x directly")


@pytest.mark.parametrize("table", ["shapes", "budget", "kv", "train", "infer", "changes"])
def test_every_table_prints_deepseek_v3(table, capsys):
    code, out, err = run_cli(["--preset", "deepseek-v3", "--table", table], capsys)
    assert code == 0 and not err and "Traceback" not in out
    assert "671,026,404,352" in out


def test_one_deepseek_v3_block_caches_what_transformers_caches_at_bf16():
    """DeepSeek-V3's attention widths, one block, few experts: transformers' real cache after a prefill (bf16, the meta
    device) holds (d_c + d_R)·2 = 1,152 bytes per token, one block's share of the 70,272."""
    doc = {**json.loads((PUBLISHED / "deepseek-v3.json").read_text()), "num_hidden_layers": 1, "vocab_size": 64,
           "n_routed_experts": 4, "n_group": 1, "topk_group": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 0,
           "moe_intermediate_size": 8}
    B, T = 2, 3
    with torch.device("meta"):
        module = _module(doc, "meta").to(torch.bfloat16)
        out = module(input_ids=torch.zeros(B, T, dtype=torch.long), use_cache=True)
    kv = sum(t.numel() * t.element_size() for layer in out.past_key_values.layers for t in (layer.keys, layer.values))
    cfg = from_hf(doc, B=B, T=T)
    assert kv == kv_cache_lines(cfg, "bf16")[0].value == B * T * (512 + 64) * 2


def test_a_decode_step_over_the_latent_cache_gives_the_full_forwards_last_logits():
    """Real CPU tensors: the latents and rotary keys a pass over T + 1 tokens makes, cut to the first T, are the
    cache ((B, 1, T, d_c) and (B, 1, T, d_R), as transformers keeps it); one decode step of the last token gives the
    full pass's last logits."""
    cfg = replace(MLA, experts=None, top_k=None, expert_dim=None, shared_experts=0, dense_first=0)
    torch.manual_seed(0)
    model = GPT(cfg).eval()
    idx = torch.randint(0, cfg.V, (cfg.B, cfg.T + 1))
    kept: dict[tuple[int, str], torch.Tensor] = {}
    for i, block in enumerate(model.blocks):
        for name in ("kv_a_norm", "k_rot"):
            getattr(block.attn, name).register_forward_hook(
                lambda _m, _i, out, key=(i, name): kept.__setitem__(key, out))
    with torch.no_grad():
        full, _ = model(idx)
        past = [(kept[i, "kv_a_norm"][:, None, :cfg.T], kept[i, "k_rot"][:, :, :cfg.T]) for i in range(cfg.L)]
        step = model.decode(idx[:, cfg.T:], past)
    torch.testing.assert_close(step[:, 0], full[:, -1], rtol=1e-5, atol=1e-5)


def test_the_rules_keep_latent_attention_valid_and_say_in_one_line_each_what_they_drop():
    """What latent attention makes of the other fields (model.rules): h_kv and d_head dropped (every head's K and V
    come from the latent, q and k are d_nope + d_R wide), eager attention and RoPE kept, an odd d_R snapped, biases,
    QK-norm and a window dropped; each change one notice naming why; GPT-2's recipe leaves latent attention."""
    from dataclasses import asdict

    from model.families import recipe_fields
    from model.rules import rules_line, settle

    preset = TABLE_PRESETS["deepseek-v3"]
    asked = {**asdict(preset), "kv_heads": 8, "head_dim": 7, "attention": "fused", "positions": "learned",
             "rope_dim": 63, "bias": "all", "qk_norm": True, "window": 64, "full_layers": (1,)}
    cfg, notes = settle(asked)
    assert cfg == preset and len(notes) == 8
    assert [n.split(" ", 1)[0] for n in notes] == ["d_R", "h_kv", "d_head", "attention", "positions", "bias", "qk_norm",
                                                   "window"]
    assert notes[0] == "d_R snapped 63 → 64: RoPE rotates pairs of features, so the rotary width d_R must be even"
    assert notes[1].startswith("h_kv = 8 dropped: latent attention makes every head's K and V from the one cached latent")
    assert rules_line(cfg).startswith("latent attention: q and k per head d_nope + d_R = 192, v d_v = 128")
    assert settle({**asdict(preset), "d": 7_000})[1] == []  # h need not divide d
    gpt2 = settle({**asdict(preset), **recipe_fields("gpt2", preset.h)})[0]
    assert not gpt2.mla and gpt2.positions == "learned"
