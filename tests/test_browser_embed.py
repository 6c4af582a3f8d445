"""Embedding: embed mode from the URL, the copy-embed-code control, and static/course_example.html driving two
live iframes.

The course page's iframes point at http://localhost:5006 (where `make run` serves). The test serves on a free
port instead and redirects those requests there (Playwright routing), so it never depends on port 5006.
"""
from __future__ import annotations

import dataclasses
import re

import pytest
from playwright.sync_api import expect

import model
from model import units as fmt
from pagetools import open_explorer, reveal, watch_errors

pytestmark = pytest.mark.browser
GPT2 = model.PRESETS["gpt2-small"]
COURSE_SERVER = "http://localhost:5006"


def test_embed_mode_shows_only_the_requested_controls_and_panels(chromium, server):
    o = open_explorer(chromium, server, "?embed=1&controls=T&panels=shapes&T=64", width=800, height=900)
    page = o.page
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 64, 64)")
    expect(page.locator("h1")).to_have_count(0)  # no title: the course page has its own
    expect(page.locator(".control")).to_have_count(1)
    expect(page.locator(".slider-T")).to_have_count(1)
    expect(page.locator(".budget-card, .tokens-card, .share-card, .preset")).to_have_count(0)
    page.locator(".slider-T .noUi-handle").press("ArrowRight")
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 65, 65)")
    expect(page).to_have_url(re.compile(r"T=65&.*&embed=1&controls=T&panels=shapes$"))
    page.close()
    assert o.errors == []


def test_bad_embed_options_fall_back_with_a_notice(chromium, server):
    o = open_explorer(chromium, server, "?embed=1&controls=Q&panels=graphs")
    expect(o.page.locator(".link-notices")).to_contain_text("controls=Q names none of")
    expect(o.page.locator(".budget-card")).to_be_visible()
    expect(o.page.locator(".slider-B")).to_have_count(1)
    o.page.close()
    assert o.errors == []


def test_copy_embed_code_gives_an_iframe_for_the_current_view(chromium, server):
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    page = context.new_page()
    errors = watch_errors(page)
    page.goto(f"{server}/explorer?T=300")
    page.locator(".share-card").wait_for()
    reveal(page, ".share-card")
    page.locator(".share-card button", has_text="T_max").click()  # drop T_max from the embed's controls
    page.locator(".share-card button", has_text="tokens").click()  # and the tokens panel
    page.locator(".share-card button", has_text="training").click()  # and the training run
    page.locator(".share-card button", has_text="values").click()  # and the values panel
    page.locator(".share-card button", has_text="inference").click()  # and the inference card
    page.locator(".share-card button", has_text="changes").click()  # and what each change buys
    page.locator(".share-card button", has_text="qk_norm").click()  # and QK-norm's switch
    expect(page.locator(".embed-code textarea")).to_have_value(
        re.compile(r"bias,attention,moe,E,k,d_expert,E_shared,d_shared,moe_step,dense_first,dense_layers,W,full_layers"
                   r",d_c,d_cq,d_R,d_nope,d_v&panels=shapes,budget\""))
    page.locator(".share-card button", has_text="Copy embed code").click()
    expect(page.locator(".share-card button", has_text="Copied")).to_be_visible()
    code = page.evaluate("() => navigator.clipboard.readText()")
    expected_src = (f"{server}/explorer?B=8&T=300&d=768&h=12&L=12&V=50257&T_max=1024&tie=1&embed=1"
                    "&controls=preset,B,T,d,h,L,V,tie,recipe,norm,positions,mlp,d_ff,h_kv,d_head,bias,attention,moe,E,"
                    "k,d_expert,E_shared,d_shared,moe_step,dense_first,dense_layers,W,full_layers,d_c,d_cq,d_R,d_nope,d_v"
                    "&panels=shapes,budget")
    assert code.startswith(f'<iframe src="{expected_src}"') and code.endswith("></iframe>")
    page.goto(expected_src)  # the code's address shows the same view in embed mode
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 300, 300)")
    expect(page.locator(".slider-T_max")).to_have_count(0)
    expect(page.locator(".recipe-h_kv input")).to_have_value("12")  # the recipe's controls act on the names
    expect(page.locator(".check-qk_norm")).to_have_count(0)
    expect(page.locator("h1")).to_have_count(0)
    context.close()
    assert errors == []


