"""The shapes table's marks on the no-server page, in Chromium: the rows only in this recipe and the legend, as
`model.recipe_rows` and the live page's `app.cards.shapes.view` give them (the spec carries them per pass
structure)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.cards.shapes.markup import recipe_legend_html
from model import PRESETS
from model.families import PAGE_PRESETS  # the pages' presets: the dense ones
from model.recipe_rows import MARK, recipe_rows
from test_export import export, exported_page, js, text_of
from test_export_recipe import full_js, random_covered

pytestmark = pytest.mark.browser
QWEN = PRESETS["qwen3-0.6b"]


@pytest.fixture(scope="module")
def page(chromium, tmp_path_factory: pytest.TempPathFactory):
    out: Path = tmp_path_factory.mktemp("export") / "qwen.html"
    done = export(out, "--preset", "qwen3-0.6b", "--T", "256")
    assert done.returncode == 0, done.stderr
    yield from exported_page(chromium, out)


def test_the_page_marks_what_the_model_marks(page) -> None:
    cases = [*(p for p in PAGE_PRESETS.values() if not p.gpt2_recipe), *random_covered(8, seed=7),
             PRESETS["gpt2-small"]]
    for c, table in zip(cases, js(page, "shapeRows", [[full_js(c), "fp32", False] for c in cases])):
        marks = recipe_rows(c)
        assert {r["name"] for r in table["rows"] if r.get("only")} == marks.only, c
        assert table["legend"] == list(marks.legend), c
        assert js(page, "shapes_markup.recipe_legend_html", [[table["legend"]]]) == [recipe_legend_html(marks.legend)]


def test_the_shown_table_carries_the_marks_and_the_legend(page) -> None:
    shown = text_of(page, "shapes")
    assert shown.count(f'<em class="mk">{MARK}</em></b>') == len(recipe_rows(QWEN).only)
    assert recipe_legend_html(recipe_rows(QWEN).legend) in shown
    assert "rope.angles <em" in shown and "attn.q_norm <em" in shown


def test_expanded_listing_marks_every_block(page) -> None:
    cfg = replace(QWEN, L=3, T=256)
    (table,) = js(page, "shapeRows", [[full_js(cfg), "bf16", True]])
    marked = [r["name"] for r in table["rows"] if r.get("only")]
    # RoPE 3 and ln_f.rstd; 13 a block (the preset runs fused attention: its log-sum-exp, K and V not expanded)
    assert marked.count("blocks.2.mlp.gate") == 1 and marked.count("blocks.1.attn.lse") == 1
    assert len(marked) == 4 + 3 * 13 and "blocks.0.attn.k_heads" not in {r["name"] for r in table["rows"]}
