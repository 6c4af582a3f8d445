"""The rows of the shapes table that exist in one recipe only (`model.recipe_rows`), and the CLI's marks."""
from __future__ import annotations

import csv
import io
import json

import pytest

from dataclasses import replace

from model import PRESETS, Config, trace
from model.config import ALL_PRESETS
from model.changes import gpt2_of, twin
from model.recipe_rows import EAGER_NOTE, FUSED_ONLY_NOTE, GONE_NOTE, MARK, ONLY_NOTE, recipe_rows
from pagetools import run_cli

MODERN = ("llama3-8b", "llama3.2-1b", "mistral-7b", "qwen2.5-0.5b", "qwen3-0.6b")


def test_llama3_8b_eager_marks_rope_rmsnorm_swiglu_and_the_expanded_heads():
    marks = recipe_rows(replace(PRESETS["llama3-8b"], attention="eager"))
    assert marks.only == {"rope.angles", "rope.cos", "rope.sin", "ln_1.rstd", "ln_2.rstd", "ln_f.rstd",
                          "attn.q_rot", "attn.k_rot", "attn.k_heads", "attn.v_heads",
                          "mlp.gate", "mlp.up", "mlp.silu", "mlp.gated"}
    assert [name for name, _ in marks.gone] == ["wpe", "embed", "mlp.fc", "mlp.gelu"]
    assert dict(marks.gone)["wpe"] == "pos = W_pe[0:T], broadcast over B"
    assert marks.legend == (ONLY_NOTE, GONE_NOTE.format(rows="wpe (pos = W_pe[0:T], broadcast over B), embed (x = tok + "
                                                             "pos), mlp.fc (MLP hidden, d → 4d), mlp.gelu (GELU)"))
    assert marks.eager_only == ()


def test_llama3_8b_fused_marks_the_log_sum_exp_and_names_the_eager_only_rows():
    marks = recipe_rows(PRESETS["llama3-8b"])  # the preset runs fused attention
    eager = recipe_rows(replace(PRESETS["llama3-8b"], attention="eager"))
    assert marks.only == eager.only - {"attn.k_heads", "attn.v_heads"} | {"attn.lse"}
    assert marks.gone == eager.gone  # the other switches' rows, as before
    assert [name for name, _ in marks.eager_only] == ["attn.k_heads", "attn.v_heads", "attn.scores", "attn.masked",
                                                     "attn.attn"]
    assert marks.legend[0] == FUSED_ONLY_NOTE and "eager attention) has no such tensor" in FUSED_ONLY_NOTE
    assert marks.legend[2] == EAGER_NOTE.format(rows=", ".join(f"{n} ({x})" for n, x in marks.eager_only))


def test_fused_attention_alone_marks_the_three_score_rows_as_eager_only():
    base = dict(B=2, T=8, d=64, h=4, L=2, V=50, T_max=16)
    marks = recipe_rows(Config(**base, attention="fused"))
    assert marks.only == {"attn.lse"} and marks.gone == ()
    assert marks.eager_only == (("attn.scores", "scores = q kᵀ / √d_head"),
                                ("attn.masked", "causal mask: −inf above the diagonal"),
                                ("attn.attn", "softmax over keys"))
    assert {r.symbolic for r in trace(Config(**base)).rows if r.local in dict(marks.eager_only)} == {"(B, h, T, T)"}


def test_qwen3_marks_qk_norm_too():
    only = recipe_rows(PRESETS["qwen3-0.6b"]).only
    assert {"attn.q_norm", "attn.q_norm.rstd", "attn.k_norm", "attn.k_norm.rstd", "mlp.gate"} <= only


@pytest.mark.parametrize("name", ["gpt2-small", "gpt3-175b"])
def test_gpt2s_recipe_has_no_marks_and_no_legend(name):
    marks = recipe_rows(PRESETS[name])
    assert (marks.only, marks.gone, marks.legend) == (frozenset(), (), ())


@pytest.mark.parametrize("name", [*MODERN, "gemma-3-1b", "gpt-oss-20b", "deepseek-v3"])
def test_the_small_stand_in_gives_what_the_full_size_passes_give(name):
    """Windows, Gemma's and gpt-oss's extras and latent attention too: the stand-in carries them (at T = 64, below
    the windows, so the full-size passes stay small on the meta device)."""
    cfg = replace(ALL_PRESETS[name], B=1, T=64)
    mine = [(r.local, r.label) for r in trace(cfg).rows]
    theirs = [r.local for r in trace(gpt2_of(cfg)).rows]  # its GPT-2 twin (`twin` refuses MLA's)
    eager = [(r.local, r.label) for r in trace(replace(cfg, attention="eager")).rows]
    names = {n for n, _ in mine}
    marks = recipe_rows(cfg)
    assert marks.only == names - set(theirs)
    assert marks.eager_only == tuple(row for row in eager if row[0] not in names)  # labels too: a band, not causal
    assert [n for n, _ in marks.gone] == [n for n in theirs if n not in names and n not in dict(eager)]


