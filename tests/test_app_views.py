"""The rows and numbers each view is handed, and the views' Bokeh models, without a browser."""
import contextlib
import html
import re
from dataclasses import replace
from pathlib import Path

import panel as pn
import pytest

from app import Explorer
from app.cards.budget.view import BudgetView
from app.cards.budget.markup import budget_parts, chart_html, lines_html, shown
from app.cards.controls.view import MOE_SIZES, Controls, controls_spec, slider_range, status_html
from app.cards.shapes.view import SEP, ShapesTable, table_at
from app.cards.shapes.markup import SLOT, render_table, shape_rows
from app.cards.share.heights import embed_height
from app.cards.share.view import base_url, embed_code, page_link
from app.query import ViewOptions, parse_query
from app.state import ExplorerState
from app.cards.tokens.view import TokensView, token_chips, token_stats, tokens_html
from app.cards.train.markup import chart_html as memory_chart_html
from model import PRESETS, budget, divisors, tokenizer, trace, units
from model.config import FIELD_DOCS, FIELDS
from model.parts.latent import FIELDS as LATENT

MLA_KEYS = [f.key for f in LATENT]  # latent attention's boxes: d_c, d_cq, d_R, d_nope, d_v

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _fresh_panel_state():
    yield
    pn.state.reset()


def rows_by_name(rows):
    return {r.name: r for r in rows if r.kind == "tensor"}


# --- shapes --------------------------------------------------------------------------------------------------------
def test_shape_rows_at_gpt2_small():
    t = trace(PRESETS["gpt2-small"])
    rows = shape_rows(t, scale_bytes=max(r.nbytes for r in t.rows))
    assert [r.kind for r in rows].count("group") == 1 and len(rows) == len(t.rows) + 1
    by = rows_by_name(rows)
    scores = by["attn.scores"]
    assert (scores.symbolic, scores.shape, scores.elements, scores.memory) == (
        "(B, h, T, T)", "(8, 12, 1024, 1024)", "100,663,296", "384 MiB")
    assert scores.quadratic and scores.in_block and scores.bar == pytest.approx(12 * 1024 / 50257)
    assert by["head"].bar == 1.0 and by["head"].memory == "1.53 GiB"
    assert by["idx"].memory == "64 KiB"  # int64 ids
    assert rows[4].kind == "group" and rows[4].name == "blocks 0 … 11 × L = 12"


def test_expanded_rows_list_every_block():
    cfg = PRESETS["gpt2-small"]
    rows = shape_rows(trace(cfg), scale_bytes=1, expanded=True)
    groups = [r.name for r in rows if r.kind == "group"]
    assert groups == [f"block {b}" for b in range(12)]
    names = [r.name for r in rows if r.kind == "tensor"]
    assert "blocks.11.attn.scores" in names and len(names) == len(trace(cfg).expanded())


def test_expanded_listing_stops_after_96_blocks():
    cfg = PRESETS["gpt2-small"].__class__(B=1, T=4, d=8, h=2, L=200, V=10, T_max=4)
    rows = shape_rows(trace(cfg), scale_bytes=1, expanded=True)
    groups = [r for r in rows if r.kind == "group"]
    assert [g.name for g in groups[-2:]] == ["block 95", "blocks 96 … 199"]
    assert groups[-1].label == "104 more blocks with the same shapes, not listed"
    assert [r.name for r in rows[-4:]] == ["blocks 96 … 199", "ln_f", "head", "loss"]
    assert "blocks.96.ln_1" not in [r.name for r in rows]


def test_bf16_halves_float_memory_but_not_token_ids():
    cfg = PRESETS["gpt2-small"]
    fp32 = rows_by_name(shape_rows(trace(cfg, "fp32"), 1))
    bf16 = rows_by_name(shape_rows(trace(cfg, "bf16"), 1))
    assert (fp32["attn.scores"].memory, bf16["attn.scores"].memory) == ("384 MiB", "192 MiB")
    assert fp32["idx"].memory == bf16["idx"].memory == "64 KiB"


def test_T_1_keeps_a_place_for_the_loss():
    cfg = PRESETS["gpt2-small"].__class__(B=1, T=1, d=768, h=12, L=12, V=50257)
    rows = shape_rows(trace(cfg), 1)
    assert rows[-1].kind == "absent" and rows[-1].name == "loss" and "T = 1" in rows[-1].label


def test_table_html_shows_rows_memory_lines_and_escapes():
    s = ExplorerState()
    view = ShapesTable(state=s)
    text = view.table_html()
    assert "(8, 12, 1024, 1024)" in text and "100,663,296" in text
    body = text.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr class=") == len(view.rows())
    assert lines_html([shown(x) for x in s.trace.lines]).replace('<td class="v">', '<td class="v" data-h>') in text
    assert f">{units.value(s.trace.activation_bytes, 'bytes')}<" in text  # new memory, views excluded
    assert f">{units.value(s.trace.saved_bytes, 'bytes')}<" in text  # saved for backward
    from app.cards.shapes.markup import ShapeRow
    hostile = render_table([ShapeRow(kind="tensor", name="<script>x</script>")], "fp32", "1 B", [])
    assert "<script>" not in hostile and html.escape("<script>") in hostile


