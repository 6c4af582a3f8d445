"""What each change buys: the GPT-2 twin, one group per change, lines that are true and add up to the total."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest

from model import PRESETS, Config, budget, trace
from model.changes import FIGURES, ORDER, changes, formula_text, twin
from model.formula import matches, to_poly
from model.memory import kv_cache_lines




def random_recipes(n: int, seed: int) -> list[Config]:
    """n small valid configs of random recipes (every switch, d_head apart or not, sizes of 1 among them)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        h = 1 if i % 5 == 0 else rng.choice([2, 3, 4, 6, 8])
        d_head = 2 * rng.randint(1, 6)
        apart = rng.random() < 0.3
        d = h * (rng.randint(1, 12) if apart else d_head)
        T_max = rng.randint(2, 40)
        out.append(Config(
            B=1 if i % 4 == 0 else rng.randint(2, 5), T=1 if i % 6 == 0 else rng.randint(2, T_max), d=d, h=h,
            L=rng.randint(1, 4), V=rng.randint(2, 300), T_max=T_max, tie=rng.random() < 0.5,
            norm=rng.choice(["layernorm", "rmsnorm"]), positions=rng.choice(["learned", "rope"]),
            mlp=rng.choice(["gelu", "swiglu"]), ff_dim=rng.choice([None, rng.randint(1, 90)]),
            kv_heads=rng.choice([k for k in range(1, h + 1) if h % k == 0]),
            head_dim=d_head if apart else None, bias=rng.choice(["all", "none", "qkv"]), qk_norm=rng.random() < 0.5,
            attention="fused" if i % 2 else "eager"))
    return out


CONFIGS = random_recipes(10, seed=15)


def _by_key(c) -> dict[str, int]:
    return {x.key: x.value for x in c.lines}


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c.d}-{c.h}-{c.h_kv}-{c.d_head}-{c.norm}-{c.positions}-"
                                                        f"{c.mlp}-{c.bias}-{c.qk_norm}-{c.attention}")
def test_lines_are_true_and_add_up_to_the_real_difference(cfg):
    c = changes(cfg)
    for line in c.lines:
        assert matches(line.formula, cfg.symbols(), line.value), (line.key, line.formula, line.value)
    v = _by_key(c)
    b, twin_b = budget(cfg), budget(c.twin)
    real = {"params": (twin_b.params_exact, b.params_exact),
            "flops": (twin_b.flops_fwd_measured_per_token, b.flops_fwd_measured_per_token),
            "kv_cache": (kv_cache_lines(c.twin, "fp32")[1].value, kv_cache_lines(cfg, "fp32")[1].value),
            "activations": (trace(c.twin).activation_bytes, trace(cfg).activation_bytes),
            "saved": (trace(c.twin).saved_bytes, trace(cfg).saved_bytes)}
    for f, (before, after) in real.items():
        assert v[f"changes/twin/{f}"] == before
        if not c.steps:
            continue
        assert v[f"changes/this/{f}"] == after
        assert v[f"changes/total/{f}"] == after - before
        assert sum(v.get(f"changes/{g.key}/{f}", 0) for g in c.steps) == after - before, f


@pytest.mark.parametrize("cfg", CONFIGS[:6], ids=str)
def test_one_group_per_change_in_the_documented_order(cfg):
    order = [key for key, _ in ORDER]
    keys = [g.key for g in changes(cfg).steps]
    assert keys == sorted(keys, key=order.index)
    names = dict(ORDER)
    differs = [k for k in order if any(getattr(cfg, n) != getattr(twin(cfg), n) for n in names[k])]
    assert keys == differs
    for g in changes(cfg).steps:  # parameters and FLOPs always; a memory figure where its formula is not 0
        figures = [x.key.rsplit("/", 1)[1] for x in g.lines]
        assert figures[:2] == ["params", "flops"]
        assert all(x.formula != "0" for x in g.lines[2:])


def test_llama3_8b_what_each_change_buys():
    cfg = PRESETS["llama3-8b"]
    v, s = _by_key(changes(cfg, "bf16")), cfg.symbols()
    assert [g.key for g in changes(cfg, "bf16").steps] == ["norm", "bias", "positions", "mlp", "h_kv", "attention"]
    assert v["changes/this/params"] == 8_030_261_248
    assert v["changes/positions/params"] == -cfg.T_max * cfg.d == -33_554_432  # RoPE removes the T_max·d table
    assert v["changes/positions/flops"] == 0  # and adds no matmul FLOPs
    assert v["changes/positions/activations"] > 0  # but adds the rotation's tensors to the pass
    assert v["changes/mlp/params"] == cfg.L * (3 * cfg.d * cfg.d_ff - 8 * cfg.d**2)  # 3·d·d_ff where GELU held 8d²
    assert v["changes/norm/params"] == -(2 * cfg.L + 1) * cfg.d  # RMSNorm drops LayerNorm's bias
    assert v["changes/bias/params"] == -9 * cfg.L * cfg.d  # the linears' O(d) biases
    # GQA: h_kv = 8 of 32 heads divides the KV cache by h / h_kv = 4 and shrinks W_k and W_v
    assert v["changes/twin/kv_cache"] == 4 * v["changes/this/kv_cache"] == 4 * 131_072
    assert v["changes/h_kv/kv_cache"] == v["changes/this/kv_cache"] - v["changes/twin/kv_cache"]
    assert v["changes/h_kv/params"] == -2 * cfg.L * (s["h"] - s["h_kv"]) * s["d_head"] * s["d"]