def test_course_page_embeds_two_live_views(chromium, server):
    page = chromium.new_page(viewport={"width": 1100, "height": 900})
    errors = watch_errors(page)
    page.route(re.compile(r"^http://localhost:5006/"),
               lambda route: route.fulfill(status=302, headers={"location": route.request.url.replace(COURSE_SERVER, server)}))
    page.goto(f"{server}/course/course_example.html")
    expect(page.locator("h1")).to_have_text("Shapes and budgets", timeout=60_000)

    shapes = page.frame_locator("#view-T")
    expect(shapes.locator("table.shapes")).to_contain_text("(8, 12, 1024, 1024)", timeout=60_000)  # two sessions load at once
    expect(shapes.locator(".control")).to_have_count(1)  # only T
    shapes.locator(".slider-T .noUi-handle").press("ArrowLeft")
    expect(shapes.locator("table.shapes")).to_contain_text("(8, 12, 1023, 1023)", timeout=20_000)

    budget = page.frame_locator("#view-budget")
    expect(budget.locator(".control")).to_have_count(3, timeout=60_000)  # d, h and L
    expect(budget.locator("table.shapes")).to_have_count(0)
    budget.locator(".slider-L .noUi-handle").press("ArrowRight")
    cfg = dataclasses.replace(GPT2, L=13)
    expect(budget.locator(".budget-card")).to_contain_text(f"N = {fmt.thousands(model.budget(cfg).params_exact)}",
                                                            timeout=20_000)

    # each iframe is its own session: the first view still shows its own T
    expect(shapes.locator("table.shapes")).to_contain_text("(8, 12, 1023, 1023)")
    expect(shapes.locator("table.shapes")).to_contain_text("× L = 12")
    page.close()
    assert errors == []


def _content_height(frame_or_page) -> int:
    return frame_or_page.evaluate("() => document.documentElement.scrollHeight")


def test_the_course_page_iframes_fit_their_views_and_say_what_is_true(chromium, server):
    """Each iframe is as tall as app.cards.share.heights says (the share card's rule) and its view fits in it, with
    little left over; the captions' figures are the model's; the sections of README.md and docs/ it names exist."""
    import html as htmllib
    from pathlib import Path

    from app.cards.share.heights import embed_height
    from app.query import parse_query

    page = chromium.new_page(viewport={"width": 1100, "height": 900})
    page.route(re.compile(r"^http://localhost:5006/"),
               lambda route: route.fulfill(status=302, headers={"location": route.request.url.replace(COURSE_SERVER, server)}))
    page.goto(f"{server}/course/course_example.html")
    for frame_id, ready in (("#view-T", "table.shapes"), ("#view-budget", ".budget-card")):
        frame = page.frame_locator(frame_id)
        frame.locator(ready).first.wait_for(timeout=60_000)
        page.wait_for_timeout(800)
        src, height = page.locator(frame_id).get_attribute("src"), int(page.locator(frame_id).get_attribute("height"))
        q = parse_query(src.split("?", 1)[1])
        assert height == embed_height(q.options, q.config)
        inner = page.frames[[f.url for f in page.frames].index(next(f.url for f in page.frames if q.options.panels[0] in f.url))]
        content = _content_height(inner)
        assert content <= page.locator(frame_id).evaluate("(el) => el.clientHeight") <= 1.2 * content + 40, frame_id
    captions = page.locator("figcaption").all_inner_texts()
    t = model.trace(GPT2)
    assert f"{fmt.nbytes(t.activation_bytes)} in all" in captions[0] and f"{fmt.nbytes(t.saved_bytes)} of it" in captions[0]
    approx = model.budget(GPT2).line("params/approx")
    assert "no biases, no LayerNorms" in approx.label and approx.formula.replace(" ", "") in captions[1].replace(" ", "")
    root = Path(__file__).resolve().parents[1]
    docs = "".join(p.read_text(encoding="utf-8") for p in [root / "README.md", *(root / "docs").glob("*.md")])
    headings = {line.lstrip("#").strip() for line in docs.splitlines() if line.startswith("#")}
    named = re.findall(r'"([^"]+)"', htmllib.unescape(page.locator(".note").inner_text().replace("\n", " ")))
    sections = [n for n in named if n != "Share and embed"]
    assert len(sections) == 3 and all(n in headings for n in sections), (sections, headings)
    page.close()