def test_views_show_no_new_memory_and_saved_rows_are_marked():
    s = ExplorerState()
    rows = {r.name: r for r in ShapesTable(state=s).rows()}
    traced = {r.local: r for r in s.trace.rows if r.block is not None}
    assert rows["attn.q"].memory == "view" and rows["attn.q"].view  # q, k, v share qkv's storage
    assert rows["attn.qkv"].memory == units.nbytes(traced["attn.qkv"].nbytes) and not rows["attn.qkv"].view
    assert {n for n, r in rows.items() if r.saved} == {r.local for r in traced.values() if r.saved} | \
        {r.name for r in s.trace.rows if r.block is None and r.saved}
    text = ShapesTable(state=s).table_html()
    assert '<tr class="t k v" title=' in text and " sv" in text


def test_table_balloons_with_T_and_stays_with_d():
    s = ExplorerState()
    view = ShapesTable(state=s)
    s.T = 512
    small = rows_by_name(view.rows())["attn.scores"]
    s.T = 1024
    big = rows_by_name(view.rows())["attn.scores"]
    assert big.bar == pytest.approx(4 * small.bar)  # (B, h, T, T): doubling T quadruples it
    s.d = 1536
    s.h = 12
    assert rows_by_name(view.rows())["attn.scores"].memory == big.memory


def test_table_pane_updates_when_the_state_changes():
    s = ExplorerState()
    view = ShapesTable(state=s)
    root = pn.panel(view).get_root()
    markup = view._table.markup
    s.T = 100
    assert "(8, 12, 100, 100)" in view._table.values.split(SEP) and "(8, 12, 100, 100)" in view.table_html()
    assert view._table.markup == markup  # same rows: only the values travel
    models = [m for m in root.references() if isinstance(getattr(m, "data", None), object) and
              hasattr(getattr(m, "data", None), "values") and hasattr(m.data, "markup")]
    assert models and any("(8, 12, 100, 100)" in m.data.values for m in models)  # the Bokeh model the browser syncs
    s.expanded = True  # new rows: the markup travels again, with the values inline
    assert view._table.markup != markup and "blocks.11.attn.scores" in view._table.markup


def test_table_values_fill_the_template_in_order():
    parts = table_at(PRESETS["gpt2-small"], "fp32", False)
    assert parts.template.count(SLOT) == len(parts.values) == parts.html.count(" data-v") + parts.html.count(" data-h")
    assert SLOT not in parts.html
    other = table_at(replace(PRESETS["gpt2-small"], T=5), "fp32", False)
    assert other.template == parts.template and other.values != parts.values
    assert "(8, 12, 5, 5)" in other.values and "(8, 12, 5, 5)" in other.html
    assert table_at(replace(PRESETS["gpt2-small"], T=1), "fp32", False).template != parts.template  # no loss at T = 1


# --- budget --------------------------------------------------------------------------------------------------------
def test_budget_parts_at_gpt2_small():
    cfg = PRESETS["gpt2-small"]
    data = budget_parts(budget(cfg))
    values = dict(zip(data["label"], data["value"]))
    assert values["embeddings*"] == (50257 + 1024) * 768
    assert values["attention, 1 block"] == 4 * 768**2 + 4 * 768
    assert values["MLP, 1 block"] == 8 * 768**2 + 5 * 768
    assert values["head*"] == 0
    starred = sum(v for k, v in values.items() if k.endswith("*"))
    assert starred == budget(cfg).params_exact == 124_439_808
    assert data["text"][-1] == "0: tied to W_te"
    assert data["text"][0] == "39.4 million · 31.6 %"


def test_budget_parts_untied_head():
    cfg = PRESETS["gpt2-small"].__class__(B=8, T=1024, d=768, h=12, L=12, V=50257, tie=False)
    data = budget_parts(budget(cfg))
    assert data["value"][-1] == 50257 * 768 and data["text"][-1].startswith("38.6 million")


def test_budget_lines_as_shown():
    rows = {x["key"]: x for x in map(shown, budget(PRESETS["gpt2-small"]).lines)}
    assert (rows["params/exact"]["value"], rows["params/exact"]["short"]) == ("124,439,808", "124.4 million")
    assert [rows[k]["value"] for k in ("flops/forward", "flops/train", "flops/T_attention_equals_dense")] == \
        ["249 MFLOP", "747 MFLOP", "4,608"]
    assert rows["params/mlp_share"]["value"] == "66.7 %"
    big = {x["key"]: x for x in map(shown, budget(PRESETS["gpt3-175b"]).lines)}
    assert (big["params/exact"]["value"], big["params/exact"]["short"], big["flops/train"]["value"]) == \
        ("174,604,259,328", "174.6 billion", "1.05 TFLOP")


def test_lines_html_groups_and_marks_steps():
    text = lines_html([shown(x) for x in budget(PRESETS["gpt2-small"]).lines])
    assert text.count('class="grp"') == 2 and text.count('class="step"') == 4 and text.count('class="sum"') == 2
    assert "sum of the above" not in text and "<code>(V + T_max)·d + L·(12d² + 13d) + 2d</code>" in text


