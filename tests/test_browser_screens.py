"""Every screen true where a learner looks (issue 22), on the served page in Chromium at 1400 × 900 and on a phone
(390 × 844, is_mobile, device_scale_factor 3): numbers typed as the README writes them, the rule line of the
configuration's own rules, the phone's own layout, lesson notation never cut, notices that belong to their change,
the training step's phases in the lesson's words, and the cards' smaller details."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

import model
from app.words import field_names
from model import PRESETS, numbers
from model.config import FIELD
from model.rules import rules_line
from pagetools import reveal, watch_errors

pytestmark = pytest.mark.browser
HF = Path(__file__).parent / "hf"
GPT2 = PRESETS["gpt2-small"]


def type_into(box, text: str) -> None:
    box.fill(text)
    box.press("Enter")


WAIT = 20_000  # ms: the server answers each input; on a busy machine that can take a while


def status(page):
    return page.locator(".controls-card .status-line")


# --- 1: one grammar for every number box ---------------------------------------------------------------------------
def test_D_reads_the_readmes_forms_and_keeps_a_bad_one_aside(explorer):
    page = explorer(width=1400, height=900)
    reveal(page, ".training-card")
    card = page.locator(".training-card")
    card.locator(".train-rule input").uncheck()
    for text in ("300e9", "3e11", "300,000,000,000", "300 billion", "300 Billion"):  # was 3,009 tokens, silently
        type_into(card.locator(".train-D input"), "1e9")
        expect(card.locator(".train-headline")).to_contain_text("D = 1.0 billion tokens", timeout=WAIT)
        type_into(card.locator(".train-D input"), text)
        expect(card.locator(".train-headline")).to_contain_text("D = 300.0 billion tokens", timeout=WAIT)
        expect(card.locator(".train-D input")).to_have_value("300,000,000,000")
        expect(page).to_have_url(re.compile(r"&D=300000000000"))
    type_into(card.locator(".train-D input"), "300e9 tokens")  # no number: a notice, and the last good value stays
    expect(card).to_contain_text('D="300e9 tokens" is not a whole number from 1 to 1,000,000,000,000,000 (write 300e9',
                                 timeout=WAIT)
    expect(card.locator(".train-D input")).to_have_value("300,000,000,000")
    expect(card.locator(".train-headline")).to_contain_text("D = 300.0 billion tokens")


def test_the_config_boxes_read_the_same_grammar_and_show_separators(explorer):
    page = explorer(width=1400, height=900)
    expect(page.locator(".box-V input")).to_have_value("50,257")
    type_into(page.locator(".box-T input"), "1e3")
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 1000, 1000)")
    expect(page.locator(".box-T input")).to_have_value("1,000")
    type_into(page.locator(".box-V input"), "32 thousand")
    expect(page.locator(".box-V input")).to_have_value("32,000")
    type_into(page.locator(".box-d input"), "1,024")
    expect(page.locator(".box-d input")).to_have_value("1,024")
    type_into(page.locator(".box-L input"), "twelve")
    expect(status(page)).to_contain_text('L="twelve" is not a whole number: write 4096, 4,096, 4e3 or 4 thousand; kept L=12')
    expect(page.locator(".box-L input")).to_have_value("12")


# --- 2: the rule line of the configuration's own rules ---------------------------------------------------------------
def test_the_rule_line_and_the_names_follow_the_recipe(explorer):
    page = explorer("?preset=qwen3-0.6b", width=1400, height=900)
    qwen = PRESETS["qwen3-0.6b"]
    line = status(page)
    expect(line).to_contain_text(rules_line(qwen))
    expect(line).to_contain_text("d_head = 128, set apart from d / h: h need not divide d")
    expect(line).to_contain_text("T may pass T_max = 40,960")
    expect(line).not_to_contain_text("h divides d")
    expect(line).not_to_contain_text("T ≤ T_max")
    expect(page.locator(".control-h .name")).to_have_text(field_names(qwen)["h"])  # not "heads (divide d)"
    expect(page.locator(".control-T_max .name")).to_have_text("trained context")
    page.locator(".preset select").select_option(label="GPT-2 small · L 12, d 768")
    expect(line).to_contain_text("h divides d (d_head = 768 / 12 = 64) · T ≤ T_max = 1,024")
    expect(page.locator(".control-h .name")).to_have_text("heads (divide d)")


# --- 3 and 4: phones get their own layout; notation is never cut ---------------------------------------------------
def _cut(page) -> list[str]:
    """The table cells whose text is clipped (wider than the cell shows), with the text."""
    return page.locator("table.shapes").first.evaluate("""(t) => [...t.querySelectorAll('td.n b, td.n i, td.n u, td.s, td.c, tr.g td')]
      .filter((el) => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1).map((el) => el.textContent)""")


@pytest.mark.parametrize("query", ["", "?preset=llama3-8b", "?preset=llama3-8b&attention=eager",
                                   "?preset=qwen3-0.6b&expanded=1"])
def test_lesson_notation_and_descriptions_wrap_never_cut_and_rows_have_tooltips(explorer, query):
    page = explorer(query, width=1400, height=900)
    expect(page.locator("table.shapes")).to_contain_text("(B, h, T)" if "preset" in query and "eager" not in query
                                                         else "(B, h, T, T)")  # fused: the log-sum-exp's shape
    assert _cut(page) == []
    rows = page.locator("table.shapes tr.t")
    cfg = model.trace(PRESETS[re.search(r"preset=([\w.-]+)", query).group(1)] if query else GPT2)
    titles = rows.evaluate_all("(rs) => rs.map((r) => r.title)")
    assert len(titles) >= len(cfg.rows) and all(" · lesson shape (" in t for t in titles)
    assert any(f"{r.label} · lesson shape {r.symbolic}" in t for r in cfg.rows for t in titles)


@pytest.mark.parametrize("query", ["", "?preset=qwen3-0.6b"])
def test_a_phone_gets_the_390_px_layout_with_readable_text_and_uncut_shapes(chromium, server, query):
    context = chromium.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                   device_scale_factor=3)
    page = context.new_page()
    errors = watch_errors(page)
    page.goto(f"{server}/explorer{query}")
    page.locator("table.shapes").first.wait_for(timeout=60_000)
    assert page.evaluate("() => document.querySelector('meta[name=viewport]').content") == \
        "width=device-width, initial-scale=1"
    assert page.evaluate("() => [window.innerWidth, document.documentElement.scrollWidth]") == [390, 390]
    handle = page.locator(".slider-T .noUi-handle").bounding_box()
    assert handle["width"] >= 18 and handle["height"] >= 18  # a handle a finger can take (was 7 px)
    size = page.locator(".control-T .name").evaluate("(el) => parseFloat(getComputedStyle(el).fontSize)")
    assert size >= 11  # CSS px at scale 1 (was 5-6 px, the desktop page shrunk to 0.4x)
    expect(page.locator("table.shapes td.n u").first).to_be_visible()  # the lesson shape under the name
    assert _cut(page) == []
    context.close()
    assert errors == []


# --- 5: a notice belongs to the change that caused it ----------------------------------------------------------------
def test_notices_go_when_a_later_change_makes_them_old_and_say_what_was_remembered(explorer):
    page = explorer(width=1400, height=900)
    type_into(page.locator(".box-T input"), "5000")
    expect(status(page)).to_contain_text("T clamped 5,000 → 1,024", timeout=WAIT)
    type_into(page.locator(".box-d input"), "1024")
    expect(status(page)).not_to_contain_text("T clamped", timeout=WAIT)
    type_into(page.locator(".box-d input"), "768")
    expect(status(page)).not_to_contain_text("T clamped", timeout=WAIT)
    type_into(page.locator(".box-d input"), "770")
    expect(status(page)).to_contain_text("h snapped 12 → 11: 770 is not divisible by 12", timeout=WAIT)
    expect(page.locator(".box-h input")).to_have_value("11")
    type_into(page.locator(".box-d input"), "1040")  # the h asked for is still 12: the notice says so
    expect(status(page)).to_contain_text("h snapped 12 → 13: 1,040 is not divisible by 12; 12 is the h you chose, "
                                         "kept while other fields change (the box showed 11)", timeout=WAIT)
    page.locator("details.advanced summary").click()
    type_into(page.locator(".box-T_max input"), "2048")  # T comes back to what was asked, and says why
    expect(status(page)).to_contain_text("T clamped 5,000 → 2,048", timeout=WAIT)
    expect(status(page)).to_contain_text("5,000 is the T you chose, kept while other fields change (the box showed 1,024)", timeout=WAIT)


def test_an_answer_that_arrives_while_the_box_is_typed_into_keeps_the_typing(explorer):
    """The server's answer to d = 768 lands while 770 is being typed into the same box: the box keeps 770, and Enter
    sends it (the answer used to put 768 back, so Enter sent nothing and 770 was lost)."""
    page = explorer(width=1400, height=900)
    box = page.locator(".box-d input")
    box.fill("960")
    box.press("Enter")
    expect(status(page)).to_contain_text("d_head = 960 / 12 = 80", timeout=WAIT)
    box.fill("768")
    box.press("Enter")
    box.fill("770")  # typed before the answer to 768 comes
    expect(status(page)).to_contain_text("d_head = 768 / 12 = 64", timeout=WAIT)
    expect(box).to_have_value("770")
    box.press("Enter")
    expect(status(page)).to_contain_text("h snapped 12 → 11: 770 is not divisible by 12", timeout=WAIT)


def test_an_answer_that_arrives_while_a_training_box_is_typed_into_keeps_the_typing(chromium, server):
    """The training card's boxes as the controls' (app.boxes): the server's answer to D = 1e9 (the box's
    1,000,000,000, then the headline) is held back until 2e9 has been typed into the same box, which keeps 2e9, and
    Enter sends it (a plain text box put 1,000,000,000 back, so Enter sent nothing and 2e9 was lost)."""
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    errors = watch_errors(page)
    hold, held, clients = [False], [], []

    def route(ws) -> None:  # the page's websocket through the test: the server's messages wait while hold[0]
        to_server = ws.connect_to_server()
        clients.append(ws)
        ws.on_message(to_server.send)
        to_server.on_message(lambda m: held.append(m) if hold[0] else ws.send(m))

    page.route_web_socket(lambda url: "/ws" in url, route)
    page.goto(f"{server}/explorer")
    reveal(page, ".training-card")
    card = page.locator(".training-card")
    card.locator(".train-rule input").uncheck()
    box = card.locator(".train-D input")
    expect(box).to_be_enabled()
    hold[0] = True
    box.fill("1e9")
    box.press("Enter")
    box.fill("2e9")  # typed before the answer to 1e9 comes
    hold[0] = False
    for m in held:
        clients[-1].send(m)
    expect(card.locator(".train-headline")).to_contain_text("D = 1.0 billion tokens", timeout=WAIT)
    expect(box).to_have_value("2e9")
    box.press("Enter")
    expect(card.locator(".train-headline")).to_contain_text("D = 2.0 billion tokens", timeout=WAIT)
    expect(box).to_have_value("2,000,000,000")
    expect(page).to_have_url(re.compile(r"&D=2000000000(&|$)"))
    page.close()
    assert held and errors == []


def test_an_h_kv_notice_does_not_outlive_its_change(explorer):
    page = explorer("?preset=llama3-8b", width=1400, height=900)
    type_into(page.locator(".recipe-h_kv input"), "5")
    expect(status(page)).to_contain_text("h_kv snapped 5 → 4: h = 32 is not divisible by 5", timeout=WAIT)
    type_into(page.locator(".recipe-d_head input"), "64")
    expect(page.locator(".recipe-d_head input")).to_have_value("64")
    expect(status(page)).not_to_contain_text("h_kv snapped", timeout=WAIT)


def test_the_config_json_notice_goes_with_the_next_change(explorer):
    page = explorer("?panels=shapes,budget,changes", width=1400, height=1400)
    area = page.locator(".recipe-card textarea")
    area.fill((HF / "qwen2.5-0.5b.json").read_text(encoding="utf-8"))
    area.blur()
    expect(page.locator(".recipe-card")).to_contain_text("read qwen2 config.json", timeout=60_000)
    page.locator(".preset select").select_option(label="GPT-2 small · L 12, d 768")
    expect(page.locator("span.big").first).to_contain_text("124,439,808", timeout=60_000)
    expect(page.locator(".recipe-card")).not_to_contain_text("read qwen2 config.json")


# --- 6: the training step's phases in the lesson's words --------------------------------------------------------------
def test_the_training_card_names_the_phases_in_the_lessons_words(explorer):
    page = explorer(width=1400, height=900)
    reveal(page, ".training-card")
    lines = page.locator(".training-card .train-lines")
    expect(lines).to_contain_text("M_loss, alive at the loss's peak: while the logits (B, T, V) and their log-softmax")
    expect(lines).to_be_visible()  # a hidden pane's inner text is "", in which every op below would be "not found"
    text = lines.inner_text()
    assert "during" not in text
    for op in ("clone", "nll_loss_forward", "_softmax_backward_data", "_log_softmax_backward_data", " div"):
        assert op not in text, op


# --- 9: the smaller ones ------------------------------------------------------------------------------------------------
def test_the_training_boxes_show_separators_whole_values_and_names(explorer):
    page = explorer(width=1400, height=900)
    reveal(page, ".training-card")
    card = page.locator(".training-card")
    n = model.budget(GPT2).params_exact
    expect(card.locator(".train-D input")).to_have_value(f"{20 * n:,}")  # 2,488,796,160
    mfu = card.locator(".train-mfu input")
    expect(mfu).to_have_value("0.4")
    assert mfu.evaluate("(el) => [el.type, el.scrollWidth <= el.clientWidth]") == ["text", True]  # no spinner over it
    for label in ("D, training tokens", "GPU", "n, GPUs", "MFU, 0 to 1", "$ per GPU-hour (assumed)", "loss fit"):
        assert card.get_by_label(label, exact=True).count() == 1, label  # every input is named for screen readers
    expect(card.get_by_role("checkbox", name="Chinchilla's rule: D = 20·N")).to_have_count(1)


def test_zero_on_one_gpu_keeps_the_choice_shown(explorer):
    page = explorer("?preset=gpt3-175b&B=1&gpus=1024&zero=3&recompute=full", width=1400, height=900)
    reveal(page, ".training-card")
    card = page.locator(".training-card")
    type_into(card.locator(".train-gpus input"), "1")
    expect(card).to_contain_text("ZeRO 3 shards over the n GPUs, and n = 1: each part is divided by 1")
    expect(card.locator(".train-zero button", has_text="3: + weights")).to_have_class(re.compile("active"))
    expect(page).to_have_url(re.compile(r"gpus=1&zero=3"))


def test_the_recipe_switches_explain_themselves(explorer):
    page = explorer(width=1400, height=900)
    helps = page.locator(".controls-card .switch .help")
    expect(helps).to_have_count(24)  # norm, positions, mlp, bias, attention, d_ff, h_kv, d_head, W, full_layers, d_c,
    # d_cq, d_R, d_nope, d_v; moe, E, k, d_expert, E_shared, d_shared, moe_step, dense_first, dense_layers
    for name in ("E", "E_shared", "dense_layers", "full_layers", "d_c", "d_v"):  # a dense model: no mixture of experts'
        expect(page.locator(f".controls-card .size-{name}")).to_be_hidden()  # boxes; full attention: no list of full
        # blocks; multi-head attention: no latent widths
    expect(page.locator(".recipe-W input")).to_have_value("none")
    norm = page.locator(".switch-norm .help")
    expect(norm.locator(".tip")).to_be_hidden()
    norm.hover()
    expect(norm.locator(".tip")).to_be_visible()
    expect(norm.locator(".tip")).to_have_text(f"norm: {FIELD['norm'].about}")
    page.locator(".size-h_kv .help").focus()  # the keyboard and a tap open it too
    expect(page.locator(".size-h_kv .help .tip")).to_be_visible()


def test_the_changes_card_writes_every_negative_with_one_sign(explorer):
    page = explorer("?preset=qwen3-0.6b", width=1400, height=1400)
    table = page.locator("div.changes table.changes").first
    table.wait_for(timeout=60_000)
    text = table.inner_text()
    assert "−58.4 k" in text and "−58,368" in text
    assert not re.search(r"(?<![\w)])-\d", text)  # no ASCII hyphen for a minus


def test_what_a_box_takes_is_the_grammar_of_model_numbers():
    """The status line's hint and the notices name examples the grammar reads as the numbers they say."""
    for text in numbers.EXAMPLES.replace(" or ", ", ").split(", "):
        assert numbers.whole(text) == 4096 or numbers.whole(text) == 4000, text
    for text in numbers.LARGE_EXAMPLES.replace(" or ", ", ").split(", "):
        assert numbers.whole(text) == 300 * 10**9, text
