"""The no-server page of sliding windows and Gemma's and gpt-oss's extras (issue 27), in Chromium: a page written for
gemma-3-1b, gemma-3-27b, gpt-oss-20b and Mistral 7B v0.1 (its config.json: a window of 4,096 on every block) shows N
and the KV cache per token as `python -m model --json` prints them, and every figure it shows (budget, memory and KV
lines, the shapes rows and their headings, the changes card, the training card of a dense model) is the model's at
its own and at other sizes (T below the window, other L, bf16)."""
from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.cards.budget.markup import shown
from app.cards.recipe.markup import changes_groups, changes_html
from app.export.keys import budget_key
from app.export.spec import ALL_FIELDS
from app.cards.shapes.markup import shape_rows
from model import PRESETS, Config, trace
from model.changes import changes
from model.cli import build_parser, config_from_args
from model.figures import Line
from model.memory import structure, structure_key
from model.train_report import human
from model.training import TrainSetup, plan
from pagetools import run_cli
from test_export import assert_lines_are_the_models, settled_both_ways, export, exported_page, js, setup_js, text_of

pytestmark = pytest.mark.browser
HF = Path(__file__).parent / "hf"
PAGES = ("gemma-3-1b", "gemma-3-27b", "gpt-oss-20b", "mistral-7b-v0.1")


def mistral_v01(folder: Path) -> Path:
    """Mistral 7B v0.1's config.json: v0.2's (tests/hf/mistral-7b.json) with its sliding window of 4,096 tokens."""
    doc = {**json.loads((HF / "mistral-7b.json").read_text()), "sliding_window": 4096, "rope_theta": 10000.0}
    path = folder / "mistral-7b-v0.1.json"
    path.write_text(json.dumps(doc))
    return path


def argv_of(name: str, folder: Path) -> list[str]:
    return ["--hf-config", str(mistral_v01(folder))] if name == "mistral-7b-v0.1" else ["--preset", name]


def page_js(c: Config) -> dict:
    return {f: list(v) if isinstance(v, tuple) else v for f in ALL_FIELDS for v in [getattr(c, f)]}


