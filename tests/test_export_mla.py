"""The no-server page of multi-head latent attention (issue 27), in Chromium: a page written for DeepSeek-V3 (its preset,
and its config.json) shows N (671,026,404,352, without the multi-token-prediction module), N_active (37,552,282,624)
and the KV cache per token (70,272 bytes at bf16) as `python -m model` prints them at either dtype; its shapes rows are
the model's (the latent, the rotary key, the queries' low-rank pair, the scores at d_nope + d_R), its changes card ends
with latent attention (title and the cache ratio 2h·d_v / (d_c + d_R)); its boxes d_c, d_cq, d_R, d_nope, d_v move the
cache as the CLI counts it, and a bad value is one notice line; the export command takes the MLA flags."""
from __future__ import annotations

import html
import json
import re
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from app.cards.budget.markup import shown
from app.cards.recipe.markup import changes_groups, changes_html
from app.export.cli import add_arguments
from app.export.page import build_document
from app.export.spec import ALL_FIELDS, widget_table
from app.cards.shapes.markup import shape_rows
from model import PRESETS, Config, budget, trace
from model.changes import changes
from model.cli import OneLineParser, config_from_args
from model.families import menu_label
from model.rules import rules_line, settle_notes
from pagetools import run_cli
from test_export import (_set, assert_lines_are_the_models, settled_both_ways, export, exported_page, js, shown_js,
                         text_of, value_of)

pytestmark = pytest.mark.browser
PUBLISHED = Path(__file__).parent / "hf" / "published"
DEEPSEEK = PRESETS["deepseek-v3"]
LATENT_ROWS = ("attn.q_a", "attn.q_a_norm", "attn.q_b", "attn.kv_a", "attn.c_kv", "attn.kv_a_norm", "attn.k_rope",
               "attn.kv_b", "attn.q_heads")  # the queries' low-rank pair, the latent, the rotary key, the scores' heads


def export_parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m app export")
    add_arguments(parser)
    return parser


def mla_js(c: Config) -> dict:
    return {f: list(v) if isinstance(v, tuple) else v for f in ALL_FIELDS for v in [getattr(c, f)]}


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "deepseek-v3.html"
    done = export(out, "--preset", "deepseek-v3")
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    assert len(out.read_bytes()) < 7_000_000  # 5,324,269 bytes measured (the inference card's tables included)
    return out


@pytest.fixture(scope="module")
def page(chromium, page_file: Path):
    yield from exported_page(chromium, page_file)


def kv_cell(page) -> str:
    cell = re.search(r'data-key="memory/kv_cache_per_token"><td class="l">.*?</td><td class="v">(.*?)</td>',
                     text_of(page, "shapes"))
    assert cell is not None
    return html.unescape(re.sub(r"<[^>]+>", " ", cell.group(1)))


def cli_json(argv: list[str], capsys) -> dict:
    status, out, err = run_cli([*argv, "--json"], capsys)
    assert status == 0, err
    return json.loads(out)


def per_token(cli: dict) -> int:
    return next(x["value"] for x in cli["kv"] if x["key"] == "memory/kv_cache_per_token")


def cases() -> list[Config]:
    """DeepSeek-V3, at fewer blocks and a shorter T, and with other latent widths (d_c 256, d_R 32, d_v 64)."""
    return [DEEPSEEK, replace(DEEPSEEK, L=5, T=64, B=2), replace(DEEPSEEK, latent_dim=256, rope_dim=32, L=4, T=128),
            replace(DEEPSEEK, value_dim=64, nope_dim=96, q_latent_dim=768, T=512)]


def test_n_n_active_and_the_kv_cache_per_token_are_the_clis_at_each_dtype(page, capsys) -> None:
    assert value_of(page, "preset") == menu_label("deepseek-v3")
    labels = json.dumps(value_of(page, "preset", "options"))
    assert '"DeepSeek"' in labels and "DeepSeek-V3 (no MTP module)" in labels  # the menu lists it under DeepSeek
    head = html.unescape(re.sub(r"<[^>]+>", "", text_of(page, "head")))
    for dtype, index in (("fp32", 0), ("bf16", 1)):
        cli = cli_json(["--preset", "deepseek-v3", "--dtype", dtype], capsys)
        assert (cli["budget"]["params_exact"], cli["budget"]["params_active"]) == (671_026_404_352, 37_552_282_624)
        assert f"N = {cli['budget']['params_exact']:,} parameters" in head
        assert f"N_active = {cli['budget']['params_active']:,} per token" in head
        page.evaluate("(i) => { Bokeh.documents[0].get_model_by_name('dtype').active = i; }", index)
        page.wait_for_timeout(300)
        assert f"{per_token(cli):,} bytes" in kv_cell(page), dtype
    assert per_token(cli_json(["--preset", "deepseek-v3", "--dtype", "bf16"], capsys)) == 70_272
    exact = next(x for x in budget(DEEPSEEK).lines if x.key == "params/exact")
    assert "multi-token-prediction" in exact.label and html.escape(exact.label) in text_of(page, "lines")


