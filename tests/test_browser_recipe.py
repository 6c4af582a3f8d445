"""The modern recipe on the live page, in real Chromium: a preset link, GQA flipped back, the changes card against
the CLI's lines, a pasted config.json, and a broken one."""
from __future__ import annotations

import html
import json
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.cards.recipe.markup import changes_groups
from app.query import parse_query
from model import PRESETS, budget
from model.changes import changes
from model.families import recipe_fields
from pagetools import open_explorer

pytestmark = pytest.mark.browser
HF = Path(__file__).parent / "hf"


def changes_values(page) -> dict[str, str]:
    """The changes card's lines as the page shows them: key -> value cell."""
    page.locator(".changes table.changes").first.wait_for(timeout=60_000)
    rows = page.locator(".changes tr[data-key]")
    return {rows.nth(i).get_attribute("data-key"): rows.nth(i).locator("td.v").inner_text().split("\n")[0]
            for i in range(rows.count())}


def kv_per_token(page) -> str:
    return changes_values(page)["changes/this/kv_cache"]


def test_llama3_8b_link_flipping_gqa_and_the_cli_lines(chromium, server):
    o = open_explorer(chromium, server, "?preset=llama3-8b", height=1400)
    page = o.page
    expect(page.locator("span.big").first).to_contain_text("8,030,261,248", timeout=60_000)
    cfg = parse_query("?preset=llama3-8b").config
    want = {x["key"]: x["value"] for g in changes_groups(changes(cfg, "fp32")) for x in g["lines"]}
    assert changes_values(page) == want  # the card's lines are the CLI's (python -m model --table changes)
    assert kv_per_token(page) == "256 KiB"
    box = page.locator(".recipe-h_kv input")
    box.fill("32")
    box.press("Enter")
    expect(page.locator(".changes tr[data-key='changes/this/kv_cache'] td.v")).to_contain_text("1 MiB", timeout=60_000)
    mha = replace(cfg, kv_heads=None)
    assert changes(mha, "fp32").this.lines[2].value == 4 * changes(cfg, "fp32").this.lines[2].value  # × h / h_kv
    assert o.errors == []
    page.close()


def test_a_pasted_config_json_and_a_broken_one(chromium, server):
    o = open_explorer(chromium, server, "?panels=shapes,budget,changes", height=1400)
    page = o.page
    area = page.locator(".recipe-card textarea")
    area.fill("{not json")
    area.blur()
    expect(page.locator(".recipe-card")).to_contain_text("not JSON", timeout=30_000)
    area.fill(json.dumps({"model_type": "mixtral", "num_local_experts": 8}))  # transformers' defaults: Mixtral 8x7B
    area.blur()
    expect(page.locator("span.big").first).to_contain_text(f"{budget(PRESETS['mixtral-8x7b']).params_exact:,}",
                                                           timeout=60_000)
    expect(page.locator(".recipe-card .read-notice")).to_contain_text("read mixtral config.json", timeout=30_000)
    area.fill((HF / "qwen2.5-0.5b.json").read_text(encoding="utf-8"))
    area.blur()
    expect(page.locator("span.big").first).to_contain_text("494,032,768", timeout=60_000)
    assert o.errors == []
    page.close()


def test_the_recipe_switches_and_bad_recipe_links(chromium, server):
    """Bad recipe values in a link get the parser's notices; the recipe choice, a switch and QK-norm move the page
    to the model's own count, and the choice reads "custom" once a switch leaves the modern recipe."""
    query = "?norm=batchnorm&h_kv=abc&d_ff=0"
    o = open_explorer(chromium, server, query)
    page = o.page
    for note in parse_query(query).notices:
        expect(page.locator(".link-notices")).to_contain_text(note)
    page.locator(".recipe select").select_option("modern")
    modern = replace(PRESETS["gpt2-small"], **recipe_fields("modern", 12))
    expect(page.locator("span.big").first).to_contain_text(f"{budget(modern).params_exact:,}",
                                                           timeout=30_000)
    expect(page.locator(".switch-norm select")).to_have_value("rmsnorm")
    expect(page.locator(".recipe-h_kv input")).to_have_value("3")
    page.locator(".switch-positions select").select_option("learned")
    page.locator(".check-qk_norm input").check()
    custom = replace(modern, positions="learned", qk_norm=True)
    expect(page.locator("span.big").first).to_contain_text(f"{budget(custom).params_exact:,}",
                                                           timeout=30_000)
    expect(page.locator(".recipe select")).to_have_value("custom")
    assert o.errors == []
    page.close()


