"""What each change buys in a hybrid with a fixed state (Gated DeltaNet, Mamba 2, Kimi delta attention): the chain runs
from the GPT-2 twin to the model with attention in every block (`model.config.all_attention`), then one last change puts
the fixed state in its blocks' attention's place. Its lines are the real figures after minus before (parameters of the
module, measured FLOPs per token at this T: T_pad/T and (T + d_conv − 1)/T, the cache per token falling, the bytes of
the pass), their formulas true, the lines adding up to this model minus its twin; and a line of the states' bytes at
this B, whatever T."""
from __future__ import annotations

import json
import random
from dataclasses import replace
from fractions import Fraction

import pytest

from model import PRESETS, budget, trace
from model.changes import STATE_CHANGES, all_attention, changes, no_twin
from model.config import from_hf
from model.formula import evaluate, matches, polynomial, to_poly
from model.memory import kv_cache_lines
from model.notation import SYMBOLS
from model.stack import stateful
from pagetools import run_cli
from test_kda import kimi_doc
from test_mamba import granite_doc

QWEN = PRESETS["qwen3-next-80b-a3b"]
FIGURES = ("params", "flops", "kv_cache", "activations", "saved")


def real(cfg, dtype: str) -> dict[str, int | float]:
    """The five figures of `cfg` as the model measures them (not from the chain)."""
    b, t = budget(cfg), trace(cfg, dtype)
    return {"params": b.params_exact, "flops": b.flops_fwd_measured_per_token,
            "kv_cache": {x.key: x for x in kv_cache_lines(cfg, dtype)}["memory/kv_cache_per_token"].value,
            "activations": t.activation_bytes, "saved": t.saved_bytes}


def check_chain(cfg, dtype: str = "fp32") -> None:
    """The chain of a hybrid: its last change is the part's, every formula is true, the lines add up (exactly, the
    FLOPs' fractions included) to this model minus its twin, and the last change's lines to this model minus the model
    with attention in every block."""
    part = stateful(cfg)
    c = changes(cfg, dtype)
    key = part.LAST_CHANGE[0]
    assert STATE_CHANGES[key] is part and c.steps[-1].key == key
    assert part.NAME in c.steps[-1].title and f"{part.COUNT} = {getattr(cfg, part.COUNT):,}" in c.steps[-1].title
    s = cfg.symbols()
    for x in c.lines:
        assert not x.formula or matches(x.formula, s, x.value), (x.key, x.formula, x.value)
    v = {x.key: x.value for x in c.lines}
    after, before, full = real(cfg, dtype), real(c.twin, dtype), real(all_attention(cfg), dtype)
    for f in FIGURES:
        assert v[f"changes/this/{f}"] == after[f] and v[f"changes/twin/{f}"] == before[f], f
        assert sum(v.get(f"changes/{g.key}/{f}", 0) for g in c.steps) == pytest.approx(after[f] - before[f],
                                                                                        rel=1e-12, abs=1e-6), f
        assert v.get(f"changes/{key}/{f}", 0) == pytest.approx(after[f] - full[f], rel=1e-12, abs=1e-6), f
    # the cache per token falls, and the states it keeps instead are per sequence: bytes at this B, whatever T
    assert v[f"changes/{key}/kv_cache"] < 0
    states = v[f"changes/{key}/states"]
    kept = sum(x.value for x in kv_cache_lines(cfg, dtype) if x.key.startswith("memory/state_"))
    assert states == kept > 0
    later = changes(replace(cfg, T=cfg.T + 1), dtype) if cfg.T < cfg.T_max else c
    assert {x.key: x.value for x in later.lines}[f"changes/{key}/states"] == states  # whatever T
    assert v[f"changes/{key}/T_even"] == pytest.approx(states / (cfg.B * -v[f"changes/{key}/kv_cache"]))


@pytest.mark.parametrize("B, T", [(3, 64), (3, 65), (QWEN.B, QWEN.T)])
def test_qwen3_next_ends_with_gated_deltanet_across_a_chunk_boundary(B: int, T: int) -> None:
    cfg = replace(QWEN, B=B, T=T)
    assert no_twin(cfg) is None
    check_chain(cfg, "bf16")
    last = changes(cfg, "bf16").steps[-1]
    flops = {x.key: x for x in last.lines}["changes/delta/flops"]
    # the budget's own formulas: L_lin Gated DeltaNet blocks minus as many attention blocks (matmuls and scores)
    assert flops.formula.startswith("L_lin·(2d·(2h_lk·d_lk + 2h_lv·d_lv + 2h_lv)") and "T_pad" in flops.formula
    assert flops.formula.endswith("− (2(3h + 2h_kv)·d_head·d + 4T·h·d_head))")
    assert {x.key: x for x in last.lines}["changes/delta/kv_cache"].formula == "−4L_lin·h_kv·d_head"  # bf16
    if T == 65:  # T_pad = 128 for 65 tokens: a fraction per token
        assert isinstance(flops.value, float)


