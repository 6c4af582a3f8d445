"""model.trace: rows in execution order, shapes against an independent table and a full-depth hook trace."""
from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest
import torch

import model

from model import DTYPES, GPT, NOTATION, PRESETS, Config, Row, trace
from model.formula import evaluate_shape as evaluate

import model.passes as passes
import model.tensor_notation as mt

BLOCK = ["ln_1", "attn.qkv", "attn.q", "attn.k", "attn.v", "attn.scores", "attn.masked", "attn.attn",
         "attn.attn_v", "attn.merged", "attn.proj", "resid_1", "ln_2", "mlp.fc", "mlp.gelu", "mlp.proj", "resid_2"]


def expected_shapes(c: Config) -> dict[str, tuple[int, ...]]:
    """Every row's shape, written out by hand from the lesson (independent of model.NOTATION)."""
    B, T, d, h, dh, V = c.B, c.T, c.d, c.h, c.d_head, c.V
    btd, heads, tt = (B, T, d), (B, h, T, dh), (B, h, T, T)
    block = {"ln_1": btd, "attn.qkv": (B, T, 3 * d), "attn.q": heads, "attn.k": heads, "attn.v": heads,
             "attn.scores": tt, "attn.masked": tt, "attn.attn": tt, "attn.attn_v": heads, "attn.merged": btd,
             "attn.proj": btd, "resid_1": btd, "ln_2": btd, "mlp.fc": (B, T, 4 * d), "mlp.gelu": (B, T, 4 * d),
             "mlp.proj": btd, "resid_2": btd}
    out = {"idx": (B, T), "wte": btd, "wpe": (T, d), "embed": btd}
    out |= {f"blocks.0.{k}": v for k, v in block.items()}
    out |= {"ln_f": btd, "head": (B, T, V)}
    if T > 1:
        out["loss"] = ()
    return out


def obvious_trace(cfg: Config) -> list[tuple[str, tuple[int, ...], int]]:
    """The obvious tracer: the FULL-depth model on meta, a forward hook on every leaf module.

    Returns (name, shape, fp32 nbytes) per tensor in execution order; the input ids (no module's output)
    come first as "idx".
    """
    with torch.device("meta"):
        model = GPT(cfg)
    rows = []
    hooks = [m.register_forward_hook(lambda _m, _i, out, n=n: rows.append(
                 (n, tuple(out.shape), out.numel() * out.element_size())))
             for n, m in model.named_modules() if n and not list(m.children())]
    try:
        idx = torch.zeros(cfg.B, cfg.T, dtype=torch.long, device="meta")
        rows.append(("idx", tuple(idx.shape), idx.numel() * idx.element_size()))
        with torch.no_grad():
            model(idx)
    finally:
        for hk in hooks:
            hk.remove()
    return rows


def cfg(B=2, T=8, d=16, h=4, L=2, V=50, T_max=8, tie=True) -> Config:
    return Config(B=B, T=T, d=d, h=h, L=L, V=V, T_max=T_max, tie=tie)


EDGES = {
    "base": cfg(T=5),
    "h=1": cfg(h=1),
    "h=d": cfg(h=16),
    "T=1": cfg(T=1),
    "B=1": cfg(B=1),
    "T=T_max": cfg(T=8, T_max=8),
    "L=1": cfg(L=1),
    "untied": cfg(tie=False),
    "all ones": Config(B=1, T=1, d=1, h=1, L=1, V=1, T_max=1),
    "odd sizes": cfg(B=3, T=7, d=15, h=5, L=3, V=11, T_max=9),
}


# --- rows ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", EDGES)
def test_rows_names_order_and_shapes(case):
    c = EDGES[case]
    tr = trace(c)
    want = expected_shapes(c)
    assert [r.name for r in tr.rows] == list(want)
    assert {r.name: r.shape for r in tr.rows} == want


