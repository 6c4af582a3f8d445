"""A mixture of experts on the live page, in real Chromium: Mixtral 8x7B's N and N_active as the CLI prints them,
the MLP's switch and its boxes E and k moving both, shared experts and the layout of MoE blocks set through their
boxes as the CLI counts them, the shapes table's group of MoE blocks, a pasted Qwen3-MoE config.json, and a bad ?k=
that is one notice line."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.query import parse_query
from app.state import preset_labels
from model import PRESETS, budget, trace
from model.changes import changes
from pagetools import open_explorer, run_cli

pytestmark = pytest.mark.browser
PUBLISHED = Path(__file__).parent / "hf" / "published"
MIXTRAL = PRESETS["mixtral-8x7b"]


def headline(page) -> tuple[str, str]:
    """The budget card's N and N_active as the page shows them."""
    big = page.locator(".n span.big")
    expect(big).to_have_count(2, timeout=60_000)
    for i in range(2):  # shown: Panel keeps an HTML pane hidden until its stylesheets have loaded, and a hidden
        expect(big.nth(i)).to_be_visible(timeout=60_000)  # element's inner text is "" (its text content is not)
    return big.nth(0).inner_text(), big.nth(1).inner_text()


def expect_counts(page, cfg) -> None:
    b = budget(cfg)
    expect(page.locator(".n span.big").first).to_have_text(f"N = {b.params_exact:,}", timeout=60_000)
    expect(page.locator(".n span.big").nth(1)).to_have_text(f"N_active = {b.params_active:,}", timeout=60_000)


def set_box(page, name: str, text: str) -> None:
    box = page.locator(f".recipe-{name} input")
    box.fill(text)
    box.press("Enter")


def test_mixtral_link_shows_n_and_n_active_as_the_cli_and_e_and_k_move_them(chromium, server, capsys):
    status, out, _ = run_cli(["--preset", "mixtral-8x7b", "--json"], capsys)
    cli = json.loads(out)["budget"]
    assert status == 0 and (cli["params_exact"], cli["params_active"]) == (46_702_792_704, 12_879_925_248)
    o = open_explorer(chromium, server, "?preset=mixtral-8x7b", height=1400)
    page = o.page
    assert headline(page) == (f"N = {cli['params_exact']:,}", f"N_active = {cli['params_active']:,}")
    expect(page.locator(".preset select")).to_have_value("Mixtral 8x7B · L 32, d 4,096, top-2 of 8 experts")
    assert page.locator(".preset optgroup[label='Mistral'] option", has_text="Mixtral 8x7B").count() == 1
    expect(page.locator(".switch-moe select")).to_have_value("moe")
    expect(page.locator(".size-d_ff")).to_be_hidden()  # every block is MoE: no dense MLP, no d_ff
    # the chart's bars are model.budgeting.chart's, and the shapes table groups the blocks by kind
    bars = page.locator(".parts .part")
    assert [bars.nth(i).get_attribute("data-key") for i in range(bars.count())] == [
        "params/emb", "params/attention", "params/experts", "params/routers", "params/norms", "params/head",
        "params/experts_active"]
    title = trace(MIXTRAL).groups[0].title
    expect(page.locator("table.shapes tr.g").first).to_contain_text(title)
    assert page.locator("table.shapes tr.g").count() == 1
    moe = {x.key: x for x in changes(MIXTRAL, "fp32").lines}["changes/moe/params"]  # what each change buys
    expect(page.locator(".changes tr[data-key='changes/moe/params']")).to_contain_text(moe.label, timeout=60_000)
    set_box(page, "E", "16")  # 16 experts: N doubles its experts, N_active gains only the routers' 8 columns more
    expect_counts(page, replace(MIXTRAL, experts=16))
    expect(page.locator(".preset select")).to_have_value("custom (your own values)")  # no longer Mixtral 8x7B
    assert budget(replace(MIXTRAL, experts=16)).params_active == cli["params_active"] + MIXTRAL.L * MIXTRAL.d * 8
    set_box(page, "k", "1")
    expect_counts(page, replace(MIXTRAL, experts=16, top_k=1))
    set_box(page, "k", "17")  # more than E: clamped, one notice
    expect_counts(page, replace(MIXTRAL, experts=16, top_k=16))
    expect(page.locator(".status-line")).to_contain_text("k clamped 17 → 16")
    page.locator(".switch-moe select").select_option("dense")  # Mixtral made dense is Mistral 7B
    expect(page.locator(".n span.big")).to_have_count(1, timeout=60_000)
    expect(page.locator(".n span.big").first).to_have_text(f"N = {budget(PRESETS['mistral-7b']).params_exact:,}")
    expect(page.locator(".preset select")).to_have_value("Mistral 7B (v0.2) · L 32, d 4,096")
    expect(page.locator(".size-E")).to_be_hidden()
    assert o.errors == []
    page.close()


