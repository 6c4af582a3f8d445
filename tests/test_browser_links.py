"""Every link gets a page: hostile queries in real Chromium give the explorer with a notice naming what was
replaced, and the server logs no traceback.

Before the fix, Panel's `Location` converted every value for which `str.isdigit()` holds with `int()` before the
explorer's parser saw it: `?T=²`, `?B=①` and 4,300+ digits left an empty page and a ValueError in the log.
Queries here are written percent-encoded, as the browser sends them, so the page's notices can be compared
with `parse_query` of the same text.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from app.query import KEYS, parse_query
from pagetools import open_explorer

pytestmark = pytest.mark.browser
DEFAULT_ADDRESS = re.compile(r"/explorer\?B=8&T=1024&d=768&h=12&L=12&V=50257&T_max=1024&tie=1$")
NINES = "9" * 5000
# Unicode digits: str.isdigit() is true for all of them, int() accepts only some ("١٢", "１２")
UNICODE_DIGITS = {"B": "%E2%91%A0", "T": "%C2%B2", "d": "%EF%BC%91%EF%BC%92", "h": "%D9%A1%D9%A2",
                  "L": "%E2%91%A4", "V": "%E2%81%B6", "T_max": "%E2%91%A6", "tie": "%E2%91%A0"}  # ①, ², １２, ١٢, ⑤, ⁶, ⑦


def assert_log_clean(server) -> None:
    log = server.log()
    assert "Traceback" not in log and "ERROR" not in log, log


def notices_shown(page) -> list[str]:
    page.locator(".link-notices li").first.wait_for()
    return page.locator(".link-notices li").all_inner_texts()


def open_hostile(chromium, server, query: str, **size):
    """Open `query`, check the page is the explorer at the defaults with the parser's notices; return the page."""
    o = open_explorer(chromium, server, query, **size)
    page = o.page
    shown = notices_shown(page)
    assert shown == list(parse_query(query).notices)
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 1024, 1024)")
    expect(page).to_have_url(DEFAULT_ADDRESS)  # the address now holds the view shown
    assert o.errors == []
    assert_log_clean(server)
    return page, shown


def test_unicode_digits_in_every_field_are_named_and_replaced(chromium, server):
    query = "?" + "&".join(f"{k}={v}" for k, v in UNICODE_DIGITS.items())
    page, shown = open_hostile(chromium, server, query)
    assert shown[:2] == ['B="①" is not a whole number from 1 to 4,096 written with the digits 0–9; using B=8',
                         'T="²" is not a whole number from 1 to 16,777,216 written with the digits 0–9; using T=1,024']
    assert 'd="１２" is not a whole number from 1 to 32,768 written with the digits 0–9; using d=768' in shown
    assert 'h="١٢" is not a whole number from 1 to 32,768 written with the digits 0–9; using h=12' in shown
    assert 'tie="①" is not 1 or 0 (tie=1: the head reuses W_te, as GPT-2); using tie=1' in shown
    assert len(shown) == 8 and all(f"using {k}=" in " ".join(shown) for k in UNICODE_DIGITS)
    page.close()


@pytest.mark.parametrize("query, expected", [
    ("?T=" + NINES, ['the link\'s query is 5,002 characters long; only the first 2,000 were read',
                     'T="99999999999999999999999…" is too long: T is a whole number from 1 to 16,777,216; using T=1,024']),
    ("?T=%C2%B2&B=%E2%91%A0&d=" + NINES, [
        "the link's query is 5,023 characters long; only the first 2,000 were read",
        'B="①" is not a whole number from 1 to 4,096 written with the digits 0–9; using B=8',
        'T="²" is not a whole number from 1 to 16,777,216 written with the digits 0–9; using T=1,024',
        'd="99999999999999999999999…" is too long: d is a whole number from 1 to 32,768; using d=768']),
])
def test_five_thousand_digit_values_get_a_page_with_a_notice(chromium, server, query, expected):
    page, shown = open_hostile(chromium, server, query)
    assert shown == expected
    page.close()


