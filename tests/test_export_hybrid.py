"""The no-server page of a Gated DeltaNet hybrid (issue 41), in Chromium: a page written for Qwen3-Next-80B-A3B shows N
(79,674,391,296) and N_active (3,874,929,408), and its budget lines (the FLOPs per token) and memory lines (the bytes
kept for backward, the cache: 24,576 bytes per token in the attention blocks at bf16, 77,856,768 bytes of states per
sequence, the all-attention twin's 98,304 per token) as `python -m model` prints them, at its B and T and at moved ones
across a chunk boundary (T = 64, 65: T_pad, n_c and T_r), by its sliders too; its shapes rows are the model's; its
training card says in one line why it shows no figures (a mixture of experts' card is the CLI's, and a Gated DeltaNet
step's peak has no formula of B and T: `model.training.no_peak`, never a wrong number); its changes card is Python's,
Gated DeltaNet's change last."""
from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.cards.budget.markup import shown
from app.cards.shapes.markup import shape_rows
from model import PRESETS, budget, trace
from app.cards.recipe.markup import changes_groups, changes_html
from model.changes import changes
from model.figures import Line
from model.parts import delta
from pagetools import run_cli
from test_export import _set, assert_lines_are_the_models, cfg_js, export, exported_page, js, shown_js, text_of, value_of

pytestmark = pytest.mark.browser
QWEN = PRESETS["qwen3-next-80b-a3b"]  # B = 8, T = 8,192
MOVED = [(3, 64), (3, 65)]  # one chunk of 64 (T_r = 0), then two (T_pad = 128, T_r = 128)


def exported_preset(tmp_path_factory: pytest.TempPathFactory, preset: str) -> Path:
    """The page `python -m app export --preset <preset>` writes, checked written."""
    out = tmp_path_factory.mktemp("export") / f"{preset}.html"
    done = export(out, "--preset", preset)
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    return out


def preset_cli(capsys, preset: str, *argv: str) -> dict:
    """`python -m model --preset <preset> … --json`, read."""
    status, out, err = run_cli(["--preset", preset, *argv, "--json"], capsys)
    assert status == 0, err
    return json.loads(out)


def assert_n_and_n_active_are_the_clis(page, capsys, preset: str) -> tuple[int, int]:
    """The page's head shows N and N_active as the CLI prints them; returns them."""
    head = html.unescape(re.sub(r"<[^>]+>", "", text_of(page, "head")))
    b = preset_cli(capsys, preset, "--table", "budget")["budget"]
    assert f"N = {b['params_exact']:,} parameters" in head and f"N_active = {b['params_active']:,} per token" in head
    return b["params_exact"], b["params_active"]


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = exported_preset(tmp_path_factory, "qwen3-next-80b-a3b")
    assert len(out.read_bytes()) < 5_800_000  # 5,712,576 bytes measured (the inference card's tables and the changes
    # card's included)
    return out


@pytest.fixture(scope="module")
def page(chromium, page_file: Path):
    yield from exported_page(chromium, page_file)


def cli(capsys, *argv: str) -> dict:
    return preset_cli(capsys, "qwen3-next-80b-a3b", *argv)


def cell(page, key: str) -> str:
    """The value cell of the shapes card's line `key`, as the page shows it."""
    found = re.search(rf'data-key="{key}"><td class="l">.*?</td><td class="v">(.*?)</td>', text_of(page, "shapes"))
    assert found is not None, key
    return html.unescape(found.group(1))


def shown_value(x: dict) -> str:
    want = shown(Line(**x))
    return want["value"] + (f"<small>{want['short']}</small>" if want["short"] else "")


def test_n_and_n_active_are_the_clis(page, capsys) -> None:
    assert assert_n_and_n_active_are_the_clis(page, capsys, "qwen3-next-80b-a3b") == (79_674_391_296, 3_874_929_408)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_budget_and_memory_lines_are_the_clis_at_two_b_and_t(page, capsys, dtype: str) -> None:
    """Every budget line (the FLOPs per token among them) and memory line (saved bytes, the cache and the states, the
    twin's cache) of the page, key and value, at the page's B and T and at B = 3, T = 65, equals the CLI's JSON."""
    for B, T in ((QWEN.B, QWEN.T), MOVED[1]):
        got = cli(capsys, "--B", str(B), "--T", str(T), "--dtype", dtype)
        c = cfg_js(replace(QWEN, B=B, T=T))
        (lines,) = shown_js(page, "budgetLines", [[c]])
        assert [(x["key"], x["value"]) for x in lines] == [(x["key"], shown(Line(**x))["value"]) for x in got["lines"]]
        (memory,) = shown_js(page, "memoryLines", [[c, dtype]])
        assert [(x["key"], x["value"]) for x in memory] == \
            [(x["key"], shown(Line(**x))["value"]) for x in got["memory"]], (B, T)
        assert "T_pad" in next(x["formula"] for x in memory if x["key"] == "memory/saved")