def test_execution_order_names():
    names = [r.name for r in trace(cfg()).rows]
    assert names == ["idx", "wte", "wpe", "embed"] + [f"blocks.0.{n}" for n in BLOCK] + ["ln_f", "head", "loss"]
    assert list(NOTATION) == ["idx", "wte", "wpe", "embed"] + BLOCK + ["ln_f", "head", "loss"]


def test_T_1_has_no_loss_row():
    names = [r.name for r in trace(cfg(T=1)).rows]
    assert names[-1] == "head" and "loss" not in names
    assert trace(cfg(T=2)).rows[-1].name == "loss"


@pytest.mark.parametrize("case", EDGES)
def test_symbolic_agrees_with_concrete(case):
    c = EDGES[case]
    for r in trace(c).rows:
        assert evaluate(r.symbolic, c.symbols()) == r.shape, r.name
        assert r.symbolic == NOTATION[r.local][0]


def test_symbolic_notation_of_key_rows():
    sym = {r.local: r.symbolic for r in trace(cfg()).rows}
    assert sym["attn.qkv"] == "(B, T, 3d)"
    assert sym["attn.q"] == sym["attn.attn_v"] == "(B, h, T, d_head)"
    assert sym["attn.scores"] == sym["attn.masked"] == sym["attn.attn"] == "(B, h, T, T)"
    assert sym["mlp.fc"] == "(B, T, 4d)" and sym["head"] == "(B, T, V)" and sym["loss"] == "()"
    assert sym["wpe"] == "(T, d)" and sym["idx"] == "(B, T)"


def test_row_fields():
    c = cfg(B=3, T=6, d=12, h=3, L=5, V=7)
    for r in trace(c).rows:
        n = 1
        for k in r.shape:
            n *= k
        assert r.numel == n
        assert r.nbytes == n * (8 if r.name == "idx" else 4)
        if r.name.startswith("blocks."):
            assert (r.block, r.repeat) == (0, 5) and r.local == r.name.removeprefix("blocks.0.")
        else:
            assert (r.block, r.repeat) == (None, 1) and r.local == r.name
        assert r.label == NOTATION[r.local][1]


def test_head_label_says_tied_or_separate():
    assert trace(cfg()).rows[-2].label == "logits (head tied to W_te)"
    assert trace(cfg(tie=False)).rows[-2].label == "logits (separate head)"


def test_gpt3_175b_rows():
    c = PRESETS["gpt3-175b"]
    shapes = {r.name: r.shape for r in trace(c).rows}
    assert shapes["blocks.0.attn.scores"] == (8, 96, 2_048, 2_048)
    assert shapes["blocks.0.attn.q"] == (8, 96, 2_048, 128)
    assert shapes["blocks.0.mlp.fc"] == (8, 2_048, 49_152)
    assert shapes["head"] == (8, 2_048, 50_257)
    assert all(r.repeat == 96 for r in trace(c).rows if r.block == 0)


# --- the collapsed trace is the full-depth trace --------------------------------------------------------

@pytest.mark.parametrize("case", ["base", "h=1", "T=1", "L=1", "untied", "odd sizes"])
def test_expanded_equals_full_depth_hook_trace(case):
    c = EDGES[case]
    full = obvious_trace(c)
    ours = trace(c).expanded()
    assert [(r.name, r.shape, r.nbytes) for r in ours] == full
    assert all(r.repeat == 1 for r in ours)
    assert [r.block for r in ours if r.block is not None] == [b for b in range(c.L) for _ in BLOCK]


def test_expanded_gpt2_small_names():
    ex = trace(PRESETS["gpt2-small"]).expanded()
    assert len(ex) == 4 + 12 * len(BLOCK) + 3
    assert ex[4].name == "blocks.0.ln_1" and ex[4 + len(BLOCK)].name == "blocks.1.ln_1"
    assert ex[-4].name == "blocks.11.resid_2" and ex[-4].local == "resid_2" and ex[-4].block == 11


