"""The no-server page of a Kimi delta attention hybrid (issue 41), in Chromium: a page written for Kimi-Linear-48B-A3B
shows N and N_active as `python -m model` prints them, and its budget lines and memory lines (the bytes kept for
backward by their formula, `model.parts.kda.saved_parts`, the states and the latent attention blocks' cache) at its B
and T and at moved ones across a chunk boundary (T = 64, 65: T_pad, n_c and T_r), by its sliders too; its shapes rows
are the model's; its changes card is Python's, Kimi delta attention's change last. A dense KDA hybrid's training card
says in one line why it shows no figures (`model.training.no_peak`), never a wrong peak."""
from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest

from app.cards.budget.markup import shown
from model import PRESETS, budget
from model.figures import Line
from model.parts import kda
from test_export import _set, assert_lines_are_the_models, cfg_js, exported_page, js, shown_js, text_of, value_of
from test_export_hybrid import (assert_changes_card_is_pythons, assert_n_and_n_active_are_the_clis,
                                 assert_shape_rows_are_the_models, cell, exported_preset, preset_cli, shown_value)

pytestmark = pytest.mark.browser
KIMI = PRESETS["kimi-linear-48b-a3b"]
MOVED = [(3, 64), (3, 65)]  # one chunk of 64 (T_r = 0), then two (T_pad = 128, T_r = 128); B > 1 (a mixture of
# experts' page carries passes of B > 1 only)


@pytest.fixture(scope="module")
def page(chromium, tmp_path_factory: pytest.TempPathFactory):
    yield from exported_page(chromium, exported_preset(tmp_path_factory, "kimi-linear-48b-a3b"))


def cli(capsys, *argv: str) -> dict:
    return preset_cli(capsys, "kimi-linear-48b-a3b", *argv)


def test_n_and_n_active_are_the_clis(page, capsys) -> None:
    assert assert_n_and_n_active_are_the_clis(page, capsys, "kimi-linear-48b-a3b")[0] == 49_122_675_072


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_budget_and_memory_lines_are_the_clis_at_two_b_and_t(page, capsys, dtype: str) -> None:
    """Every budget line and memory line of the page (saved bytes, the cache and the states, the twin's cache), key
    and value, at the page's B and T and across a chunk boundary, equals the CLI's JSON; the saved bytes' formula
    names T_pad (the chunked rule's own terms)."""
    for B, T in ((KIMI.B, KIMI.T), *MOVED):
        got = cli(capsys, "--B", str(B), "--T", str(T), "--dtype", dtype)
        c = cfg_js(replace(KIMI, B=B, T=T))
        (lines,) = shown_js(page, "budgetLines", [[c]])
        assert [(x["key"], x["value"]) for x in lines] == [(x["key"], shown(Line(**x))["value"]) for x in got["lines"]]
        (memory,) = shown_js(page, "memoryLines", [[c, dtype]])
        assert [(x["key"], x["value"]) for x in memory] == \
            [(x["key"], shown(Line(**x))["value"]) for x in got["memory"]], (B, T)
        saved = next(x for x in memory if x["key"] == "memory/saved")
        assert "T_pad" in saved["formula"] and "h_kda" in saved["formula"]


def test_lines_labels_and_formulas_are_the_models_across_a_chunk_boundary(page) -> None:
    assert_lines_are_the_models(page, [KIMI, *(replace(KIMI, B=B, T=T) for B, T in MOVED)], cfg_js)


def test_the_shapes_rows_are_the_models(page) -> None:
    assert_shape_rows_are_the_models(page, [replace(KIMI, B=B, T=T) for B, T in MOVED])
    assert "<b>kda.state " in text_of(page, "shapes")  # the fixed state (B, h_kda, d_kda, d_kda), on the page's table


def test_the_sliders_move_the_saved_bytes_and_the_states_as_the_cli(page, capsys) -> None:
    """B and T moved on the page (T from 64 to 65: a second chunk) show the CLI's saved bytes and states."""
    assert cell(page, "memory/saved") == shown_value(next(x for x in cli(capsys)["memory"] if x["key"] == "memory/saved"))
    _set(page, "B_input", 3)
    for T in (64, 65):
        _set(page, "T_input", T)
        got = {x["key"]: x for x in cli(capsys, "--B", "3", "--T", str(T))["memory"]}
        for key in ("memory/saved", "memory/state_recurrent", "memory/kv_cache"):
            assert cell(page, key) == shown_value(got[key]), (T, key)
    head = html.unescape(re.sub(r"<[^>]+>", "", text_of(page, "head")))
    assert f"N = {budget(KIMI).params_exact:,} parameters" in head


def test_a_dense_kda_hybrids_training_card_says_why_it_has_no_peak(page) -> None:
    """The preset's card is a mixture of experts' (the CLI prints it); a dense KDA hybrid's says `kda.NO_PEAK`."""
    assert "A mixture of experts trains at C = 6·N_active·D" in html.unescape(text_of(page, "train_head"))
    assert not value_of(page, "train_body", "visible")
    dense = replace(KIMI, experts=None, top_k=None, expert_dim=None, shared_experts=0, dense_layers=())
    assert js(page, "training.no_peak", [[cfg_js(dense)], [cfg_js(PRESETS["llama3-8b"])]]) == [kda.NO_PEAK, None]


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_changes_card_ends_with_kimi_delta_attention_as_python_makes_it(page, dtype: str) -> None:
    """The card's groups (titles, labels, formulas, values: the saved bytes now a formula, not "measured") and markup
    equal Python's at the page's B and T and across a chunk boundary; its last change is Kimi delta attention's."""
    assert_changes_card_is_pythons(page, [replace(KIMI, B=B, T=T) for B, T in ((KIMI.B, KIMI.T), *MOVED)], dtype, "kda")
    assert "measured" not in html.unescape(text_of(page, "changes"))
