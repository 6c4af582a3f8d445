"""Number boxes typed into as text: what is typed is sent on Enter or when the box loses focus, and the server's
value is shown in the box, never over what is being typed. One definition (`TYPED_BOX`) serves the controls card's
boxes (app.cards.controls.esm) and `NumberBox`, the training card's.

Why: an answer to an earlier send can arrive while the next value is being typed (a busy server, a slow network).
Written into the box, it replaced the typing, and Enter then sent the old value again: the typed value was lost.
A box typed into since its last send keeps its text until it is sent or left; left unsent, it shows the value in use
again. What the server does with the text (`model.numbers`' grammar: 300e9, 300,000,000,000, 300 billion) is the
card's.
"""
from __future__ import annotations

import param
from panel.custom import JSComponent

from .styles import ACCENT, BASE

TYPED_BOX = r"""
// a number box `box` sends its text, trimmed, by `send(text)` on Enter or when it loses focus, each new text once;
// typed into since its last send (box.dataset.typing), an answer arriving now must not replace what is being typed
// (whoever writes into the box checks the flag); left unsent (typed back to what it held), `restore()` shows the
// value in use again
const typedBox = (box, send, restore) => {
  let typed = null;
  const commit = () => {
    delete box.dataset.typing;
    const text = box.value.trim();
    if (text === typed) return;
    typed = text;
    send(text);
  };
  box.addEventListener("input", () => { box.dataset.typing = "1"; });
  box.addEventListener("keydown", (e) => { if (e.key === "Enter") commit(); });
  box.addEventListener("change", commit);
  box.addEventListener("focus", () => { typed = box.value.trim(); });
  box.addEventListener("blur", () => { if (box.dataset.typing) { delete box.dataset.typing; restore(); } });
};
"""

_CSS = BASE + f"""
label {{ display: flex; flex-direction: column; gap: 2px; font-size: 13px; }}
label span {{ white-space: nowrap; }}
input {{ width: 100%; height: 31px; box-sizing: border-box; font: inherit; font-size: 14px;
  font-variant-numeric: tabular-nums; border: 1px solid #d1d5db; border-radius: 4px; padding: 0 8px; color: inherit;
  background: #fff; }}
input:focus {{ outline: 2px solid {ACCENT}; outline-offset: -1px; }}
input:disabled {{ background: #f3f4f6; color: #6b7280; cursor: not-allowed; }}
"""


class NumberBox(JSComponent):
    """A labelled text box for a number (`TYPED_BOX`): `value` is the text the server shows, or the text typed and
    sent; its label names the input for screen readers. One Bokeh model, as Panel's TextInput was."""

    value = param.String(default="", doc="the text shown, or the text typed and sent (the card reads it)")
    label = param.String(default="", doc="the words above the box, which name it")
    disabled = param.Boolean(default=False, doc="shown, not typed into")

    _esm = TYPED_BOX + """
export function render({ model, el }) {
  const label = document.createElement("label");
  const words = document.createElement("span");
  words.textContent = model.label;
  const box = document.createElement("input");
  box.type = "text";
  box.autocomplete = "off";
  box.spellcheck = false;
  box.value = model.value;
  box.disabled = model.disabled;
  label.append(words, box);
  el.appendChild(label);
  typedBox(box, (text) => { model.value = text; }, () => { box.value = model.value; });
  model.on("value", () => { if (!box.dataset.typing) box.value = model.value; });
  model.on("disabled", () => { box.disabled = model.disabled; });
  model.on("label", () => { words.textContent = model.label; });
}
"""
    _stylesheets = [_CSS]