def test_shared_experts_and_which_blocks_are_moe_set_through_the_boxes_as_the_cli(chromium, server, capsys):
    """Qwen3-30B-A3B cut to L = 8 blocks, given Qwen2-MoE's shared experts and a layout of dense and MoE blocks through
    the boxes: N and N_active equal the CLI's with the same flags; E_shared = 0 hides d_shared; a layout that leaves no
    block MoE is one notice line and the page keeps what it showed."""
    layout = ["--L", "8", "--moe-step", "2", "--dense-first", "3", "--dense-layers", "5", "--table", "budget"]
    clis = [json.loads(run_cli(["--preset", "qwen3-30b-a3b", *shared, *layout, "--json"], capsys)[1])["budget"]
            for shared in (["--shared-experts", "2", "--d-shared", "1536"], [])]
    o = open_explorer(chromium, server, "?preset=qwen3-30b-a3b&L=8&panels=shapes,budget", height=1400)
    page = o.page
    expect(page.locator(".recipe-E_shared input")).to_have_value("0")
    expect(page.locator(".size-d_shared")).to_be_hidden()  # no shared experts: no width of theirs
    for name, text in [("E_shared", "2"), ("d_shared", "1,536"), ("moe_step", "2"), ("dense_first", "3"),
                       ("dense_layers", "5")]:
        set_box(page, name, text)
        expect(page.locator(f".recipe-{name} input")).to_have_value(text)
    cfg = replace(PRESETS["qwen3-30b-a3b"], L=8, shared_experts=2, shared_dim=1536, moe_step=2, dense_first=3,
                  dense_layers=(5,))
    assert cfg.block_kinds == ("dense",) * 3 + ("moe",) + ("dense",) * 3 + ("moe",)
    assert (budget(cfg).params_exact, budget(cfg).params_active) == (clis[0]["params_exact"], clis[0]["params_active"])
    expect_counts(page, cfg)  # the page's N and N_active, once the server has answered the last box
    expect(page.locator(".size-d_ff")).to_be_visible()  # dense blocks: their d_ff is a part of the model
    groups = page.locator("table.shapes tr.g")
    expect(groups).to_have_count(len(trace(cfg).groups))
    expect(groups.first).to_contain_text(trace(cfg).groups[0].title)
    set_box(page, "moe_step", "9")  # beyond L = 8: no block would be MoE
    expect(page.locator(".status-line")).to_contain_text("moe_step=9 exceeds L=8")
    assert page.locator(".status-line .status").count() == 1
    expect(page.locator(".recipe-moe_step input")).to_have_value("2")
    set_box(page, "E_shared", "0")  # none: d_shared hides, N loses both shared experts
    expect(page.locator(".n span.big").first).to_have_text(f"N = {clis[1]['params_exact']:,}", timeout=60_000)
    expect(page.locator(".n span.big").nth(1)).to_have_text(f"N_active = {clis[1]['params_active']:,}")
    expect(page.locator(".size-d_shared")).to_be_hidden()
    assert o.errors == []
    page.close()


def test_a_bad_k_in_a_link_is_one_notice_line(chromium, server):
    query = "?preset=mixtral-8x7b&k=abc"
    notices = parse_query(query).notices
    assert len(notices) == 1 and notices[0].startswith('k="abc" is not a whole number')
    o = open_explorer(chromium, server, query)
    page = o.page
    expect(page.locator(".link-notices li")).to_have_count(1, timeout=30_000)
    expect(page.locator(".link-notices li")).to_have_text(notices[0])
    expect_counts(page, MIXTRAL)  # k = 2 kept
    assert "Traceback" not in page.content() and o.errors == []
    page.close()


def test_a_pasted_qwen3_moe_config_json(chromium, server):
    o = open_explorer(chromium, server, "?panels=shapes,budget,changes", height=1400)
    page = o.page
    area = page.locator(".recipe-card textarea")
    area.fill((PUBLISHED / "qwen3-30b-a3b.json").read_text(encoding="utf-8"))
    area.blur()
    expect_counts(page, PRESETS["qwen3-30b-a3b"])
    expect(page.locator(".recipe-card .read-notice")).to_contain_text("read qwen3_moe config.json")
    expect(page.locator(".recipe-E input")).to_have_value("128")
    expect(page.locator(".recipe-k input")).to_have_value("8")
    assert o.errors == []
    page.close()