def test_chart_is_the_budgets_parts_and_follows_the_configuration():
    s = ExplorerState()
    view = BudgetView(state=s)
    s.preset = "gpt3-175b"
    blocks = 96 * (4 * 12288**2 + 4 * 12288 + 8 * 12288**2 + 5 * 12288)
    assert view.chart == budget_parts(s.budget) and view.chart["value"][1] == blocks
    assert view.chart["inside"] == [False, True, False, False, False, False]  # blocks × L: its text inside
    head = view._head.object
    assert chart_html(view.chart) in head and f'data-key="params/blocks" data-value="{blocks}"' in head
    assert f"width: calc(88% * {blocks} / {blocks})" in head  # the longest bar fills the track's 88 %
    assert "174,604,259,328" in head and "174,604,259,328" in view._lines.object
    before = view._head.object
    s.T, s.B = 17, 3  # no parameter changes: the same markup, nothing to send
    assert view._head.object == before


def test_chart_html_marks_tied_head_and_escapes():
    data = budget_parts(budget(PRESETS["gpt2-small"]))
    text = chart_html(data)
    assert text.count("data-key=") == 6 and 'data-key="params/head" data-value="0"' in text
    assert "0: tied to W_te" in text and "<code>(V + T_max)·d</code>" in text
    assert "&lt;b&gt;" in chart_html({**data, "what": ["<b>"] * 6})


def test_N_ignores_T_B_and_h():
    s = ExplorerState()
    view = BudgetView(state=s)
    before = view.chart["value"]
    s.T, s.B, s.h = 17, 3, 4
    assert view.chart["value"] == before


# --- tokens --------------------------------------------------------------------------------------------------------
def test_tokens_view_shows_pieces_ids_and_bytes_per_token():
    toks = tokenizer.tokenize("Hello world")
    assert [(c.text, c.id) for c in token_chips(toks, 50257)] == [("Hello", 15496), ("·world", 995)]
    assert token_stats(toks) == "2 tokens · 11 bytes · 5.50 bytes/token"
    s = ExplorerState(text="Hello world")
    view = TokensView(state=s)
    s.text = "a b"
    assert "3 bytes" in view._out.object and "2 tokens" in view._out.object


def test_tokens_beyond_V_are_flagged_and_long_text_is_reported():
    toks = tokenizer.tokenize("Hello world")
    assert "≥ V = 1,000" in tokens_html(toks, V=1000)
    long = tokenizer.tokenize("ab " * 40_000)
    text = tokens_html(long, 50257)
    assert "cut to its first 100,000 characters" in text and "more</span>" in text
    assert "<script>" not in tokens_html(tokenizer.tokenize("<script>alert(1)</script>"), 50257)


def test_tokens_box_caps_pasted_text_in_the_browser():
    view = TokensView(state=ExplorerState())
    assert view._input.max_length == tokenizer.MAX_TEXT_CHARS + 1


# --- controls ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, value, expected", [
    ("L", 96, (1, 96, 1)), ("L", 95, (1, 96, 1)), ("d", 12288, (64, 16384, 64)), ("d", 768, (64, 4096, 64)),
    ("V", 262_144, (1, 262_144, 1)), ("T", 5, (1, 1024, 1)), ("d", 32, (32, 4096, 64)),
])
def test_slider_ranges(name, value, expected):
    assert slider_range(name, value, T_max=1024) == expected


def test_field_control_links_both_ways():
    s = ExplorerState()
    c = Controls(state=s)
    T = lambda: c.view["fields"]["T"]  # noqa: E731 — the T slider and box as the page shows them
    c.ask("T", 300)  # the slider
    assert s.T == 300 and T()["value"] == T()["position"] == 300
    c.ask("T", "5000")  # the box, above T_max: clamped, box shows the clamped value
    assert s.T == 1024 and T()["value"] == 1024 and T()["end"] == 1024
    c.ask("T", "1000000000")  # out of bounds: rejected, box reverts
    assert s.T == 1024 and T()["value"] == 1024 and "out of range" in s.notices[0]
    c.ask("T", "")  # empty: the box shows the state's value again
    assert s.T == 1024 and T()["value"] == 1024
    s.T_max = 256
    assert (T()["end"], T()["position"], T()["value"]) == (256, 256, 256)


def test_the_page_input_is_answered_with_its_count():
    s = ExplorerState()
    c = Controls(state=s)
    c.card.asked = [[7, "L", 13]]
    assert s.L == 13 and c.view["ack"] == 7 and c.view["fields"]["L"]["value"] == 13


def test_inputs_that_arrive_together_are_all_applied_in_order_once():
    s = ExplorerState()
    c = Controls(state=s)
    c.card.asked = [[1, "d", "1024"], [2, "T", 1]]  # a box typed into, then a slider pressed, in one batch
    assert (s.d, s.h, s.T) == (1024, 8, 1) and c.view["ack"] == 2
    c.card.asked = [[2, "T", 1], [3, "L", 13]]  # the page resends what it has no answer for yet: 2 is not redone
    assert (s.d, s.T, s.L) == (1024, 1, 13) and c.view["ack"] == 3
    s.T = 5
    c.card.asked = [[3, "T", 1]]  # an answered input arriving again changes nothing
    assert s.T == 5
    c.card.asked = [[4, "T", 9], ["again", 1]]  # the page's resend of a list that had no answer: the marker is skipped
    c.card.asked = [[4, "T", 9], ["again", 2]]  # and so is the input the first resend answered
    assert s.T == 9 and c.view["ack"] == 4
    s.T = 5
    c.card.asked = [[4, "T", 9], ["again", 3]]
    assert s.T == 5