def test_the_cache_lines_per_token_and_per_sequence(page) -> None:
    """At bf16 the attention blocks keep 24,576 bytes per token, the states 77,856,768 bytes per sequence whatever T,
    the all-attention twin 98,304 bytes per token (the page's own formulas, evaluated in the browser at B = 2: a mixture
    of experts' page carries passes of B > 1 only)."""
    for T in (64, 65, 8192):
        (memory,) = js(page, "memoryLines", [[cfg_js(replace(QWEN, B=2, T=T)), "bf16"]])
        v = {x["key"]: int(x["value"]) for x in memory}
        assert v["memory/kv_cache_per_token"] == 24_576
        assert v["memory/state_conv"] + v["memory/state_recurrent"] == 2 * 77_856_768
        assert v["memory/kv_cache_all_attention"] == 2 * 98_304 * T


def test_lines_labels_and_formulas_are_the_models_across_a_chunk_boundary(page) -> None:
    assert_lines_are_the_models(page, [QWEN, *(replace(QWEN, B=B, T=T) for B, T in MOVED)], cfg_js)


def assert_shape_rows_are_the_models(page, configs) -> None:
    """The page's shapes rows (bf16, every block listed) of each of `configs` are `model.trace`'s, as the live table
    shows them: kind, name, label, lesson shape, shape now and memory."""
    for c, table in zip(configs, js(page, "shapeRows", [[cfg_js(c), "bf16", True] for c in configs])):
        want = shape_rows(trace(c, "bf16"), 1, True)
        assert [(r["kind"], r["name"], r["label"], r.get("symbolic", ""), r.get("shape", ""), r.get("memory", ""))
                for r in table["rows"]] == \
            [(r.kind, r.name, r.label, r.symbolic, r.shape, r.memory) for r in want], c


def assert_changes_card_is_pythons(page, configs, dtype: str, last: str) -> None:
    """At each of `configs` (the page's own first) the changes card's groups (titles, labels, formulas, values), its
    markup and its note as the page makes them are Python's (`model.changes.changes`); the card on the page ends with
    the change `last` of the page's model, its title shown."""
    for c in configs:
        ch = changes(c, dtype)
        (out,) = js(page, "changesGroups", [[cfg_js(c), dtype]])
        assert out.get("groups") == changes_groups(ch), (c.B, c.T, out.get("notice"))
        assert js(page, "changes_card.changes_html", [[out["groups"], dtype, ch.note]]) == \
            [changes_html(changes_groups(ch), dtype, ch.note)]
        assert js(page, "changes.order_note", [[cfg_js(c)]]) == [ch.note]
    card = html.unescape(re.sub(r"<[^>]+>", "", text_of(page, "changes")))
    step = changes(configs[0], "bf16").steps[-1]  # the card at the page's dtype
    assert step.key == last and html.unescape(html.escape(step.title)) in card


def test_the_shapes_rows_are_the_models(page) -> None:
    assert_shape_rows_are_the_models(page, [replace(QWEN, B=B, T=T) for B, T in MOVED])
    assert "<b>lin.state " in text_of(page, "shapes")  # the fixed state (B, h_lv, d_lk, d_lv), on the page's own table


def test_the_sliders_move_the_saved_bytes_and_the_states_as_the_cli(page, capsys) -> None:
    """B and T moved on the page (T from 64 to 65: a second chunk) show the CLI's saved bytes and states."""
    assert cell(page, "memory/saved") == shown_value(next(x for x in cli(capsys)["memory"] if x["key"] == "memory/saved"))
    _set(page, "B_input", 3)
    for T in (64, 65):
        _set(page, "T_input", T)
        got = {x["key"]: x for x in cli(capsys, "--B", "3", "--T", str(T))["memory"]}
        for key in ("memory/saved", "memory/state_recurrent", "memory/kv_cache", "memory/kv_cache_all_attention"):
            assert cell(page, key) == shown_value(got[key]), (T, key)
    head = html.unescape(re.sub(r"<[^>]+>", "", text_of(page, "head")))
    assert f"N = {budget(QWEN).params_exact:,} parameters" in head