def test_budget_and_memory_lines_are_the_models(page) -> None:
    assert_lines_are_the_models(page, cases(), mla_js)


@pytest.mark.parametrize("expanded", [False, True])
def test_the_shapes_rows_are_the_models_with_the_latent_tensors(page, expanded: bool) -> None:
    configs = cases()[1:]
    for c, table in zip(configs, js(page, "shapeRows", [[mla_js(c), "bf16", expanded] for c in configs])):
        want = shape_rows(trace(c, "bf16"), 1, expanded)
        assert [(r["kind"], r["name"], r["label"], r.get("symbolic", ""), r.get("shape", ""), r.get("elements", ""),
                 r.get("memory", ""), r.get("only", False)) for r in table["rows"]] == \
            [(r.kind, r.name, r.label, r.symbolic, r.shape, r.elements, r.memory, r.only) for r in want], c
    shapes = html.unescape(text_of(page, "shapes"))  # the page's own table, DeepSeek-V3 at T = 8,192
    for name in LATENT_ROWS:
        assert f"<b>{name}" in shapes, name
    heads = next(r for r in trace(DEEPSEEK, "bf16").rows if r.name.endswith("attn.q_heads"))
    assert heads.symbolic == "(B, h, T, d_nope + d_R)" and heads.symbolic in shapes  # the scores' head width


def test_the_changes_card_ends_with_latent_attention(page) -> None:
    for c, dtype in ((c, dtype) for c in cases() for dtype in ("fp32", "bf16")):  # the page's own model at either
        (out,) = js(page, "changesGroups", [[mla_js(c), dtype]])
        ch = changes(c, dtype)
        assert out["groups"] == changes_groups(ch), (c, dtype)
        assert js(page, "changes_card.changes_html", [[out["groups"], dtype, ch.note]]) == \
            [changes_html(changes_groups(ch), dtype, ch.note)]
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('dtype').active = 0; }")  # fp32, the page's own
    page.wait_for_timeout(300)
    latent = changes(DEEPSEEK, "fp32").steps[-1]
    assert latent.key == "latent" and latent.lines[-1].formula == "2h·d_v / (d_c + d_R)"
    card = html.unescape(text_of(page, "changes"))
    assert html.unescape(html.escape(latent.title)) in card and latent.lines[-1].label in card
    assert "2h·d_v / (d_c + d_R)" in card
    (odd,) = js(page, "changesGroups", [[mla_js(replace(DEEPSEEK, value_dim=127)), "fp32"]])  # no chain: one line
    with pytest.raises(ValueError) as refused:
        changes(replace(DEEPSEEK, value_dim=127), "fp32")
    assert odd == {"notice": str(refused.value)}


def test_the_latent_boxes_move_the_kv_cache_as_the_cli_counts_it(page, capsys) -> None:
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('dtype').active = 1; }")  # bf16
    for name, symbol in (("latent_dim", "d_c"), ("q_latent_dim", "d_cq"), ("rope_dim", "d_R"), ("nope_dim", "d_nope"),
                         ("value_dim", "d_v")):
        assert value_of(page, f"opt_{name}") == f"{getattr(DEEPSEEK, symbol):,}"
        assert value_of(page, f"opt_{name}", "visible") is True
    assert value_of(page, "opt_kv_heads", "visible") is False and value_of(page, "opt_head_dim", "visible") is False
    _set(page, "opt_latent_dim", "256")
    page.wait_for_timeout(300)
    cli = cli_json(["--preset", "deepseek-v3", "--d-c", "256", "--dtype", "bf16"], capsys)
    assert per_token(cli) == DEEPSEEK.L * (256 + DEEPSEEK.d_R) * 2 and f"{per_token(cli):,} bytes" in kv_cell(page)
    assert f"N = {cli['budget']['params_exact']:,}" in html.unescape(text_of(page, "head"))
    assert value_of(page, "opt_latent_dim") == "256" and value_of(page, "preset") != menu_label("deepseek-v3")
    # the other boards of this model name its export command, which reads back as the model shown
    command = re.search(r"python -m model (.*?) --table train", html.unescape(text_of(page, "train_head"))).group(1)
    assert config_from_args(export_parser().parse_args(["x.html", *shlex.split(command)])) == replace(DEEPSEEK, latent_dim=256)
    _set(page, "opt_latent_dim", "512")
    page.wait_for_timeout(300)
    assert value_of(page, "preset") == menu_label("deepseek-v3")


