"""Real values (model.values, model.scaling): loss at init ≈ ln V, causal zeros, √d_head, seeds, limits, CLI."""
from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import PRESETS, Config, budget, trace
from model import values as mv
from pagetools import run_cli
from model.scaling import unit_variance

TINY = Config(B=1, T=32, d=64, h=4, L=2, V=50_257, T_max=64)
TEXT = "The cat sat on the mat because it was warm, and the dog watched it from the door all afternoon."


def ids(n: int, V: int, seed: int = 0) -> list[int]:
    return torch.randint(0, V, (n,), generator=torch.Generator().manual_seed(seed)).tolist()


@pytest.mark.parametrize("V", [256, 50_257])
def test_loss_at_init_is_within_0_3_of_ln_V(V):
    v = mv.values(replace(TINY, V=V), ids(32, V))
    assert v.ln_V == pytest.approx(math.log(V))
    assert abs(v.loss - math.log(V)) < 0.3, (v.loss, v.ln_V)
    # independent check: the loss from the logits' own statistics, the cross-entropy of a near-uniform guess
    assert v.stats["head"].std < 0.5 and abs(v.stats["loss"].mean - v.loss) < 1e-6


def test_no_attention_weight_above_the_diagonal_and_rows_sum_to_1():
    v = mv.values(TINY, TEXT)
    T = v.cfg.T
    assert v.probs.shape == (TINY.L, TINY.h, T, T)
    for block in range(TINY.L):
        for head in range(TINY.h):
            a = v.attention(block, head).astype(np.float64)
            assert (np.triu(a, 1) == 0).all()  # exactly 0, not merely small
            assert np.abs(a.sum(-1) - 1).max() < 1e-5
            assert (np.diag(a) > 0).all()  # every token sees itself
            assert v.causal_check(block, head)[0] == 0.0
    assert v.stats["blocks.0.attn.attn"].mean == pytest.approx(1 / T, rel=1e-5)  # T rows of sum 1 over T² entries
    assert v.stats["blocks.0.attn.masked"].neg_inf == TINY.h * T * (T - 1) // 2


@pytest.mark.parametrize("d_head", [16, 64, 128])
def test_unit_variance_scores_have_std_sqrt_d_head_unscaled_and_1_scaled(d_head):
    s = unit_variance(d_head, T=64, seed=0)
    assert abs(s.scaled.std - 1) < 0.1
    assert abs(s.unscaled.std / math.sqrt(d_head) - 1) < 0.1
    assert s.samples >= 2**16
    # unscaled, softmax is much peakier (larger top weight, lower entropy) than scaled; scaled is below uniform's ln t
    assert s.unscaled.max_prob > s.scaled.max_prob > s.uniform_max_prob
    assert s.unscaled.entropy < s.scaled.entropy < s.uniform_entropy


def test_d_head_64_reproduces_the_lessons_e8_example():
    s = unit_variance(64, T=64, seed=0)
    assert 7.6 < s.unscaled.std < 8.4  # √64 = 8
    assert 2_000 < s.mass_ratio < 4_500  # e⁸ ≈ 2,981: "≈ 3,000× the mass"
    assert s.unscaled.max_prob > 0.75  # near one-hot


def test_unit_variance_draws_bounded_memory_at_any_d_head():
    s = unit_variance(32_768, T=64, seed=0)  # 1 × 64 × 32,768 entries per tensor, not 32 × that
    assert abs(s.unscaled.std / math.sqrt(32_768) - 1) < 0.1


def test_the_models_own_scores_at_init_are_small_so_attention_starts_near_uniform():
    v = mv.values(TINY, TEXT)
    s = v.scaling
    assert s.d_head == TINY.d_head and s.T == v.cfg.T
    assert s.scaled.std == pytest.approx(s.unscaled.std / math.sqrt(TINY.d_head))
    # q, k entries have std ≈ 0.02·√d after LayerNorm: far below the unit-variance assumption
    assert s.unscaled.std < 0.5 * v.unit.unscaled.std
    assert s.scaled.entropy > 0.95 * s.uniform_entropy


def test_same_seed_same_numbers_and_the_global_rng_is_untouched():
    before = torch.random.get_rng_state()
    a = mv.values(TINY, TEXT, seed=7)
    mv._run.cache_clear()
    b = mv.values(TINY, TEXT, seed=7)
    assert a is not b
    assert dict(a.stats) == dict(b.stats) and np.array_equal(a.probs, b.probs) and a.loss == b.loss
    c = mv.values(TINY, TEXT, seed=8)
    assert c.stats["wte"] != a.stats["wte"]
    assert torch.equal(before, torch.random.get_rng_state())