def test_qwen3_next_at_8192_tokens_the_state_buys_flops_and_cache() -> None:
    v = {x.key: x.value for x in changes(QWEN, "bf16").lines}
    assert v["changes/delta/params"] == 232_379_136
    assert v["changes/delta/flops"] == -4_197_186_720
    assert v["changes/delta/kv_cache"] == -73_728  # 36 blocks' K and V of 2 heads of 256 at bf16
    assert v["changes/delta/states"] == 622_854_144  # B = 8 sequences
    assert v["changes/delta/T_even"] == 1_056


@pytest.mark.parametrize("moe, seed", [(False, 0), (True, 2), (True, 3)])
def test_granite_files_end_with_mamba_2(moe: bool, seed: int) -> None:
    doc = granite_doc(random.Random(f"granitemoehybrid-{moe}-{seed}"), moe)
    for B, T in ((2, 5), (1, 21)):  # across Granite's chunks of Q
        cfg = from_hf(doc, B=B, T=T)
        check_chain(cfg)
        last = changes(cfg).steps[-1]
        saved = {x.key: x for x in last.lines}["changes/mamba/saved"]  # its part's formula, true (`check_chain`)
        assert last.key == "mamba" and "n_c" in saved.formula and "Q" in saved.formula
        assert "measured" not in saved.label


@pytest.mark.parametrize("moe, seed", [(False, 4), (True, 1), (True, 5)])
def test_kimi_linear_files_end_with_kimi_delta_attention_beside_nope_latent_attention(moe: bool, seed: int) -> None:
    doc = kimi_doc(random.Random(f"kimi_linear-{moe}-{seed}"), moe)
    for B, T in ((2, 5), (1, 70)):
        cfg = from_hf(doc, B=B, T=T)
        check_chain(cfg)
        c = changes(cfg)
        assert [g.key for g in c.steps][-2:] == ["latent", "kda"]
        assert "the latent and its rotary key" in c.steps[-1].title
        positions = next(g for g in c.steps if g.key == "positions")
        assert positions.title.startswith("no positions instead of the learned table")  # NoPE in every attention block


def test_a_division_by_t_is_a_laurent_term_and_nothing_else_divides() -> None:
    poly = to_poly("2d_conv·(T + d_conv − 1)/T", SYMBOLS, divide=True)
    assert polynomial(poly) == "2d_conv + 2d_conv²/T − 2d_conv/T"
    s = {**QWEN.symbols(), "T": 65}
    assert evaluate(polynomial(poly), s) == Fraction(2 * 4 * (65 + 3), 65)
    with pytest.raises(ValueError, match="'/' makes no polynomial"):
        to_poly("d/(T + 1)", SYMBOLS, divide=True)
    with pytest.raises(ValueError, match="'/' makes no polynomial"):
        to_poly("d/T", SYMBOLS)


@pytest.mark.parametrize("argv", [["--preset", "qwen3-next-80b-a3b"], ["--preset", "qwen3-next-80b-a3b", "--T", "65"]])
def test_the_cli_prints_the_chain(argv, capsys) -> None:
    code, out, err = run_cli([*argv, "--table", "changes"], capsys)
    assert code == 0 and "Traceback" not in out + err, err
    assert "Gated DeltaNet in L_lin = 36 of the L = 48 blocks" in out and "the states its L_lin = 36 blocks" in out
    code, out, err = run_cli([*argv, "--table", "changes", "--json"], capsys)
    doc = json.loads(out)
    assert doc["groups"][-3]["lines"][0]["key"] == "changes/delta/params"


def test_the_cli_prints_a_kimi_linear_files_chain(tmp_path, capsys) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(kimi_doc(random.Random("kimi_linear-True-1"), True)))
    code, out, err = run_cli(["--hf-config", str(path), "--B", "2", "--T", "70", "--table", "changes"], capsys)
    assert code == 0 and "Traceback" not in out + err, err
    assert "Kimi delta attention in L_kda" in out
