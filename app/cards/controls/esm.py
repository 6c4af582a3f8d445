"""The controls card's browser side (an ESM module for `pn.custom.JSComponent`), kept apart from view.py.

It draws the preset picker, a label, number box and slider per field of `spec`, the recipe choice with each
change as its own switch (a select per switch, a number box per size d_ff / h_kv / d_head, QK-norm's checkbox), then in
a row of its own the MLP's choice, dense or MoE, with a mixture of experts' boxes E / k / d_expert / E_shared /
d_shared and the layout's moe_step / dense_first / dense_layers (hidden where the model is dense; d_shared where it has
no shared experts), the window's W and full_layers (full_layers hidden without a window); a line naming Gemma's or
gpt-oss's extras where the model has them; each switch and size with a "?" that says what it is, on hover, focus or a tap), the advanced fold and the status line,
and writes `view` into them. A number box is a text box: it shows its value with thousands separators and sends
what is typed as text (app.boxes' typedBox: never replaced by an answer while it is typed), read on the server by
`model.numbers`' grammar (1024, 1,024, 1e3, 70 million). Sliders follow the keyboard as Panel's did (arrows one step, PageUp/PageDown
five, Home/End the ends) and the pointer (drag or click on the track); each input goes to the server in
`model.asked`, the list of inputs it has not yet answered, each `[count, name, value]` (at most one per animation
frame while dragging; consecutive inputs to one field keep only the latest). The whole list travels every time
because Panel keeps only the last of several changes to one property that arrive together: a box typed into
and a slider pressed right after would otherwise lose the box's value. Inputs left unanswered go again after
1.5 s, then twice as long each time up to 24 s (a message lost on its way, as JupyterLab sometimes loses the first). The handle keeps Panel's
class name (`noUi-handle`) and its ARIA slider role, so tests and screen readers find it as before.
"""

from ...boxes import TYPED_BOX

