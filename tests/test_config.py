"""model.config: validation messages, divisors / snap_heads, and the presets against their published sizes."""
from __future__ import annotations

import dataclasses

import pytest

from model import BOUNDS, FIELD_DOCS, PRESETS, Config, budget, divisors, snap_heads
from model import trace as model_trace
from model.config import GPT2_RECIPE_PRESETS

OK = dict(B=2, T=16, d=64, h=4, L=2, V=100, T_max=32)  # a valid config to change one field of


def make(**change) -> Config:
    return Config(**{**OK, **change})


# --- fields: whole numbers within BOUNDS ---------------------------------------------------------------------

def test_bounds_cover_gpt3_175b_and_every_field_has_a_doc():
    assert set(BOUNDS) == set(FIELD_DOCS) == {"B", "T", "d", "h", "L", "V", "T_max", "d_ff", "h_kv", "d_head", "E", "k",
                                              "d_expert", "E_shared", "d_shared", "W", "d_c", "d_cq", "d_R", "d_nope",
                                              "d_v", "d_rot", "h_lk", "h_lv", "d_lk", "d_lv", "d_conv", "h_ssm",
                                              "d_ssm", "d_state", "g_ssm", "Q", "h_I", "d_I", "T_k", "h_kda",
                                              "d_kda", "d_inner", "d_s", "r_dt"}
    assert BOUNDS["d"][1] >= 12_288 and BOUNDS["L"][1] >= 96 and BOUNDS["T"][1] >= 2_048
    assert BOUNDS["V"] == (1, 524_288)
    assert all(lo == 1 for name, (lo, _) in BOUNDS.items() if name != "E_shared") and BOUNDS["E_shared"][0] == 0


def test_valid_config_keeps_its_values_and_derives_d_head():
    cfg = make()
    assert (cfg.B, cfg.T, cfg.d, cfg.h, cfg.L, cfg.V, cfg.T_max, cfg.tie) == (2, 16, 64, 4, 2, 100, 32, True)
    assert cfg.d_head == 16
    assert cfg.symbols() == {"B": 2, "T": 16, "d": 64, "h": 4, "d_head": 16, "L": 2, "V": 100, "T_max": 32}
    assert Config(B=1, T=1, d=8, h=2, L=1, V=5).T_max == 1024  # default


def test_config_is_frozen_and_hashable():
    cfg = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.d = 128  # type: ignore[misc]
    assert hash(cfg) == hash(make()) and cfg == make() and cfg != make(tie=False)


def test_replace_revalidates():
    with pytest.raises(ValueError, match="T=64 exceeds T_max=32"):
        dataclasses.replace(make(), T=64)
    assert dataclasses.replace(make(), T=32).T == 32


@pytest.mark.parametrize("field", ["B", "T", "d", "h", "L", "V", "T_max"])
@pytest.mark.parametrize("bad", [1.5, 2.0, "8", None, True, False])
def test_non_integers_are_rejected_with_the_range(field, bad):
    lo, hi = BOUNDS[field]
    with pytest.raises(ValueError) as err:
        make(**{field: bad})
    assert str(err.value) == f"{field} must be a whole number from {lo:,} to {hi:,}, got {bad!r}"


@pytest.mark.parametrize("field", ["B", "T", "d", "h", "L", "V", "T_max"])
@pytest.mark.parametrize("which", ["zero", "negative", "above"])
def test_out_of_range_names_field_doc_and_bounds(field, which):
    lo, hi = BOUNDS[field]
    value = {"zero": 0, "negative": -3, "above": hi + 1}[which]
    with pytest.raises(ValueError) as err:
        make(**{field: value})
    assert str(err.value) == (f"{field}={value:,} is out of range: {field} ({FIELD_DOCS[field]}) "
                              f"must be from {lo:,} to {hi:,}")


def test_bounds_are_inclusive():
    assert Config(B=4_096, T=1, d=32_768, h=32_768, L=1_024, V=262_144, T_max=32_768).d_head == 1
    assert Config(B=1, T=32_768, d=1, h=1, L=1, V=1, T_max=32_768).T == 32_768


def test_numpy_integers_are_accepted_as_plain_ints():
    np = pytest.importorskip("numpy")
    cfg = make(d=np.int64(64), B=np.int32(3))
    assert cfg.d == 64 and type(cfg.d) is int and type(cfg.B) is int


@pytest.mark.parametrize("tie", [1, 0, "yes", None])
def test_tie_must_be_a_bool(tie):
    with pytest.raises(ValueError, match=f"tie must be True or False, got {tie!r}"):
        make(tie=tie)


