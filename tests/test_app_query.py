"""app.query: the URL both ways, and what a learner is told when a link is wrong."""
from dataclasses import replace

import pytest

from app.query import (CONTROLS, DEFAULT_CONFIG, MAX_NOTICES, MAX_QUERY_CHARS, PANELS, ViewOptions, parse_config,
                       parse_query, to_query)
from model import PRESETS, Config
from model.config import GPT2_RECIPE_PRESETS

FULL = "?B=8&T=1024&d=768&h=12&L=12&V=50257&T_max=1024&tie=1"


def test_full_query_reproduces_gpt2_small_without_notices():
    config, notices = parse_config(FULL)
    assert config == Config(B=8, T=1024, d=768, h=12, L=12, V=50257, T_max=1024, tie=True)
    assert notices == []


@pytest.mark.parametrize("search", ["", "?", None, "?&&"])
def test_empty_query_gives_the_defaults(search):
    q = parse_query(search)
    assert q.config == DEFAULT_CONFIG == PRESETS["gpt2-small"]
    assert q.options == ViewOptions()
    assert q.notices == ()


def test_question_mark_is_optional():
    assert parse_query("T=512").config.T == 512


def test_missing_keys_take_the_defaults_silently():
    config, notices = parse_config("?T=256&L=6")
    assert (config.T, config.L, config.d, config.h, config.B) == (256, 6, 768, 12, 8)
    assert notices == []


def test_h_snaps_to_a_divisor_of_d_with_the_lesson_message():
    config, notices = parse_config("?d=770&h=12")
    assert config.h == 11
    assert notices == ["h snapped 12 → 11: 770 is not divisible by 12"]


def test_T_is_clamped_to_T_max_with_the_reason():
    config, notices = parse_config("?T=4096&T_max=1024")
    assert config.T == 1024
    assert len(notices) == 1 and notices[0].startswith("T clamped 4,096 → 1,024")
    assert "position table" in notices[0]


@pytest.mark.parametrize("value, kind", [("abc", "not a whole number"), ("12.5", "not a whole number"),
                                         ("1e-3", "not a whole number"), ("-5", "out of range"), ("0", "out of range"),
                                         ("1000000000", "out of range"), ("", "has no value"),
                                         ("9" * 500, "too long"), ("9" * 1_990, "too long")])
def test_bad_d_falls_back_to_the_default_and_says_why(value, kind):
    config, notices = parse_config(f"?d={value}")
    assert config.d == 768 and config.h == 12
    assert len(notices) == 1 and kind in notices[0] and "using d=768" in notices[0]


def test_huge_values_name_the_bounds():
    _, notices = parse_config("?d=1000000000")
    assert notices == ["d=1,000,000,000 is out of range: d must be from 1 to 32,768; using d=768"]


def test_thousands_separators_are_accepted():
    config, notices = parse_config("?V=50%2C257&T=1_000")
    assert (config.V, config.T, notices) == (50257, 1000, [])


def test_a_link_reads_the_grammar_of_every_number_box():
    """model.numbers, as the boxes: an exponent, a scale word, a whole number written with a fraction."""
    config, notices = parse_config("?T=1e3&V=32%20thousand&d=1.536e3&L=12.0")
    assert (config.T, config.V, config.d, config.L, notices) == (1000, 32_000, 1536, 12, [])


def test_repeated_key_uses_the_first_and_says_so():
    config, notices = parse_config("?T=512&T=256&T=128")
    assert config.T == 512
    assert notices == ['T is given 3 times; using the first, T="512"']


def test_unknown_keys_are_ignored_with_a_hint_for_wrong_case():
    config, notices = parse_config("?t=5&foo=bar")
    assert config == DEFAULT_CONFIG
    assert len(notices) == 1
    assert '"t" (did you mean T?)' in notices[0] and '"foo"' in notices[0]


def test_preset_key_and_fields_override_it():
    q = parse_query("?preset=gpt3-175b&T=512")
    assert q.config == Config(B=8, T=512, d=12288, h=96, L=96, V=50257, T_max=2048, tie=True)
    assert q.notices == ()


