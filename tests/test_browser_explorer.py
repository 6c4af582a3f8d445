"""The served explorer in headless Chromium: links, keyboard on sliders, snapping, the address, no console errors."""
from __future__ import annotations

import dataclasses
import re

import pytest
from playwright.sync_api import expect

import model
from model import units as fmt
from pagetools import reveal

pytestmark = pytest.mark.browser
GPT2 = model.PRESETS["gpt2-small"]


def N_text(cfg: model.Config) -> str:
    return f"N = {fmt.thousands(model.budget(cfg).params_exact)}"


def test_page_loads_from_a_link_with_the_right_N_and_shapes(explorer):
    page = explorer("?preset=gpt3-175b&T=512")
    cfg = dataclasses.replace(model.PRESETS["gpt3-175b"], T=512)
    expect(page.locator("h1")).to_contain_text("Transformer Shapes")
    expect(page.locator(".budget-card")).to_contain_text(N_text(cfg))  # N = 174,604,259,328
    table = page.locator("table.shapes")
    for row in model.trace(cfg).rows:
        expect(table).to_contain_text(fmt.shape(row.shape))
    expect(table).to_contain_text("(8, 96, 512, 512)")
    expect(page.locator(".box-T input")).to_have_value("512")
    expect(page.locator(".box-d input")).to_have_value("12,288")


def test_arrow_keys_on_T_update_the_table_numbers_and_address(explorer):
    page = explorer()
    handle = page.locator(".slider-T .noUi-handle")
    handle.focus()
    handle.press("ArrowLeft")
    handle.press("ArrowLeft")
    table = page.locator("table.shapes")
    expect(table).to_contain_text("(8, 12, 1022, 1022)")
    expect(table).to_contain_text(fmt.thousands(8 * 12 * 1022 * 1022))
    expect(page.locator(".box-T input")).to_have_value("1,022")
    measured = model.budget(dataclasses.replace(GPT2, T=1022)).flops_fwd_measured_per_token
    expect(page.locator(".budget-card [data-key='flops/forward_measured']")).to_contain_text(fmt.flops(measured))
    expect(page).to_have_url(re.compile(r"\?B=8&T=1022&d=768&h=12&L=12&V=50257&T_max=1024&tie=1$"))
    handle.press("PageDown")  # five steps
    expect(table).to_contain_text("(8, 12, 1017, 1017)")


def test_arrow_key_on_L_updates_the_chart_and_N(explorer):
    page = explorer()
    cfg = dataclasses.replace(GPT2, L=13)
    b = model.budget(cfg)
    page.locator(".slider-L .noUi-handle").press("ArrowRight")
    expect(page.locator(".budget-card")).to_contain_text(N_text(cfg))
    expect(page.locator("table.shapes")).to_contain_text("× L = 13")
    blocks = 13 * (b.params_attn_block + b.params_mlp_block)
    expect(page.locator('.budget-card .part[data-key="params/blocks"]')).to_have_attribute("data-value", str(blocks))


def test_h_snaps_when_d_changes_and_the_page_says_so(explorer):
    page = explorer()
    box = page.locator(".box-d input")
    box.fill("770")
    box.press("Enter")
    expect(page.locator(".controls-card")).to_contain_text("h snapped 12 → 11: 770 is not divisible by 12")
    expect(page.locator(".box-h input")).to_have_value("11")
    expect(page.locator("table.shapes")).to_contain_text("(8, 11, 1024, 70)")
    page.locator(".slider-h .noUi-handle").press("ArrowRight")  # next divisor of 770 after 11
    expect(page.locator(".box-h input")).to_have_value("14")
    expect(page.locator(".controls-card")).not_to_contain_text("h snapped")
    expect(page.locator("table.shapes")).to_contain_text("(8, 14, 1024, 55)")


def test_a_link_reproduces_the_view(explorer):
    page = explorer()
    page.locator(".box-d input").fill("1024")
    page.locator(".box-d input").press("Enter")
    page.locator(".slider-T .noUi-handle").press("Home")  # T = 1
    page.get_by_role("button", name="bf16").click()
    expect(page).to_have_url(re.compile(r"T=1&d=1024&h=8&.*&dtype=bf16$"))  # h: 8 and 16 tie, the smaller wins
    expect(page.locator("table.shapes")).to_contain_text("none at T = 1")
    table = page.locator("table.shapes").inner_text()
    again = explorer(re.sub(r"^.*/explorer", "", page.url))
    expect(again.locator("table.shapes")).to_have_text(table, use_inner_text=True)
    expect(again.locator(".budget-card")).to_contain_text(N_text(dataclasses.replace(GPT2, T=1, d=1024, h=8)))
    expect(again.get_by_role("button", name="bf16")).to_have_class(re.compile("active"))