def test_h_slider_walks_the_divisors_of_d():
    s = ExplorerState()
    c = Controls(state=s)
    h = lambda: c.view["fields"]["h"]  # noqa: E731
    assert (h()["start"], h()["end"]) == (0, 17) and h()["stops"] == divisors(768)  # 18 divisors of 768
    c.ask("h", h()["stops"][h()["position"] + 1])  # the next divisor after 12, as the page sends it
    assert s.h == 16
    s.d = 770
    assert s.h == 14 and h()["end"] == 15  # 770 has 16 divisors; 16 snaps to 14
    s.d = 7  # prime: only 1 and 7
    assert h()["end"] == 1 and not h()["disabled"]
    s.d = 1
    assert s.h == 1 and h()["disabled"]


def test_controls_come_from_the_config_fields():
    spec = controls_spec(["preset", *FIELDS])
    assert [f["name"] for f in spec["main"] + spec["advanced"]] + [c["name"] for c in spec["checks"]] == \
        [f for f in FIELDS if f != "T_max"][:6] + ["T_max", "tie"]
    assert [f["name"] for f in controls_spec(["T"])["main"]] == ["T"] and not controls_spec(["T"])["preset"]


def test_status_line():
    s = ExplorerState()
    assert "d_head = 768 / 12 = 64" in status_html(s)
    s.d = 770
    assert "h snapped 12 → 11: 770 is not divisible by 12" in status_html(s)


def test_preset_picker():
    s = ExplorerState()
    c = Controls(state=s)
    c.ask("preset", "GPT-3 175B · L 96, d 12,288")
    assert s.config.d == 12288 and s.config.L == 96
    s.L = 95
    assert c.view["preset"] == "custom (your own values)"
    c.ask("preset", "custom (your own values)")  # choosing "custom" changes nothing
    assert s.L == 95 and c.view["preset"] == "custom (your own values)"
    c.ask("tie", False)
    assert s.tie is False and c.view["checks"] == {"tie": False, "qk_norm": False}


def test_recipe_controls():
    """The recipe choice, a switch, a size and QK-norm, as the page sends them (a box sends its text)."""
    s = ExplorerState()
    c = Controls(state=s)
    dense = {**dict.fromkeys(MOE_SIZES), "W": "none", "full_layers": None, **dict.fromkeys(MLA_KEYS)}  # a dense
    # model's MoE boxes, full_layers without a window and latent attention's boxes without it: hidden; W shows none
    assert c.view["recipe"] == "gpt2" and c.view["sizes"] == {"d_ff": 3072, "h_kv": 12, "d_head": 64, **dense}
    c.ask("recipe", "modern")
    assert (s.norm, s.positions, s.mlp, s.bias, s.attention) == ("rmsnorm", "rope", "swiglu", "none", "fused")
    assert c.view["recipe"] == "modern" and c.view["sizes"] == {"d_ff": 2048, "h_kv": 3, "d_head": 64, **dense}
    c.ask("h_kv", " 5 ")  # not a divisor of h = 12: snapped, with the rule's notice
    assert s.config.h_kv == 4 and any("h_kv" in n for n in s.notices)
    c.ask("d_ff", "many")  # unreadable: the value in use stays
    assert s.config.d_ff == 2048 and c.view["sizes"]["d_ff"] == 2048
    c.ask("norm", "batchnorm")
    assert s.norm == "rmsnorm" and "norm='batchnorm' is not one of layernorm, rmsnorm; kept norm=rmsnorm" in s.notices
    c.ask("qk_norm", True)
    assert s.qk_norm and c.view["checks"]["qk_norm"] and c.view["recipe"] == "custom"
    c.ask("recipe", "custom")  # "custom" describes a state: nothing changes
    assert s.qk_norm and c.view["recipe"] == "custom"
    c.ask("recipe", "gpt2")
    assert s.config.gpt2_recipe and c.view["switches"] == {"norm": "layernorm", "positions": "learned", "mlp": "gelu",
                                                          "bias": "all", "attention": "eager", "moe": "dense"}
    spec = controls_spec(["T", "h_kv", "norm"])
    assert spec["recipe"] is None and [w["name"] for w in spec["switches"]] == ["norm"]
    assert [z["name"] for z in spec["sizes"]] == ["h_kv"] and spec["qk"] is None