def test_fused_attention_buys_memory_at_no_parameter_and_no_measured_flop():
    cfg = PRESETS["llama3-8b"]  # fused, at B = 8, T = 8,192
    c = changes(cfg, "bf16")
    v = _by_key(c)
    eager = replace(cfg, attention="eager")
    assert c.steps[-1].title.startswith("fused attention (F.scaled_dot_product_attention) instead of eager")
    assert "K and V read at their h_kv = 8 heads" in c.steps[-1].title  # GQA: eager copies K and V to h heads
    assert v["changes/attention/params"] == v["changes/attention/flops"] == 0
    fused_tr, eager_tr = trace(cfg, "bf16"), trace(eager, "bf16")
    assert v["changes/attention/activations"] == fused_tr.activation_bytes - eager_tr.activation_bytes
    assert v["changes/attention/saved"] == fused_tr.saved_bytes - eager_tr.saved_bytes
    assert v["changes/attention/saved"] < -2**40  # a TiB of softmax outputs (B, h, T, T) no longer kept
    assert v["changes/attention/flops_causal"] == -2 * cfg.L * (cfg.T - 1) * cfg.h * cfg.d_head
    # the eager wall: the softmax kept by all 32 blocks at B = 8 fills an H100's 80 GiB at T ≈ 2,290
    wall = v["changes/attention/T_wall"]
    assert 2 * cfg.L * cfg.B * cfg.h * wall**2 == pytest.approx(80 * 2**30) and round(wall) == 2_290
    assert _by_key(changes(cfg, "bf16", "b200"))["changes/attention/T_wall"] == pytest.approx(wall * (192 / 80) ** 0.5)
    line = next(x for x in c.lines if x.key == "changes/attention/T_wall")
    assert "H100 SXM 80 GB (80 GiB)" in line.label and line.formula == "(80·2³⁰/(2LBh))^0.5"


def test_the_wall_is_where_eager_attentions_kept_scores_reach_the_gpu():
    cfg = replace(PRESETS["llama3.2-1b"], B=2, T=4_096)
    wall = _by_key(changes(cfg, "fp32", "a100-40gb"))["changes/attention/T_wall"]
    for T, fits in ((int(wall), True), (int(wall) + 1, False)):
        kept = next(x for x in trace(replace(cfg, T=T), "fp32").lines if x.key == "memory/eager_scores_saved")
        assert (kept.value <= 40 * 2**30) is fits


def test_changes_refuses_an_unknown_gpu():
    with pytest.raises(ValueError, match="gpu 'h300' is not one of"):
        changes(PRESETS["llama3-8b"], "bf16", "h300")


def test_qwen3_sets_d_head_apart_first_and_adds_qk_norm():
    c = changes(PRESETS["qwen3-0.6b"])
    v = _by_key(c)
    assert [g.key for g in c.steps] == ["d_head", "norm", "bias", "positions", "mlp", "h_kv", "qk_norm", "attention"]
    assert v["changes/qk_norm/params"] == 2 * 28 * 128 and v["changes/qk_norm/flops"] == 0
    assert v["changes/this/params"] == budget(PRESETS["qwen3-0.6b"]).params_exact
    assert c.steps[0].title.startswith("d_head = 128 set apart from d / h = 64")


def test_qwen2_keeps_q_k_v_biases():
    c = changes(PRESETS["qwen2.5-0.5b"])
    cfg = c.cfg
    assert _by_key(c)["changes/bias/params"] == -6 * cfg.L * cfg.d  # W_o's d and the MLP's 5d go; q, k, v stay
    assert "q, k and v only" in c.steps[1].title


def test_gpt2_is_its_own_twin():
    c = changes(PRESETS["gpt2-small"])
    assert c.twin == c.cfg and c.steps == () and [g.key for g in c.groups] == ["twin"]
    assert _by_key(c)["changes/twin/params"] == 124_439_808


