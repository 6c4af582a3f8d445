"""The no-server page (`python -m app export`) in lockstep with the live app and the model.

The page's JavaScript twins of Python functions run in Chromium on the same inputs as the Python ones:
formatters on 10,000+ values, rules and preset matching on 250 requests, every budget and memory line on 220
configurations, the table rows and markup; the training card's lines (`model.training.plan`, printed by
`model.train_report.human`) on 220 (configuration, setup) pairs, its formatters, largest micro-batch, markup,
chart data and `settle_train`'s notices. Its controls behave like the live page's (h walks the divisors of d
with the keyboard, a number box never shows a value the page is not using, a preset keeps B). The file is
self-contained and the command line rejects bad input in one line.
"""
from __future__ import annotations

import json
import html
import random
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from app.cards.budget.markup import budget_parts, captions_html, chart_html, headline_html, lines_html, shown
from app.cards.recipe.markup import notice_html
from app.cards.shapes.view import table_at
from app.export.cli import main as export_main
from app.export.page import external_references
from app.export.spec import ALL_FIELDS
from app.templates import TEMPLATES, fill_html
from app.cards.train.settings import settle_train
from app.words import slider_range, status_rules
from model import BOUNDS, DTYPES, FIELD_DOCS, PRESETS, Config, budget, divisors, trace
from model import numbers, units
from model.config import CONFIG_FIELDS
from model.config import DIMS, GPT2_RECIPE_PRESETS
from model.figures import Line
from model.rules import news, out_of_range, preset_labels, preset_of, settle, settle_notes
from model.train_report import human
from model.units import dollars, duration, plain, scientific
from model.training import CUSTOM_GPU, FITS, GPUS, OPTIMIZERS, RECOMPUTE, TrainSetup, largest_micro_batch, plan
from test_lines import random_configs

CONFIGS = random_configs(220, seed=11)