def test_the_mlp_switch_and_the_boxes_of_a_mixture_of_experts():
    """The MLP's switch (dense or MoE) and E, k, d_expert as the page sends them: a bad value is one notice and the
    value in use stays; E on a dense model says to choose the MoE first; k beyond E is clamped."""
    s = ExplorerState(PRESETS["mistral-7b"])
    c = Controls(state=s)
    c.ask("E", "8")
    assert not s.config.moe and s.notices == ['E sets a mixture of experts: choose the MLP "mixture of experts" '
                                              'first; kept the dense MLP']
    c.ask("moe", "moe")
    assert s.config == PRESETS["mixtral-8x7b"] and s.preset == "mixtral-8x7b"
    assert c.view["switches"]["moe"] == "moe" and c.view["sizes"] == {
        "d_ff": None, "h_kv": 8, "d_head": 128, "E": 8, "k": 2, "d_expert": 14_336, "E_shared": 0, "d_shared": None,
        "moe_step": 1, "dense_first": 0, "dense_layers": "none", "W": "none", "full_layers": None,
        **dict.fromkeys(MLA_KEYS)}
    c.ask("k", "two")
    assert s.config.k == 2 and len(s.notices) == 1 and s.notices[0].startswith('k="two" is not a whole number')
    c.ask("k", "12")
    assert s.config.k == 8 and s.notices == ["k clamped 12 → 8: each token goes to k of the E = 8 experts, so k "
                                             "cannot exceed E"]
    c.ask("E", "64")
    assert (s.config.E, s.config.k) == (64, 12) and s.notices == []  # the k asked for, remembered
    c.ask("moe", "nonsense")  # not a choice: nothing changes
    assert s.config.E == 64
    c.ask("moe", "dense")
    assert not s.config.moe and s.config.d_ff == 14_336 and s.preset == "mistral-7b"


def test_the_boxes_of_shared_experts_and_of_which_blocks_are_moe():
    """E_shared (0 reads: no shared experts, and hides d_shared), d_shared, moe_step, dense_first and dense_layers as
    the page sends them; each bad value is one notice and the value in use stays; d_ff shows once a block is dense."""
    s = ExplorerState(PRESETS["qwen3-30b-a3b"])
    c = Controls(state=s)
    c.ask("E_shared", "4")
    c.ask("d_shared", "1,536")
    s.shared_gate = True  # no control of its own: a link's key (Qwen2-MoE's gate)
    assert (s.config.E_shared, s.config.d_shared, s.config.shared_gate, s.notices) == (4, 1536, True, [])
    assert c.view["sizes"]["d_shared"] == 1536
    c.ask("E_shared", "0")  # none: their width and gate go with them
    assert (s.config.E_shared, s.config.shared_dim, s.config.shared_gate, s.notices) == (0, None, False, [])
    assert c.view["sizes"]["d_shared"] is None and c.view["sizes"]["E_shared"] == 0
    c.ask("E_shared", "-1")
    assert s.notices == ["E_shared=-1 is out of range: E_shared must be from 0 to 1,024; kept E_shared=0"]
    assert c.view["sizes"]["d_ff"] is None  # every block MoE: no dense MLP
    c.ask("moe_step", "2")
    c.ask("dense_first", "3")
    c.ask("dense_layers", "7, 9")
    cfg = s.config
    assert cfg.block_kinds[:12] == ("dense",) * 3 + ("moe", "dense", "moe", "dense", "dense", "dense", "dense", "dense",
                                                     "moe")
    assert c.view["sizes"]["dense_layers"] == "7,9" and c.view["sizes"]["d_ff"] == cfg.d_ff and s.notices == []
    for name, text, notice in [
            ("moe_step", "99", "moe_step=99 exceeds L=48"), ("moe_step", "0", "moe_step=0 is out of range: moe_step must "
                                                                               "be from 1 to 1,024; kept moe_step=2"),
            ("dense_layers", "x", 'dense_layers="x" is not a list of block indices')]:
        c.ask(name, text)
        assert len(s.notices) == 1 and s.notices[0].startswith(notice) and s.config == cfg
    c.ask("dense_layers", "7, 48")  # a block past L is dropped and said, as the other lists of blocks are
    assert s.notices == ["dense_layers 7,48 → 7: the blocks are 0 … 47 at L = 48, so blocks past them keep no dense "
                         "MLP (raise L to bring them back)"] and s.config.dense_layers == (7,)
    c.ask("dense_layers", "none")
    assert s.config.dense_layers == () and c.view["sizes"]["dense_layers"] == "none"
    c.ask("moe", "dense")
    assert all(c.view["sizes"][k] is None for k in MOE_SIZES)
    c.ask("dense_first", "1")
    assert s.notices == ['dense_first sets a mixture of experts: choose the MLP "mixture of experts" first; kept the '
                         'dense MLP']


# --- share and the page ----------------------------------------------------------------------------------------------
def test_the_boxes_of_latent_attention():
    """DeepSeek-V3's d_c, d_cq, d_R, d_nope and d_v as boxes (h_kv, d_head and W hidden: every head's K and V come
    from the latent); d_cq takes none; a bad value is one notice and the value in use stays; another model refuses
    them in one line."""
    s = ExplorerState(PRESETS["deepseek-v3"])
    c = Controls(state=s)
    sizes = c.view["sizes"]
    assert {k: sizes[k] for k in MLA_KEYS} == {"d_c": 512, "d_cq": 1_536, "d_R": 64, "d_nope": 128, "d_v": 128}
    assert sizes["h_kv"] is None and sizes["d_head"] is None and sizes["W"] is None
    assert {z["name"]: z["doc"] for z in controls_spec(["d_c", "d_cq"])["sizes"]} == {
        "d_c": f"d_c: {FIELD_DOCS['d_c']}", "d_cq": f"d_cq: {FIELD_DOCS['d_cq']}"}  # the one definition's notes
    c.ask("d_cq", "none")
    assert s.config.d_cq is None and c.view["sizes"]["d_cq"] == "none" and s.preset == "custom"
    c.ask("d_R", "63")  # RoPE rotates pairs
    assert s.config.d_R == 64 and s.notices == ["d_R snapped 63 → 64: RoPE rotates pairs of features, so the rotary "
                                                "width d_R must be even"]
    c.ask("d_c", "lots")
    assert s.config.d_c == 512 and len(s.notices) == 1 and s.notices[0].startswith('d_c="lots" is not a whole number')
    c.ask("d_cq", "1536")
    assert s.config == PRESETS["deepseek-v3"] and s.preset == "deepseek-v3"
    s = ExplorerState()
    assert not s.set_field("latent_dim", "512") and s.notices[0].startswith("d_c is a width of multi-head latent")


