"""The inference card's markup, made from `model.infer_report`'s records and words: shared by the live card
(app/cards/infer/view.py) and the exported page (app/export), so it imports no Panel."""
from __future__ import annotations

import html

from model.inference import LEAVES_OUT, Serving
from model.infer_report import CARD_INTRO, CARD_TITLE, ROWS_TITLE, SECTIONS, headline, knee_note
from model.train_report import human

COLUMNS = {"by_B": ("B", "all", "seq", "all_text", "seq_text", "step_text", "bound"),
         "by_T": ("T", "step_ms", "step_text", "rate_text"), "here_B": ("B", "all", "text"),
         "here_T": ("T", "step_ms", "text"), "knee": ("B", "label"),
         "twin_T": ("T", "step_ms", "step_text")}  # the charts' sources' columns (chart_data)


def title_html() -> str:
    """The card's title and intro (`model.infer_report`)."""
    return f"<h2>{html.escape(CARD_TITLE)}</h2><p class='muted'>{html.escape(CARD_INTRO)}</p>"


def chart_title_html(words: dict) -> str:
    """A chart's title above it (`model.infer_report.CHART_B` or `CHART_T`), as text that wraps on a phone."""
    return f"<div class='chart-title'>{html.escape(words['title'])}</div>"


def leaves_out_html() -> str:
    """What the bound leaves out (`model.inference.LEAVES_OUT`), under the charts."""
    return f"<p class='note muted'>{html.escape(LEAVES_OUT)}</p>"


def knee_html(s: Serving) -> str:
    """The tokens-per-second chart's caption: its knee (`model.infer_report.knee_note`)."""
    return f"<p class='note muted'>{html.escape(knee_note(s))}</p>"


def headline_html(s: Serving) -> str:
    """The headline's sentences (`model.infer_report.headline`), its figures in bold."""
    e = html.escape
    sentences = ["".join(f"<b>{e(t)}</b>" if strong else e(t) for t, strong in parts) for parts in headline(s.result)]
    return '<div class="head">' + "".join(f"<div>{x}</div>" for x in sentences) + "</div>"


LINES_FRAME = ('<table class="lines">', "</table>")  # around the rows of `line_rows`


def line_rows(s: Serving) -> list[str]:
    """The rows of every figure by section (`model.infer_report.SECTIONS`): label, formula in the lesson's notation,
    value; then the decode step's tensors with their lesson shapes. One row per string (the exported page keeps
    each distinct row once)."""
    e, have = html.escape, {x.key: x for x in s.result.lines}
    out = []
    for title, keys in SECTIONS.items():
        out.append(f'<tr><th colspan="3">{e(title)}</th></tr>')
        out += [f'<tr data-key="{e(k)}"><td>{e(have[k].label)}</td><td class="f">{e(have[k].formula)}</td>'
                f'<td class="v">{e(human(have[k]))}</td></tr>' for k in keys if k in have]
    out.append(f'<tr><th colspan="3">{e(ROWS_TITLE)}</th></tr>')
    out += [f'<tr><td>{e(r.name)}: {e(r.label)}</td><td class="f">{e(r.symbolic)}</td><td class="v">'
            f'{e(str(r.shape))}</td></tr>' for r in s.result.rows]
    return out


def lines_html(s: Serving) -> str:
    """The table of every figure (`line_rows`)."""
    return LINES_FRAME[0] + "".join(line_rows(s)) + LINES_FRAME[1]