def kv_per_token(cli: dict) -> int:
    """The CLI's KV cache per token of context (`--json`'s memory lines)."""
    return next(m["value"] for m in cli["memory"] if m["key"] == "memory/kv_cache_per_token")


@pytest.mark.parametrize("name, N", [("gemma-3-27b", 27_009_346_304), ("mistral-7b-v0.1", 7_241_732_096)])
def test_the_other_windowed_presets_show_n_and_kv_per_token_as_the_cli(chromium, server, capsys, name, N):
    """Gemma 3 27B (52 sliding blocks of 62) and Mistral 7B v0.1 (every block windowed: no cache grows per token
    past the window, 0 bytes) from their links: N, the KV cache per token and the shapes heading as the CLI's."""
    from model.tracing import window_text

    status, out, _ = run_cli(["--preset", name, "--json"], capsys)
    cli = json.loads(out)
    assert status == 0 and cli["budget"]["params_exact"] == N
    o = open_explorer(chromium, server, f"?preset={name}&panels=shapes,budget", height=1400)
    page = o.page
    expect(page.locator(".n span.big").first).to_have_text(f"N = {N:,}", timeout=60_000)
    kv = page.locator("table.lines tr[data-key='memory/kv_cache_per_token'] td.v")
    expect(kv).to_contain_text(f"{kv_per_token(cli):,} bytes")
    assert (kv_per_token(cli) == 0) == (name == "mistral-7b-v0.1")
    expect(page.locator("table.shapes tr.g").first).to_contain_text(window_text(PRESETS[name]))
    assert o.errors == []
    page.close()


@pytest.mark.parametrize("name", ["gemma-3-1b", "gpt-oss-20b"])
def test_windowed_presets_show_n_and_kv_per_token_as_the_cli_and_the_window_boxes_move_them(chromium, server, capsys,
                                                                                          name):
    """Gemma 3 1B (a hybrid: 22 sliding blocks, 4 full) and gpt-oss-20b (every other block windowed, a mixture of
    experts): N (and N_active), the KV cache per token and the shapes table's heading as the CLI's records; the family's
    extras in one line; W and full_layers through their boxes as the CLI counts them; a bad W is one notice line."""
    from model.families import extras_line
    from model.tracing import window_text

    cfg = PRESETS[name]
    status, out, _ = run_cli(["--preset", name, "--json"], capsys)
    cli = json.loads(out)
    assert status == 0 and cli["budget"]["params_exact"] == {"gemma-3-1b": 999_885_952, "gpt-oss-20b": 20_914_757_184}[name]
    o = open_explorer(chromium, server, f"?preset={name}&panels=shapes,budget", height=1400)
    page = o.page
    expect(page.locator(".n span.big").first).to_have_text(f"N = {cli['budget']['params_exact']:,}", timeout=60_000)
    if cfg.moe:
        expect(page.locator(".n span.big").nth(1)).to_have_text(f"N_active = {cli['budget']['params_active']:,}")
    kv = page.locator("table.lines tr[data-key='memory/kv_cache_per_token'] td.v")
    expect(kv).to_contain_text(f"{kv_per_token(cli):,} bytes")
    expect(page.locator(".preset select")).to_have_value(next(k for k, v in preset_labels().items() if v == name))
    expect(page.locator("table.shapes tr.g").first).to_contain_text(window_text(cfg))
    expect(page.locator(".controls .extras")).to_have_text(extras_line(cfg))
    expect(page.locator(".recipe-W input")).to_have_value(f"{cfg.W:,}")
    expect(page.locator(".recipe-full_layers input")).to_have_value(",".join(map(str, cfg.full_layers)))
    set_box(page, "W", "64")
    set_box(page, "full_layers", "0,1")
    asked = replace(cfg, window=64, full_layers=(0, 1))
    per_token = {x.key: x.value for x in trace(asked, "fp32").lines}["memory/kv_cache_per_token"]  # the CLI's record
    assert per_token == 2 * 2 * asked.h_kv * asked.d_head * 4  # two full blocks' K and V at fp32
    expect(kv).to_contain_text(f"{per_token:,} bytes", timeout=60_000)
    expect(page.locator("table.shapes tr.g").first).to_contain_text(window_text(asked))
    set_box(page, "W", "ten")  # one notice line naming the problem and the fix; W kept
    expect(page.locator(".status-line")).to_contain_text('W="ten" is not a whole number')
    assert page.locator(".status-line .status").count() == 1
    expect(page.locator(".recipe-W input")).to_have_value("64")
    set_box(page, "W", "none")  # full attention everywhere: full_layers hides
    expect(page.locator(".size-full_layers")).to_be_hidden()
    expect(kv).to_have_count(1)
    assert o.errors == []
    page.close()
