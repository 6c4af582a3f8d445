"""The attention switch in Chromium, on the live page and on the no-server page: eager ↔ fused at Llama 3 8B and
GPT-2 small, the (B, h, T, T) rows going and coming back, the log-sum-exp row, the shapes card's intro, and the
figures (new memory, saved bytes, the training step's peak) equal to the CLI's (`python -m model --json`)."""
from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.words import SHAPES_NOTES
from model import PRESETS, units
from model.families import preset_labels
from model.recipe_rows import MARK
from model.train_report import human
from model.training import TrainSetup, plan
from pagetools import open_explorer, reveal, run_cli
from test_export import export, exported_page, text_of, value_of

pytestmark = pytest.mark.browser
SCORES = {"attn.scores", "attn.masked", "attn.attn"}  # eager's (B, h, T, T) rows, in every block
PRESET_NAMES = ("llama3-8b", "gpt2-small")
LABELS = {name: label for label, name in preset_labels().items()}  # the preset picker's


def cli(preset: str, attention: str, capsys) -> dict:
    """What the CLI says at the preset's defaults with `attention`: new memory, saved bytes, the step's peak."""
    figures = {}
    for table in ([], ["--table", "train"]):
        code, out, _ = run_cli(["--preset", preset, "--attention", attention, *table, "--json"], capsys)
        assert code == 0
        figures.update(json.loads(out))
    return {"activations": figures["activation_bytes"], "saved": figures["saved_bytes"],
            "peak": figures["train"]["memory"]["peak"]}


def peak_text(preset: str, attention: str, peak: int) -> str:
    """The step's peak as the training card prints it (the plan's line, checked equal to the CLI's bytes)."""
    line = next(x for x in plan(replace(PRESETS[preset], attention=attention), TrainSetup()).lines
                if x.key == "memory/peak")
    assert line.value == peak
    return human(line)


def row_names(markup: str) -> set[str]:
    """The tensor names of a shapes table's rows (block prefix as shown, mark and dots left out)."""
    return {re.sub(r"<[^>]+>", "", m).replace(MARK, "").strip()
            for m in re.findall(r'<td class="n"><b>(.*?)</b>', markup)}


def line_value(markup: str, key: str) -> str:
    """A memory line's value cell as text (`app.cards.budget.markup.lines_html`: the value, then its short form)."""
    cell = re.search(r'<td class="v"[^>]*>(.*?)</td>', markup.split(f'data-key="{key}"', 1)[1]).group(1)
    return html.unescape(re.sub(r"<[^>]+>", "", cell))


def bytes_cell(n: int) -> str:
    return units.value(n, "bytes") + units.short(n, "bytes")


def check_pass(markup: str, attention: str, figures: dict) -> None:
    names = row_names(markup)
    if attention == "fused":
        assert not names & SCORES and "attn.lse" in names, names
    else:
        assert SCORES <= names and "attn.lse" not in names, names
    assert line_value(markup, "memory/activations") == bytes_cell(figures["activations"])
    assert line_value(markup, "memory/saved") == bytes_cell(figures["saved"])


# --- the live page -------------------------------------------------------------------------------------------------
def shapes_markup(page) -> str:
    return page.locator("table.shapes").first.evaluate("(t) => t.parentElement.innerHTML")


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_live_page_flips_attention_and_shows_the_clis_figures(chromium, server, capsys, preset):
    start, label = PRESETS[preset].attention, LABELS[preset]
    o = open_explorer(chromium, server, f"?preset={preset}", width=1400, height=900)
    page = o.page
    select = page.locator(".switch-attention select")
    for attention in (start, "eager" if start == "fused" else "fused", start):
        figures = cli(preset, attention, capsys)
        if select.input_value() != attention:
            select.select_option(attention)
        expect(page.locator(".intro")).to_contain_text(re.sub(r"<[^>]+>", "", SHAPES_NOTES[attention])[-40:],
                                                       timeout=60_000)
        scores = page.locator("table.shapes tr.q")  # the orange (B, h, T, T) rows
        expect(scores).to_have_count(0 if attention == "fused" else 3, timeout=60_000)
        check_pass(shapes_markup(page), attention, figures)
        expect(page.locator(".preset select")).to_have_value(label)  # either attention runs the preset's model
        reveal(page, ".training-card")
        expect(page.locator(".train-lines")).to_contain_text(peak_text(preset, attention, figures["peak"]),
                                                             timeout=60_000)
        if attention == "fused":  # the link says so; eager is the default, which links leave out
            expect(page).to_have_url(re.compile(r"[?&]attention=fused(&|$)"))
        else:
            expect(page).not_to_have_url(re.compile("attention="))
    page.close()
    assert o.errors == []


def test_a_bad_attention_in_a_link_gets_one_notice_and_the_presets_attention(explorer):
    page = explorer("?preset=llama3-8b&attention=foo")
    notices = page.locator(".link-notices li")
    expect(notices).to_have_count(1, timeout=60_000)
    # Shown before read: Panel keeps an HTML pane hidden until its stylesheets have loaded, and a hidden element's
    # inner text is "" (the li is in the page a moment earlier on a busy machine: a failure in a full run).
    expect(notices).to_be_visible(timeout=60_000)
    text = notices.inner_text()
    assert text.startswith('attention="foo" is not one of eager, fused') and text.endswith("using attention=fused")
    expect(page.locator(".switch-attention select")).to_have_value("fused")
    expect(page.locator("table.shapes tr.q")).to_have_count(0)


def test_an_embedded_view_with_only_the_attention_switch_flips_it(explorer):
    page = explorer("?preset=llama3-8b&embed=1&controls=attention&panels=shapes")
    assert page.locator(".switch select").count() == 1  # the one control the course page asked for
    page.locator(".switch-attention select").select_option("eager")
    expect(page.locator("table.shapes tr.q")).to_have_count(3, timeout=60_000)
    expect(page).not_to_have_url(re.compile("attention=fused"))  # eager: the default, which links leave out
    assert page.url.endswith("embed=1&controls=attention&panels=shapes")


# --- the no-server page --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module", params=PRESET_NAMES)
def exported(request, chromium, tmp_path_factory: pytest.TempPathFactory):
    out: Path = tmp_path_factory.mktemp("export") / f"{request.param}.html"
    done = export(out, "--preset", request.param)
    assert done.returncode == 0, done.stderr
    for page in exported_page(chromium, out):
        page.preset = request.param
        yield page


def test_the_exported_page_flips_attention_and_shows_the_clis_figures(exported, capsys):
    page, preset = exported, exported.preset
    start = PRESETS[preset].attention
    for attention in (start, "eager" if start == "fused" else "fused", start):
        page.evaluate("(v) => { Bokeh.documents[0].get_model_by_name('attention').value = v; }", attention)
        page.wait_for_timeout(200)
        figures = cli(preset, attention, capsys)
        assert SHAPES_NOTES[attention] in text_of(page, "shapes_title")
        assert preset_labels()[value_of(page, "preset")] == preset
        check_pass(text_of(page, "shapes"), attention, figures)
        peak = html.escape(peak_text(preset, attention, figures["peak"]))
        assert f'<td class="v">{peak}</td>' in text_of(page, "train_lines")
