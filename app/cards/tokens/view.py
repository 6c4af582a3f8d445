"""The tokens strip: a text box, the text split into GPT-2 tokens (tiktoken, offline) and bytes per token.

`token_chips` and `token_stats` are pure (tested without a browser); `TokensView` is the view. The text is
capped in the model (`tokenizer.MAX_TEXT_CHARS`); the text box stops at one character more, so 10 MB
pasted into the page is cut in the browser and the page says it was cut.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import panel as pn
import param

from model import tokenizer
from model import units as fmt

from ...state import ExplorerState
from ...styles import BASE, MUTED, RULE, T2

MAX_CHIPS = 240  # tokens drawn as chips; the counts always cover the whole (capped) text
GPT2_V = 50_257


@dataclass(frozen=True)
class Chip:
    text: str  # the token's text, spaces shown as "·" and newlines as "↵"
    id: int
    beyond_V: bool  # id >= V: this configuration's W_te has no row for it


def token_chips(tokens: tokenizer.Tokens, V: int, limit: int = MAX_CHIPS) -> list[Chip]:
    """The first `limit` tokens as chips."""
    return [Chip(text=piece.replace(" ", "·").replace("\n", "↵").replace("\t", "→") or "∅", id=i, beyond_V=i >= V)
            for piece, i in zip(tokens.pieces[:limit], tokens.ids[:limit])]


def token_stats(tokens: tokenizer.Tokens) -> str:
    """ "23 tokens · 104 bytes · 4.52 bytes/token" """
    n = len(tokens.ids)
    return (f"{fmt.thousands(n)} token{'s' if n != 1 else ''} · {fmt.thousands(tokens.n_bytes)} bytes · "
            f"{tokens.bytes_per_token:.2f} bytes/token")


def tokens_html(tokens: tokenizer.Tokens, V: int) -> str:
    chips = token_chips(tokens, V)
    cells = "".join(f'<span class="chip{" bad" if c.beyond_V else ""}" title="id {c.id}">'
                    f'<span class="t">{html.escape(c.text)}</span><span class="id">{c.id}</span></span>' for c in chips)
    more = len(tokens.ids) - len(chips)
    tail = f'<span class="more muted">… {fmt.thousands(more)} more</span>' if more > 0 else ""
    notes = []
    if tokens.truncated:
        notes.append(f"The text was cut to its first {fmt.thousands(tokenizer.MAX_TEXT_CHARS)} characters before "
                     f"tokenizing.")
    if any(c.beyond_V for c in chips) or any(i >= V for i in tokens.ids):
        notes.append(f"Red ids are ≥ V = {fmt.thousands(V)}: this configuration's W_te has no row for them.")
    note = "".join(f'<p class="warn">{html.escape(n)}</p>' for n in notes)
    if not tokens.ids:
        cells = '<span class="muted">Type some text to see its tokens.</span>'
    return f'<p class="stats">{html.escape(token_stats(tokens))}</p>{note}<div class="chips">{cells}{tail}</div>'


TOKENS_CSS = BASE + f"""
.stats {{ font-size: 13px; font-weight: 600; margin: 2px 0 6px 0; font-variant-numeric: tabular-nums; }}
.warn {{ font-size: 12.5px; color: #b42318; margin: 0 0 6px 0; }}
.chips {{ display: flex; flex-wrap: wrap; gap: 3px; max-height: 168px; overflow-y: auto; }}
.chip {{ display: inline-flex; flex-direction: column; align-items: center; border: 1px solid {RULE};
         border-radius: 5px; padding: 1px 4px; background: #f8fafc; line-height: 1.2; }}
.chip:nth-child(even) {{ background: #eef2ff; }}
.chip .t {{ font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 12.5px; white-space: pre; }}
.chip .id {{ font-size: 10px; color: {MUTED}; font-variant-numeric: tabular-nums; }}
.chip.bad {{ border-color: {T2}; }} .chip.bad .id {{ color: #b42318; font-weight: 700; }}
.more {{ align-self: center; font-size: 12px; padding: 0 4px; }}
"""


class TokensView(pn.viewable.Viewer):
    """Text box, GPT-2 tokens with their ids, and bytes per token."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._input = pn.widgets.TextAreaInput(value=self.state.text, max_length=tokenizer.MAX_TEXT_CHARS + 1,
                                               height=64, sizing_mode="stretch_width", margin=(0, 0, 6, 0),
                                               placeholder="Type or paste text to tokenize")
        self._input.param.watch(self._typed, ["value_input"])
        self._out = pn.pane.HTML(self.html(), stylesheets=[TOKENS_CSS], sizing_mode="stretch_width", margin=0)
        self.state.on_inputs(self._update, ["text", "V"])  # the chips depend on the text and V only

    def html(self) -> str:
        return tokens_html(self.state.tokens, self.state.config.V)

    def _typed(self, event: param.parameterized.Event) -> None:
        self.state.text = event.new or ""

    def _update(self, *_events: param.parameterized.Event) -> None:
        if self._input.value_input != self.state.text:  # text set in code, not typed
            self._input.value = self.state.text
        self._out.object = self.html()

    def __panel__(self) -> pn.viewable.Viewable:
        head = pn.pane.HTML(
            f"<h2>Tokens</h2><p class='muted'>Text reaches the model as token ids from GPT-2's vocabulary "
            f"(V = {GPT2_V:,}: 256 bytes, 50,000 merges, &lt;|endoftext|&gt;). English averages ≈ 4 bytes per "
            f"token. Spaces show as ·.</p>", stylesheets=[BASE], sizing_mode="stretch_width", margin=(0, 0, 6, 0))
        return pn.Column(head, self._input, self._out, sizing_mode="stretch_width", margin=0)