# --- bytes -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", EDGES)
def test_activation_bytes(case):
    c = EDGES[case]
    B, T, d, h, L, V = c.B, c.T, c.d, c.h, c.L, c.V
    # per block 22 (B, T, d)-sized tensors, of which q, k and v are views of qkv: 19 new. With h = 1 the merged
    # heads are a view too: transpose(1, 2) of (B, 1, T, d) is already contiguous, so .contiguous() copies nothing.
    # The same at T = 1: (B, h, 1, d_head) transposed is contiguous already.
    per_block = 19 if h > 1 and T > 1 else 18
    floats = 2 * B * T * d + T * d + B * T * d + L * (per_block * B * T * d + 3 * B * h * T * T) + B * T * V
    floats += 1 if T > 1 else 0  # the loss scalar
    tr = trace(c)
    assert tr.activation_bytes == 8 * B * T + 4 * floats
    assert tr.activation_bytes == sum(r.nbytes for r in tr.expanded() if not r.view)


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_half_precision_halves_float_rows_but_not_ids(dtype):
    c = cfg(T=5)
    full, half = trace(c), trace(c, dtype)
    assert half.dtype == dtype and full.dtype == "fp32"
    for a, b in zip(full.rows, half.rows, strict=True):
        assert (a.name, a.shape, a.numel) == (b.name, b.shape, b.numel)
        assert b.nbytes == (a.nbytes if a.name == "idx" else a.nbytes // 2)
    assert half.rows[0].nbytes == 8 * c.B * c.T


def test_unknown_dtype_is_rejected():
    with pytest.raises(ValueError, match="dtype 'int8' is not one of fp32, bf16, fp16"):
        trace(cfg(), "int8")
    assert DTYPES == {"fp32": 4, "bf16": 2, "fp16": 2}


# --- the notation check ----------------------------------------------------------------------------------

@pytest.fixture
def fresh_caches():
    model.clear_caches()
    yield
    model.clear_caches()


def test_wrong_notation_raises(monkeypatch, fresh_caches):
    wrong = dict(mt.NOTATION)
    wrong["attn.scores"] = ("(B, h, T, d_head)", "wrong on purpose")
    monkeypatch.setattr(mt, "NOTATION", wrong)
    with pytest.raises(RuntimeError, match=r"blocks\.0\.attn\.scores: notation \(B, h, T, d_head\) gives "
                                           r"\(2, 4, 8, 4\), the pass gave \(2, 4, 8, 8\)"):
        trace(cfg())


def test_wrong_coefficient_raises(monkeypatch, fresh_caches):
    wrong = dict(mt.NOTATION)
    wrong["mlp.fc"] = ("(B, T, 3d)", "wrong on purpose")
    monkeypatch.setattr(mt, "NOTATION", wrong)
    with pytest.raises(RuntimeError, match=r"blocks\.0\.mlp\.fc: notation \(B, T, 3d\)"):
        trace(cfg())


def test_missing_notation_raises(monkeypatch, fresh_caches):
    missing = {k: v for k, v in mt.NOTATION.items() if k != "mlp.gelu"}
    monkeypatch.setattr(mt, "NOTATION", missing)
    with pytest.raises(RuntimeError, match="tensor blocks.0.mlp.gelu has no lesson notation"):
        trace(cfg())


def test_coinciding_symbol_values_still_trace(fresh_caches):
    # h = d_head = T = V = 4: many symbols take the same value; shapes still agree and the trace succeeds.
    c = Config(B=4, T=4, d=16, h=4, L=1, V=4, T_max=4)
    assert {r.name: r.shape for r in trace(c).rows} == expected_shapes(c)


# --- caching and hygiene ---------------------------------------------------------------------------------

def test_cached_calls_return_the_same_object():
    c = cfg(B=3)
    assert trace(c) is trace(c)
    assert trace(c, "bf16") is trace(c, "bf16") is trace(c, dtype="bf16")
    assert trace(c) is trace(c, "fp32") is trace(c, dtype="fp32")  # one cache entry, however it is called
    assert trace(c) is not trace(replace(c, tie=False))  # the cache key is the whole Config


def test_recomputed_trace_equals_cached(fresh_caches):
    c = cfg(B=3, T=7)
    first = trace(c)
    model.clear_caches()
    second = trace(c)
    assert second is not first and second == first


def test_no_hooks_or_modes_left_behind():
    from torch.nn.modules import module as nn_module
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    before = (len(nn_module._global_forward_hooks), len(nn_module._global_forward_pre_hooks))
    trace(cfg(B=5, T=3))
    assert (len(nn_module._global_forward_hooks), len(nn_module._global_forward_pre_hooks)) == before
    assert _get_current_dispatch_mode_stack() == []  # FlopCounterMode exited
    assert torch.is_grad_enabled()  # no_grad exited
    assert torch.empty(1).device.type == "cpu"  # the meta device context exited


def _patched_gpt(monkeypatch, block_forward) -> list:
    """Make the tracer build models whose block 0 runs `block_forward`; returns the models it built."""
    made, real_gpt = [], passes.meta_gpt

    def gpt(c, **kw):
        m = real_gpt(c, **kw)
        m.blocks[0].forward = block_forward
        made.append(m)
        return m

    monkeypatch.setattr(passes, "meta_gpt", gpt)
    return made


def test_hooks_removed_even_when_the_pass_fails(monkeypatch, fresh_caches):
    def fail(x):
        raise ArithmeticError("broken block")

    made = _patched_gpt(monkeypatch, fail)
    with pytest.raises(ArithmeticError, match="broken block"):
        trace(cfg())
    assert len(made) == 1
    assert all(not m._forward_hooks for m in made[0].modules())
    assert torch.is_grad_enabled()


def test_a_block_that_changes_the_shape_cannot_be_collapsed(monkeypatch, fresh_caches):
    _patched_gpt(monkeypatch, lambda x: x[..., :-1])
    with pytest.raises(RuntimeError, match=r"a block must map \(2, 8, 16\) to itself, got \(2, 8, 15\)"):
        trace(cfg())


def test_rows_and_trace_are_immutable():
    tr = trace(cfg())
    with pytest.raises(FrozenInstanceError):
        tr.rows[0].shape = (1,)  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        tr.dtype = "bf16"  # type: ignore[misc]
    assert isinstance(tr.rows, tuple) and isinstance(tr.rows[0], Row)


@pytest.mark.parametrize("name", ["gpt2-small", "llama3-8b", "deepseek-v3.2", "qwen3-next-80b-a3b",
                                  "kimi-linear-48b-a3b", "jamba-v0.1"])
def test_known_meta_shapes_leave_every_record_as_it_was(name, monkeypatch):
    """`passes.MetaShapes` answers ops from sizes seen before (in this pass or an earlier one, `PassMode`); the pass it
    serves is the pass torch's meta kernels give (every tensor, view flag, saved storage and FLOP count), and so are a
    step's peak moments (`model.peak`)."""
    import contextlib

    import model.peak as peak

    cfg = replace(PRESETS[name], B=2, T=70)  # two chunks of 64 for the scans
    passes.KNOWN_SHAPES.clear()
    fast = passes.real_pass(cfg, "fp32")  # each op's first sizes from its meta kernel, a repeat's from the table
    fast_peak = peak._maximal([cfg], "fp32", peak._pass)
    assert passes.real_pass(cfg, "fp32") == fast  # every op answered from the table the passes before filled
    monkeypatch.setattr(passes, "PassMode", passes.Flops)  # the FLOP count without the answers
    monkeypatch.setattr(peak, "MetaShapes", contextlib.nullcontext)
    assert passes.real_pass(cfg, "fp32") == fast
    assert peak._maximal([cfg], "fp32", peak._pass) == fast_peak