def test_the_training_card_says_why_it_shows_no_figures(page) -> None:
    train = html.unescape(text_of(page, "train_head"))
    assert "A mixture of experts trains at C = 6·N_active·D" in train and "--table train" in train
    assert not value_of(page, "train_body", "visible")
    dense = replace(QWEN, experts=None, top_k=None, expert_dim=None, shared_experts=0, shared_dim=None,
                    shared_gate=False, ff_dim=5120)  # a dense hybrid's card: the peak has no formula, one line says so
    assert js(page, "training.no_peak", [[cfg_js(dense)], [cfg_js(PRESETS["llama3-8b"])]]) == [delta.NO_PEAK, None]


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_changes_card_ends_with_gated_deltanet_as_python_makes_it(page, dtype: str) -> None:
    """The card's groups (titles, labels, formulas, values: the FLOPs per token over T_pad/T among them) and markup equal
    Python's at the page's B and T and across a chunk boundary; its last change is Gated DeltaNet's, shown on the page."""
    configs = [replace(QWEN, B=B, T=T) for B, T in ((QWEN.B, QWEN.T), *MOVED)]
    assert_changes_card_is_pythons(page, configs, dtype, "delta")
    card = html.unescape(re.sub(r"<[^>]+>", "", text_of(page, "changes")))
    last = {dt: changes(QWEN, dt).steps[-1] for dt in ("fp32", "bf16")}
    assert any(all(x.label in card for x in g.lines) for g in last.values())


def test_the_step_chart_sets_the_all_attention_twin_beside_the_hybrid(page) -> None:
    """The inference card's T chart draws the all-attention twin's decode steps, dashed, as the live card does: the
    hybrid's flatter line (its states stay as they are) beside a cache growing in every block."""
    from app.export.spec import _plotted
    from model.infer_report import chart_data
    from model.inference import serving
    got = page.evaluate("() => { const d = Bokeh.documents[0], s = d.get_model_by_name('infer-twin_T').data; "
                        "const g = (k) => Array.from(s instanceof Map ? s.get(k) : s[k]); "
                        "return [d.get_model_by_name('twin').visible, g('T'), g('step_ms')]; }")
    twin = chart_data(serving(QWEN))["twin_T"]
    assert got == [True, twin["T"], [_plotted(x) for x in twin["step_ms"]]]
    assert got[2][-1] > 1.4 * got[2][0]  # the twin's step grows with T (32,768 against 128)


DENSE_ARGS = ["--preset", "llama3.2-1b", "--B", "2", "--T", "100", "--linear-layers", "0,1,2,4,5,6", "--h-lk", "4",
              "--h-lv", "8", "--d-lk", "64", "--d-lv", "64", "--d-conv", "4"]


@pytest.fixture(scope="module")
def dense_page(chromium, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("export") / "dense-hybrid.html"
    done = export(out, *DENSE_ARGS)
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    yield from exported_page(chromium, out)


def test_a_dense_hybrids_training_card_says_in_one_line_why_it_has_no_peak(dense_page, capsys) -> None:
    """A dense Gated DeltaNet hybrid (Llama 3.2 1B with six Gated DeltaNet blocks): its page shows N as the CLI and, in
    the training card's place, `delta.NO_PEAK` with the command that prints the card (never a wrong peak)."""
    status, out, err = run_cli([*DENSE_ARGS, "--table", "budget", "--json"], capsys)
    assert status == 0, err
    head = html.unescape(re.sub(r"<[^>]+>", "", text_of(dense_page, "head")))
    assert f"N = {json.loads(out)['budget']['params_exact']:,} parameters" in head
    train = html.unescape(text_of(dense_page, "train_head"))
    assert delta.NO_PEAK.split("{command}")[0] in train and text_of(dense_page, "train_head").count("status") == 1
    command = train.split("print this model's with: ")[1].split("<")[0]
    assert command.startswith("python -m model ") and "--linear-layers 0,1,2,4,5,6" in command
    assert command.endswith("--table train") and not value_of(dense_page, "train_body", "visible")


def test_a_dense_hybrids_shapes_rows_name_their_own_blocks(dense_page) -> None:
    """Its Gated DeltaNet and attention blocks are both "dense": each row names a block of its own kind, as the model's
    table does (rows carry their kind wherever some blocks are stateful, `app.export.spec`)."""
    c = replace(PRESETS["llama3.2-1b"], B=2, T=100, linear_layers=(0, 1, 2, 4, 5, 6), linear_k_heads=4,
                linear_v_heads=8, linear_k_dim=64, linear_v_dim=64, conv_width=4)
    assert_shape_rows_are_the_models(dense_page, [c])
