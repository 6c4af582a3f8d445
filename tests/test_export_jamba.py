"""The no-server page of a Mamba hybrid (issue 41: Jamba, the first Mamba's selective scan), in Chromium: a page
written for Jamba v0.1 shows N and N_active as `python -m model` prints them, and its budget and memory lines (the
bytes kept for backward by their formula, `model.parts.mamba1.saved_parts`: the scan by chunks of ⌈√T⌉, T_pad and
n_c; the states and the attention blocks' cache) at its B and T and at moved ones: T = 16 (four chunks of 4) and 17
(four of 5), by its sliders too; its shapes rows are the model's; its changes card is Python's, Mamba's change last.
A dense Jamba's training card says in one line why it shows no figures (`model.training.no_peak`), never a wrong
peak."""
from __future__ import annotations

import html
from dataclasses import replace

import pytest

from app.cards.budget.markup import shown
from model import PRESETS
from model.figures import Line
from model.parts import mamba1
from test_export import _set, assert_lines_are_the_models, cfg_js, exported_page, js, shown_js, text_of, value_of
from test_export_hybrid import (assert_changes_card_is_pythons, assert_n_and_n_active_are_the_clis,
                                 assert_shape_rows_are_the_models, cell, exported_preset, preset_cli, shown_value)

pytestmark = pytest.mark.browser
JAMBA = PRESETS["jamba-v0.1"]
MOVED = [(3, 16), (3, 17)]  # ⌈√T⌉ = 4, then 5: T_pad = 16, then 20, n_c = 4; B > 1 and T > 2 (a mixture of experts'
# page carries its own B's and T's pass structures; T = 1 and 2, one chunk, are tests/test_jamba.py's)


@pytest.fixture(scope="module")
def page(chromium, tmp_path_factory: pytest.TempPathFactory):
    yield from exported_page(chromium, exported_preset(tmp_path_factory, "jamba-v0.1"))


def cli(capsys, *argv: str) -> dict:
    return preset_cli(capsys, "jamba-v0.1", *argv)


def test_n_and_n_active_are_the_clis(page, capsys) -> None:
    assert assert_n_and_n_active_are_the_clis(page, capsys, "jamba-v0.1")[0] == 51_570_323_328


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_budget_and_memory_lines_are_the_clis_across_the_scans_chunks(page, capsys, dtype: str) -> None:
    """Every budget line and memory line of the page (saved bytes, the cache and the states, the twin's cache), key
    and value, at the page's B and T and at the moved ones, equals the CLI's JSON; the saved bytes' formula names the
    scan's own terms."""
    for B, T in ((JAMBA.B, JAMBA.T), *MOVED):
        got = cli(capsys, "--B", str(B), "--T", str(T), "--dtype", dtype)
        c = cfg_js(replace(JAMBA, B=B, T=T))
        (lines,) = shown_js(page, "budgetLines", [[c]])
        assert [(x["key"], x["value"]) for x in lines] == [(x["key"], shown(Line(**x))["value"]) for x in got["lines"]]
        (memory,) = shown_js(page, "memoryLines", [[c, dtype]])
        assert [(x["key"], x["value"]) for x in memory] == \
            [(x["key"], shown(Line(**x))["value"]) for x in got["memory"]], (B, T)
        saved = next(x for x in memory if x["key"] == "memory/saved")
        assert "T_pad·d_inner·d_s" in saved["formula"] and "n_c·d_inner·d_s" in saved["formula"]


def test_lines_labels_and_formulas_are_the_models_across_the_scans_chunks(page) -> None:
    assert_lines_are_the_models(page, [replace(JAMBA, B=B, T=T) for B, T in MOVED], cfg_js)


def test_the_shapes_rows_are_the_models(page) -> None:
    assert_shape_rows_are_the_models(page, [replace(JAMBA, B=B, T=T) for B, T in MOVED])
    assert "<b>mb.state " in text_of(page, "shapes")  # the fixed state (B, d_inner, d_s) on the page


def test_the_sliders_move_the_saved_bytes_and_the_states_as_the_cli(page, capsys) -> None:
    """B and T moved on the page (T from 16 to 17: chunks of 4, then of 5) show the CLI's saved bytes and states."""
    assert cell(page, "memory/saved") == \
        shown_value(next(x for x in cli(capsys)["memory"] if x["key"] == "memory/saved"))
    _set(page, "B_input", 3)
    for _, t in MOVED:
        _set(page, "T_input", t)
        got = {x["key"]: x for x in cli(capsys, "--B", "3", "--T", str(t))["memory"]}
        for key in ("memory/saved", "memory/state_ssm", "memory/kv_cache"):
            assert cell(page, key) == shown_value(got[key]), (t, key)


def test_the_training_card_says_why_it_has_no_peak(page) -> None:
    """The preset's card is a mixture of experts' (the CLI prints it); a dense Jamba's says `mamba1.NO_PEAK`."""
    assert "A mixture of experts trains at C = 6·N_active·D" in html.unescape(text_of(page, "train_head"))
    assert not value_of(page, "train_body", "visible")
    dense = replace(JAMBA, experts=None, top_k=None, expert_dim=None, dense_layers=())
    assert js(page, "training.no_peak", [[cfg_js(dense)], [cfg_js(PRESETS["llama3-8b"])]]) == [mamba1.NO_PEAK, None]


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_changes_card_ends_with_mamba_as_python_makes_it(page, dtype: str) -> None:
    """The card's groups (titles, labels, formulas, values: the saved bytes a formula) and markup equal Python's at
    the page's B and T and at the moved ones; its last change is Mamba's."""
    assert_changes_card_is_pythons(page, [replace(JAMBA, B=B, T=T) for B, T in ((JAMBA.B, JAMBA.T), *MOVED)], dtype,
                                   "mamba1")


def test_the_pages_chunks_are_pythons_at_every_square(page) -> None:
    """The scan's ⌈√T⌉ (`mamba1.chunk`, math.isqrt compiled to the page's Math.sqrt) on both sides of every square
    up to T = 32,768, and of the last hundred up to T's bound, 16,777,216 = 4,096²."""
    Ts = sorted({t for k in (*range(1, 182), *range(3_997, 4_097)) for t in (k * k - 1, k * k, k * k + 1)
                 if 1 <= t <= 16_777_216})
    cfgs = [replace(JAMBA, B=2, T=t) for t in Ts]
    assert js(page, "mamba1_part.chunk", [[cfg_js(c)] for c in cfgs]) == [mamba1.chunk(c) for c in cfgs]