CONTROLS_ESM = TYPED_BOX + r"""
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}[c]));

export function render({ model, el }) {
  const spec = JSON.parse(model.spec);
  const fields = {};      // name -> {box, slider, handle, fill, range: {start, end, step, stops}, position}
  const checks = {};      // name -> checkbox input
  let sent = 0;           // inputs sent; the server's view carries how many it has answered (ack)
  let lastName = null;
  let unanswered = [];    // [count, name, value] of every input the server has not answered yet
  const send = (name, value) => {
    sent += 1;
    lastName = name;
    const last = unanswered[unanswered.length - 1];
    if (last && last[1] === name) unanswered[unanswered.length - 1] = [sent, name, value];
    else unanswered.push([sent, name, value]);
    model.asked = unanswered.slice();
    again(1500);
  };
  // A message can be lost on its way (in JupyterLab the first one after the output renders sometimes is): while
  // inputs stay unanswered, the list goes again, 1.5 s, 3 s, 6 s, 12 s and 24 s later. A trailing ["again", n]
  // makes it a new value (an equal list would not be sent); the server skips it and every count it has answered.
  let retry = null, resent = 0;
  const again = (wait) => {
    clearTimeout(retry);
    if (wait > 24000) return;
    retry = setTimeout(() => {
      if (!unanswered.length) return;
      resent += 1;
      model.asked = [...unanswered, ["again", resent]];
      again(wait * 2);
    }, wait);
  };

  const root = document.createElement("div");
  root.className = "controls";
  const fieldHtml = (f) => `<div class="control control-${f.name}"><div class="head">
    <div class="lab" title="${esc(f.doc)}"><span class="sym">${esc(f.name)}</span><div class="name muted">${esc(f.short)}</div></div>
    <div class="box box-${f.name}"><input type="text" spellcheck="false" autocomplete="off" aria-label="${esc(f.name)}"></div></div>
    <div class="slider slider-${f.name}"><div class="track"><div class="fill"></div>
    <div class="noUi-handle" role="slider" tabindex="0" aria-label="${esc(f.name)}" aria-orientation="horizontal"></div></div></div></div>`;
  let markup = "";
  if (spec.preset) {
    markup += `<div class="preset-row"><b>Preset</b><div class="preset"><select>${
      Object.entries(spec.groups).map(([family, labels]) => `<optgroup label="${esc(family)}">${
        labels.map((p) => `<option>${esc(p)}</option>`).join("")}</optgroup>`).join("")}</select></div></div>`;
  }
  if (spec.main.length) markup += `<div class="fields">${spec.main.map(fieldHtml).join("")}</div>`;
  if (spec.recipe) {
    markup += `<div class="preset-row recipe-row"><b>Recipe</b><div class="recipe"><select aria-label="recipe">${
      spec.recipe.map(([k, label]) => `<option value="${esc(k)}">${esc(label)}</option>`).join("")}</select></div></div>`;
  }
  const help = (doc) => `<span class="help" tabindex="0" role="note" aria-label="${esc(doc)}">?<span class="tip">${esc(doc)}</span></span>`;
  const switchHtml = (w) => `<div class="switch switch-${w.name}">
      <span class="top"><span class="name muted">${esc(w.name)}</span>${help(w.doc)}</span><select aria-label="${esc(w.name)}">${
      w.options.map(([v, label]) => `<option value="${esc(v)}">${esc(label)}</option>`).join("")}</select></div>`;
  const sizeHtml = (z) => `<div class="switch size size-${z.name}"><span class="top"><span class="sym">${esc(z.name)}</span>${help(z.doc)}</span>
      <div class="box recipe-${z.name}"><input type="text" spellcheck="false" autocomplete="off" aria-label="${esc(z.name)}"></div></div>`;
  for (const moe of [false, true]) {  // the recipe's switches and sizes, then the MLP's choice with its experts' boxes
    const items = spec.switches.filter((w) => w.moe === moe).map(switchHtml).join("") +
      spec.sizes.filter((z) => z.moe === moe).map(sizeHtml).join("") + (!moe && spec.qk ?
      `<label class="check check-${spec.qk.name}" title="${esc(spec.qk.doc)}"><input type="checkbox">${esc(spec.qk.label)}</label>` : "");
    if (items) markup += `<div class="switches${moe ? " moe-row" : ""}">${items}</div>`;
  }
  if (spec.advanced.length || spec.checks.length) {
    markup += `<details class="advanced"><summary>${esc(spec.advanced_title)}</summary><div class="fields">${
      spec.advanced.map(fieldHtml).join("")}${spec.checks.map((c) =>
      `<label class="check check-${c.name}"><input type="checkbox">${esc(c.label)}</label>`).join("")}</div></details>`;
  }
  markup += `<div class="extras muted"></div><div class="status-line"></div>`;
  root.innerHTML = markup;
  el.appendChild(root);
  const status = root.querySelector(".status-line");
  const extras = root.querySelector(".extras");  // Gemma's or gpt-oss's extras, in words (model.families.extras_line)
  const preset = root.querySelector(".preset select");
  if (preset) preset.addEventListener("change", () => send("preset", preset.value));
  for (const c of [...spec.checks, ...(spec.qk ? [spec.qk] : [])]) {
    const box = root.querySelector(`.check-${c.name} input`);
    box.addEventListener("change", () => send(c.name, box.checked));
    checks[c.name] = box;
  }
  const selects = {};     // "recipe" and each switch -> its select
  for (const name of [...(spec.recipe ? ["recipe"] : []), ...spec.switches.map((w) => w.name)]) {
    const select = root.querySelector(name === "recipe" ? ".recipe select" : `.switch-${name} select`);
    select.addEventListener("change", () => send(name, select.value));
    selects[name] = select;
  }
  const sizes = {};       // d_ff, h_kv, d_head, E, k, … -> number box
  for (const z of spec.sizes) {
    sizes[z.name] = root.querySelector(`.recipe-${z.name} input`);
    typedBox(sizes[z.name], (text) => send(z.name, text), () => apply());
  }
  const showNumber = (name, box, value) => {  // not over what the learner is typing; in the focused box, the
    // server's answer to it (a clamp) once it is sent
    const text = typeof value === "number" ? String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",") : value;  // 50,257:
    // model.units.thousands; dense_layers' list of blocks comes as text ("0,1,2", "none")
    if (box.value !== text && !box.dataset.typing && (box !== box.getRootNode().activeElement || lastName === name)) {
      box.value = text;
    }
  };

  const place = (f) => {  // the handle and the filled part at the field's position
    const {start, end} = f.range;
    const share = end > start ? (f.position - start) / (end - start) : 0;
    const pct = `${100 * Math.min(1, Math.max(0, share))}%`;
    f.handle.style.left = pct;
    f.fill.style.width = pct;
    const shown = f.range.stops ? f.range.stops[f.position] : f.position;
    f.handle.setAttribute("aria-valuenow", String(shown));
    f.handle.setAttribute("aria-valuemin", String(f.range.stops ? f.range.stops[0] : start));
    f.handle.setAttribute("aria-valuemax", String(f.range.stops ? f.range.stops[f.range.stops.length - 1] : end));
  };
  let frame = null;
  const move = (f, position) => {  // a slider moved to `position`: show it, send it (once per frame)
    const {start, end, step} = f.range;
    position = Math.min(end, Math.max(start, start + Math.round((position - start) / step) * step));
    if (f.range.stops) position = Math.min(position, f.range.stops.length - 1);
    if (position === f.position) return;
    f.position = position;
    place(f);
    const value = f.range.stops ? f.range.stops[position] : position;
    f.box.value = String(value);
    if (frame === null) {
      frame = requestAnimationFrame(() => { frame = null; for (const g of Object.values(fields)) {
        if (g.pending !== undefined) { const v = g.pending; g.pending = undefined; send(g.name, v); } } });
    }
    f.pending = value;
  };
  const KEYS = {ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -5, PageUp: 5};
  for (const spec_f of [...spec.main, ...spec.advanced]) {
    const c = root.querySelector(`.control-${spec_f.name}`);
    const f = {name: spec_f.name, box: c.querySelector(".box input"), slider: c.querySelector(".slider"),
               handle: c.querySelector(".noUi-handle"), fill: c.querySelector(".fill"),
               track: c.querySelector(".track"), range: {start: 0, end: 1, step: 1, stops: null}, position: 0,
               disabled: false, pending: undefined};
    fields[f.name] = f;
    f.handle.addEventListener("keydown", (e) => {
      if (f.disabled) return;
      const {start, end, step} = f.range;
      let to = null;
      if (e.key in KEYS) to = f.position + KEYS[e.key] * step;
      else if (e.key === "Home") to = start;
      else if (e.key === "End") to = end;
      if (to === null) return;
      e.preventDefault();
      move(f, to);
    });
    const fromPointer = (e) => {
      const box = f.track.getBoundingClientRect();
      const {start, end} = f.range;
      return start + (end - start) * Math.min(1, Math.max(0, (e.clientX - box.left) / box.width));
    };
    f.slider.addEventListener("pointerdown", (e) => {
      if (f.disabled || e.button !== 0) return;
      e.preventDefault();
      f.handle.focus();
      f.slider.setPointerCapture(e.pointerId);
      move(f, fromPointer(e));
      const drag = (m) => move(f, fromPointer(m));
      const stop = () => { f.slider.removeEventListener("pointermove", drag); f.slider.removeEventListener("pointerup", stop);
                           f.slider.removeEventListener("pointercancel", stop); };
      f.slider.addEventListener("pointermove", drag);
      f.slider.addEventListener("pointerup", stop);
      f.slider.addEventListener("pointercancel", stop);
    });
    typedBox(f.box, (text) => send(f.name, text), () => apply());
  }

  const apply = () => {
    const v = JSON.parse(model.view);
    if (!v || !v.fields) return;
    unanswered = unanswered.filter((q) => q[0] > v.ack);
    if (v.ack < sent) return;  // an answer to an older input: the newer one is on its way
    for (const f of Object.values(fields)) {
      const s = v.fields[f.name];
      f.range = {start: s.start, end: s.end, step: s.step, stops: s.stops};
      f.position = s.position;
      f.disabled = s.disabled;
      f.slider.classList.toggle("disabled", s.disabled);
      f.handle.setAttribute("aria-disabled", String(s.disabled));
      place(f);
      showNumber(f.name, f.box, s.value);
    }
    for (const [name, box] of Object.entries(sizes)) {  // a dense model has no E, k, d_expert, …: their boxes hide
      const none = v.sizes[name] === null;
      box.closest(".size").style.display = none ? "none" : "";
      if (!none) showNumber(name, box, v.sizes[name]);
    }
    for (const [name, select] of Object.entries(selects)) {
      const want = name === "recipe" ? v.recipe : v.switches[name];
      if (select.value !== want) select.value = want;
    }
    for (const [name, box] of Object.entries(checks)) box.checked = v.checks[name];
    if (preset && preset.value !== v.preset) preset.value = v.preset;
    for (const [name, text] of Object.entries(v.names)) {  // h and T_max: their names follow the recipe
      const label = root.querySelector(`.control-${name} .name`);
      if (label && label.textContent !== text) label.textContent = text;
    }
    if (status.innerHTML !== v.status) status.innerHTML = v.status;
    if (extras.textContent !== v.extras) extras.textContent = v.extras;
    extras.style.display = v.extras ? "" : "none";
  };
  model.on("view", apply);
  apply();
}
"""