def export(out: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m app export` in a fresh process (the page must be built without Panel imported)."""
    return subprocess.run([sys.executable, "-m", "app", "export", str(out), *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "lesson.html"
    done = export(out, "--preset", "gpt2-small", "--B", "3", "--T", "100")
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    return out


def exported_page(chromium, path: Path):
    """An exported page opened from file:// (nothing else may load), with every console error collected; the
    generator of a fixture: it checks that none was reported and closes the page."""
    p = chromium.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    p.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file://") else route.continue_())
    p.goto(path.as_uri())
    p.wait_for_function("() => window.__ts !== undefined && document.querySelector('body') !== null", timeout=60_000)
    p.errors = errors
    yield p
    assert errors == []
    p.close()


@pytest.fixture(scope="module")
def page(chromium, page_file: Path):
    """The exported page opened from file://, with every console error collected."""
    yield from exported_page(chromium, page_file)


def js(page, fn: str, args: list):
    """window.__ts.<fn>(*a) for every a in args, in one round trip."""
    return page.evaluate(f"(xs) => xs.map((a) => window.__ts.{fn}(...a))", args)


def shown_js(page, fn: str, args: list) -> list[list[dict]]:
    """window.__ts.<fn>(*a) (budgetLines, memoryLines: the page's Lines) for every a in args, each line as the page
    shows it (the compiled `app.cards.budget.markup.shown`)."""
    return page.evaluate(f"(xs) => xs.map((a) => window.__ts.{fn}(...a).map(window.__ts.budget_markup.shown))", args)


def settled_both_ways(page, cases: list[tuple[dict, dict, dict, list[str]]]) -> list[tuple[tuple, tuple]]:
    """For each (asked, later, shown, changed): the page's rules.settle_notes(later, shown, changed) and its news against
    the notes of `asked`, beside `model.rules`' (settle_notes, news), each as (Config, notes' texts, news)."""
    got = page.evaluate("(xs) => xs.map(([a, l, s, c]) => { const [, before] = window.__ts.rules.settle_notes(a); "
                        "const [cfg, notes] = window.__ts.rules.settle_notes(l, s, c); "
                        "return [cfg, notes.map((n) => n.text), window.__ts.rules.news(notes, before, c)]; })",
                        [list(c) for c in cases])
    tuples = lambda d: {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}  # noqa: E731 (as Python's)
    out = []
    for (asked, later, shown, changed), (cfg, texts, new) in zip(cases, got):
        want, notes = settle_notes(tuples(later), Config(**tuples(shown)), changed)
        out.append(((Config(**tuples(cfg)), texts, new),
                    (want, [n.text for n in notes], news(notes, settle_notes(tuples(asked))[1], changed))))
    return out


def assert_lines_are_the_models(page, configs: list[Config], to_js) -> None:
    """The page's budget lines of each of `configs` and its memory lines at fp32 and bf16 (`to_js(c)`: a config as
    the page holds it) are `model.budget`'s and `model.trace`'s, as the live cards show them; the page covers all."""
    pairs = [(c, dt) for c in configs for dt in ("fp32", "bf16")]
    assert js(page, "covered", [[to_js(c), dt] for c, dt in pairs]) == [True] * len(pairs)
    keys = ("key", "label", "formula", "value", "short")
    for c, lines in zip(configs, shown_js(page, "budgetLines", [[to_js(c)] for c in configs])):
        assert [{k: x[k] for k in keys} for x in lines] == [shown(x) for x in budget(c).lines], c
    for (c, dt), lines in zip(pairs, shown_js(page, "memoryLines", [[to_js(c), dt] for c, dt in pairs])):
        assert [{k: x[k] for k in keys} for x in lines] == [shown(x) for x in trace(c, dt).lines], (c, dt)


def cfg_js(c: Config) -> dict:
    """A configuration as the page holds it: every field (ALL_FIELDS), lists for tuples."""
    return {f: list(v) if isinstance(v, tuple) else v for f in ALL_FIELDS for v in [getattr(c, f)]}


def text_of(page, name: str) -> str:
    return page.evaluate("(n) => Bokeh.documents[0].get_model_by_name(n).text", name)


def value_of(page, name: str, prop: str = "value"):
    return page.evaluate("([n, p]) => Bokeh.documents[0].get_model_by_name(n)[p]", [name, prop])


def box(page, name: str) -> int | float:
    """The number a box shows (its text, in `model.numbers`' grammar: "12,288", "0.4")."""
    text = value_of(page, name)
    return numbers.whole(text) if numbers.whole(text) is not None else numbers.real(text)


def typed(value):
    """What a learner types into a number box: text (a number given here is typed as its digits)."""
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


# --- the file and the command line ------------------------------------------------------------------------------
def test_file_is_self_contained(page_file: Path) -> None:
    text = page_file.read_text(encoding="utf-8")
    # 5.1 MB: the modern presets too, each with either attention (eager, fused), GPT-2 fused, and the inference
    # card's tables (0.3 MB: every GPU × weights × KV cache format)
    assert external_references(text) == [] and len(text.encode()) < 5_300_000
    assert "cdn." not in text.split("<script", 1)[0]


@pytest.mark.parametrize("args, message", [
    (["--d", "770"], "d=770 is not divisible by h=12; each head gets d/h features, so h must divide d (nearest divisors of 770: 11, 14)"),
    (["--T", "2048"], "T=2,048 exceeds T_max=1,024"),
    (["--B", "0"], "B=0 is out of range"),
    (["--d", "abc"], "argument --d: invalid int value: 'abc'"),
    (["--preset", "gpt5"], "argument --preset: unknown preset 'gpt5'; presets: gpt2-small"),
    (["--preset", "gpt3-175"], "unknown preset 'gpt3-175' (did you mean gpt3-175b?)"),
    (["--dtype", "int4"], "argument --dtype: invalid choice: 'int4'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--efficiency", "2"], "--efficiency 2.0 is out of range: from above 0 to 1 (0.5 for 50 %)"),
    (["--mfu", "40"], "mfu=40 is out of range: mfu must be from 0.001 to 1 (write 0.4 for 40 %)"),
    (["--gpu-peak", "100"], "a custom GPU needs its peak and its memory: give --gpu-peak and --gpu-memory"),
    (["--D", "lots"], "argument --D: invalid token count 'lots' (not a number): write 300e9"),
])
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "lesson.html"
    with pytest.raises(SystemExit) as exc:
        export_main([str(out), *args])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and err.startswith("python -m app export: error: ")
    assert message in err and not out.exists()


def test_bad_output_paths(tmp_path: Path, capsys) -> None:
    for path, message in [(tmp_path, f"{tmp_path} is a directory"), ("", "the output path is empty"),
                          (tmp_path / "missing" / "l.html", f"directory {tmp_path / 'missing'} does not exist")]:
        with pytest.raises(SystemExit) as exc:
            export_main([str(path)])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and err.count("\n") == 1 and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_options_reach_the_page(tmp_path: Path) -> None:
    out = tmp_path / "l.html"
    done = export(out, "--preset", "gpt3-13b", "--T", "256", "--untied", "--dtype", "bf16", "--title", "Lesson <3>")
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "<title>Lesson &lt;3&gt;</title>" in text and "Lesson <3>" not in text
    doc = html.unescape(text).replace('\\"', '"')  # the spec is a JSON string inside the document JSON
    initial, _ = json.JSONDecoder().raw_decode(doc[doc.index('"initial": ') + len('"initial": '):])
    given = {"B": 8, "T": 256, "d": 5120, "h": 40, "L": 40, "V": 50257, "T_max": 2048, "tie": False, "dtype": "bf16"}
    defaults = {f.name: list(f.default) if isinstance(f.default, tuple) else f.default for f in CONFIG_FIELDS
                if not f.required}  # every other field of Config at its default
    assert initial == {**defaults, **given}


# --- JavaScript twins against Python ---------------------------------------------------------------------------
def _values(n: int, seed: int) -> list[float | int]:
    rng = random.Random(seed)
    out: list[float | int] = [0, 1, 999, 1000, 1023, 1024, 1536, 2**20 - 1, 2**30 - 1000, 999_950, 999_960_000,
                              124_439_808, 174_604_259_328, 2.5, 0.5, 1.5, 9.995, 99.95]
    while len(out) < n:
        kind = rng.random()
        if kind < 0.4:
            out.append(rng.randint(0, 2**52))
        elif kind < 0.6:
            out.append(rng.randint(0, 10 ** rng.randint(1, 15)))
        elif kind < 0.8:
            out.append(round(rng.uniform(0, 10 ** rng.randint(0, 15)), rng.randint(0, 4)))
        else:
            out.append(rng.choice([-1, 1]) * rng.randint(0, 10**9))
    return out


@pytest.mark.browser
@pytest.mark.parametrize("unit", ["params", "FLOP", "bytes", "tokens", "share"])
def test_formatters_agree_on_ten_thousand_values(page, unit: str) -> None:
    values = _values(10_000, seed=hash(unit) % 1000)
    if unit == "share":
        values = [abs(v) / 10 ** len(str(int(abs(v)))) for v in values]  # shares are 0 ... 1
    got = js(page, "units.value", [[v, unit] for v in values])
    short = js(page, "units.short", [[v, unit] for v in values])
    for v, g, s in zip(values, got, short):
        assert g == units.value(v, unit), (v, g)
        assert s == units.short(v, unit), (v, s)


@pytest.mark.browser
def test_rules_and_preset_matching_agree(page) -> None:
    rng = random.Random(3)
    asked = []
    for _ in range(250):
        d = rng.choice([1, 7, 64, 768, 770, 1000, 1024, 12288, rng.randint(1, 32768)])
        T_max = rng.choice([1, 1024, 2048, rng.randint(1, 32768), rng.randint(1, 2**24)])  # the last: sizes' rule too
        asked.append(dict(B=rng.randint(1, 4096), T=rng.choice([rng.randint(1, 32768), rng.randint(1, 2**24)]), d=d,
                          h=rng.randint(1, 200), L=rng.randint(1, 96),
                          V=rng.randint(1, 262144), T_max=T_max, tie=rng.random() < 0.5))
    asked += [{**cfg_js(PRESETS[n]), "B": rng.randint(1, 64), "T": rng.randint(1, PRESETS[n].T_max)}
              for n in GPT2_RECIPE_PRESETS]  # their recipe: tests/test_export_recipe.py
    got = js(page, "rules.settle", [[a] for a in asked])
    for a, (cfg, notes) in zip(asked, got):
        want, want_notes = settle(a)
        assert (Config(**cfg), notes) == (want, want_notes)
    assert js(page, "rules.preset_of", [[cfg_js(settle(a)[0])] for a in asked]) == [preset_of(settle(a)[0]) for a in asked]
    bad = [["B", 0, 8], ["T", 40000, 1024], ["d", -5, 768], ["L", 3, 12], ["V", 1.5, 50257]]
    assert js(page, "rules.out_of_range", bad) == [out_of_range(*b) for b in bad]
    ranges = [[f, v, T_max] for f in ("B", "T", "d", "L", "V", "T_max") for v, T_max in ((1, 1), (96, 1024), (770, 2048),
                                                                                      (BOUNDS[f][1], 32768))]
    assert js(page, "words.slider_range", ranges) == [list(slider_range(*r)) for r in ranges]
    assert js(page, "words.status_rules", [[cfg_js(PRESETS["gpt3-175b"])]]) == [status_rules(PRESETS["gpt3-175b"])]


@pytest.mark.browser
def test_every_line_agrees_with_the_model(page) -> None:
    budget_got = shown_js(page, "budgetLines", [[cfg_js(c)] for c in CONFIGS])
    for c, lines in zip(CONFIGS, budget_got):
        want = [shown(x) for x in budget(c).lines]
        assert [{k: x[k] for k in ("key", "label", "formula", "value", "short")} for x in lines] == want, c
    cases = [(c, dt) for c in CONFIGS for dt in DTYPES][::3]
    memory_got = shown_js(page, "memoryLines", [[cfg_js(c), dt] for c, dt in cases])
    for (c, dt), lines in zip(cases, memory_got):
        want = [shown(x) for x in trace(c, dt).lines]
        assert [{k: x[k] for k in ("key", "label", "formula", "value", "short")} for x in lines] == want, (c, dt)


@pytest.mark.browser
def test_markup_is_the_live_pages(page) -> None:
    for c in (PRESETS["gpt2-small"], replace(PRESETS["gpt3-175b"], tie=False), CONFIGS[5]):
        rows = [shown(x) for x in budget(c).lines]
        assert js(page, "budget_markup.lines_html", [[rows]]) == [lines_html(rows)]
        parts, markup = page.evaluate("(c) => { const m = window.__ts.budget_markup; "
                                      "const parts = m.budget_parts({lines: window.__ts.budgetLines(c)}); "
                                      "return [parts, m.chart_html(parts)]; }", cfg_js(c))
        assert parts == budget_parts(budget(c)) and markup == chart_html(parts), c


HOSTILE = ["<a href='x'>&amp;</a>", 'say "hi"', "", "0", 12_345, 0, "plain", "{label}", "⚠ ◆ ·", "a\\b"]


def hostile_values(template: str, rng: random.Random) -> dict:
    """Values for every slot of `template`: hostile text and numbers; each section that is no slot too missing,
    false, true, a dict or a list of items (each with every slot's own value)."""
    slots = set(re.findall(r"\{&?(\w+)\}", template))
    sections = set(re.findall(r"\{[#^](\w+)\}", template)) - slots
    item = lambda: {n: rng.choice(HOSTILE) for n in slots}  # noqa: E731
    out = item()
    for s in sections:
        choice = rng.randrange(6)
        if choice < 5:
            out[s] = [None, "", "x", item(), [item() for _ in range(rng.randint(0, 3))]][choice]
    return out


@pytest.mark.browser
def test_fill_html_agrees_with_the_templates(page) -> None:
    rng = random.Random(24)
    cases = [(t, hostile_values(t, rng)) for t in TEMPLATES.values() for _ in range(40)]
    assert js(page, "templates.fill_html", cases) == [fill_html(t, v) for t, v in cases]


@pytest.mark.browser
def test_cards_markup_is_the_live_pages(page) -> None:
    for c in (PRESETS["gpt2-small"], PRESETS["gpt3-175b"], *CONFIGS[:20]):
        by_key = {x.key: shown(x) for x in budget(c).lines}
        assert js(page, "budget_markup.headline_html", [[by_key]]) == [headline_html(by_key)], c
        assert js(page, "budget_markup.captions_html", [[by_key]]) == [captions_html(by_key)], c
    texts = ["k clamped 17 → 16", "<script>alert('x')</script> & \"y\""]
    assert js(page, "changes_card.notice_html", [[x] for x in texts]) == [notice_html(x) for x in texts]


@pytest.mark.browser
def test_table_rows_markup_is_the_live_tables(page) -> None:
    """The exported page's rows (`shapes_markup.row_html`, values inline) are the live table's
    (`app.cards.shapes.view.table_at`), less the live page's data-v marks of the values it patches."""
    cases = [(c, dt, ex) for c, dt, ex in zip(CONFIGS[:30], [*DTYPES] * 10, [False, True, False] * 10) if c.L <= 60]
    got = page.evaluate("(xs) => xs.map(([c, dt, ex]) => window.__ts.shapeRows(c, dt, ex).rows"
                        ".map((r) => window.__ts.shapes_markup.row_html(r, window.__ts.py.str, '')).join(''))",
                        [[cfg_js(c), dt, ex] for c, dt, ex in cases])
    for (c, dt, ex), rows in zip(cases, got):
        live = table_at(c, dt, ex).html
        assert rows == live[live.index("<tbody>") + 7:live.index("</tbody>")].replace(" data-v", ""), (c, dt, ex)


@pytest.mark.browser
def test_table_rows_are_the_trace(page) -> None:
    cases = [(c, dt, ex) for c, dt, ex in zip(CONFIGS[:60], [*DTYPES] * 20, [False, True, False] * 20)]
    got = js(page, "shapeRows", [[cfg_js(c), dt, ex] for c, dt, ex in cases])
    for (c, dt, ex), table in zip(cases, got):
        tr = trace(c, dt)
        rows = tr.expanded() if ex else tr.rows
        rows = [r for r in rows if r.block is None or r.block < 96]
        tensors = [r for r in table["rows"] if r["kind"] == "tensor"]
        assert len(tensors) == len(rows)
        for r, t in zip(rows, tensors):
            assert t["name"] == (r.local if r.block is not None and not ex else r.name)
            assert (t["label"], t["symbolic"], t["shape"], t["elements"]) == \
                (r.label, r.symbolic, units.shape(r.shape), units.thousands(r.numel))
            assert t["memory"] == ("view" if r.view else units.nbytes(r.nbytes)) and t["saved"] == r.saved


# --- the page's controls, as a learner uses them ----------------------------------------------------------------
def _set(page, name: str, value) -> None:
    prop = "active" if name in ("tie", "expanded") else "value"
    value = typed(value) if name.endswith("_input") or name.startswith(("opt_", "train_")) and prop == "value" else value
    page.evaluate("([n, p, v]) => { Bokeh.documents[0].get_model_by_name(n)[p] = v; }", [name, prop, value])
    page.wait_for_timeout(150)


@pytest.mark.browser
def test_starts_at_the_exported_config_and_names_its_preset(page) -> None:
    assert [box(page, f"{f}_input") for f in ("B", "T", "d", "h", "L")] == [3, 100, 768, 12, 12]
    assert preset_labels()[value_of(page, "preset")] == "gpt2-small"  # B = 3 and T = 100 do not make it custom
    assert "(3, 12, 100, 100)" in text_of(page, "shapes")
    assert "124,439,808" in text_of(page, "head")


@pytest.mark.browser
def test_h_walks_the_divisors_of_d_with_the_keyboard(page) -> None:
    handles = page.locator(".noUi-handle")
    h_handle = handles.nth([f.key for f in DIMS].index("h"))
    h_handle.focus()
    for want in (16, 24, 32):
        h_handle.press("ArrowRight")
        page.wait_for_timeout(200)
        assert box(page, "h_input") == want
    h_handle.press("Home")
    page.wait_for_timeout(200)
    assert box(page, "h_input") == 1 and divisors(768)[value_of(page, "h")] == 1
    _set(page, "h_input", 12)


@pytest.mark.browser
def test_a_box_never_shows_a_value_the_page_is_not_using(page) -> None:
    for bad in (0, -5, 10_000):
        _set(page, "B_input", bad)
        assert box(page, "B_input") == 3  # the value in use
        assert html.escape(out_of_range("B", bad, kept=3)) in text_of(page, "status")
    _set(page, "h_input", 0)
    assert box(page, "h_input") == 12 and "h=0 is out of range" in text_of(page, "status")
    _set(page, "d_input", 770)
    assert box(page, "h_input") == 11 and "h snapped 12 → 11: 770 is not divisible by 12" in text_of(page, "status")
    _set(page, "d_input", 768)
    assert box(page, "h_input") == 12  # the asked h comes back, as on the live page


@pytest.mark.browser
def test_a_preset_keeps_B_as_the_live_page_does(page) -> None:
    names = {v: k for k, v in preset_labels().items()}
    _set(page, "preset", names["gpt3-175b"])
    assert [box(page, f"{f}_input") for f in ("B", "T", "d", "h", "L")] == [3, 2048, 12288, 96, 96]
    assert "174,604,259,328" in text_of(page, "head")
    _set(page, "preset", names["gpt2-small"])
    assert box(page, "B_input") == 3 and box(page, "T_input") == 1024


# --- the training card: model.training.plan and app/cards/train/view.py in the browser -----------------------------
def random_setups(n: int, seed: int) -> list[TrainSetup]:
    """n valid training setups: every discrete choice, named and custom GPUs, numbers across their ranges."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        gpus = rng.choice([1, 2, 8, 64, rng.randint(1, 1_048_576)])
        gpu = rng.choice([*GPUS, CUSTOM_GPU])
        custom = dict(peak_tflops=rng.choice([0.001, round(rng.uniform(1, 5000), 3)]),
                      memory_gib=rng.choice([0.001, round(rng.uniform(0.5, 500), 2), 80])) if gpu == CUSTOM_GPU else {}
        out.append(TrainSetup(
            D=rng.choice([None, None, rng.randint(1, 10**15), 10 ** rng.randint(0, 15), 300 * 10**9]), gpu=gpu,
            mfu=rng.choice([0.4, 1.0, 0.001, round(rng.uniform(0.001, 1), 3)]), gpus=gpus,
            price=rng.choice([2.5, 0.0, round(rng.uniform(0, 1000), 2)]), optimizer=rng.choice(list(OPTIMIZERS)),
            zero=rng.randint(0, 3) if gpus > 1 else 0, recompute=rng.choice(RECOMPUTE), fit=rng.choice(list(FITS)),
            **custom))
    return out


def setup_js(s: TrainSetup) -> dict:
    return {k: getattr(s, k) for k in s.__dataclass_fields__}


def train_js(page, fn: str, pairs: list[tuple[Config, TrainSetup]]):
    """window.__ts.<fn>(trainPlan(cfg, setup)) for every pair, in one round trip."""
    return page.evaluate(f"(xs) => xs.map(([c, s]) => window.__ts.{fn}(window.__ts.trainPlan(c, s)))",
                         [[cfg_js(c), setup_js(s)] for c, s in pairs])


@pytest.mark.browser
def test_training_lines_agree_with_the_model(page) -> None:
    pairs = list(zip(CONFIGS, random_setups(len(CONFIGS), seed=5)))
    got = page.evaluate("(xs) => xs.map(([c, s]) => window.__ts.trainPlan(c, s).lines.map((x) => "
                        "[x.key, x.label, x.formula, x.human]))", [[cfg_js(c), setup_js(s)] for c, s in pairs])
    for (c, s), lines in zip(pairs, got):
        want = [[x.key, x.label, x.formula, human(x)] for x in plan(c, s).lines]
        assert lines == want, (c, s)


@pytest.mark.browser
def test_largest_micro_batch_agrees(page) -> None:
    rng = random.Random(8)
    cases = []
    for name in ("gpt2-small", "gpt2-medium", "gpt2-xl", "gpt3-13b"):
        for _ in range(12):
            p = PRESETS[name]
            cfg = replace(p, B=rng.randint(1, 64), T=rng.randint(1, p.T_max))
            gpus = rng.choice([1, 8, 64])
            setup = TrainSetup(gpu=CUSTOM_GPU, peak_tflops=989, memory_gib=rng.choice([1, 8, 24, 80, 192, 2000]),
                               gpus=gpus, zero=rng.randint(0, 3) if gpus > 1 else 0, optimizer=rng.choice(list(OPTIMIZERS)),
                               recompute=rng.choice(RECOMPUTE))
            cases.append((cfg, setup))
    got = page.evaluate("(xs) => xs.map(([c, s]) => window.__ts.largestMicroBatch(c, s, window.__ts.paramsExact(c)))",
                        [[cfg_js(c), setup_js(s)] for c, s in cases])
    want = [largest_micro_batch(c, s) for c, s in cases]
    assert got == want
    assert len({w for w in want if 1 < w < BOUNDS["B"][1]}) >= 10  # the search, not only its ends
    assert 0 in want and BOUNDS["B"][1] in want


@pytest.mark.browser
def test_training_formatters_agree_on_thousands_of_values(page) -> None:
    values = [abs(v) for v in _values(4000, seed=21)]
    rng = random.Random(4)
    values += [10 ** rng.uniform(-9, 30) for _ in range(3000)] + [1125, 0.03125, 0.125, 1e15, 999.5, 0.00999, 0.01,
                                                                   1e-3, 99.995, 100, 1 / 24, 1 / 1440, 1e21, 2.5e21]
    for fn, py in (("scientific", scientific), ("plain", plain), ("duration", duration), ("dollars", dollars)):
        assert js(page, f"units.{fn}", [[v] for v in values]) == [py(v) for v in values], fn
    lines = [Line("memory/max_B", "", "", v, "count") for v in (0, 1, 17, BOUNDS["B"][1])]
    lines += [Line("k/x", "", "", v, u) for v in values[:300] for u in ("FLOP", "flop_per_s", "pf_days", "params",
                                                                          "tokens", "tokens_per_s", "loss",
                                                                          "gpu_hours", "days", "usd", "ratio")]
    lines += [Line("k/s", "", "", v / 10**16, "share") for v in values[:300]] + [Line("k/b", "", "", b, "bool")
                                                                              for b in (True, False)]
    got = js(page, "train_report.human", [[{"key": x.key, "value": x.value, "unit": x.unit}] for x in lines])
    assert got == [human(x) for x in lines]


@pytest.mark.browser
def test_training_markup_is_the_live_cards(page) -> None:
    from app.cards.train import markup as view

    pairs = [(PRESETS["gpt2-small"], TrainSetup()), (PRESETS["gpt3-175b"], TrainSetup(D=300 * 10**9, gpus=1024, zero=3)),
             (replace(PRESETS["gpt2-xl"], B=64), TrainSetup(gpu="a100-40gb", gpus=1)),
             (PRESETS["gpt3-175b"], TrainSetup(gpus=1, gpu=CUSTOM_GPU, peak_tflops=1, memory_gib=0.5, fit="besiroglu")),
             *zip(CONFIGS[:20], random_setups(20, seed=9))]
    plans = [plan(c, s) for c, s in pairs]
    for fn in ("headline_html", "lines_html", "legend_html", "chart_html"):
        assert train_js(page, f"training_markup.{fn}", pairs) == [getattr(view, fn)(p) for p in plans], fn


def _asked_cases() -> list[dict]:
    rng = random.Random(12)
    pick = lambda *xs: rng.choice(xs)  # noqa: E731
    cases = [{}, {"gpus": "1", "zero": "3"}, {"gpu": "custom"}, {"gpu_peak": "500"}, {"mfu": "40"}, {"mfu": 5},
             {"D": "300e9"}, {"D": "1.5"}, {"D": "abc"}, {"D": "1,000,000"}, {"D": "inf"}, {"D": "0"},
             {"price": "-1"}, {"gpu": "H200"}, {"gpu": "tpu\u0007v5" * 5}, {"optimizer": "sgd"}, {"zero": "7"},
             {"gpus": 2.5}, {"mfu": 0.00001}, {"gpu": "custom", "gpu_peak": "0", "gpu_memory": "1e9"},
             {"D": "x" * 60}, {"recompute": "FULL"}, {"fit": "besiroglu"}, {"price": 1234.5}, {"mfu": "nan"}]
    for _ in range(60):
        cases.append({k: v for k, v in {
            "D": pick(None, "", "300e9", str(rng.randint(-5, 10**16)), "1e16", " 42 "),
            "gpu": pick(None, "h200", "custom", "b300"), "gpu_peak": pick(None, "989", str(rng.uniform(0, 2e5))),
            "gpu_memory": pick(None, 80, rng.uniform(0, 2e5)), "mfu": pick(None, 0.4, rng.uniform(-1, 150)),
            "gpus": pick(None, 1, 8, rng.randint(0, 2_000_000)), "price": pick(None, 2.5, rng.uniform(-10, 2000)),
            "optimizer": pick(None, "adam-fp32", "adam"), "zero": pick(None, "0", "1", "2", "3", "4"),
            "recompute": pick(None, "none", "full", "some"), "fit": pick(None, "hoffmann", "kaplan")}.items()
            if v is not None})
    return cases


@pytest.mark.browser
def test_training_notices_agree_with_settle_train(page) -> None:
    cases = _asked_cases()
    got = js(page, "train_query.settle_train", [[a] for a in cases])
    for a, (setup, notes) in zip(cases, got):
        want, want_notes = settle_train(a)
        assert notes == want_notes, a
        assert TrainSetup(**setup) == want, a
    assert sum(1 for _, n in got if n) >= 40


@pytest.mark.browser
def test_training_controls_change_the_card(page) -> None:
    _set(page, "preset", {v: k for k, v in preset_labels().items()}["gpt2-small"])
    assert "D = <b>2.5 billion tokens</b> (Chinchilla's rule" in text_of(page, "train_head")
    _set(page, "train_D", "300e9")
    assert value_of(page, "train_D") == "300,000,000,000"
    assert "D = <b>300.0 billion tokens</b>" in text_of(page, "train_head")
    assert "D, training tokens (chosen)" in text_of(page, "train_lines")
    _set(page, "train_gpus", 1)
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('train_zero').active = 3; }")
    page.wait_for_timeout(150)
    assert "ZeRO 3 shards over the n GPUs, and n = 1: each part is divided by 1" in text_of(page, "train_notices")
    assert value_of(page, "train_zero", "active") == 3  # the choice stays shown
    _set(page, "train_mfu", 40)
    assert "(write 0.4 for 40 %)" in text_of(page, "train_notices") and box(page, "train_mfu") == 0.4
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('train_optimizer').active = 1; }")
    page.wait_for_timeout(150)
    assert "weights, 4 bytes per parameter" in text_of(page, "train_lines")
    _set(page, "train_gpu", CUSTOM_GPU)
    assert value_of(page, "train_gpu_peak", "visible") and "1 × custom GPU" in text_of(page, "train_head")
    _set(page, "train_gpu_memory", 0.5)
    assert "not even B = 1 fits" in text_of(page, "train_head")
    _set(page, "T_input", 200)  # the card follows the configuration
    want = plan(replace(PRESETS["gpt2-small"], B=3, T=200), TrainSetup(
        D=300 * 10**9, gpus=1, zero=3, optimizer="adam-fp32", gpu=CUSTOM_GPU, peak_tflops=989, memory_gib=0.5))
    from app.cards.train.markup import lines_html as train_lines_html
    assert text_of(page, "train_lines") == train_lines_html(want)
    for name, v in (("train_gpu", "h100-sxm"), ("train_D", ""), ("train_gpus", 8), ("T_input", 100)):
        _set(page, name, v)
    page.evaluate("() => { const doc = Bokeh.documents[0]; doc.get_model_by_name('train_optimizer').active = 0; "
                  "doc.get_model_by_name('train_zero').active = 0; }")
    page.wait_for_timeout(150)


@pytest.mark.browser
def test_training_options_reach_the_card(chromium, tmp_path: Path) -> None:
    out = tmp_path / "l.html"
    done = export(out, "--preset", "gpt3-175b", "--D", "300e9", "--gpu", "h200", "--gpus", "1024", "--zero", "3",
                  "--recompute", "full", "--dtype", "bf16")
    assert done.returncode == 0, done.stderr
    p = chromium.new_page(viewport={"width": 1280, "height": 900})
    try:
        p.goto(out.as_uri())
        p.wait_for_function("() => window.__ts !== undefined", timeout=60_000)
        setup = TrainSetup(D=300 * 10**9, gpu="h200", gpus=1024, zero=3, recompute="full")
        from app.cards.train.markup import headline_html, lines_html as train_lines_html
        want = plan(PRESETS["gpt3-175b"], setup)
        assert text_of(p, "train_head") == headline_html(want) and text_of(p, "train_lines") == train_lines_html(want)
        assert [value_of(p, "train_D"), value_of(p, "train_gpu"), value_of(p, "train_gpus")] == \
            ["300,000,000,000", "h200", "1,024"]
        assert [value_of(p, f"train_{k}", "active") for k in ("zero", "recompute")] == [3, 1]
    finally:
        p.close()


@pytest.mark.browser
def test_the_sliders_and_boxes_are_named_for_screen_readers(page) -> None:
    """Bokeh's Slider and TextInput carry no aria-label: page.js names each field's handle and box (ariaLabel)."""
    from playwright.sync_api import expect

    for f in (f.key for f in DIMS):
        expect(page.get_by_role("slider", name=f"{f}: {FIELD_DOCS[f]}", exact=True)).to_have_count(1)
        expect(page.get_by_role("textbox", name=f"{f}: {FIELD_DOCS[f]}", exact=True)).to_have_count(1)
