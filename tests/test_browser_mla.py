"""Multi-head latent attention on the live page, in real Chromium (issue 27): DeepSeek-V3 chosen from the preset menu
shows N and the KV cache per token at bf16 as the CLI's --json prints them (671,026,404,352 and 70,272 bytes), the
shapes table's latent tensors and the changes card's one line; a link with latent attention's keys round-trips and
its boxes move the cache as the model counts it; a bad value is one notice line."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from app.query import parse_query
from model import PRESETS, trace
from model.changes import changes
from model.families import menu_label
from pagetools import open_explorer, run_cli

pytestmark = pytest.mark.browser
DEEPSEEK = PRESETS["deepseek-v3"]
KV = "table.lines tr[data-key='memory/kv_cache_per_token'] td.v"


def per_token(cfg, dtype: str) -> int:
    """The KV cache per token of context, as the model's record has it (the CLI prints the same line)."""
    return next(x.value for x in trace(cfg, dtype).lines if x.key == "memory/kv_cache_per_token")


def set_box(page, name: str, text: str) -> None:
    box = page.locator(f".recipe-{name} input")
    box.fill(text)
    box.press("Enter")


def test_deepseek_v3_from_the_menu_shows_the_clis_n_and_kv_per_token(chromium, server, capsys):
    status, out, _ = run_cli(["--preset", "deepseek-v3", "--dtype", "bf16", "--json"], capsys)
    cli = json.loads(out)
    kv = next(m["value"] for m in cli["kv"] if m["key"] == "memory/kv_cache_per_token")
    assert status == 0 and (cli["budget"]["params_exact"], kv) == (671_026_404_352, 70_272)  # the figures
    assert kv == per_token(DEEPSEEK, "bf16") == DEEPSEEK.L * (DEEPSEEK.d_c + DEEPSEEK.d_R) * 2
    o = open_explorer(chromium, server, "?panels=shapes,budget,changes", width=1400, height=1400)
    page = o.page
    label = menu_label("deepseek-v3")
    assert "no MTP module" in label  # the published 671B leaves the multi-token-prediction module out
    expect(page.locator(".preset optgroup[label='DeepSeek'] option", has_text=label)).to_have_count(1)  # beside V3.2
    page.locator(".preset select").select_option(label=label)
    page.get_by_role("button", name="bf16").click()
    expect(page.locator(".n span.big").first).to_have_text(f"N = {cli['budget']['params_exact']:,}", timeout=60_000)
    expect(page.locator(".n span.big").nth(1)).to_have_text(f"N_active = {cli['budget']['params_active']:,}")
    expect(page.locator(KV)).to_contain_text(f"{kv:,} bytes", timeout=60_000)
    expect(page.locator(".budget-card tr[data-key='params/exact']")).to_contain_text("multi-token-prediction (MTP)")
    for name in ("d_c", "d_cq", "d_R", "d_nope", "d_v"):  # latent attention's boxes; h_kv, d_head and W hidden
        expect(page.locator(f".recipe-{name} input")).to_have_value(f"{getattr(DEEPSEEK, name):,}")
    for name in ("h_kv", "d_head", "W"):
        expect(page.locator(f".size-{name}")).to_be_hidden()
    table = page.locator("table.shapes")
    for row in ("attn.q_a", "attn.c_kv", "attn.k_rope", "attn.kv_b", "attn.q_heads"):
        expect(table.locator("tr", has=page.locator(f"text='{row}'")).first).to_be_visible()
    heads = next(r for r in trace(DEEPSEEK, "bf16").rows if r.name.endswith("attn.q_heads"))
    assert heads.symbolic == "(B, h, T, d_nope + d_R)"  # the scores' head width
    expect(table).to_contain_text(heads.symbolic)
    latent = changes(DEEPSEEK, "bf16").steps[-1]  # what each change buys ends with latent attention
    assert latent.key == "latent"
    expect(page.locator(".recipe-card")).to_contain_text(latent.title, timeout=60_000)
    expect(page.locator(".recipe-card")).to_contain_text(latent.lines[-1].label)  # 2h·d_v / (d_c + d_R)
    expect(page).to_have_url(re.compile(r"d_c=512&d_cq=1536&d_R=64&d_nope=128&d_v=128"))
    assert o.errors == []
    again = open_explorer(chromium, server, re.sub(r"^.*/explorer", "", page.url), width=1400, height=1400)
    expect(again.page.locator(".preset select")).to_have_value(label)
    expect(again.page.locator(KV)).to_contain_text(f"{kv:,} bytes", timeout=60_000)
    assert again.errors == []
    page.close()
    again.page.close()


def test_a_latent_attention_link_round_trips_its_boxes_move_the_cache_and_a_bad_value_is_one_line(chromium, server):
    query = "?preset=deepseek-v3&L=4&T=64&d_c=256&d_cq=none&d_R=32&panels=shapes,budget"
    cfg = parse_query(query).config
    assert (cfg.d_c, cfg.d_cq, cfg.d_R, cfg.L) == (256, None, 32, 4) and parse_query(query).notices == ()
    o = open_explorer(chromium, server, query, width=1400, height=1400)
    page = o.page
    kv = page.locator(KV)
    expect(kv).to_contain_text(f"{per_token(cfg, 'fp32'):,} bytes", timeout=60_000)  # L·(d_c + d_R)·4
    expect(page.locator(".recipe-d_cq input")).to_have_value("none")
    expect(page.locator(".recipe-d_c input")).to_have_value("256")
    expect(page).to_have_url(re.compile(r"&d_c=256&d_R=32&d_nope=128&d_v=128"))  # d_cq none: no key
    assert parse_query(re.sub(r"^.*/explorer", "", page.url)).config == cfg
    set_box(page, "d_c", "1024")
    bigger = parse_query(query.replace("d_c=256", "d_c=1024")).config
    expect(kv).to_contain_text(f"{per_token(bigger, 'fp32'):,} bytes", timeout=60_000)
    set_box(page, "d_R", "abc")  # one notice line naming the problem and the fix; d_R kept
    expect(page.locator(".status-line")).to_contain_text('d_R="abc" is not a whole number')
    assert page.locator(".status-line .status").count() == 1
    expect(page.locator(".recipe-d_R input")).to_have_value("32")
    set_box(page, "d_R", "33")  # RoPE rotates pairs: snapped, said in one line
    expect(page.locator(".status-line")).to_contain_text("d_R snapped 33 → 34")
    assert page.locator(".status-line .status").count() == 1
    expect(page.locator(".recipe-d_R input")).to_have_value("34")
    assert o.errors == []
    page.close()
    bad = open_explorer(chromium, server, "?preset=deepseek-v3&d_cq=0&h_kv=8", width=1400, height=900)
    notices = bad.page.locator(".link-notices li")  # a link's notices: one line each
    expect(notices).to_have_count(2, timeout=60_000)
    expect(notices.first).to_contain_text("d_cq=0 is out of range: d_cq must be from 1 to 65,536, or none")
    expect(notices.nth(1)).to_contain_text("h_kv = 8 dropped: latent attention makes every head's K and V")
    expect(bad.page.locator(".recipe-d_cq input")).to_have_value("1,536")
    assert bad.errors == []
    bad.page.close()
