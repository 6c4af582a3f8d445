"""The shapes table's marks on the live page, in real Chromium: the rows that exist only in this recipe
(`model.recipe_rows`), the legend under the table, and both following the configuration."""
from __future__ import annotations

from dataclasses import replace

import pytest
from playwright.sync_api import expect

from model import PRESETS
from model.recipe_rows import MARK, recipe_rows
from pagetools import open_explorer

pytestmark = pytest.mark.browser


def marked_rows(page) -> set[str]:
    """The names of the table's rows that carry the mark (their name cell without it)."""
    names = page.locator("table.shapes tr.r td.n b").all_inner_texts()
    assert all(n.endswith(f" {MARK}") for n in names)
    return {n.removesuffix(f" {MARK}").strip() for n in names}


def legend(page) -> list[str]:
    return [x for x in page.locator("p.legend").all_inner_texts() if "GPT-2 twin" in x]


def test_llama3_8b_marks_the_rows_of_its_recipe_and_gqa_flipped_back_drops_the_expansion(chromium, server):
    o = open_explorer(chromium, server, "?preset=llama3-8b&attention=eager", height=1400)  # eager: K, V expanded
    page = o.page
    expect(page.locator("table.shapes tr.r").first).to_be_visible(timeout=60_000)
    cfg = replace(PRESETS["llama3-8b"], attention="eager")
    assert marked_rows(page) == recipe_rows(cfg).only
    assert legend(page) == list(recipe_rows(cfg).legend)
    box = page.locator(".recipe-h_kv input")
    box.fill("32")
    box.press("Enter")
    expect(page.locator("table.shapes tr.r", has_text="k_heads")).to_have_count(0, timeout=60_000)
    assert marked_rows(page) == recipe_rows(replace(cfg, kv_heads=None)).only
    assert o.errors == []
    page.close()


def test_gpt2_small_has_no_mark_and_no_legend(chromium, server):
    o = open_explorer(chromium, server, "?preset=gpt2-small")
    page = o.page
    expect(page.locator("table.shapes tr.t").first).to_be_visible(timeout=60_000)
    assert page.locator("table.shapes em.mk").count() == 0 and legend(page) == []
    assert o.errors == []
    page.close()