def test_links_and_embed_code():
    cfg = PRESETS["gpt2-small"]
    assert base_url("http://host:5006/explorer?B=1#x") == "http://host:5006/explorer"
    assert base_url("https://host/explorer/autoload.js?bokeh-autoload-element=p1") == "https://host/explorer"
    assert base_url(None) == base_url("javascript:alert(1)") == "http://localhost:5006/explorer"
    assert page_link("http://h/explorer", cfg, ViewOptions()) == "http://h/explorer?B=8&T=1024&d=768&h=12&L=12&V=50257&T_max=1024&tie=1"
    code = embed_code("http://h/explorer", cfg, ViewOptions(controls=("T",), panels=("shapes",)))
    assert code.startswith('<iframe src="http://h/explorer?B=8&T=1024&d=768&h=12&L=12&V=50257&T_max=1024&tie=1'
                           '&embed=1&controls=T&panels=shapes"')
    t_view = ViewOptions(controls=("T",), panels=("shapes",))
    assert f'height="{embed_height(t_view, cfg)}"' in code  # app.cards.share.heights: one control over the shapes table
    budget_view = ViewOptions(controls=("d", "h", "L"), panels=("budget",))
    assert embed_height(budget_view, cfg) < embed_height(replace(budget_view, controls=FIELDS), cfg)  # more rows
    every = embed_height(ViewOptions(), cfg)  # the values and GPT-2's changes cards start closed among all panels
    assert every < embed_height(ViewOptions(), PRESETS["qwen3-0.6b"])  # more rows, and the changes card open
    assert embed_height(ViewOptions(controls=()), cfg) < every
    # the course page's iframes are as tall as the rule says (tests/test_browser_embed.py checks they fit)
    from html.parser import HTMLParser
    frames = []
    parser = HTMLParser()
    parser.handle_starttag = lambda tag, attrs: frames.append(dict(attrs)) if tag == "iframe" else None
    parser.feed((ROOT / "static" / "course_example.html").read_text(encoding="utf-8"))
    assert len(frames) == 2
    for f in frames:
        q = parse_query(f["src"].split("?", 1)[1])
        assert int(f["height"]) == embed_height(q.options, q.config), f["src"]


def test_explorer_from_a_query():
    e = Explorer(query="?d=770&T=9999&foo=1")
    assert e.state.config.h == 11 and e.state.config.T == 1024
    assert len(e.link_notices) == 3
    assert e.query() == "?B=8&T=1024&d=770&h=11&L=12&V=50257&T_max=1024&tie=1"
    e.state.dtype = "bf16"
    assert e.query().endswith("&dtype=bf16")


def test_embed_mode_builds_only_what_was_asked():
    e = Explorer(query="?embed=1&controls=T,d&panels=shapes")
    assert e.shapes is not None and e.budget is None and e.tokens is None and e.share is None
    assert e.controls.show == ["T", "d"]
    layout = e.__panel__()
    assert "embed" in layout.css_classes
    e.__panel__().get_root()  # every Bokeh model builds


def test_full_page_builds_and_follows_the_state():
    e = Explorer()
    root = pn.panel(e).get_root()
    assert root is not None
    e.state.preset = "gpt3-175b"
    assert "(8, 96, 2048, 2048)" in e.shapes._table.values.split(SEP)
    assert "174,604,259,328" in e.budget._head.object
    assert "d=12288" in e.share._code.value and "embed=1" in e.share._code.value
    assert re.search(r"T=2048&d=12288&h=96&L=96", e.share._link.value)


def test_url_sync_writes_the_query_only_when_served():
    e = Explorer(query="?T=5")
    e.state.T = 6
    assert e._url.value == ""  # a notebook's address is left alone
    served = Explorer(query="?T=5", sync_url=True)
    served.state.T = 7
    assert served._url.value == served.query() and "T=7" in served._url.value


def test_two_sessions_at_once_share_no_bokeh_model():
    """Each page owns its models: a model shared between documents (one class attribute) breaks the second page."""
    from bokeh.document import Document

    models = []
    for explorer in (Explorer(), Explorer(query="?preset=gpt3-175b")):
        doc = Document()
        doc.add_root(pn.panel(explorer).get_root(doc))  # Bokeh refuses a model another document holds
        models.append({id(m) for m in doc.models})
    assert len(models[0]) > 50 and not models[0] & models[1]