def test_unknown_preset_falls_back_to_gpt2_small():
    config, notices = parse_config("?preset=gpt5")
    assert config == DEFAULT_CONFIG
    assert notices[0].startswith('preset="gpt5" is unknown')


@pytest.mark.parametrize("value, tie", [("1", True), ("0", False), ("true", True), ("OFF", False), ("yes", True)])
def test_tie_values(value, tie):
    assert parse_config(f"?tie={value}") == (replace(DEFAULT_CONFIG, tie=tie), [])


def test_bad_tie_keeps_the_default():
    config, notices = parse_config("?tie=maybe")
    assert config.tie is True and 'tie="maybe" is not 1 or 0' in notices[0]


def test_very_long_query_is_cut_and_reported():
    search = "?T=512&" + "x=1&" * 5000 + "d=1024"
    q = parse_query(search)
    assert q.config.T == 512 and q.config.d == 768  # d came after the cut
    assert any(f"only the first {MAX_QUERY_CHARS:,} were read" in n for n in q.notices)


def test_notices_are_capped():
    search = "&".join(f"{k}=x" for k in ("B", "T", "d", "h", "L", "V", "T_max", "tie")) + "&a=1&dtype=q&embed=q"
    q = parse_query(search)
    assert len(q.notices) == MAX_NOTICES
    assert q.notices[-1].startswith("… and") and "more problems" in q.notices[-1]


def test_notices_quote_user_text_shortened_and_printable():
    _, notices = parse_config("?T=" + "%00" + "a" * 30)
    assert "\x00" not in notices[0] and "…" in notices[0]


def test_view_options():
    q = parse_query("?embed=1&controls=T,d&panels=shapes,budget&dtype=bf16&expanded=1")
    assert q.options == ViewOptions(embed=True, controls=("T", "d"), panels=("shapes", "budget"), dtype="bf16",
                                    expanded=True)
    assert q.notices == ()


def test_controls_keep_canonical_order_and_none_hides_all():
    assert parse_query("?controls=d,T,d").options.controls == ("T", "d")
    assert parse_query("?controls=none").options.controls == ()
    assert parse_query("?controls=all").options.controls == CONTROLS


def test_bad_controls_and_panels_fall_back_with_notices():
    q = parse_query("?controls=T,zz&panels=charts")
    assert q.options.controls == ("T",)
    assert q.options.panels == PANELS
    assert any('ignored "zz"' in n for n in q.notices)
    assert any("panels=charts names none of shapes,budget,changes,tokens,values,training,inference; showing all" in n for n in q.notices)


def test_bad_dtype():
    q = parse_query("?dtype=int8")
    assert q.options.dtype == "fp32" and q.notices == ('dtype="int8" is not one of fp32, bf16, fp16; using fp32',)


def test_to_query_writes_every_field_and_only_non_default_options():
    assert to_query(DEFAULT_CONFIG) == FULL
    opts = ViewOptions(embed=True, controls=("T",), panels=("shapes",), dtype="bf16", expanded=True)
    assert to_query(DEFAULT_CONFIG, opts) == FULL + "&dtype=bf16&expanded=1&embed=1&controls=T&panels=shapes"
    assert to_query(DEFAULT_CONFIG, ViewOptions(controls=())).endswith("&controls=none")


@pytest.mark.parametrize("name", GPT2_RECIPE_PRESETS)
def test_round_trip_of_every_preset(name):
    opts = ViewOptions(embed=True, controls=("T", "d"), panels=("budget",), dtype="fp16")
    q = parse_query(to_query(PRESETS[name], opts))
    assert (q.config, q.options, q.notices) == (PRESETS[name], opts, ())


def test_keys_added_by_bokeh_server_document_are_skipped_silently():
    q = parse_query("?bokeh-autoload-element=p1&bokeh-app-path=/explorer&bokeh-absolute-url=http://x/explorer&T=64")
    assert q.config.T == 64 and q.notices == ()