def test_d_not_divisible_by_h_names_the_nearest_divisors():
    with pytest.raises(ValueError) as err:
        Config(B=1, T=8, d=770, h=12, L=1, V=10)
    msg = str(err.value)
    assert msg.startswith("d=770 is not divisible by h=12;")
    assert "h must divide d" in msg
    assert msg.endswith("(nearest divisors of 770: 11, 14)")


@pytest.mark.parametrize("d, h, near", [(768, 7, "6, 8"), (6, 7, "6"), (7, 2, "1, 7"), (100, 3, "2, 4"),
                                        (12_288, 95, "64, 96")])
def test_nearest_divisors_below_and_above(d, h, near):
    with pytest.raises(ValueError, match=rf"\(nearest divisors of {d}: {near}\)$"):
        Config(B=1, T=1, d=d, h=h, L=1, V=10)


def test_T_beyond_T_max_explains_the_position_table():
    with pytest.raises(ValueError) as err:
        Config(B=1, T=2_048, d=64, h=4, L=1, V=10, T_max=1_024)
    msg = str(err.value)
    assert msg.startswith("T=2,048 exceeds T_max=1,024")
    assert "learned position table W_pe" in msg and "cannot extrapolate" in msg
    assert "lower T to at most 1,024 or raise T_max" in msg


def test_field_errors_come_before_cross_field_errors():
    with pytest.raises(ValueError, match="^h=0 is out of range"):
        make(h=0)  # not a ZeroDivisionError from d % h
    with pytest.raises(ValueError, match="^T=20,000,000 is out of range"):
        make(T=20_000_000)  # the bound, not the T_max message


def test_a_pass_s_tensors_fit_torch_s_sizes_or_the_error_names_the_fix():
    """T reaches Llama 4 Scout's context at the two products `check_sizes` bounds: B·T ≤ 2²⁷ tokens per pass (8
    sequences of 16,777,216) and h·T ≤ 2³⁰; a product beyond is one line with the fix. Within them torch's meta device
    sizes every tensor of the pass: eager (B, h, T, T) scores of 2⁵⁷ elements at the corner."""
    corner = Config(B=8, T=16_777_216, d=128, h=64, L=1, V=16, T_max=16_777_216)
    scores = next(r for r in model_trace(corner).rows if r.name.endswith("attn.scores"))
    assert scores.shape == (8, 64, 16_777_216, 16_777_216) and scores.numel == 2**57
    at_the_corner = dataclasses.replace(PRESETS["llama4-scout"], B=8, T=16_777_216, T_max=16_777_216)
    assert model_trace(at_the_corner).rows[0].shape == (8, 16_777_216)
    with pytest.raises(ValueError, match=r"^B·T = 9 × 16,777,216 = 150,994,944 tokens per pass is more than "
                                         r"134,217,728 \(2²⁷\), .*; lower B to at most 8 at this T, or T$"):
        dataclasses.replace(at_the_corner, B=9)
    with pytest.raises(ValueError, match=r"^h·T = 128 × 10,000,000 = 1,280,000,000 is more than 1,073,741,824 "
                                         r"\(2³⁰\), .*; lower T to at most 8,388,608$"):
        make(h=128, d=4096, T=10_000_000, T_max=16_777_216, positions="rope")
    dsa = PRESETS["deepseek-v3.2"]  # its indexer's h_I = 64 heads of (T, T) scores, beside h = 128
    assert dataclasses.replace(dsa, B=1, T=8_388_608).T == 8_388_608
    with pytest.raises(ValueError, match=r"^h·T = 128 × 8,388,609"):
        dataclasses.replace(dsa, B=1, T=8_388_609)


# --- divisors and snap_heads ------------------------------------------------------------------------------

@pytest.mark.parametrize("n, divs", [
    (1, [1]), (2, [1, 2]), (12, [1, 2, 3, 4, 6, 12]), (16, [1, 2, 4, 8, 16]), (13, [1, 13]),
    (770, [1, 2, 5, 7, 10, 11, 14, 22, 35, 55, 70, 77, 110, 154, 385, 770])])
def test_divisors(n, divs):
    assert divisors(n) == divs


def test_divisors_match_brute_force():
    for n in range(1, 400):
        assert divisors(n) == [k for k in range(1, n + 1) if n % k == 0]


