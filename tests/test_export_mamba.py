"""The no-server page of a Mamba 2 hybrid (issue 41), in Chromium: pages written for a Granite 4.0-H config.json
(Mamba 2 in some blocks' attention's place, gated norm) and a Falcon-H1 one (Mamba 2 beside attention in every block,
no norm) show N as `python -m model` prints it, and their budget and memory lines (the bytes kept for backward by
their formula, `model.parts.mamba.saved_parts`, the states and the attention blocks' cache) at their B and T and at
moved ones across a chunk boundary (T = Q, Q + 1: T_pad and n_c), by the sliders too; their shapes rows are the
model's; their changes card is Python's, Mamba 2's change last. A dense Mamba 2 hybrid's training
card says in one line why it shows no figures (`model.training.no_peak`), never a wrong peak."""
from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path

import pytest

from app.cards.budget.markup import shown
from model import PRESETS, budget
from model.config import from_hf
from model.figures import Line
from model.parts import mamba
from pagetools import run_cli
from test_export import _set, assert_lines_are_the_models, cfg_js, export, exported_page, js, shown_js, text_of, value_of
from test_export_hybrid import (assert_changes_card_is_pythons, assert_shape_rows_are_the_models, cell,
                                 shown_value)
from test_falcon_h1 import SMALL, written
from test_mamba import granite_doc

pytestmark = pytest.mark.browser
B, T = 2, 9  # the pages' own B and T
FILES = {"granite": granite_doc(random.Random("granitemoehybrid-False-0"), False), "falcon_h1": written(**SMALL)}


@pytest.fixture(scope="module", params=sorted(FILES))
def model_file(request, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    path = tmp_path_factory.mktemp("mamba") / "config.json"
    path.write_text(json.dumps(FILES[request.param]))
    return request.param, path


@pytest.fixture(scope="module")
def page(chromium, model_file):
    name, path = model_file
    out = path.with_name(f"{name}.html")
    done = export(out, "--hf-config", str(path), "--B", str(B), "--T", str(T))
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    yield from exported_page(chromium, out)


def cfg_of(model_file, **at: int):
    return from_hf(FILES[model_file[0]], **{"B": B, "T": T, **at})


def moved(model_file) -> list[tuple[int, int]]:
    """B = 3 at T = Q (one chunk) and T = Q + 1 (two: T_pad = 2Q, n_c = 2)."""
    Q = cfg_of(model_file).ssm_chunk
    return [(3, Q), (3, Q + 1)]


def cli(capsys, model_file, *argv: str) -> dict:
    status, out, err = run_cli(["--hf-config", str(model_file[1]), "--B", str(B), "--T", str(T), *argv, "--json"],
                               capsys)
    assert status == 0, err
    return json.loads(out)


def test_n_is_the_clis(page, model_file, capsys) -> None:
    head = html.unescape(re.sub(r"<[^>]+>", "", text_of(page, "head")))
    b = cli(capsys, model_file, "--table", "budget")["budget"]
    assert b["params_exact"] == budget(cfg_of(model_file)).params_exact
    assert f"N = {b['params_exact']:,} parameters" in head


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_budget_and_memory_lines_are_the_clis_across_a_chunk_boundary(page, model_file, capsys, dtype) -> None:
    """Every budget line and memory line of the page (saved bytes, the cache and the states), key and value, at the
    page's B and T and at T = Q, Q + 1, equals the CLI's JSON; the saved bytes' formula names the scan's own terms."""
    for b, t in ((B, T), *moved(model_file)):
        got = cli(capsys, model_file, "--B", str(b), "--T", str(t), "--dtype", dtype)
        c = cfg_js(cfg_of(model_file, B=b, T=t))
        (lines,) = shown_js(page, "budgetLines", [[c]])
        assert [(x["key"], x["value"]) for x in lines] == [(x["key"], shown(Line(**x))["value"]) for x in got["lines"]]
        (memory,) = shown_js(page, "memoryLines", [[c, dtype]])
        assert [(x["key"], x["value"]) for x in memory] == \
            [(x["key"], shown(Line(**x))["value"]) for x in got["memory"]], (b, t)
        saved = next(x for x in memory if x["key"] == "memory/saved")
        assert "n_c" in saved["formula"] and "T_pad" in saved["formula"] and "h_ssm" in saved["formula"]


def test_lines_labels_and_formulas_are_the_models(page, model_file) -> None:
    assert_lines_are_the_models(page, [cfg_of(model_file, B=b, T=t) for b, t in ((B, T), *moved(model_file))],
                                cfg_js)


def test_the_shapes_rows_are_the_models(page, model_file) -> None:
    assert_shape_rows_are_the_models(page, [cfg_of(model_file, B=b, T=t) for b, t in moved(model_file)])
    assert "<b>ssm.state " in text_of(page, "shapes")  # the fixed state (B, h_ssm, d_ssm, d_state) on the page


def test_the_sliders_move_the_saved_bytes_and_the_states_as_the_cli(page, model_file, capsys) -> None:
    """B and T moved on the page (T from Q to Q + 1: a second chunk) show the CLI's saved bytes and states."""
    assert cell(page, "memory/saved") == \
        shown_value(next(x for x in cli(capsys, model_file)["memory"] if x["key"] == "memory/saved"))
    _set(page, "B_input", 3)
    for _, t in moved(model_file):
        _set(page, "T_input", t)
        got = {x["key"]: x for x in cli(capsys, model_file, "--B", "3", "--T", str(t))["memory"]}
        for key in ("memory/saved", "memory/state_ssm", "memory/kv_cache"):
            assert cell(page, key) == shown_value(got[key]), (t, key)


def test_a_dense_mamba_2_hybrids_training_card_says_why_it_has_no_peak(page, model_file) -> None:
    """Both files are dense: the card says `mamba.NO_PEAK` with the command that prints it, no figures."""
    train = html.unescape(text_of(page, "train_head"))
    assert mamba.NO_PEAK.split("{command}")[0] in train and not value_of(page, "train_body", "visible")
    command = train.split("print this model's with: ")[1].split("<")[0]
    assert command.startswith("python -m model ") and command.endswith("--table train")
    assert js(page, "training.no_peak", [[cfg_js(cfg_of(model_file))], [cfg_js(PRESETS["llama3-8b"])]]) == \
        [mamba.NO_PEAK, None]


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_changes_card_ends_with_mamba_2_as_python_makes_it(page, model_file, dtype: str) -> None:
    """The card's groups (titles, labels, formulas, values: the saved bytes a formula) and markup
    equal Python's at the page's B and T and across a chunk boundary; its last change is Mamba 2's."""
    assert_changes_card_is_pythons(page, [cfg_of(model_file, B=b, T=t) for b, t in ((B, T), *moved(model_file))], dtype,
                                   "mamba")