def test_the_attention_switch_in_a_link():
    q = parse_query(FULL + "&attention=fused")
    assert q.config.attention == "fused" and q.notices == ()
    assert parse_query(to_query(q.config)).config == q.config and "&attention=fused" in to_query(q.config)
    assert parse_query("?preset=llama3-8b").config.attention == "fused"  # the modern presets start fused
    assert parse_query("?preset=llama3-8b&attention=eager").config.attention == "eager"
    assert parse_query("?recipe=modern").config.attention == "fused"
    bad = parse_query(FULL + "&attention=flash")
    assert bad.config == DEFAULT_CONFIG and bad.notices == (
        'attention="flash" is not one of eager, fused (attention: eager (written out: (B, h, T, T) scores, masked '
        'scores and softmax) or fused (F.scaled_dot_product_attention, as FlashAttention: no (B, h, T, T) tensor, a '
        '(B, h, T) fp32 log-sum-exp kept for backward)); using attention=eager',)


# --- a sliding window and Gemma's and gpt-oss's extras (issue 27) -----------------------------------------------
@pytest.mark.parametrize("name", ["gemma-3-1b", "gemma-3-27b", "gpt-oss-20b"])
def test_a_windowed_preset_round_trips_through_its_link(name):
    from model.config import PRESETS as ALL

    q = parse_query(f"?preset={name}")
    assert q.config == ALL[name] and q.notices == ()
    again = parse_query(to_query(q.config))
    assert again.config == q.config and again.notices == ()


def test_window_and_extras_keys_and_their_bad_values():
    q = parse_query("?preset=gemma-3-1b&L=10&attention=eager&attn_softcap=50&final_softcap=30.5&W=64")
    assert (q.config.L, q.config.W, q.config.full_layers, q.config.final_softcap) == (10, 64, (5,), 30.5)
    assert q.notices == ("full_layers 5,11,17,23 → 5: the blocks are 0 … 9 at L = 10, so blocks past them keep no full "
                         "attention (raise L to bring them back)",)
    assert parse_query(to_query(q.config)).config == q.config
    q = parse_query("?preset=gemma-3-1b&W=ten&full_layers=1,x&attn_softcap=-1&sinks=2")
    assert q.config == parse_query("?preset=gemma-3-1b").config and len(q.notices) == 4
    assert q.notices[0].startswith('W="ten" is not a whole number') and q.notices[0].endswith("using W=512")
    assert parse_query("?preset=gemma-3-1b&W=none").config.window is None
    assert parse_query("?W=8&full_layers=1").notices == ()  # GPT-2 small with a window of 8, block 1 full
    assert parse_query("?W=none&full_layers=1").notices[0].startswith("full_layers: ignored without W")


def test_the_state_keeps_the_window_where_valid_and_says_what_a_rule_changed():
    from app.state import ExplorerState

    s = ExplorerState()
    s.preset = "gemma-3-1b"
    s.L = 6
    assert s.config.full_layers == (5,) and s.notices[0].startswith("full_layers 5,11,17,23 → 5")
    s.L = 26
    assert s.config.full_layers == (5, 11, 17, 23) and s.preset == "gemma-3-1b"  # remembered
    s.T = 100
    assert s.notices == ["T = 100 is below the window W = 512: a windowed block attends to and caches all T tokens, "
                         "as a full block does (from T = W on, its cache keeps the last W − 1 = 511)"]
    assert not s.set_field("window", "0") and s.config.W == 512 and len(s.notices) == 1
    assert s.set_field("window", "none") and s.config.window is None and s.config.full_layers == ()
    assert not s.set_field("full_layers", "1") and s.notices[0].startswith("full_layers lists the blocks")
    s.preset = "gpt-oss-20b"
    s.mlp = "gelu"  # the clamp is a SwiGLU's
    assert s.config.swiglu_limit is None and s.notices[0].startswith("swiglu_limit = 7 dropped")
    s.preset = "gpt-oss-20b"
    assert s.set_field("moe", False) and not s.config.moe and not s.config.expert_bias