def test_stats_are_keyed_by_the_traces_expanded_names():
    v = mv.values(TINY, TEXT)
    names = [r.name for r in trace(v.cfg).expanded() if r.name != "idx"]  # token ids are inputs, not values
    assert list(v.stats) == names
    assert abs(v.stats["blocks.1.ln_2"].mean) < 1e-5 and v.stats["blocks.1.ln_2"].std == pytest.approx(1, abs=0.01)
    assert v.stats["blocks.0.mlp.gelu"].min < 0  # GELU dips below zero
    assert v.resid_std == tuple(v.stats[f"blocks.{b}.resid_2"].std for b in range(TINY.L))
    assert v.stats["wte"].std == pytest.approx(0.02, rel=0.15)  # rows of W_te: N(0, 0.02)


def test_one_token_runs_without_a_loss():
    v = mv.values(TINY, [464])
    assert v.cfg.T == 1 and v.loss is None and v.attention(0, 0).tolist() == [[1.0]]


def test_first_T_tokens_B_1_and_at_most_MAX_T():
    v = mv.values(replace(TINY, B=8, T=5), TEXT)
    assert (v.cfg.B, v.cfg.T, v.tokens[:2]) == (1, 5, ("The", " cat"))
    long = mv.values(replace(TINY, T=64), " word" * 500)
    assert long.cfg.T == mv.MAX_T and long.plan.n_tokens == 500


def test_ids_at_or_above_V_are_explained_never_wrapped():
    with pytest.raises(ValueError) as e:
        mv.values(replace(TINY, V=256), "The cat")
    msg = str(e.value)
    assert "token id 464" in msg and "V = 256" in msg and "raise V to at least 3,798" in msg
    with pytest.raises(ValueError, match=r"token id 256 .*≥ V = 256"):
        mv.values(replace(TINY, V=256), [1, 2, 256])
    for bad in ([1, -1], [True], [1.5], "", []):
        with pytest.raises(ValueError):
            mv.values(TINY, bad)
    with pytest.raises(ValueError, match="block must be 0 … 1"):
        mv.values(TINY, TEXT).attention(2, 0)


# --- limits --------------------------------------------------------------------------------------------------------
def within_limits(cfg: Config) -> bool:
    return (cfg.L <= mv.MAX_L and cfg.T <= mv.MAX_T and budget(cfg).params_exact <= mv.MAX_PARAMS
            and trace(cfg).activation_bytes <= mv.MAX_ACTIVATION_BYTES)


def test_gpt2_small_runs_and_larger_presets_get_a_labelled_scaled_down_copy():
    assert not mv.plan(PRESETS["gpt2-small"], 30).scaled
    for name in ("gpt2-medium", "gpt2-xl", "gpt3-175b"):
        p = mv.plan(PRESETS[name], 30)
        asked = PRESETS[name]
        assert p.scaled and p.reasons and within_limits(p.run)
        assert (p.run.d_head, p.run.V, p.run.T_max, p.run.tie) == (asked.d_head, asked.V, asked.T_max, asked.tie)
        assert p.run.d < asked.d


def test_above_the_limits_values_refuses_before_allocating(monkeypatch):
    def boom(*_args):
        raise AssertionError("a pass was built above the limits")
    monkeypatch.setattr(mv, "build", boom)
    with pytest.raises(mv.TooLarge) as e:
        mv.values(PRESETS["gpt3-175b"], TEXT)
    assert "scaled-down copy" in str(e.value) and "174.6" in str(e.value)


def test_the_scaled_down_copy_runs_and_says_so():
    cfg = Config(B=1, T=16, d=64, h=4, L=300, V=50_257, T_max=64)
    v = mv.values(cfg, TEXT, scale_down=True)
    assert v.plan.scaled and v.cfg.L == mv.MAX_L and v.cfg.d == 64 and len(v.resid_std) == mv.MAX_L


configs = st.builds(lambda dh, h, L, V, T_max, T, tie: Config(B=1, T=min(T, T_max), d=dh * h, h=h, L=L, V=V,
                                                               T_max=T_max, tie=tie),
                    st.sampled_from([1, 8, 64, 128, 256]), st.integers(1, 128), st.integers(1, 1024),
                    st.integers(1, 262_144), st.integers(1, 32_768), st.integers(1, 32_768), st.booleans())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.integers(1, 100_000))
def test_any_config_plans_a_pass_within_the_limits(cfg, n_tokens):
    p = mv.plan(cfg, n_tokens)
    assert within_limits(p.run)
    assert p.run.T == min(cfg.T, n_tokens, mv.MAX_T) and p.run.B == 1
    assert p.scaled == (not within_limits(replace(cfg, B=1, T=p.run.T)))


# --- CLI -----------------------------------------------------------------------------------------------------------
cli = run_cli  # tests/pagetools.py


TINY_ARGS = ["--d", "64", "--h", "4", "--L", "2", "--T", "32", "--T-max", "64"]


