"""Hostile input, property-based: whatever arrives in the URL or the widgets, the page gets a valid Config and
readable notices, and nothing raises."""
from urllib.parse import urlencode

import panel as pn
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.query import CONTROLS, KEYS, MAX_NOTICES, MAX_QUERY_CHARS, PANELS, ViewOptions, parse_query, to_query
from app.state import ExplorerState
from model import BOUNDS, DTYPES, Config, divisors
from model.config import MAX_HEAD_T, MAX_TOKENS, largest_B, score_heads


@pytest.fixture(autouse=True)
def _fresh_panel_state():
    yield
    pn.state.reset()


def assert_valid(q) -> None:
    cfg = q.config
    assert isinstance(cfg, Config)
    for name, (lo, hi) in BOUNDS.items():
        value = getattr(cfg, name)
        if value is None:  # a dense model's E, k, d_expert
            assert name not in ("E", "k", "d_expert") or not cfg.moe
            continue
        assert lo <= value <= hi
    assert not cfg.moe or cfg.k <= cfg.E
    assert cfg.d % cfg.h == 0 and cfg.T <= cfg.T_max
    assert cfg.B * cfg.T <= MAX_TOKENS and score_heads(cfg.h, cfg.index_heads) * cfg.T <= MAX_HEAD_T
    assert isinstance(q.options, ViewOptions)
    assert set(q.options.controls) <= set(CONTROLS)
    assert q.options.panels and set(q.options.panels) <= set(PANELS)
    assert q.options.dtype in DTYPES
    assert len(q.notices) <= MAX_NOTICES
    assert all(isinstance(n, str) and len(n) < 1_200 for n in q.notices)  # the longest: five unknown keys quoted
    # (each cut at 24 characters, with a did-you-mean) and the list of known keys, every part's in it (926 characters
    # with Mamba 2's and Kimi delta attention's)


numbers = st.one_of(st.integers(-10**12, 10**12), st.sampled_from([0, 1, 2**31, 2**63, 10**9, -1]))
values = st.one_of(numbers.map(str), st.text(max_size=60), st.floats(allow_nan=True).map(str),
                   st.sampled_from(["", " ", "1,024", "0x10", "١٢", "+5", "--5", "1e3", "null", "%", "&"]))
keys = st.one_of(st.sampled_from(KEYS), st.text(max_size=12), st.sampled_from(["t", "D", "t_max", "H", "preset "]))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_parses_to_a_valid_view(search):
    assert_valid(parse_query(search))
    assert_valid(parse_query("?" + search))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(keys, values), max_size=30))
def test_any_key_value_pairs_parse_to_a_valid_view(pairs):
    assert_valid(parse_query("?" + urlencode(pairs)))


@settings(max_examples=25, deadline=None)
@given(st.integers(MAX_QUERY_CHARS + 1, 250_000), st.sampled_from(["T=1&", "x=1&", "T=", "&", "%FF", "d=" + "9" * 50]))
def test_very_long_queries_are_cut(n, unit):
    q = parse_query("?" + unit * (n // len(unit) + 1))
    assert_valid(q)
    assert any("only the first" in notice for notice in q.notices)


@st.composite
def configs(draw) -> Config:
    d = draw(st.integers(*BOUNDS["d"]))
    T_max = draw(st.integers(*BOUNDS["T_max"]))
    T = draw(st.integers(1, min(T_max, BOUNDS["T"][1])))  # then B and h within the sizes a pass takes at T
    return Config(B=draw(st.integers(1, largest_B(T))), T=T, d=d,
                  h=draw(st.sampled_from([h for h in divisors(d) if h * T <= MAX_HEAD_T])),
                  L=draw(st.integers(*BOUNDS["L"])), V=draw(st.integers(*BOUNDS["V"])), T_max=T_max,
                  tie=draw(st.booleans()))


options = st.builds(ViewOptions, embed=st.booleans(),
                    controls=st.lists(st.sampled_from(CONTROLS), unique=True).map(lambda c: tuple(x for x in CONTROLS if x in c)),
                    panels=st.lists(st.sampled_from(PANELS), min_size=1, unique=True).map(
                        lambda p: tuple(x for x in PANELS if x in p)),
                    dtype=st.sampled_from(list(DTYPES)), expanded=st.booleans())


@settings(max_examples=300, deadline=None)
@given(configs(), options)
def test_every_valid_view_round_trips_through_its_link(cfg, opts):
    q = parse_query(to_query(cfg, opts))
    assert (q.config, q.options, q.notices) == (cfg, opts, ())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["B", "T", "d", "h", "L", "V", "T_max"]),
                          st.one_of(numbers, st.integers(1, 5000))), max_size=12))
def test_widget_input_never_breaks_the_state(writes):
    """Any integer typed into any box: the state stays a valid Config; out-of-bounds input is rejected aloud."""
    state = ExplorerState()
    for name, value in writes:
        lo, hi = BOUNDS[name]
        taken = state.set_field(name, value)
        assert taken == (lo <= value <= hi)
        if not taken:
            assert state.notices[0].startswith(f"{name}={value:,} is out of range")
        cfg = state.config
        assert cfg.d % cfg.h == 0 and cfg.T <= cfg.T_max
        assert (state.B, state.T, state.d, state.h, state.L, state.V, state.T_max) == (
            cfg.B, cfg.T, cfg.d, cfg.h, cfg.L, cfg.V, cfg.T_max)