@pytest.mark.parametrize("query, width", [
    ("?embed=1&controls=T&panels=shapes", 818), ("?embed=1&controls=d,h,L&panels=budget", 700),
    ("?preset=qwen3-0.6b&embed=1&controls=T,h_kv,d_head&panels=shapes,changes", 818),
    ("?preset=llama3-8b&embed=1&controls=none&panels=training", 760), ("?embed=1", 818),
    ("?preset=deepseek-v3&embed=1&controls=T,d_c,d_cq,d_R&panels=shapes,budget", 818),  # latent attention's rows
])
def test_an_embedded_view_fits_the_height_the_share_card_gives_it(chromium, server, query, width):
    """app.cards.share.heights at the widths of a course page's column: the view, its lazy cards built, fits; little is
    left."""
    from app.cards.share.heights import embed_height
    from app.query import parse_query

    q = parse_query(query)
    want = embed_height(q.options, q.config)
    page = chromium.new_page(viewport={"width": width, "height": 200})
    page.goto(f"{server}/explorer{query}")
    page.locator(".explorer .bk-panel-models-layout-Column, table.shapes, .budget-card").first.wait_for(timeout=60_000)
    for _ in range(8):  # scroll down so that the cards built on sight are built
        page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_timeout(600)
    expect(page.locator("body")).not_to_contain_text("is built when you scroll to it", timeout=30_000)
    page.wait_for_timeout(500)
    content = _content_height(page)
    page.close()
    assert content <= want <= 1.2 * content + 40, (content, want)


def test_the_share_card_chips_wrap_look_chosen_or_not_and_keep_only_T_in_one_click(chromium, server):
    page = chromium.new_page(viewport={"width": 1400, "height": 900})
    errors = watch_errors(page)
    page.goto(f"{server}/explorer")
    reveal(page, ".share-card")
    card = page.locator(".share-card")
    expect(card.locator(".chip")).to_have_count(len(__import__("app.query", fromlist=["CONTROLS"]).CONTROLS) + 7)  # and the 7 panels
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1400  # nothing runs off the page
    box = card.bounding_box()
    for chip in card.locator(".chip").all():
        b = chip.bounding_box()
        assert box["x"] <= b["x"] and b["x"] + b["width"] <= box["x"] + box["width"] + 1
    colours = lambda sel: card.locator(sel).first.evaluate("(el) => [getComputedStyle(el).backgroundColor, "  # noqa: E731
                                                           "getComputedStyle(el.querySelector('.pick')).color]")
    card.locator(".share-controls .chip[data-name='tie'] .pick").click()  # one off
    on, off = colours(".share-controls .chip.on"), colours(".share-controls .chip.off")
    assert on[0] != off[0] and on[1] != off[1]  # filled and white, white text and grey
    expect(card.locator(".share-controls .chip[data-name='tie'] .pick")).to_have_attribute("aria-pressed", "false")
    card.locator(".share-controls .chip[data-name='T'] .only").click()  # keep only T: one click
    code = card.locator(".embed-code textarea")
    expect(code).to_have_value(re.compile(r"&controls=T[&\"]"))
    card.locator(".share-controls .helper.all").click()
    expect(code).not_to_have_value(re.compile(r"&controls="))  # all: the default, left out of the link
    card.locator(".share-controls .helper.none").click()
    expect(code).to_have_value(re.compile(r"&controls=none[&\"]"))
    card.locator(".share-controls .chip[data-name='T'] .pick").click()
    expect(code).to_have_value(re.compile(r"&controls=T[&\"]"))
    card.locator(".share-panels .chip[data-name='shapes'] .only").click()
    expect(code).to_have_value(re.compile(r"&panels=shapes\""))
    card.locator(".share-panels .chip[data-name='shapes'] .pick").click()  # the last panel stays: an embed shows one
    expect(code).to_have_value(re.compile(r"&panels=shapes\""))
    expect(card.locator(".share-panels .helper.none")).to_have_count(0)
    page.close()
    assert errors == []


def test_the_share_card_fits_a_phone(chromium, server):
    context = chromium.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                   device_scale_factor=3)
    page = context.new_page()
    page.goto(f"{server}/explorer")
    reveal(page, ".share-card")
    reveal(page, ".training-card")
    assert page.evaluate("() => [window.innerWidth, document.documentElement.scrollWidth]") == [390, 390]
    context.close()