def test_every_malformed_config_json_is_one_notice_and_the_server_lives_on(chromium, server):
    """Each malformed file of tests/test_hf.py pasted into the box (the one that is no UTF-8 text dropped as a file)
    gets the one line `read_config_json` gives, as the page's notice; then a good file is read as before."""
    from app.cards.recipe.view import read_config_json
    from test_hf import MALFORMED

    keep = PRESETS["gpt2-small"]
    cases = [(name, data, read_config_json(data, keep)[1]) for name, data, _ in MALFORMED if data]
    assert all(read_config_json(data, keep)[0] is None for _, data, _ in cases)
    o = open_explorer(chromium, server, "?panels=shapes,budget,changes", height=1400)
    page = o.page
    area, notice = page.locator(".recipe-card textarea"), page.locator(".recipe-card .read-notice")
    def paste(text: str, line: str) -> None:
        area.fill(text)
        area.blur()
        expect(notice).to_have_text(f"⚠ {line}", timeout=30_000)

    last = None
    for name, data, line in cases:
        if line == last:  # the same line twice: another one between, so that each one is seen arriving
            paste("[]", read_config_json("[]", keep)[1])
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            page.locator(".recipe-card input[type=file]").set_input_files(
                files=[{"name": "config.json", "mimeType": "application/json", "buffer": data}])
        else:
            area.fill(text)
            area.blur()
        expect(notice, name).to_have_text(f"⚠ {line}", timeout=30_000)
        last = line
    area.fill((HF / "qwen2.5-0.5b.json").read_text(encoding="utf-8"))
    area.blur()
    expect(page.locator("span.big").first).to_contain_text("494,032,768", timeout=60_000)
    assert o.errors == []
    page.close()


def test_a_model_id_from_the_servers_hub_cache_and_one_it_lacks(chromium, tmp_path):
    """A model id typed on the page reads config.json from the server's Hugging Face cache (HF_HUB_CACHE, laid out
    as huggingface_hub lays it out); one the cache lacks is one notice that says what to run, and nothing is
    fetched."""
    from appserver import serve_app
    from test_hub import COUNTS, PUBLISHED, lay_out

    cache = tmp_path / "hub"
    lay_out(cache, "mistralai/Mistral-Nemo-Base-2407", (PUBLISHED / "mistral-nemo-12b.json").read_bytes())
    with serve_app(env={"HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}) as served:
        o = open_explorer(chromium, served, "?panels=shapes,budget,changes", height=1400)
        page = o.page
        box = page.locator(".recipe-card .model-id input")
        box.fill("Qwen/Qwen3-8B")
        box.press("Enter")
        expect(page.locator(".recipe-card .read-notice")).to_have_text(
            "⚠ model id Qwen/Qwen3-8B: not in the Hugging Face cache (" + str(cache) + ") of this server: run "
            "`huggingface-cli download Qwen/Qwen3-8B config.json` on the server, or paste its config.json; nothing "
            "was changed", timeout=30_000)
        box.fill("mistralai/Mistral-Nemo-Base-2407")
        box.press("Enter")
        expect(page.locator("span.big").first).to_contain_text(f"{COUNTS['mistral-nemo-12b']['parameters']:,}",
                                                               timeout=60_000)
        expect(page.locator(".recipe-card .read-notice")).to_contain_text(
            "read mistral config.json of mistralai/Mistral-Nemo-Base-2407 (this server's Hugging Face cache)")
        assert o.errors == []
        page.close()
        assert "Traceback" not in served.log()
