"""The inference card in Chromium: the live page shows Llama-3-8B's prefill, decode and roofline as the CLI prints
them, its controls rewrite the address, a bad value in a link is one notice line, Mixtral's card shows its experts'
lines; the exported page shows the same figures and follows its controls."""
from __future__ import annotations

import html
import json
import re
import time
from dataclasses import replace

import pytest
from playwright.sync_api import expect

from model import PRESETS
from model.inference import InferSetup, serving
from model.infer_report import GPU_CHOICES, WEIGHT_CHOICES, knee_note
from model.train_report import human
from pagetools import open_explorer, reveal, run_cli
from test_export import export, exported_page, text_of, value_of

pytestmark = pytest.mark.browser
LLAMA = replace(PRESETS["llama3-8b"], B=1, T=4096)
LINK = "?preset=llama3-8b&B=1&T=4096&weights=int4&kv_dtype=fp8&efficiency=0.6"
INT4 = InferSetup(weights="int4", kv_dtype="fp8", efficiency=0.6)


def cli_json(capsys, *flags: str) -> dict:
    status, out, _ = run_cli(["--preset", "llama3-8b", "--table", "infer", "--B", "1", "--T", "4096", "--json",
                              *flags], capsys)
    assert status == 0
    return json.loads(out)["infer"]


def label_of(choices: dict[str, str], key: str) -> str:
    """A menu's label for `key` (`model.infer_report`'s label -> key menus)."""
    return next(label for label, k in choices.items() if k == key)


def shown_lines(card) -> dict[str, str]:
    """The card's figures as shown, by line key."""
    rows = card.locator(".infer-lines tr[data-key]")
    # Shown before read: Panel keeps an HTML pane hidden until its stylesheets have loaded, and a hidden element's
    # inner text is "" (the headline's text content, which the callers wait for, is there a moment earlier).
    expect(rows.first).to_be_visible(timeout=60_000)
    return {rows.nth(i).get_attribute("data-key"): rows.nth(i).locator("td.v").inner_text()
            for i in range(rows.count())}


def lines_become(card, want: dict[str, str], within_s: float = 60) -> None:
    """Wait until the card shows exactly `want` (the headline and the rows are redrawn by separate messages, so
    under load the rows may trail the headline by a moment), then assert it."""
    end = time.monotonic() + within_s
    while (shown := shown_lines(card)) != want and time.monotonic() < end:
        time.sleep(0.2)
    assert shown == want


def expect_figures(page, card, setup: InferSetup, cli: dict) -> None:
    """The card shows every line of `serving(LLAMA, setup)` as `human` prints it, the charts hold its points, and
    those are the CLI's (`--json`)."""
    s = serving(LLAMA, setup)
    r = s.result
    assert (r.prefill_flops, r.decode_flops, r.decode_bytes, r.weight_bytes) == (
        cli["prefill_flops"], cli["decode_flops"], cli["decode_bytes"], cli["weight_bytes"])
    assert r.decode_tokens_per_s == pytest.approx(cli["decode_tokens_per_s"], rel=1e-12)
    expect(card.locator(".infer-headline")).to_contain_text(human(r.line("infer/ttft")), timeout=60_000)
    expect(card.locator(".infer-headline")).to_contain_text(human(r.line("infer/at_efficiency")))
    lines_become(card, {x.key: human(x) for x in r.lines})
    points = page.evaluate("() => Bokeh.documents[0].get_model_by_name('infer-by_B').data.all")
    assert points == pytest.approx([p["tokens_per_s"] for p in cli["by_B"]], rel=1e-12)
    expect(card.locator(".infer-knee")).to_have_text(knee_note(s))


def test_the_live_card_shows_the_clis_figures_and_its_controls_rewrite_the_address(chromium, server, capsys):
    o = open_explorer(chromium, server, LINK, width=1360, height=1000)
    page = o.page
    reveal(page, ".inference-card")
    card = page.locator(".inference-card")
    expect_figures(page, card, INT4, cli_json(capsys, "--weights", "int4", "--kv-dtype", "fp8", "--efficiency", "0.6"))
    card.locator(".infer-weights select").select_option(label=label_of(WEIGHT_CHOICES, "bf16"))
    expect(page).to_have_url(re.compile(r"&kv_dtype=fp8&efficiency=0\.6$"))  # bf16 is the default: no key
    expect_figures(page, card, replace(INT4, weights="bf16"),
                   cli_json(capsys, "--kv-dtype", "fp8", "--efficiency", "0.6"))
    box = card.locator(".infer-efficiency input")
    box.fill("60")
    box.press("Enter")
    expect(card.locator(".infer-notices .warn")).to_have_text(
        "⚠ efficiency=60 is out of range: efficiency must be from 0.01 to 1 (write 0.4 for 40 %); using efficiency=0.6")
    expect(box).to_have_value("0.6")
    card.locator(".infer-infer_gpu select").select_option(label=label_of(GPU_CHOICES, "custom"))
    expect(card.locator(".infer-infer_bandwidth input")).to_have_value("3.35")
    expect(page).to_have_url(re.compile(r"&infer_gpu=custom&infer_peak=989&infer_memory=80&infer_bandwidth=3\.35"),
                             timeout=20_000)
    page.close()
    assert o.errors == []


