"""Properties (hypothesis): Config accepts exactly the valid field combinations; trace shapes follow notation."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import BOUNDS, CHOICES, Config, budget, divisors, snap_heads, trace
from model.formula import evaluate as formula_value
from model.formula import evaluate_shape as evaluate

FIELDS = ("B", "T", "d", "h", "L", "V", "T_max")
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def field_value(name: str) -> st.SearchStrategy:
    """Mostly integers near and inside the bounds; sometimes something that is not an integer at all."""
    lo, hi = BOUNDS[name]
    ints = st.one_of(st.integers(lo, min(hi, 64)), st.integers(lo, hi), st.integers(-5, 0),
                     st.integers(hi - 2, hi + 3), st.integers(-(10**20), 10**20))
    junk = st.one_of(st.booleans(), st.floats(allow_nan=True), st.none(), st.text(max_size=3),
                     st.integers(1, 64).map(float), st.decimals(allow_nan=False, places=1))
    return st.one_of(ints, ints, ints, junk)


@st.composite
def field_sets(draw) -> dict:
    """A valid field set, then (often) one to three fields replaced by anything from `field_value`."""
    small = draw(st.booleans())
    d = draw(st.integers(1, 256) if small else st.integers(*BOUNDS["d"]))
    T_max = draw(st.integers(1, 64) if small else st.integers(*BOUNDS["T_max"]))
    values = {"B": draw(st.integers(*BOUNDS["B"])), "T": draw(st.integers(1, T_max)), "d": d,
              "h": draw(st.sampled_from(divisors(d))), "L": draw(st.integers(*BOUNDS["L"])),
              "V": draw(st.integers(*BOUNDS["V"])), "T_max": T_max, "tie": draw(st.booleans())}
    for name in draw(st.lists(st.sampled_from(FIELDS + ("tie",)), max_size=3, unique=True)):
        values[name] = draw(field_value(name) if name != "tie" else st.sampled_from([0, 1, None, "True", False]))
    return values


def is_valid(v: dict) -> bool:
    """The specification, written independently of model.config."""
    for name in FIELDS:
        x = v[name]
        if type(x) is not int or not BOUNDS[name][0] <= x <= BOUNDS[name][1]:
            return False
    return (type(v["tie"]) is bool and v["d"] % v["h"] == 0 and v["T"] <= v["T_max"]
            and v["B"] * v["T"] <= 2**27 and v["h"] * v["T"] <= 2**30)  # a pass's tensors within 64-bit sizes


@SETTINGS
@given(field_sets())
def test_config_accepts_exactly_the_valid_combinations(values):
    if is_valid(values):
        cfg = Config(**values)
        assert {k: getattr(cfg, k) for k in values} == values
        assert cfg.d_head * cfg.h == cfg.d
    else:
        with pytest.raises(ValueError) as err:  # never TypeError, ZeroDivisionError, OverflowError ...
            Config(**values)
        assert str(err.value)  # a message, not an empty error


@SETTINGS
@given(st.integers(1, 5_000), st.integers(1, 6_000))
def test_snap_heads_is_the_nearest_divisor(d, h):
    k = snap_heads(d, h)
    assert d % k == 0
    assert all(abs(j - h) > abs(k - h) or (abs(j - h) == abs(k - h) and j >= k) for j in divisors(d))


@st.composite
def small_configs(draw) -> Config:
    h = draw(st.integers(1, 8))
    d_head = draw(st.integers(1, 8))
    T_max = draw(st.integers(1, 64))
    return Config(B=draw(st.integers(1, 4)), T=draw(st.integers(1, T_max)), d=h * d_head, h=h,
                  L=draw(st.integers(1, 6)), V=draw(st.integers(1, 300)), T_max=T_max, tie=draw(st.booleans()))


@SETTINGS
@given(small_configs(), st.sampled_from(["fp32", "bf16"]))
def test_trace_shapes_always_equal_notation(cfg, dtype):
    tr = trace(cfg, dtype)
    values = cfg.symbols()
    B, T, d, h = cfg.B, cfg.T, cfg.d, cfg.h
    shapes = {r.local: r.shape for r in tr.rows}
    for r in tr.rows:
        assert evaluate(r.symbolic, values) == r.shape
    assert shapes["attn.scores"] == (B, h, T, T) and shapes["attn.q"] == (B, h, T, cfg.d_head)
    assert shapes["mlp.fc"] == (B, T, 4 * d) and shapes["head"] == (B, T, cfg.V)
    assert ("loss" in shapes) == (T > 1)
    assert len(tr.expanded()) == len(tr.rows) + (cfg.L - 1) * 17
    width = 4 if dtype == "fp32" else 2
    assert tr.activation_bytes == 8 * B * T + width * sum(r.numel * r.repeat for r in tr.rows[1:] if not r.view)
    assert {r.local for r in tr.rows if r.view} >= {"attn.q", "attn.k", "attn.v"}
    assert [x.key for x in tr.lines][:2] == ["memory/activations", "memory/saved"]  # formulas checked as made


@SETTINGS
@given(small_configs())
def test_budget_matches_the_formulas(cfg):
    b, d, L, V = budget(cfg), cfg.d, cfg.L, cfg.V
    assert b.params_exact == (V + cfg.T_max) * d + L * (12 * d * d + 13 * d) + 2 * d + (0 if cfg.tie else V * d)
    assert b.flops_fwd_measured_per_token == L * (24 * d * d + 4 * cfg.T * d) + 2 * V * d


def test_generated_fields_cover_both_outcomes():
    """Guard the strategy itself: it must produce valid and invalid field sets (else the property is vacuous)."""
    seen = set()

    @settings(max_examples=200, deadline=None)
    @given(field_sets())
    def probe(values):
        seen.add(is_valid(values))

    probe()
    assert seen == {True, False}


@st.composite
def recipe_configs(draw) -> Config:
    """Small configurations of any recipe: every switch, h_kv a divisor of h, d_head set apart or d / h."""
    h = draw(st.integers(1, 8))
    positions = draw(st.sampled_from(CHOICES["positions"]))
    d_head = draw(st.integers(1, 6)) * (2 if positions == "rope" else 1)
    apart = draw(st.booleans())
    T_max = draw(st.integers(1, 32))
    return Config(B=draw(st.integers(1, 4)), T=draw(st.integers(1, 2 * T_max if positions == "rope" else T_max)),
                  d=draw(st.integers(1, 48)) if apart else h * d_head, h=h, L=draw(st.integers(1, 4)),
                  V=draw(st.integers(1, 300)), T_max=T_max, tie=draw(st.booleans()),
                  norm=draw(st.sampled_from(CHOICES["norm"])), positions=positions,
                  mlp=draw(st.sampled_from(CHOICES["mlp"])), ff_dim=draw(st.none() | st.integers(1, 64)),
                  kv_heads=draw(st.sampled_from(divisors(h))), head_dim=d_head if apart else None,
                  bias=draw(st.sampled_from(CHOICES["bias"])), qk_norm=draw(st.booleans()),
                  attention=draw(st.sampled_from(CHOICES["attention"])))


@SETTINGS
@given(recipe_configs(), st.sampled_from(["fp32", "bf16"]))
def test_every_recipe_traces_to_its_notation_and_true_formulas(cfg, dtype):
    tr, b, values = trace(cfg, dtype), budget(cfg), cfg.symbols()
    for r in tr.rows:
        assert evaluate(r.symbolic, values) == r.shape
    shapes = {r.local: r.shape for r in tr.rows}
    eager = cfg.attention == "eager"  # written out: the scores exist; fused: the kernel's (B, h, T) log-sum-exp
    if eager:
        assert shapes["attn.scores"] == (cfg.B, cfg.h, cfg.T, cfg.T)
    else:
        assert shapes["attn.lse"] == (cfg.B, cfg.h, cfg.T)
        assert not {"attn.scores", "attn.masked", "attn.attn"} & set(shapes)
    assert shapes["attn.k"] == (cfg.B, cfg.h_kv, cfg.T, cfg.d_head)
    assert ("attn.k_heads" in shapes) == (cfg.h_kv != cfg.h and eager)
    assert ("rope.cos" in shapes) == (cfg.positions == "rope")
    for line in (*tr.lines, *b.lines):  # made with check_lines; evaluated again here, independently of the order
        got = formula_value(line.formula, values)
        assert got == line.value if isinstance(line.value, int) else abs(float(got) - line.value) <= 1e-9 * line.value
    d, L = cfg.d, cfg.L
    matrices = L * (2 * (cfg.h + cfg.h_kv) * cfg.d_head * d + (3 if cfg.mlp == "swiglu" else 2) * d * cfg.d_ff)
    attention = 4 * L * cfg.T * cfg.h * cfg.d_head
    assert b.flops_fwd_measured_per_token == 2 * matrices + attention + 2 * cfg.V * d
