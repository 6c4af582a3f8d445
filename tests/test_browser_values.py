"""The values card in headless Chromium: closed until opened, a real pass when opened, causal zeros in the
heatmap's data, the same loss as the API, and hostile links that get the scaled-down offer instead of a pass."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

import model
from model import values as mv

pytestmark = pytest.mark.browser
SOURCE = "(name) => Bokeh.documents[0].get_model_by_name(name).data"


def test_the_card_is_closed_until_opened_then_shows_a_real_pass(explorer):
    from app.state import SAMPLE_TEXT

    page = explorer("?d=64&h=4&L=2&T=48&T_max=64")
    card = page.locator(".values-card")
    expect(card).to_contain_text("What the tensors hold")
    expect(page.locator(".values-results")).to_be_hidden()
    card.locator(".card-header").first.click()
    expect(page.locator(".values-results")).to_be_visible(timeout=60_000)
    v = mv.values(model.Config(B=8, T=48, d=64, h=4, L=2, V=50_257, T_max=64), SAMPLE_TEXT)
    expect(card).to_contain_text(f"loss {v.loss:.3f}")
    expect(card).to_contain_text(f"ln V = ln 50,257 = {v.ln_V:.3f}")
    expect(card).to_contain_text("exactly 0, so token t never sees t + 1")
    expect(card).to_contain_text(f"{v.unit.unscaled.std:.2f}")
    # near-uniform rows at init are said, measured, and coloured on a log scale so that they do not look blank
    from model.values_report import uniform_line
    expect(card).to_contain_text(uniform_line(v, 0, 0))
    expect(card).to_contain_text("Colours are on a log scale from 1/T to 1")
    mapper = ("() => { const m = Bokeh.documents[0].get_model_by_name('values-heatmap').renderers[0]"
              ".glyph.fill_color.transform; return [m.type, m.low, m.high]; }")
    page.wait_for_function(f"() => ({mapper})()[1] === 1 / {v.cfg.T}", timeout=10_000)  # own patch, maybe later
    assert page.evaluate(mapper) == ["LogColorMapper", pytest.approx(1 / v.cfg.T), 1]
    masked = page.evaluate(SOURCE, "values-masked")
    cells = page.evaluate(SOURCE, "values-attention")
    T = v.cfg.T
    assert set(masked["w"]) == {0} and len(masked["w"]) == T * (T - 1) // 2
    assert all(x > y for x, y in zip(masked["x"], masked["y"]))  # all above the diagonal
    sums = [0.0] * T
    for y, w in zip(cells["y"], cells["w"]):
        sums[y] += w
    assert max(abs(s - 1) for s in sums) < 1e-5
    assert cells["w"][:1] == [pytest.approx(float(v.attention(0, 0)[0, 0]))]


def test_a_huge_config_with_panels_values_gets_the_offer_not_a_pass(explorer, server):
    page = explorer("?preset=gpt3-175b&panels=values")
    message = page.locator(".values-message")
    expect(message).to_contain_text("Too large for a real pass here", timeout=60_000)
    expect(message).to_contain_text("174.6")
    expect(page.locator(".values-offer")).to_contain_text("Run the scaled-down copy")
    expect(page.locator(".values-results")).to_be_hidden()


def test_the_scaled_down_copy_runs_when_asked_and_is_labelled(explorer):
    page = explorer("?panels=values&d=64&h=4&L=300&T=16&T_max=64")
    offer = page.locator(".values-offer button")
    offer.wait_for(state="visible", timeout=60_000)  # once the plan (a few meta-device traces) is known
    offer.click()
    card = page.locator(".values-card")
    expect(card).to_contain_text("Scaled-down copy of the model asked for", timeout=60_000)
    expect(card).to_contain_text("L=300 is above 96 blocks")
    expect(page.locator(".values-results")).to_be_visible()


def test_text_beyond_V_is_explained(explorer):
    page = explorer("?panels=values&d=64&h=4&L=2&T=16&T_max=64&V=256")
    expect(page.locator(".values-message")).to_contain_text(re.compile(r"token id [\d,]+ .* ≥ V = 256"),
                                                            timeout=120_000)