def test_a_bad_link_shows_notices_and_a_valid_page(explorer):
    page = explorer("?d=abc&T=4096&%3Cb%3Ezz=1&h=&B=1000000000")
    notices = page.locator(".link-notices")
    expect(notices).to_contain_text("This link had problems")
    expect(notices).to_contain_text('d="abc" is not a whole number')
    expect(notices).to_contain_text("T clamped 4,096 → 1,024")
    expect(notices).to_contain_text('ignored unknown key "<b>zz"')  # shown as text, not markup
    expect(notices).to_contain_text("B=1,000,000,000 is out of range")
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 1024, 1024)")
    expect(page).to_have_url(re.compile(r"\?B=8&T=1024&d=768&h=12&L=12&V=50257&T_max=1024&tie=1$"))
    page.get_by_role("button", name="Dismiss").click()
    expect(notices).to_be_hidden()


def test_preset_picker_and_tokens(explorer):
    page = explorer()
    page.locator(".preset select").select_option(label="GPT-3 175B · L 96, d 12,288")
    expect(page.locator(".budget-card")).to_contain_text(N_text(model.PRESETS["gpt3-175b"]))
    expect(page.locator(".box-L input")).to_have_value("96")
    reveal(page, ".tokens-card")
    box = page.locator(".tokens-card textarea")
    box.fill("Hello world")
    expect(page.locator(".tokens-card")).to_contain_text("2 tokens · 11 bytes · 5.50 bytes/token")
    expect(page.locator(".tokens-card")).to_contain_text("15496")


def test_phone_width_fits_without_sideways_scrolling(explorer):
    page = explorer("?preset=gpt3-175b", width=390, height=844)
    expect(page.locator("table.shapes")).to_contain_text("(8, 96, 2048, 2048)")
    overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0


def test_dragging_T_does_not_move_the_layout(explorer):
    """Rows keep their height and number (the loss keeps its place at T = 1), so nothing below them jumps."""
    page = explorer()
    cards = ".shapes-card, .budget-card, .tokens-card, .share-card"
    boxes = lambda: [(round(b["y"]), round(b["height"])) for b in
                     (page.locator(c).bounding_box() for c in cards.split(", "))]
    before = boxes()
    handle = page.locator(".slider-T .noUi-handle")
    for key, shown in (("Home", "(8, 12, 1, 1)"), ("End", "(8, 12, 1024, 1024)"), ("PageDown", "(8, 12, 1019, 1019)")):
        handle.press(key)
        expect(page.locator("table.shapes")).to_contain_text(shown)
        assert boxes() == before


def test_out_of_range_input_is_refused_aloud_and_the_box_reverts(explorer):
    page = explorer()
    box = page.locator(".box-d input")
    box.fill("1000000000")
    box.press("Enter")
    expect(page.locator(".controls-card")).to_contain_text(
        "d=1,000,000,000 is out of range: d must be from 1 to 32,768; kept d=768")
    expect(box).to_have_value("768")
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 1024, 1024)")


def test_ten_megabytes_of_pasted_text_are_capped_and_the_page_stays_responsive(explorer):
    page = explorer()
    reveal(page, ".tokens-card")
    box = page.locator(".tokens-card textarea")
    box.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text("The quick brown fox. " * 500_000)  # 10.5 MB, typed as a paste would be
    expect(page.locator(".tokens-card")).to_contain_text("cut to its first 100,000 characters", timeout=20_000)
    expect(page.locator(".tokens-card")).to_contain_text("· 100,000 bytes ·")  # the box stops at 100,001; the model at 100,000
    page.locator(".slider-T .noUi-handle").press("ArrowLeft")
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 1023, 1023)")


def test_two_pages_at_once_each_keep_their_own_view(explorer):
    first, second = explorer(), explorer("?preset=gpt3-175b")
    first.locator(".slider-L .noUi-handle").press("ArrowRight")
    second.locator(".slider-L .noUi-handle").press("ArrowLeft")
    expect(first.locator(".budget-card")).to_contain_text(N_text(dataclasses.replace(GPT2, L=13)))
    expect(second.locator(".budget-card")).to_contain_text(N_text(dataclasses.replace(model.PRESETS["gpt3-175b"], L=95)))