@pytest.fixture(scope="module", params=PAGES)
def page(request, chromium, tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("export")
    out, argv = folder / f"{request.param}.html", argv_of(request.param, folder)
    done = export(out, *argv)
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    assert len(out.read_bytes()) < 7_000_000  # Gemma 3 27B: 6.5 MB (GQA, MHA, MQA, each all-windowed too, both attentions)
    for p in exported_page(chromium, out):
        p.argv = argv
        p.cfg = config_from_args(build_parser().parse_args(argv))
        yield p


def cases(c: Config) -> list[Config]:
    """`c`, T below its window, fewer blocks (the full blocks past them dropped, as the rules drop them) and more."""
    few = min(c.L - 1, 7)
    low = min(c.full_layers, default=c.L - 1)  # blocks 0 … low − 1: all windowed
    return [c, replace(c, T=c.W // 2, B=3), replace(c, L=few, full_layers=tuple(i for i in c.full_layers if i < few)),
            replace(c, L=c.L + 5, T=c.W + 37), replace(c, L=max(1, low), full_layers=())]


def test_n_and_the_kv_cache_per_token_are_the_clis(page, capsys) -> None:
    cli = json.loads(run_cli([*page.argv, "--json"], capsys)[1])
    head = html.unescape(text_of(page, "head"))
    assert f"N = {cli['budget']['params_exact']:,} parameters" in re.sub(r"<[^>]+>", "", head)
    per_token = next(Line(**x) for x in cli["kv"] if x["key"] == "memory/kv_cache_per_token")
    want = shown(per_token)
    cell = re.search(r'data-key="memory/kv_cache_per_token"><td class="l">(.*?)<code>(.*?)</code></td>'
                     r'<td class="v">(.*?)</td>', text_of(page, "shapes"))
    assert cell is not None
    assert [html.unescape(x) for x in cell.groups()] == \
        [want["label"], want["formula"], want["value"] + (f"<small>{want['short']}</small>" if want["short"] else "")]
    assert cli["kv"][0]["label"] in html.unescape(text_of(page, "shapes"))  # the window's kept tokens, named


def test_keys_budget_and_memory_lines_are_the_models(page) -> None:
    configs = cases(page.cfg)
    pairs = [(c, dt) for c in configs for dt in ("fp32", "bf16")]
    assert js(page, "keys.pass_key", [[page_js(c), dt] for c, dt in pairs]) == \
        [structure_key(structure(c, dt)) for c, dt in pairs]
    assert js(page, "keys.budget_key", [[page_js(c)] for c in configs]) == [budget_key(c) for c in configs]
    assert_lines_are_the_models(page, configs, page_js)


@pytest.mark.parametrize("expanded", [False, True])
def test_the_shapes_rows_and_headings_are_the_models(page, expanded: bool) -> None:
    configs = [*cases(page.cfg)[:3], cases(page.cfg)[-1]]
    for c, table in zip(configs, js(page, "shapeRows", [[page_js(c), "bf16", expanded] for c in configs])):
        want = shape_rows(trace(c, "bf16"), 1, expanded)
        assert [(r["kind"], r["name"], r["label"], r.get("symbolic", ""), r.get("shape", ""), r.get("elements", ""),
                 r.get("memory", ""), r.get("only", False)) for r in table["rows"]] == \
            [(r.kind, r.name, r.label, r.symbolic, r.shape, r.elements, r.memory, r.only) for r in want], c


def test_the_changes_card_is_the_models(page) -> None:
    for c in [*cases(page.cfg)[:2], cases(page.cfg)[-1]]:
        (out,) = js(page, "changesGroups", [[page_js(c), "fp32"]])
        ch = changes(c, "fp32")
        assert out["groups"] == changes_groups(ch), c
        assert js(page, "changes_card.changes_html", [[out["groups"], "fp32", ch.note]]) == [changes_html(changes_groups(ch), "fp32", ch.note)]


def test_the_training_card_is_the_models(page) -> None:
    if page.cfg.moe:  # gpt-oss: the card names the CLI's command (tests/test_export_moe.py checks the MoE case)
        assert "python -m model --preset gpt-oss-20b" in html.unescape(text_of(page, "train_head"))
        return
    setups = [TrainSetup(), TrainSetup(optimizer="adam-fp32", zero=3, gpus=64, recompute="full"),
              TrainSetup(D=10**12, gpus=8, zero=1, fit="hoffmann")]
    pairs = [(c, s) for c in [*cases(page.cfg)[:3], cases(page.cfg)[-1]] for s in setups]
    got = page.evaluate("(xs) => xs.map(([c, s]) => window.__ts.trainPlan(c, s).lines.map((x) => "
                        "[x.key, x.label, x.formula, x.human]))", [[page_js(c), setup_js(s)] for c, s in pairs])
    for (c, s), lines in zip(pairs, got):
        assert lines == [[x.key, x.label, x.formula, human(x)] for x in plan(c, s).lines], (c, s)
    from app.cards.train import markup as view

    plans = [plan(c, s) for c, s in pairs]
    args = [[page_js(c), setup_js(s)] for c, s in pairs]
    for fn, python in (("training_markup.headline_html", view.headline_html),
                       ("training_markup.lines_html", view.lines_html)):
        assert page.evaluate(f"(xs) => xs.map(([c, s]) => window.__ts.{fn}(window.__ts.trainPlan(c, s)))", args) == \
            [python(p) for p in plans], fn


def test_another_windowed_preset_names_its_export_command(page) -> None:
    other = PRESETS["gemma-3-27b" if page.cfg.L != 62 else "gemma-3-1b"]
    (command,) = js(page, "changes_card.export_command", [[page_js(other)]])
    argv = command.split()[5:]  # after "python -m app export lesson.html"
    assert argv[:2] == ["--preset", "gemma-3-27b" if other.L == 62 else "gemma-3-1b"]
    assert config_from_args(build_parser().parse_args(argv)) == other
    # the page's preset menu lists every windowed preset
    labels = page.evaluate("() => Bokeh.documents[0].get_model_by_name('preset').options")
    flat = json.dumps(labels)
    assert all(name in flat for name in ("Gemma 3 1B", "Gemma 3 27B", "gpt-oss-20b"))


def test_the_windows_notices_are_the_rules(page) -> None:
    """settle_notes on the page's model with T below the window, fewer blocks than its full ones reach (they are
    dropped, and come back with L), another MLP (gpt-oss's clamp is a SwiGLU's), then news against the notes before."""
    from model.rules import settle_notes

    base = page_js(page.cfg)
    asks = [{**base, "T": page.cfg.W // 2}, {**base, "L": 4}, {**base, "L": 3, "T": 5}, {**base, "mlp": "gelu"},
            {**base, "L": page.cfg.L + 3}]
    cases = []
    for asked in asks:
        shown = settle_notes(asked)[0]
        for later, changed in (({**asked, "L": 2}, ["L"]), ({**asked, "T": 7}, ["T"]), ({**asked, "L": asked["L"] + 1}, [])):
            cases.append((asked, later, page_js(shown), changed))
    for (_, later, _, changed), (got, want) in zip(cases, settled_both_ways(page, cases)):
        assert [got[0].full_layers, *got[1:]] == [want[0].full_layers, *want[1:]], (later, changed)


def test_the_layernorms_own_biases_are_dropped_as_the_rules_drop_them(page) -> None:
    """`norm_biased` (PhiMoE's, Nemotron's LayerNorms with biases beside matrices without them) under RMSNorm or
    bias = all is dropped with its notice, on the page's compiled rules as in `model.rules`."""
    from model.config import from_hf

    base = page_js(from_hf({"model_type": "phimoe", "num_hidden_layers": 2}, B=1, T=16))
    cases = [(base, {**base, **change}, base, list(change)) for change in
             ({"norm": "rmsnorm"}, {"bias": "all"}, {"bias": "qkv"}, {"L": 3})]
    for (_, later, _, changed), (got, want) in zip(cases, settled_both_ways(page, cases)):
        assert got == want, (later, changed)
    assert [g[0].norm_biased for g, _ in settled_both_ways(page, cases)] == [False, False, True, True]


def test_layernorms_of_no_parameters_are_dropped_as_the_rules_drop_them(page) -> None:
    """`norm_plain` (OLMo 1's LayerNorms without a gain or a bias) under bias = all is dropped with its notice (under
    RMSNorm kept: nanochat's RMSNorms without a gain), on the page's compiled rules as in `model.rules`."""
    from model.config import from_hf

    base = page_js(from_hf({"model_type": "olmo", "num_hidden_layers": 2}, B=1, T=16))
    cases = [(base, {**base, **change}, base, list(change)) for change in
             ({"norm": "rmsnorm"}, {"bias": "all"}, {"bias": "qkv"}, {"L": 3})]
    for (_, later, _, changed), (got, want) in zip(cases, settled_both_ways(page, cases)):
        assert got == want, (later, changed)
    assert [g[0].norm_plain for g, _ in settled_both_ways(page, cases)] == [True, False, True, True]