def test_a_model_without_a_gpt2_twin_is_refused_naming_why():
    with pytest.raises(ValueError, match="T=9,000.*T_max=8,192 rows"):
        changes(replace(PRESETS["llama3-8b"], T=9_000))
    with pytest.raises(ValueError, match="d=1,000 is not divisible by h=16"):
        twin(Config(B=1, T=8, d=1_000, h=16, L=1, V=10, positions="rope", head_dim=64))
    with pytest.raises(ValueError, match="dtype"):
        changes(PRESETS["llama3-8b"], "fp8")


@pytest.mark.parametrize("formula, text", [  # the factor takes the sign at Llama 3 8B's sizes (SIGN_AT)
    ({(("L", 1), ("d", 1)): -2, (("d", 1),): -1}, "−d·(2L + 1)"),
    ({(("L", 1), ("d", 2)): -2, (("L", 1), ("d", 1), ("d_head", 1), ("h_kv", 1)): 2}, "−2Ld·(d − h_kv·d_head)"),
    ({(("L", 1), ("d", 2)): 2, (("L", 1), ("d", 1), ("d_head", 1), ("h_kv", 1)): -2}, "2Ld·(d − h_kv·d_head)"),
    ({(("B", 1), ("L", 1), ("T", 1)): 8, (("B", 1), ("T", 1)): 4}, "4BT·(2L + 1)"),
    ({(("T_max", 1), ("d", 1)): -1}, "−d·T_max"),
    ({}, "0"),
])
def test_formula_text_takes_out_the_common_factor(formula, text):
    assert formula_text(formula) == text
    assert to_poly(text) == formula


def test_every_preset_is_in_exactly_one_family_with_a_title():
    from model.families import FAMILIES, TITLES, family_of, grouped_menu

    names = [n for family in FAMILIES.values() for n in family]
    assert sorted(names) == sorted(PRESETS) and set(TITLES) == set(PRESETS)
    assert list(FAMILIES) == ["GPT-2", "GPT-3", "Llama 3", "Llama 4", "Mistral", "Qwen", "Gemma", "gpt-oss", "DeepSeek", "GLM",
                             "MiniMax", "Phi", "SmolLM", "Kimi", "Jamba"]
    assert family_of("qwen3-0.6b") == "Qwen"
    assert grouped_menu()["Llama 3"]["Llama 3 8B · L 32, d 4,096"] == "llama3-8b"


# --- python -m model --table changes ------------------------------------------------------------------------------
TINY = ["--B", "2", "--T", "5", "--d", "12", "--h", "3", "--L", "2", "--V", "11", "--T-max", "8"]
CLI_CASES = {
    "changes-qwen3-0.6b.txt": ["--preset", "qwen3-0.6b", "--table", "changes"],
    "changes-llama3-8b-bf16.csv": ["--preset", "llama3-8b", "--table", "changes", "--csv", "--dtype", "bf16"],
    "changes-tiny.md": [*TINY, "--norm", "rmsnorm", "--positions", "rope", "--mlp", "swiglu", "--h-kv", "1",
                        "--bias", "qkv", "--table", "changes", "--markdown"],
    "changes-tiny.json": [*TINY, "--mlp", "swiglu", "--d-ff", "20", "--qk-norm", "--table", "changes", "--json"],
}


@pytest.mark.parametrize("name", CLI_CASES)
def test_golden(name, capsys, golden):
    from pagetools import run_cli

    code, out, err = run_cli(CLI_CASES[name], capsys)
    assert (code, err) == (0, "")
    golden(name, out)


def test_cli_lines_are_the_api_lines(capsys):
    import json

    from pagetools import run_cli

    code, out, _ = run_cli(["--preset", "mistral-7b", "--table", "changes", "--json"], capsys)
    doc = json.loads(out)
    api = changes(PRESETS["mistral-7b"])
    assert [x for g in doc["groups"] for x in g["lines"]] == [vars(x) for x in api.lines]
    assert [g["title"] for g in doc["groups"]] == [g.title for g in api.groups]


def test_cli_refuses_a_model_without_twin_in_one_line(capsys):
    from pagetools import run_cli

    code, out, err = run_cli(["--preset", "llama3-8b", "--T", "9000", "--table", "changes"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and "no GPT-2 twin at T=9,000" in err


def test_the_recipe_choice():
    from model.families import recipe_fields, recipe_of

    llama = PRESETS["llama3-8b"]
    assert recipe_of(llama) == "modern" and recipe_of(PRESETS["gpt2-small"]) == "gpt2"
    assert recipe_of(PRESETS["qwen2.5-0.5b"]) == "custom"  # q, k, v biases
    assert replace(PRESETS["gpt2-small"], **recipe_fields("modern", 12)).h_kv == 3
    assert replace(llama, **recipe_fields("gpt2", 32)).gpt2_recipe