def test_cli_prints_the_same_numbers_as_the_api(capsys):
    v = mv.values(replace(TINY, B=8), TEXT)
    code, out, err = cli([*TINY_ARGS, "--values", "--text", TEXT], capsys)
    assert (code, err) == (0, "")
    assert f"loss at init {v.loss:.3f}" in out and f"ln V = ln 50,257 = {v.ln_V:.3f}" in out
    assert "above the diagonal: largest weight 0 (exactly 0)" in out
    assert f"{v.unit.unscaled.std:.2f}" in out
    code, out, err = cli([*TINY_ARGS, "--values", "--text", TEXT, "--json", "--block", "1", "--head", "3"], capsys)
    doc = json.loads(out)
    assert doc["loss"] == v.loss and doc["attention"]["weights"] == v.attention(1, 3).tolist()
    assert doc["stats"]["blocks.0.attn.masked"]["min"] == v.stats["blocks.0.attn.masked"].min
    assert doc["config"]["B"] == 1 and doc["scaled_down"] is False


def test_cli_above_the_limits_prints_the_labelled_copy(capsys):
    code, out, _ = cli(["--preset", "gpt3-175b", "--L", "200", "--d", "64", "--h", "1", "--values", "--text", "Hi"],
                       capsys)
    assert code == 0 and "Scaled-down copy of the model asked for" in out and "L=96" in out


@pytest.mark.parametrize("argv, needle", [
    (["--values"], '--values needs --text'),
    ([*TINY_ARGS, "--V", "256", "--values", "--text", "The cat"], "raise V to at least"),
    ([*TINY_ARGS, "--values", "--text", "x", "--head", "9"], "head 0 … 3"),
    ([*TINY_ARGS, "--values", "--text", "x", "--csv"], "drop --table, --markdown and --csv"),
])
def test_cli_bad_values_input_is_one_line_with_status_2(argv, needle, capsys):
    code, out, err = cli(argv, capsys)
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1


# --- the page's card (logic, no browser) ---------------------------------------------------------------------------
@pytest.fixture
def passes(monkeypatch):
    """Counts real passes (cache cleared, so every computation is one)."""
    import panel as pn

    mv._run.cache_clear()
    count = []
    forward = mv._forward
    monkeypatch.setattr(mv, "_forward", lambda *a: count.append(a[0].run) or forward(*a))
    yield count
    pn.state.reset()


TINY_QUERY = "d=64&h=4&L=2&T=32&T_max=64"


def test_the_card_runs_only_when_open_and_only_when_config_or_text_change(passes):
    from app.page import Explorer

    e = Explorer(query="?" + TINY_QUERY)
    view = e.values
    assert view.collapsed and passes == []  # the full page starts closed: nothing runs
    e.state.T = 20
    assert passes == []
    view.card.collapsed = False
    assert len(passes) == 1 and view.result is not None and view.result.cfg.T == 20
    e.state.B = 5  # a values pass runs at B = 1: nothing to recompute
    view._block.value = 1  # another block: redrawn from the same pass
    assert len(passes) == 1
    assert view.heatmap.title.text.startswith("attention weights, block 1, head 0")
    cells, masked = view.cells.data, view.masked.data
    assert set(masked["w"]) == {0.0} and len(masked["w"]) == 20 * 19 // 2
    rows = np.zeros(20)
    np.add.at(rows, cells["y"], cells["w"])
    assert np.abs(rows - 1).max() < 1e-5
    e.state.text = "A different text."
    assert len(passes) == 2 and view.result.tokens[0] == "A"
    view.card.collapsed = True
    e.state.d = 128
    assert len(passes) == 2  # closed again: nothing runs


def test_a_huge_config_in_a_link_gets_the_scaled_down_offer_not_a_pass(passes):
    from app.page import Explorer

    e = Explorer(query="?preset=gpt3-175b&panels=values")
    view = e.values
    assert not view.collapsed  # asked for by name: open
    assert passes == [] and view.result is None
    assert "Too large for a real pass here" in view.message and "scaled-down copy" in view.message
    assert view._offer.visible and not view._results.visible
    e.state.apply(Config(B=8, T=32, d=64, h=4, L=300, V=50_257, T_max=64))  # L above MAX_L: cheap copy
    assert passes == [] and view._offer.visible
    view._offer.clicks += 1
    assert len(passes) == 1 and passes[0].L == mv.MAX_L and view.result.plan.scaled
    assert "Scaled-down copy</b> of the model asked for" in view._summary.object


def test_text_with_ids_at_or_above_V_shows_why_in_the_card(passes):
    from app.page import Explorer

    view = Explorer(query=f"?{TINY_QUERY}&V=256&panels=values").values
    assert passes == [] and "token id" in view.message and "raise V to at least" in view.message
    assert not view._results.visible


def test_one_pass_at_a_time_per_process(monkeypatch):
    import threading
    import time

    mv._run.cache_clear()
    inside, overlaps = [], []
    forward = mv._forward

    def slow(*args):
        if inside:
            overlaps.append(args[0].run)
        inside.append(1)
        time.sleep(0.05)
        try:
            return forward(*args)
        finally:
            inside.pop()

    monkeypatch.setattr(mv, "_forward", slow)
    threads = [threading.Thread(target=mv.values, args=(TINY, TEXT, seed)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == [] and mv._run.cache_info().currsize == 4
