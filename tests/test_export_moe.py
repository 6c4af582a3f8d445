"""The no-server page of a mixture of experts (issue 26), in Chromium: one page, written from Mixtral 8x7B's
config.json, shows N and N_active, the chart, the shapes grouped by kind of block and the changes as the model and
the live page give them; its MLP switch and its boxes E, k and d_expert move N and N_active as the CLI counts them; its
training card names the CLI's command; its inference card shows the CLI's figures."""
from __future__ import annotations

import html
import json
import re
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from app.cards.budget.markup import budget_parts, chart_html, headline_html, shown
from app.cards.recipe.markup import changes_groups, changes_html
from app.export.spec import ALL_FIELDS
from app.cards.infer.markup import headline_html as infer_headline_html
from app.cards.shapes.markup import shape_rows
from model import PRESETS, budget, trace, units
from model.budgeting import chart_note
from model.changes import changes
from model.cli import build_parser, config_from_args
from model.families import menu_label, moe_fields
from model.inference import serving
from model.train_report import human
from model.tracing import block_groups
from pagetools import run_cli
from test_export import _set, box, export, exported_page, js, shown_js, text_of, value_of

pytestmark = pytest.mark.browser
PUBLISHED = Path(__file__).parent / "hf" / "published"
MIXTRAL = replace(PRESETS["mixtral-8x7b"], T=4096)


@pytest.fixture(scope="module")
def page(chromium, tmp_path_factory: pytest.TempPathFactory):
    out: Path = tmp_path_factory.mktemp("export") / "mixtral.html"
    done = export(out, "--hf-config", str(PUBLISHED / "mixtral-8x7b.json"), "--T", "4096")
    assert done.returncode == 0, done.stderr
    assert len(out.read_bytes()) < 5_600_000  # the inference card's tables and its own changes tables at fp32 and bf16
    # included (5,389,274 bytes before Python's functions ran compiled on the page, 5,404,546 after: their
    # JavaScript replaces the twins, less their comments; 5,477,327 with Gated DeltaNet's fields and rules, 5,489,303
    # with its saved bytes' formula, 5,490,976 with the T chart's all-attention twin and the hybrid's training notice,
    # 5,527,470 with DeepSeek sparse attention's, Mamba 2's and Kimi delta attention's compiled functions and fields)
    yield from exported_page(chromium, out)


def moe_js(c) -> dict:
    return {f: list(v) if isinstance(v, tuple) else v for f in ALL_FIELDS for v in [getattr(c, f)]}


def options_of(command: str):
    """The Config that `python -m model` reads from the options of a command the page names."""
    argv = shlex.split(command)[3:]  # after "python -m model", or "python -m app" and then "export lesson.html"
    argv = argv[2:] if argv[0] == "export" else argv
    argv = argv[:argv.index("--table")] if "--table" in argv else argv
    return config_from_args(build_parser().parse_args(argv))


def test_the_page_shows_n_and_n_active_as_the_cli(page) -> None:
    assert value_of(page, "preset") == menu_label("mixtral-8x7b")  # config.json's model is the preset's
    head = text_of(page, "head")
    assert "N = 46,702,792,704" in head and "N_active = 12,879,925,248" in head
    b = budget(MIXTRAL)
    assert head == headline_html({x.key: shown(x) for x in b.lines})
    assert text_of(page, "chart") == chart_html(budget_parts(b))
    assert html.escape(chart_note(b), quote=False) in text_of(page, "chart_note")


def test_budget_lines_agree_with_the_model_at_other_sizes(page) -> None:
    cases = [MIXTRAL, replace(MIXTRAL, L=5, experts=16, top_k=4, expert_dim=1024, T=77, B=3),
             replace(MIXTRAL, d=2048, h=16, kv_heads=4, experts=6, top_k=3)]
    for c, lines in zip(cases, shown_js(page, "budgetLines", [[moe_js(c)] for c in cases])):
        assert [{k: x[k] for k in ("key", "label", "formula", "value", "short")} for x in lines] == \
            [shown(x) for x in budget(c).lines], c


@pytest.mark.parametrize("expanded", [False, True])
def test_the_shapes_table_groups_blocks_by_kind(page, expanded: bool) -> None:
    c = replace(MIXTRAL, L=4, T=64)
    (table,) = js(page, "shapeRows", [[moe_js(c), "bf16", expanded]])
    tr = trace(c, "bf16")
    want = shape_rows(tr, 1, expanded)
    assert [(r["kind"], r["name"], r["label"], r["shape"] if r["kind"] == "tensor" else None) for r in table["rows"]] == \
        [(r.kind, r.name, r.label, r.shape if r.kind == "tensor" else None) for r in want]


def test_group_titles_of_mixed_layouts_are_the_models(page) -> None:
    cases = [replace(MIXTRAL, L=61, dense_first=3), replace(MIXTRAL, L=48, moe_step=2), replace(MIXTRAL, L=3),
             replace(MIXTRAL, L=12, dense_layers=(0, 4, 5, 6, 11)), replace(MIXTRAL, L=2, dense_first=1)]
    for c, groups in zip(cases, js(page, "tracing.block_groups", [[moe_js(c)] for c in cases])):
        assert [(g["kind"], tuple(g["blocks"]), g["title"]) for g in groups] == \
            [(g.kind, g.blocks, g.title) for g in block_groups(c)], c


