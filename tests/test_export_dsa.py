"""The no-server page of DeepSeek sparse attention (issue 41), in Chromium: a page written for DeepSeek-V3.2 shows N
(671,877,929,216, without the multi-token-prediction module), N_active and the KV cache per token (the latent, the
rotary key and the indexer's key: 85,888 bytes at bf16) as `python -m model` prints them at either dtype; its budget
and memory lines (the indexer's scores, a sparse kernel's T_s = min(T, T_k) keys) are the model's at T below and above
T_k; its shapes rows are the model's, the indexer's included; its changes card ends with sparse attention."""
from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.cards.recipe.markup import changes_groups, changes_html
from app.cards.shapes.markup import shape_rows
from model import PRESETS, budget, trace
from model.changes import changes
from model.families import menu_label
from test_export import assert_lines_are_the_models, export, exported_page, js, text_of, value_of
from test_export_mla import cli_json, kv_cell, mla_js, per_token

pytestmark = pytest.mark.browser
SPARSE = PRESETS["deepseek-v3.2"]
INDEXER_ROWS = ("attn.indexer.q", "attn.indexer.k", "attn.indexer.scores", "attn.indexer.index", "attn.indexer.picked")


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "deepseek-v3.2.html"
    done = export(out, "--preset", "deepseek-v3.2")
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    assert len(out.read_bytes()) < 7_000_000  # 5,665,306 bytes measured
    return out


@pytest.fixture(scope="module")
def page(chromium, page_file: Path):
    yield from exported_page(chromium, page_file)


def cases() -> list:
    """DeepSeek-V3.2 at fewer blocks, T below T_k, at it and above it, and another indexer."""
    return [replace(SPARSE, L=5, T=64, B=2), replace(SPARSE, L=4, T=2_048), replace(SPARSE, L=4, T=4_096, B=2),
            replace(SPARSE, L=5, T=512, index_heads=32, index_dim=96, index_topk=256)]


def test_n_n_active_and_the_kv_cache_per_token_are_the_clis_at_each_dtype(page, capsys) -> None:
    assert value_of(page, "preset") == menu_label("deepseek-v3.2")
    head = html.unescape(re.sub(r"<[^>]+>", "", text_of(page, "head")))
    for dtype, index in (("fp32", 0), ("bf16", 1)):
        cli = cli_json(["--preset", "deepseek-v3.2", "--dtype", dtype], capsys)
        assert (cli["budget"]["params_exact"], cli["budget"]["params_active"]) == (671_877_929_216, 38_403_807_488)
        assert f"N = {cli['budget']['params_exact']:,} parameters" in head
        assert f"N_active = {cli['budget']['params_active']:,} per token" in head
        page.evaluate("(i) => { Bokeh.documents[0].get_model_by_name('dtype').active = i; }", index)
        page.wait_for_timeout(300)
        assert f"{per_token(cli):,} bytes" in kv_cell(page), dtype
    assert per_token(cli_json(["--preset", "deepseek-v3.2", "--dtype", "bf16"], capsys)) == 85_888
    lines = html.unescape(text_of(page, "lines"))
    for key in ("flops/sparse_attention", "flops/sparse_indexer"):
        line = next(x for x in budget(SPARSE).lines if x.key == key)
        assert html.escape(line.label) in text_of(page, "lines") and line.formula in lines


def test_budget_and_memory_lines_are_the_models(page) -> None:
    assert_lines_are_the_models(page, cases(), mla_js)


def test_the_shapes_rows_are_the_models_with_the_indexers(page) -> None:
    configs = cases()[:2]
    for c, table in zip(configs, js(page, "shapeRows", [[mla_js(c), "bf16", True] for c in configs])):
        want = shape_rows(trace(c, "bf16"), 1, True)
        assert [(r["name"], r["label"], r.get("symbolic", ""), r.get("shape", ""), r.get("memory", ""))
                for r in table["rows"]] == [(r.name, r.label, r.symbolic, r.shape, r.memory) for r in want], c
    shapes = html.unescape(text_of(page, "shapes"))
    for name in INDEXER_ROWS:
        assert f"<b>{name}" in shapes, name


def test_the_changes_card_ends_with_sparse_attention(page) -> None:
    for c in cases()[:2]:
        (out,) = js(page, "changesGroups", [[mla_js(c), "bf16"]])
        ch = changes(c, "bf16")
        assert out["groups"] == changes_groups(ch), c
        assert js(page, "changes_card.changes_html", [[out["groups"], "bf16", ch.note]]) == \
            [changes_html(changes_groups(ch), "bf16", ch.note)]
    last = changes(SPARSE, "fp32").steps[-1]
    assert last.key == "sparse" and "lightning indexer of h_I = 64 heads of d_I = 128" in last.title
    kv = next(x for x in last.lines if x.key.endswith("kv_cache"))
    assert kv.value == SPARSE.L * SPARSE.d_I * 4  # the indexer's key, d_I per block and token at fp32
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('dtype').active = 0; }")
    page.wait_for_timeout(300)
    assert html.unescape(html.escape(last.title)) in html.unescape(text_of(page, "changes"))