@contextlib.contextmanager
def served_document():
    """A document as a served session has it (a session context, not yet loaded), as Panel's current document."""
    from types import SimpleNamespace

    from bokeh.document import Document
    from panel.io.state import set_curdoc

    doc = Document()
    session = SimpleNamespace(destroyed=True, request=SimpleNamespace(arguments={}))  # work for it ends unseen
    doc._session_context = lambda: session
    try:
        with set_curdoc(doc):
            yield doc
    finally:
        for registry in (pn.state._onload, pn.state._loaded, pn.state._connected):
            registry.pop(doc, None)


def test_a_build_handed_to_a_page_closed_before_its_tick_does_not_stop_the_queue():
    """Bokeh never runs a destroyed document's callbacks: the card builds queued after a page that was closed
    between its turn and its tick still run (app.lazy.BuildQueue), and a live page's turn is waited for."""
    import asyncio
    from types import SimpleNamespace

    from app.lazy import BuildQueue

    class Page:
        def __init__(self) -> None:
            self.session_context, self.ticks = SimpleNamespace(destroyed=False), []

        def add_next_tick_callback(self, callback) -> None:
            self.ticks.append(callback)

    built = []

    async def main() -> None:
        queue, closed, live, later = BuildQueue(), Page(), Page(), Page()
        queue.WATCH_S = 0.01
        for page in (closed, live, later):
            queue.submit(page, lambda page=page: built.append(page))
        await asyncio.sleep(0.05)
        assert len(closed.ticks) == 1 and not live.ticks  # handed to the first page, waiting for its tick
        closed.session_context.destroyed = True  # closed before its tick came: the tick never will
        await asyncio.sleep(0.05)
        assert len(live.ticks) == 1 and not later.ticks  # the queue went on, and waits for the live page
        await asyncio.sleep(0.05)
        assert not later.ticks
        live.ticks[0]()
        await asyncio.sleep(0.05)
        later.ticks[0]()
        assert built == [live, later]
        queue.GIVE_UP_S = 0.1  # a live page whose tick does not come: the next page's build goes first
        stuck, next_page = Page(), Page()
        for page in (stuck, next_page):
            queue.submit(page, lambda page=page: built.append(page))
        await asyncio.sleep(0.05)
        assert len(stuck.ticks) == 1 and not next_page.ticks
        await asyncio.sleep(0.2)
        assert len(next_page.ticks) == 1
        next_page.ticks[0]()
        stuck.ticks[0]()  # its tick came at last: it still builds
        assert built[-2:] == [next_page, stuck]

    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as thread:  # a loop of its own: a browser test's Playwright loop may run in this thread
        thread.submit(asyncio.run, main()).result()


def test_a_page_whose_websocket_closed_has_gone_before_bokeh_destroys_its_session():
    """app.background.closing: a job or a build for a page that was connected and is no longer costs nothing,
    though Bokeh keeps the session 15 s and more; a page not yet connected (its first cards) has not gone."""
    from types import SimpleNamespace

    from app.background import closing

    session = SimpleNamespace(connection_count=0)
    doc = SimpleNamespace(session_context=SimpleNamespace(destroyed=False, session=session))
    first = closing(doc)  # asked while the page loads, before its websocket connects
    session.connection_count = 1
    later = closing(doc)
    assert not first() and not later()
    session.connection_count = 0  # the tab was closed
    assert later() and not first()
    doc.session_context.destroyed = True
    assert first()


def test_a_served_page_sends_its_frame_first_and_its_cards_on_the_next_tick():
    """The page's HTML waits for its top column only; the cards follow on the document's next tick, before the
    browser (which has yet to load BokehJS) pulls the document."""
    with served_document() as doc:
        explorer = Explorer(query="?T=5")
        page = explorer.served()
        assert page.objects == [explorer._url] and "full" in page.css_classes
        for callback in doc.session_callbacks:
            callback.callback()
        assert [o.css_classes for o in page.objects] == [o.css_classes for o in explorer.__panel__().objects]
    assert len(Explorer().served().objects) > 1  # not served (a notebook, a script): the whole page at once


def test_the_values_spinner_waits_for_the_page_to_load(monkeypatch):
    """Until a page's websocket connects, Panel defers each model update to the next tick, so a spinner turned on
    then could land after the "off" of a pass that ended just after the connection (a CI failure): the spinner's
    timer starts when the page has loaded, not when a pass starts during the page's construction."""
    import threading

    from app.cards.tensors.view import SPINNER_MS, ValuesView

    timers = []
    try:
        with served_document() as doc:
            monkeypatch.setattr(doc, "add_timeout_callback", lambda callback, ms: timers.append(ms))
            ValuesView(state=ExplorerState(d=64, h=4, L=2, T=16, T_max=64), collapsed=False)
            assert timers == []  # the pass started; its spinner waits for the page
            pn.state._on_load(doc)
            assert timers == [SPINNER_MS]
    finally:
        for worker in threading.enumerate():
            if worker.name == "values-pass":
                worker.join(timeout=60)