def test_the_changes_card_shows_the_models_lines(page) -> None:
    (out,) = js(page, "changesGroups", [[moe_js(MIXTRAL), "fp32"]])
    c = changes(MIXTRAL, "fp32")
    assert out["groups"] == changes_groups(c)
    assert js(page, "changes_card.changes_html", [[out["groups"], "fp32", c.note]]) == [changes_html(changes_groups(c), "fp32", c.note)]


def test_the_training_card_says_where_its_figures_are_and_the_inference_card_shows_them(page) -> None:
    train = html.unescape(text_of(page, "train_head"))
    assert "A mixture of experts trains at C = 6·N_active·D" in train
    assert options_of(train.split("print this model's with: ")[1].split("<")[0].strip()) == MIXTRAL
    assert not value_of(page, "train_body", "visible") and not value_of(page, "train_controls", "visible")
    lines = dict(re.findall(r'<tr data-key="([^"]+)">.*?<td class="v">([^<]*)</td>', text_of(page, "infer_lines")))
    s = serving(MIXTRAL)  # the page's B = 8, T = 4,096 on an H100 at bf16
    assert lines == {x.key: html.escape(human(x), quote=True) for x in s.result.lines}
    assert "infer/experts_touched" in lines and text_of(page, "infer_head") == infer_headline_html(s)
    assert "A step reads <b>7.2</b> of each MoE block&#x27;s 8 routed experts" in infer_headline_html(s)
    assert value_of(page, "infer_figures", "visible") is True


def test_another_mixture_of_experts_names_its_export_command(page) -> None:
    qwen = PRESETS["qwen3-30b-a3b"]
    assert js(page, "covered", [[moe_js(qwen), "fp32"], [moe_js(MIXTRAL), "fp32"]]) == [False, True]
    (command,) = js(page, "changes_card.export_command", [[moe_js(qwen)]])
    assert options_of(command) == qwen


def test_the_mlp_switch_and_the_boxes_e_k_d_expert_move_n_and_n_active_as_the_cli(page, capsys) -> None:
    """The page's formulas take E, k and d_expert as symbols: the boxes change them, k beyond E is clamped with the
    live page's notice, a bad value is one notice, and the switch makes Mixtral dense (Mistral 7B) and MoE again."""
    sizes = ("opt_experts", "opt_top_k", "opt_expert_dim")
    assert value_of(page, "moe") == "moe" and [box(page, b) for b in sizes] == [8, 2, 14_336]
    assert not value_of(page, "opt_ff_dim", "visible")  # every block MoE: no dense MLP, no d_ff
    for name, text in zip(sizes, ("16", "1", "4,096")):
        _set(page, name, text)
    cli = json.loads(run_cli(["--hf-config", str(PUBLISHED / "mixtral-8x7b.json"), "--T", "4096", "--experts", "16",
                              "--top-k", "1", "--d-expert", "4096", "--table", "budget", "--json"], capsys)[1])["budget"]
    head = text_of(page, "head")
    assert f"N = {cli['params_exact']:,}" in head and f"N_active = {cli['params_active']:,}" in head
    c = replace(MIXTRAL, experts=16, top_k=1, expert_dim=4096)
    assert (cli["params_exact"], cli["params_active"]) == (budget(c).params_exact, budget(c).params_active)
    router = next(r for r in trace(c).rows if r.shape[-1] == 16)  # the router's logits (B, T, E) at E = 16
    assert html.escape(units.shape(router.shape)) in text_of(page, "shapes")
    _set(page, "opt_top_k", "17")
    assert box(page, "opt_top_k") == 16 and text_of(page, "status").count("⚠") == 1
    assert "k clamped 17 → 16: each token goes to k of the E = 16 experts, so k cannot exceed E" in text_of(page, "status")
    _set(page, "opt_experts", "many")
    assert box(page, "opt_experts") == 16 and 'E="many" is not a whole number' in html.unescape(text_of(page, "status"))
    _set(page, "preset", menu_label("mixtral-8x7b"))
    _set(page, "moe", "dense")  # Mixtral made dense is Mistral 7B: the boxes hide, d_ff shows the experts' width
    assert value_of(page, "preset") == menu_label("mistral-7b") and not value_of(page, "opt_experts", "visible")
    assert f"N = {budget(PRESETS['mistral-7b']).params_exact:,}" in text_of(page, "head") and box(page, "opt_ff_dim") == 14_336
    _set(page, "moe", "moe")
    assert value_of(page, "preset") == menu_label("mixtral-8x7b") and value_of(page, "opt_experts", "visible")
    cases = [PRESETS["mistral-7b"], MIXTRAL, replace(MIXTRAL, L=4, dense_first=1)]
    assert js(page, "families.moe_fields", [[moe_js(c), not c.moe] for c in cases]) == [
        {k: list(v) if isinstance(v, tuple) else v for k, v in moe_fields(c, not c.moe).items()} for c in cases]