def test_one_change_marks_its_own_rows_only():
    base = dict(B=2, T=8, d=64, h=4, L=2, V=50, T_max=16)
    assert recipe_rows(Config(**base, qk_norm=True)).only == {"attn.q_norm", "attn.q_norm.rstd", "attn.k_norm",
                                                                "attn.k_norm.rstd"}
    assert recipe_rows(Config(**base, qk_norm=True)).gone == ()
    assert recipe_rows(Config(**base, kv_heads=2)).only == {"attn.k_heads", "attn.v_heads"}
    assert recipe_rows(Config(**base, ff_dim=100)).legend == ()  # GELU at another d_ff: the same tensors


def test_a_configuration_without_a_gpt2_twin_is_still_marked():
    cfg = Config(B=1, T=64, d=100, h=3, L=1, V=50, T_max=32, head_dim=32, norm="rmsnorm", positions="rope")
    with pytest.raises(ValueError):
        twin(cfg)
    assert recipe_rows(cfg).only == {"rope.angles", "rope.cos", "rope.sin", "ln_1.rstd", "ln_2.rstd", "ln_f.rstd",
                                     "attn.q_rot", "attn.k_rot"}


# --- the CLI ----------------------------------------------------------------------------------------------------------

TINY = ["--B", "1", "--T", "3", "--d", "8", "--h", "2", "--L", "1", "--V", "5", "--T-max", "4", "--norm", "rmsnorm",
        "--positions", "rope", "--mlp", "swiglu", "--d-ff", "12", "--h-kv", "1", "--bias", "none"]
CASES = {"qwen3-0.6b-shapes.md": ["--preset", "qwen3-0.6b", "--table", "shapes", "--markdown"],
         "llama3.2-1b-shapes.csv": ["--preset", "llama3.2-1b", "--csv", "--dtype", "bf16"],
         "tiny-modern.json": [*TINY, "--json"]}


@pytest.mark.parametrize("name", CASES)
def test_golden(name, capsys, golden):
    code, out, err = run_cli(CASES[name], capsys)
    assert (code, err) == (0, "")
    golden(name, out)


def _marked_in_text(out: str) -> set[str]:
    return {line.split()[0] for line in out.splitlines() if line.startswith("  ") and f" {MARK} " in line
            and not line.strip().startswith(MARK)}


@pytest.mark.parametrize("name", ["llama3-8b", "qwen3-0.6b"])
def test_every_format_marks_the_same_rows(name, capsys):
    only = recipe_rows(PRESETS[name]).only
    _, out, _ = run_cli(["--preset", name, "--table", "shapes"], capsys)
    legend = recipe_rows(PRESETS[name]).legend
    assert _marked_in_text(out) == only and legend[0] in out and "not in this one: wpe" in out
    assert legend[-1].startswith(EAGER_NOTE.split("{")[0]) and legend[-1] in out  # the presets run fused attention
    _, out, _ = run_cli(["--preset", name, "--csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["name"].removeprefix("blocks.0.") for r in rows if r["recipe_only"] == "1"} == only
    _, out, _ = run_cli(["--preset", name, "--json", "--expand"], capsys)
    doc = json.loads(out)
    assert {r["name"].split(".", 2)[2] if r["block"] is not None else r["name"]
            for r in doc["rows"] if r["recipe_only"]} == only
    assert doc["recipe_rows"]["legend"] == list(legend)
    eager_only = [n for n, _ in recipe_rows(PRESETS[name]).eager_only]
    assert [x["name"] for x in doc["recipe_rows"]["eager_only"]] == eager_only


def test_gpt2_tables_carry_no_mark(capsys):
    for fmt in ([], ["--csv"], ["--markdown"], ["--json"]):
        _, out, _ = run_cli(["--preset", "gpt2-small", *fmt], capsys)
        assert MARK not in out and "recipe_only" not in out and "recipe_rows" not in out


# --- the live page's table (app.cards.shapes.view), without a browser ----------------------------------------------

def test_the_live_table_marks_the_same_rows_and_shows_the_legend():
    from app.cards.shapes.view import table_at
    from app.cards.shapes.markup import MARKED, shape_rows

    cfg = PRESETS["qwen3-0.6b"]
    rows = shape_rows(trace(cfg), 1)
    assert {r.name for r in rows if r.only} == recipe_rows(cfg).only
    page = table_at(cfg, "fp32", False).html
    assert page.count(f" {MARKED}</b>") == len(recipe_rows(cfg).only)
    assert "only in the GPT-2 twin&#x27;s pass, not in this one: wpe" in page
    assert "mk" not in table_at(PRESETS["gpt2-small"], "fp32", False).html


def test_the_notebook_table_marks_the_same_rows():
    markup = trace(PRESETS["llama3-8b"])._repr_html_()
    assert markup.count(MARK) == len(recipe_rows(PRESETS["llama3-8b"]).only) + 1  # the rows and the legend
    assert "not in this one: wpe" in markup and MARK not in trace(PRESETS["gpt2-small"])._repr_html_()