def test_a_served_page_computes_its_heavy_figures_off_the_event_loop(monkeypatch):
    """Served, a change's training plan and changes card are computed in app.background's worker thread and shown
    on the page's next tick (the event loop stays free for other pages); a change asked before the worker came to
    the last one's job skips that job (a drag queues one pass, not one per state it passed)."""
    import threading

    import app.state
    from app.background import _POOL

    threads = []
    real = app.state.plan
    monkeypatch.setattr(app.state, "plan", lambda *a: threads.append(threading.current_thread().name) or real(*a))
    with served_document() as doc:
        session = doc.session_context
        session.destroyed = False
        ticks = []
        monkeypatch.setattr(doc, "add_next_tick_callback", ticks.append)
        e = Explorer(query="?panels=shapes,training,changes&recipe=modern&d=64&h=4&L=2&V=500&T=16&T_max=64")
        v, before = e.training, e.training._chart.object  # built from the plan its Deferred prepared
        threads.clear()
        busy = threading.Event()
        _POOL.submit(busy.wait, 60)  # the worker is busy while the learner moves L twice
        e.state.set_field("L", 3)
        e.state.set_field("L", 4)
        busy.set()
        _POOL.submit(lambda: None).result()  # the worker has come to both jobs
        assert len(threads) == 1 and threads[0].startswith("explorer-figures")  # L = 3's was skipped
        assert v._chart.object == before  # nothing shown until the page's next tick
        for tick in ticks:
            tick()
        assert v._chart.object == memory_chart_html(real(e.state.config, e.state.train)) != before
        assert e.recipe._changes.object  # the changes card, computed the same way
        session.destroyed = True


def test_a_served_cards_figures_that_fail_say_so_on_the_card_and_in_the_log(monkeypatch, caplog):
    """app.background: served, a computation that raises anything but ValueError (a bug) is logged with its
    traceback and reaches the card as one line that names it, so the card never keeps another state's figures
    without a word; not served, the error is raised."""
    import logging

    from app.background import _POOL, offload

    def broken():
        raise RuntimeError("probe steps of one structure allocated differently")

    shown = []
    with served_document() as doc:
        doc.session_context.destroyed = False
        ticks = []
        monkeypatch.setattr(doc, "add_next_tick_callback", ticks.append)
        with caplog.at_level(logging.ERROR, logger="app.background"):
            offload(broken, shown.append, doc=doc)
            _POOL.submit(lambda: None).result()  # the worker has done the job
        for tick in ticks:
            tick()
        doc.session_context.destroyed = True
    assert len(shown) == 1 and isinstance(shown[0], ValueError)
    assert str(shown[0]) == ("these figures could not be computed (RuntimeError: probe steps of one structure "
                             "allocated differently); the server's log has the details")
    assert "could not be computed (test_a_served_cards_figures_that_fail" in caplog.text and "Traceback" in caplog.text
    with pytest.raises(RuntimeError):
        offload(broken, shown.append)  # not served

def test_a_placeholder_that_asks_again_gets_its_card_once_and_the_server_says_why_it_waited(monkeypatch, caplog):
    """app.lazy.Reveal asks again while its card has not come (an ask lost on the way, or a server slow to build):
    the second ask is logged with what the worker is doing and how many builds wait, the card is built once, and
    an ask after it is built does nothing."""
    import logging

    from app.lazy import BUILDS, Deferred, Reveal

    builds = []
    with served_document() as doc:
        doc.session_context.destroyed = False
        ticks = []
        monkeypatch.setattr(doc, "add_next_tick_callback", ticks.append)
        monkeypatch.setattr(BUILDS, "submit", lambda page, build: ticks.append(build))
        card = Deferred(lambda: builds.append(1) or pn.pane.Markdown("the card"), "the card is built…")
        box = card.__panel__()
        reveal = box.objects[0]
        assert isinstance(reveal, Reveal)
        reveal.asks = 1
        with caplog.at_level(logging.WARNING, logger="app.lazy"):
            reveal.asks = 2  # the card has not come: asked once more, and the log says what the server was doing
        assert "asked again" in caplog.text and "worker idle" in caplog.text and "builds waiting" in caplog.text
        for tick in list(ticks):
            tick()
        assert builds == [1] and box.objects[0].object == "the card"
        reveal.asks = 3  # a late ask from a placeholder already replaced: nothing
        assert len(ticks) == 2 and builds == [1]


def test_every_preset_of_the_menu_builds_the_whole_page():
    """Each preset the live page's menu offers builds every card, its Bokeh models included (a hybrid's parameter
    chart once had no colour for its part's bars, `app.styles.STATEFUL_COLOURS`, and its page raised a KeyError),
    and its serving figures, every line's formula checked against its value (`model.inference.infer`; Jamba's decode
    step once counted Mamba's projections, an nn.Linear fed a transposed input, among q kᵀ and attn @ v): the
    inference card's, at the default setup. The presets the menu leaves out are checked in tests/test_inference.py."""
    from app.styles import PART_COLOURS
    from model.budgeting import LIN_CHART, MOE_CHART
    from model.inference import InferSetup, serving
    assert {key for key, _, _ in (*LIN_CHART, *MOE_CHART)} <= set(PART_COLOURS)
    for name in PRESETS:
        e = Explorer(query=f"?preset={name}")
        assert pn.panel(e).get_root() is not None, name
        assert e.state.preset == name and f"{budget(PRESETS[name]).params_exact:,}" in e.budget._head.object, name
        assert e.state.infer == InferSetup()
        served = serving(PRESETS[name], InferSetup())  # the card's (cached): the figures, the charts' rows over B and T
        assert served.result.decode_flops > 0 and served.by_B and served.by_T, name