def test_a_bad_box_value_is_one_notice_line(page) -> None:
    status = lambda: html.unescape(text_of(page, "status"))  # noqa: E731
    for name, text, said, kept in (("opt_rope_dim", "abc", 'd_R="abc" is not a whole number', "64"),
                                   ("opt_q_latent_dim", "0", "d_cq=0 is out of range: d_cq must be from 1 to 65,536, "
                                    "or none (q projected from x directly); kept d_cq=1,536", "1,536"),
                                   ("opt_latent_dim", "70000", "d_c=70,000 is out of range", "512"),
                                   ("opt_rope_dim", "33", "d_R snapped 33 → 34", "34")):
        _set(page, name, text)
        assert said in status() and status().count("⚠") == 1, (name, text)
        assert value_of(page, name) == kept
    _set(page, "opt_q_latent_dim", "none")  # q projected from x directly: another pass structure, its command named
    assert value_of(page, "opt_q_latent_dim") == "none"
    assert "--d-cq" not in html.unescape(text_of(page, "shapes")) and "--d-R 34" in html.unescape(text_of(page, "shapes"))
    _set(page, "preset", menu_label("deepseek-v3"))
    assert value_of(page, "opt_rope_dim") == "64" and value_of(page, "opt_q_latent_dim") == "1,536"


def test_latent_attentions_rules_are_the_models(page) -> None:
    """settle_notes on DeepSeek-V3 with what latent attention drops (h_kv, d_head, fused attention, learned positions,
    biases, QK-norm), an odd d_R, and h not dividing d; then news against the notes before."""
    base = mla_js(DEEPSEEK)
    asks = [{**base, "kv_heads": 8}, {**base, "head_dim": 64}, {**base, "attention": "fused", "positions": "learned"},
            {**base, "bias": "all", "qk_norm": True}, {**base, "rope_dim": 63}, {**base, "h": 100},
            {**base, "rope_dim": 32_767}]
    cases = []
    for asked in asks:
        shown = settle_notes(asked)[0]
        for later, changed in (({**asked, "latent_dim": 256}, ["latent_dim"]), ({**asked, "L": 7}, ["L"])):
            cases.append((asked, later, mla_js(shown), changed))
    for (_, later, _, _), (got, want) in zip(cases, settled_both_ways(page, cases)):
        assert [mla_js(got[0]), *got[1:]] == [mla_js(want[0]), *want[1:]], later
    assert js(page, "rules.rules_line", [[base]]) == [rules_line(DEEPSEEK)]


def test_a_deepseek_v3_config_json_writes_its_page(chromium, tmp_path: Path) -> None:
    out = tmp_path / "from-config.html"
    done = export(out, "--hf-config", str(PUBLISHED / "deepseek-v3.json"))
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    assert "multi-token-prediction" in done.stderr  # config.json's notes (the MTP module left out, ...), then the page
    for p in exported_page(chromium, out):
        assert value_of(p, "preset") == menu_label("deepseek-v3")  # its model is the preset's
        assert "N = 671,026,404,352" in text_of(p, "head") and "70,272 bytes" not in kv_cell(p)  # fp32: twice bf16's
        assert f"{DEEPSEEK.L * (DEEPSEEK.d_c + DEEPSEEK.d_R) * 4:,} bytes" in kv_cell(p)


@pytest.mark.parametrize("args, message", [
    (["--d-c", "abc"], "argument --d-c: invalid number 'abc': write a whole number, or none"),
    (["--d-R", "63"], "d_R=63 is odd: RoPE rotates pairs of features, so rope_dim must be even"),
    (["--d-c", "0"], "d_c=0 is out of range"),
    (["--attention", "fused"], "attention=fused with latent attention"),
])
def test_a_bad_latent_flag_is_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    done = export(tmp_path / "x.html", "--preset", "deepseek-v3", *args)
    assert done.returncode == 2 and message in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "x.html").exists()


DENSE = ["--preset", "deepseek-v3", "--experts", "none", "--top-k", "none", "--d-expert", "none", "--shared-experts", "0",
         "--dense-first", "0", "--L", "4", "--T", "256", "--d-cq", "none"]  # latent attention with a dense MLP


