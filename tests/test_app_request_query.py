"""The query as the server receives it: Tornado's `request.arguments` (latin-1 keys, bytes values) back to a query
string for `parse_query`, and the cut of over-long queries. No browser: tests/test_browser_links.py drives pages."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tornado.httputil import parse_qs_bytes

from app.query import KEYS, MAX_QUERY_CHARS, parse_query, query_from_arguments
from model import PRESETS


def served(raw_query: str):
    """What the explorer parses for a page opened with `raw_query` (without "?"): Tornado's split, then ours."""
    return parse_query(query_from_arguments(parse_qs_bytes(raw_query, keep_blank_values=True)))


def test_a_valid_link_reads_the_same_through_the_server():
    q = served("B=4&T=512&d=1024&h=16&L=24&V=50257&T_max=1024&tie=1&dtype=bf16")
    assert (q.config.B, q.config.T, q.config.d, q.config.h, q.config.L, q.notices) == (4, 512, 1024, 16, 24, ())
    assert q.options.dtype == "bf16"


def test_unicode_digits_are_named_not_converted():
    q = served("T=%C2%B2&B=%E2%91%A0&h=%D9%A1%D9%A2")  # ², ①, Arabic-Indic 12 (int() would accept that one)
    assert q.config == PRESETS["gpt2-small"]
    assert q.notices == ('B="①" is not a whole number from 1 to 4,096 written with the digits 0–9; using B=8',
                         'T="²" is not a whole number from 1 to 16,777,216 written with the digits 0–9; using T=1,024',
                         'h="١٢" is not a whole number from 1 to 32,768 written with the digits 0–9; using h=12')


def test_nul_invalid_utf8_and_non_ascii_keys_arrive_as_replacement_characters():
    args = parse_qs_bytes("d=%00&V=%FF%FE&%C3%A9=1&T=%", keep_blank_values=True)
    assert args["Ã©"] == [b"1"]  # Tornado's latin-1 key for "é"
    q = parse_query(query_from_arguments(args))
    known = 'ignored unknown key "é"; known keys: ' + ", ".join(KEYS)  # every field's key, then the options'
    assert known.startswith('ignored unknown key "é"; known keys: B, T, d, h, L, V, T_max, tie, recipe, norm, norm_biased, norm_plain, embed_norm, '
                            'positions, d_rot, nope_layers, mlp, d_ff, h_kv, d_head, bias, qk_norm, qk_norm_wide, qk_l2, attn_temperature, attn_gate, '
                            'attention')
    assert known.endswith(", group, efficiency")
    assert q.notices == (known,
                         'T="%" is not a whole number from 1 to 16,777,216; using T=1,024',
                         'd="\ufffd" is not a whole number from 1 to 32,768; using d=768',
                         'V="\ufffd\ufffd" is not a whole number from 1 to 524,288; using V=50,257')


def test_repeated_keys_keep_their_first_value_and_count():
    q = served("T=512&L=6&T=256")
    assert (q.config.T, q.config.L) == (512, 6) and q.notices == ('T is given 2 times; using the first, T="512"',)


def test_bokeh_embed_arguments_are_skipped():
    q = served("bokeh-autoload-element=p1&bokeh-app-path=/explorer&bokeh-absolute-url=http://x/explorer&T=64")
    assert q.config.T == 64 and q.notices == ()


def test_five_thousand_digits_are_too_long_never_int():
    q = served("T=" + "9" * 5000)
    assert q.notices == ("the link's query is 5,002 characters long; only the first 2,000 were read",
                         'T="99999999999999999999999…" is too long: T is a whole number from 1 to 16,777,216; using T=1,024')


def test_a_number_cut_by_the_length_limit_is_not_read_as_a_smaller_one():
    head = "x=" + "1" * (MAX_QUERY_CHARS - 2 - len("&T=5"))  # the limit falls right after "T=5" of "T=512"
    q = parse_query(head + "&T=512&d=1024")
    assert q.config.T == 1024 and q.config.d == 768
    assert q.notices[0] == f"the link's query is {len(head) + 13:,} characters long; only the first 2,000 were read"
    assert not any(n.startswith("T=") for n in q.notices)


def test_non_bytes_payload_values_are_skipped():
    assert query_from_arguments({"T": [b"64", 7, None], "d": "512", "L": None}) == "?T=64&d=512"
    assert query_from_arguments(None) == "" and query_from_arguments({}) == ""


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=12), st.lists(st.binary(max_size=60), max_size=3), max_size=20))
def test_any_arguments_give_a_valid_view(arguments):
    q = parse_query(query_from_arguments(arguments))
    cfg = q.config
    assert cfg.d % cfg.h == 0 and cfg.T <= cfg.T_max and len(q.notices) <= 8