@pytest.mark.parametrize("bad", [0, -4, 2.0, "12"])
def test_divisors_rejects_non_positive_integers(bad):
    with pytest.raises(ValueError, match="divisors needs a positive integer"):
        divisors(bad)


@pytest.mark.parametrize("d, h, snapped", [(770, 12, 11), (768, 12, 12), (768, 7, 6), (12, 5, 4), (12, 10, 12),
                                           (12, 100, 12), (7, 3, 1), (7, 5, 7), (1_600, 24, 25), (10, 1, 1)])
def test_snap_heads(d, h, snapped):
    assert snap_heads(d, h) == snapped
    assert d % snap_heads(d, h) == 0


def test_snap_heads_ties_go_to_the_smaller():
    assert snap_heads(12, 5) == 4  # 4 and 6 are both 1 away
    assert snap_heads(20, 3) == 2  # 2 and 4 are both 1 away
    assert snap_heads(30, 4) == 3  # 3 and 5 are both 1 away
    assert snap_heads(12, 9) == 6  # 6 and 12 are both 3 away


# --- presets ----------------------------------------------------------------------------------------------

def test_preset_names():
    classic = ["gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl", "gpt3-125m", "gpt3-350m",
               "gpt3-760m", "gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b"]
    modern = ["llama3-8b", "llama3-70b", "llama3.2-1b", "mistral-7b", "qwen2.5-0.5b", "qwen2.5-7b", "qwen3-0.6b",
              "mistral-nemo-12b", "qwen3-4b-instruct-2507", "mixtral-8x7b", "qwen3-30b-a3b", "mistral-7b-v0.1", "gemma-3-1b",
              "gemma-3-27b", "gpt-oss-20b", "deepseek-v3", "deepseek-v3.2", "llama4-scout", "glm-4.5-air", "minimax-m2",
              "phi-4-mini", "smollm3-3b", "qwen3-next-80b-a3b", "kimi-linear-48b-a3b", "jamba-v0.1"]
    assert list(PRESETS) == classic + modern
    assert list(GPT2_RECIPE_PRESETS) == classic
    assert all(PRESETS[n].gpt2_recipe for n in classic) and not any(PRESETS[n].gpt2_recipe for n in modern)


@pytest.mark.parametrize("name, L, d, h, T_max", [
    ("gpt2-small", 12, 768, 12, 1024), ("gpt2-medium", 24, 1024, 16, 1024), ("gpt2-large", 36, 1280, 20, 1024),
    ("gpt2-xl", 48, 1600, 25, 1024), ("gpt3-125m", 12, 768, 12, 2048), ("gpt3-350m", 24, 1024, 16, 2048),
    ("gpt3-760m", 24, 1536, 16, 2048), ("gpt3-1.3b", 24, 2048, 16, 2048), ("gpt3-2.7b", 32, 2560, 32, 2048),
    ("gpt3-6.7b", 32, 4096, 32, 2048), ("gpt3-13b", 40, 5120, 40, 2048), ("gpt3-175b", 96, 12288, 96, 2048)])
def test_preset_shapes(name, L, d, h, T_max):
    cfg = PRESETS[name]
    assert (cfg.L, cfg.d, cfg.h, cfg.T_max) == (L, d, h, T_max)
    assert (cfg.B, cfg.T, cfg.V, cfg.tie) == (8, T_max, 50_257, True)
    assert Config(**dataclasses.asdict(cfg)) == cfg  # valid as constructed from plain fields


@pytest.mark.parametrize("name", [n for n in PRESETS if n.startswith("gpt3")])
def test_gpt3_d_head_is_the_papers(name):
    paper = {"gpt3-125m": 64, "gpt3-350m": 64, "gpt3-760m": 96, "gpt3-1.3b": 128, "gpt3-2.7b": 80,
             "gpt3-6.7b": 128, "gpt3-13b": 128, "gpt3-175b": 128}  # table 2.1, d_head column
    assert PRESETS[name].d_head == paper[name]


@pytest.mark.parametrize("name, paper", [("gpt3-125m", 125e6), ("gpt3-350m", 350e6), ("gpt3-760m", 760e6),
                                         ("gpt3-1.3b", 1.3e9), ("gpt3-2.7b", 2.7e9), ("gpt3-6.7b", 6.7e9),
                                         ("gpt3-13b", 13e9), ("gpt3-175b", 175e9)])
def test_gpt3_sizes_close_to_the_paper(name, paper):
    n = budget(PRESETS[name]).params_exact
    assert abs(n - paper) / paper < 0.03, f"{name}: {n:,} vs {paper:,.0f}"