def test_the_default_page_serves_gpt2_after_T_max_minus_one_tokens_and_says_so(chromium, server):
    """GPT-2 small at T = T_max = 1,024 (the page's default): the card shows the figures at T = 1,023 with the
    model's note before them (`model.inference.decode_context`), not a refusal."""
    r = serving(PRESETS["gpt2-small"]).result
    assert r.T == 1023 and r.note
    o = open_explorer(chromium, server, "", width=1360, height=1000)
    page = o.page
    reveal(page, ".inference-card")
    card = page.locator(".inference-card")
    expect(card.locator(".infer-headline")).to_contain_text(r.note, timeout=60_000)
    expect(card.locator(".infer-headline")).to_contain_text(human(r.line("infer/tokens_per_s")))
    expect(card.locator(".infer-refused")).to_be_hidden()
    page.close()
    assert o.errors == []


def test_a_bad_value_in_a_link_is_one_notice_and_a_mixture_of_experts_shows_its_card(chromium, server):
    """Mixtral at the preset's B = 8, T = 8,192, then Qwen3-30B-A3B at B = 64, T = 4,096 with int4 weights: every
    line as the CLI's records print it, the experts' among them."""
    o = open_explorer(chromium, server, "?preset=mixtral-8x7b&weights=int3", width=1360, height=1000)
    page = o.page
    expect(page.locator(".link-notices li")).to_have_count(1)
    expect(page.locator(".link-notices li")).to_have_text(
        'weights="int3" is not one of bf16, fp16, fp8, int8, int4; using bf16')
    reveal(page, ".inference-card")
    card = page.locator(".inference-card")
    r = serving(PRESETS["mixtral-8x7b"]).result
    expect(card.locator(".infer-headline")).to_contain_text(human(r.line("infer/tokens_per_s")), timeout=60_000)
    lines_become(card, {x.key: human(x) for x in r.lines})
    assert "infer/experts_touched" in shown_lines(card)
    expect(card.locator(".infer-refused")).to_be_hidden()
    page.goto(f"{server}/explorer?preset=qwen3-30b-a3b&B=64&T=4096&weights=int4")  # 126 of 128 experts a step
    reveal(page, ".inference-card")
    r = serving(replace(PRESETS["qwen3-30b-a3b"], B=64, T=4096), InferSetup(weights="int4")).result
    expect(card.locator(".infer-headline")).to_contain_text(human(r.line("infer/tokens_per_s")), timeout=60_000)
    lines_become(card, {x.key: human(x) for x in r.lines})
    page.close()
    assert o.errors == []


@pytest.fixture(scope="module")
def exported(chromium, tmp_path_factory: pytest.TempPathFactory):
    """Llama-3-8B's exported page at B = 1, T = 4,096 with int4 weights, an fp8 cache and an efficiency of 0.6."""
    out = tmp_path_factory.mktemp("export") / "llama.html"
    done = export(out, "--preset", "llama3-8b", "--B", "1", "--T", "4096", "--weights", "int4", "--kv-dtype", "fp8",
                  "--efficiency", "0.6")
    assert done.returncode == 0, done.stderr
    yield from exported_page(chromium, out)


def exported_lines(page) -> dict[str, str]:
    markup = text_of(page, "infer_lines")
    return dict(re.findall(r'<tr data-key="([^"]+)">.*?<td class="v">([^<]*)</td>', markup))


def test_the_exported_card_shows_the_clis_figures_and_follows_its_menus(exported, capsys):
    page = exported
    for setup, flags in ((INT4, ("--weights", "int4")), (replace(INT4, gpu="h200", weights="bf16"), ("--gpu", "h200"))):
        cli = cli_json(capsys, *flags, "--kv-dtype", "fp8", "--efficiency", "0.6")
        r = serving(LLAMA, setup).result
        assert r.decode_tokens_per_s == pytest.approx(cli["decode_tokens_per_s"], rel=1e-12)
        assert r.ttft_s == pytest.approx(cli["ttft_s"], rel=1e-12)
        assert exported_lines(page) == {x.key: html.escape(human(x), quote=True) for x in r.lines}
        assert human(r.line("infer/at_efficiency")) in text_of(page, "infer_head")
        assert value_of(page, "infer-by_B", "data")["all"] == pytest.approx([p["tokens_per_s"] for p in cli["by_B"]],
                                                                   rel=1e-5)  # plotted to 6 digits
        page.evaluate("() => { const m = (n) => Bokeh.documents[0].get_model_by_name(n);"
                      " m('infer_weights').value = 'bf16'; m('infer_gpu').value = 'h200'; }")  # the next setup
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('B_input').value = '2'; }")  # another configuration
    expect_notice = text_of(page, "infer_notice")
    assert "This page carries the inference card of the configuration it was written for (llama3-8b, B = 1, " \
           "T = 4,096); for this one, write a page with: python -m app export lesson.html --B 2 --T 4096" in expect_notice
    assert value_of(page, "infer_figures", "visible") is False