def test_a_dense_latent_attentions_page_has_the_models_training_card(chromium, tmp_path: Path, capsys) -> None:
    """A dense model's page has the training card: its serving lines are the latent's cache, c_kv and k_rope."""
    from model.training import TrainSetup, plan
    from model.train_report import human
    from test_export import setup_js

    out = tmp_path / "dense.html"
    done = export(out, *DENSE)
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    c = config_from_args(export_parser().parse_args(["x.html", *DENSE]))
    assert c.mla and not c.moe and c.d_cq is None
    cli = cli_json(DENSE, capsys)
    for p in exported_page(chromium, out):
        assert f"N = {cli['budget']['params_exact']:,}" in text_of(p, "head")
        assert f"{per_token(cli):,} bytes" in kv_cell(p) and per_token(cli) == c.L * (c.d_c + c.d_R) * 4
        setups = [TrainSetup(), TrainSetup(optimizer="adam-fp32", zero=3, gpus=64, recompute="full"),
                  TrainSetup(D=10**12, gpus=8, zero=1, fit="hoffmann")]
        pairs = [(x, s) for x in (c, replace(c, L=2, T=64, latent_dim=128)) for s in setups]
        got = p.evaluate("(xs) => xs.map(([c, s]) => window.__ts.trainPlan(c, s).lines.map((x) => "
                         "[x.key, x.label, x.formula, x.human]))", [[mla_js(x), setup_js(s)] for x, s in pairs])
        for (x, s), lines in zip(pairs, got):
            assert lines == [[y.key, y.label, y.formula, human(y)] for y in plan(x, s).lines], (x, s)
        from app.cards.train import markup as view

        assert text_of(p, "train_head") == view.headline_html(plan(c, TrainSetup()))  # its serving: the latent's cache


def test_the_export_command_names_what_no_preset_has(page) -> None:
    """A model whose window, latent attention or family's extras are no preset's: the command the page names (on any
    card that does not carry it) gives every such field its flag, and `python -m app export` reads it back."""
    others = [replace(DEEPSEEK, latent_dim=256, q_latent_dim=None), replace(DEEPSEEK, rope_dim=32, L=7),
              replace(PRESETS["mistral-7b"], window=4_096), replace(PRESETS["gemma-3-1b"], L=7, full_layers=(5,)),
              replace(PRESETS["gpt-oss-20b"], swiglu_limit=5.0, window=256)]
    for c, command in zip(others, js(page, "changes_card.export_command", [[mla_js(c)] for c in others])):
        argv = shlex.split(command)[4:]  # lesson.html, then the options
        assert config_from_args(export_parser().parse_args(argv)) == c, command


def test_a_deepseek_v2_config_json_writes_its_page(chromium, tmp_path: Path, capsys) -> None:
    """A tiny deepseek_v2 file (no queries' latent, 2 dense blocks then MoE with 2 shared experts): its page shows N,
    N_active, the budget, memory and KV lines at either dtype and the changes as the model gives them."""
    import random

    from test_mla import random_doc

    doc = random_doc(random.Random("export-3"), "deepseek_v2")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "v2.html"
    done = export(out, "--hf-config", str(path))
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    c = config_from_args(export_parser().parse_args(["x.html", "--hf-config", str(path)]))
    assert c.mla and c.d_cq is None and c.moe and c.E_shared == 2
    for p in exported_page(chromium, out):
        cli = cli_json(["--hf-config", str(path)], capsys)
        head = html.unescape(re.sub(r"<[^>]+>", "", text_of(p, "head")))
        assert f"N = {cli['budget']['params_exact']:,} parameters" in head
        assert f"N_active = {cli['budget']['params_active']:,} per token" in head
        assert f"{per_token(cli):,} bytes" in kv_cell(p)
        keys = ("key", "label", "formula", "value", "short")
        (lines,) = shown_js(p, "budgetLines", [[mla_js(c)]])
        assert [{k: x[k] for k in keys} for x in lines] == [shown(x) for x in budget(c).lines]
        for dtype in ("fp32", "bf16"):
            (lines,) = shown_js(p, "memoryLines", [[mla_js(c), dtype]])
            assert [{k: x[k] for k in keys} for x in lines] == [shown(x) for x in trace(c, dtype).lines], dtype
            (groups,) = js(p, "changesGroups", [[mla_js(c), dtype]])
            assert groups["groups"] == changes_groups(changes(c, dtype)), dtype
        for x in (False, True):
            (table,) = js(p, "shapeRows", [[mla_js(c), "bf16", x]])
            assert [(r["name"], r.get("shape", "")) for r in table["rows"]] == \
                [(r.name, r.shape) for r in shape_rows(trace(c, "bf16"), 1, x)]


def test_every_control_is_in_the_widget_table(page_file: Path) -> None:
    """page.js main reads and pushControls writes the page's controls by `spec.widget_table`: every widget wired to
    the callback (the training and inference cards' aside, read by their sections) is in it, and each entry names a
    widget of a page that has every control (latent attention's and a mixture of experts' page)."""
    doc = build_document(DEEPSEEK, "bf16")
    names = {m.name for m in doc.models if m.name}
    wired = {m.name for m in doc.models if m.name and m.js_property_callbacks
             and not m.name.startswith(("train_", "infer_"))}
    table = widget_table()
    assert wired <= set(table), wired - set(table)
    assert set(table) <= names, set(table) - names
    assert all(table[n]["kind"] == "label" for n in set(table) - wired)  # the names of h and T_max, written only