def test_nul_bytes_invalid_utf8_and_percent_junk_are_shown_as_replacement_characters(chromium, server):
    query = "?d=%00&V=%FF%FE&T_max=%25ZZ%&L=%&%C3%A9%00=1&B=%E2%82%AC"
    page, shown = open_hostile(chromium, server, query)
    assert 'd="\ufffd" is not a whole number from 1 to 32,768; using d=768' in shown
    assert 'V="\ufffd\ufffd" is not a whole number from 1 to 524,288; using V=50,257' in shown
    assert 'T_max="%ZZ%" is not a whole number from 1 to 16,777,216; using T_max=1,024' in shown
    assert 'L="%" is not a whole number from 1 to 1,024; using L=12' in shown
    assert 'B="€" is not a whole number from 1 to 4,096; using B=8' in shown
    assert any(n.startswith('ignored unknown key "é\ufffd"') for n in shown)
    page.close()


def test_a_thousand_query_fields_get_a_page(chromium, server):
    page, shown = open_hostile(chromium, server, "?" + "&".join(f"x{i}=1" for i in range(1000)))
    assert shown[0] == "the link's query is 6,889 characters long; only the first 2,000 were read"
    assert shown[1].startswith('ignored unknown keys "x0", "x1", "x2", "x3", "x4" and 296 more; known keys: B, T,')
    page.close()


def test_a_thousand_and_one_query_fields_are_refused_by_tornado_with_an_empty_400(chromium, server):
    """Tornado refuses more than 1,000 query fields before any application code runs: the browser shows its own
    "This page isn't working … HTTP ERROR 400" page (docs/course-authors.md, "What a bad link shows"). The server logs nothing and carries on."""
    page = chromium.new_page()
    statuses: list[int] = []
    page.on("response", lambda r: statuses.append(r.status))
    with pytest.raises(PlaywrightError, match="ERR_HTTP_RESPONSE_CODE_FAILURE"):
        page.goto(f"{server}/explorer?" + "&".join(f"x{i}=1" for i in range(1001)))
    assert statuses == [400]
    expect(page.locator("body")).to_contain_text("HTTP ERROR 400")
    page.close()
    assert_log_clean(server)
    o = open_explorer(chromium, server, "?T=64")  # the next link is served as usual
    expect(o.page.locator("table.shapes")).to_contain_text("(8, 12, 64, 64)")
    o.page.close()
    assert o.errors == []


@pytest.mark.parametrize("theme", ["%FF", "dark"])
def test_panel_never_takes_its_theme_from_the_link(chromium, server, theme):
    """Panel reads `?theme=` itself when the app sets no theme: "%FF" raised UnicodeDecodeError (no page) and
    "dark" darkened the widgets under a notice saying the key was ignored."""
    page, shown = open_hostile(chromium, server, f"?theme={theme}")
    assert shown == [f'ignored unknown key "theme"; known keys: {", ".join(KEYS)}']  # the list: test_app_request_query
    background = page.locator(".box-T input").evaluate("e => getComputedStyle(e).backgroundColor")
    assert background == "rgb(255, 255, 255)"
    page.close()


def test_a_link_beyond_the_sizes_a_pass_takes_gets_the_page_with_b_lowered(chromium, server):
    """Llama 4 Scout at its 10,485,760-token context, 4,096 sequences asked: B·T beyond 2²⁷ tokens per pass, so the
    page lowers B to 12 and says so (the parser's notice), shows the pass at (12, 10,485,760) and serves it: the T
    chart's last point is the context itself. No traceback."""
    query = "?preset=llama4-scout&B=4096&T=10485760"
    want = list(parse_query(query).notices)
    assert want == ["B lowered 4,096 → 12: B·T is at most 134,217,728 (2²⁷) tokens per pass at T = 10,485,760, so that "
                    "every tensor of the pass fits torch's 64-bit sizes"]
    o = open_explorer(chromium, server, query, width=1360, height=1000)
    page = o.page
    assert notices_shown(page) == want
    expect(page.locator("table.shapes")).to_contain_text("(12, 10485760)", timeout=60_000)
    page.locator(".inference-card").first.scroll_into_view_if_needed()  # built off the event loop: about 10 s here
    expect(page.locator(".inference-card .infer-headline")).to_contain_text("Time to first token", timeout=180_000)
    Ts = page.evaluate("() => Bokeh.documents[0].get_model_by_name('infer-by_T').data.T")
    assert Ts[-2:] == [8_388_608, 10_485_760] and len(Ts) <= 10
    assert o.errors == []
    assert_log_clean(server)
    page.close()
