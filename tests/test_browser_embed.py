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
    page.locator(".share-card button", has_text="changes").click()  # and what each change buys
    page.locator(".share-card button", has_text="qk_norm").click()  # and QK-norm's switch
    expect(page.locator(".embed-code textarea")).to_have_value(re.compile(r"bias,attention&panels=shapes,budget\""))
    page.locator(".share-card button", has_text="Copy embed code").click()
    expect(page.locator(".share-card button", has_text="Copied")).to_be_visible()
    code = page.evaluate("() => navigator.clipboard.readText()")
    expected_src = (f"{server}/explorer?B=8&T=300&d=768&h=12&L=12&V=50257&T_max=1024&tie=1&embed=1"
                    "&controls=preset,B,T,d,h,L,V,tie,recipe,norm,positions,mlp,d_ff,h_kv,d_head,bias,attention"
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
    expect(page.locator("h1")).to_have_text("Shapes and budgets")

    shapes = page.frame_locator("#view-T")
    expect(shapes.locator("table.shapes")).to_contain_text("(8, 12, 1024, 1024)")
    expect(shapes.locator(".control")).to_have_count(1)  # only T
    shapes.locator(".slider-T .noUi-handle").press("ArrowLeft")
    expect(shapes.locator("table.shapes")).to_contain_text("(8, 12, 1023, 1023)")

    budget = page.frame_locator("#view-budget")
    expect(budget.locator(".control")).to_have_count(3)  # d, h and L
    expect(budget.locator("table.shapes")).to_have_count(0)
    budget.locator(".slider-L .noUi-handle").press("ArrowRight")
    cfg = dataclasses.replace(GPT2, L=13)
    expect(budget.locator(".budget-card")).to_contain_text(f"N = {fmt.thousands(model.budget(cfg).params_exact)}")

    # each iframe is its own session: the first view still shows its own T
    expect(shapes.locator("table.shapes")).to_contain_text("(8, 12, 1023, 1023)")
    expect(shapes.locator("table.shapes")).to_contain_text("× L = 12")
    page.close()
    assert errors == []
