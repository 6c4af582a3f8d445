// Transformer Shapes, exported page: the whole page logic, run as one Bokeh CustomJS callback.
//
// Inputs (CustomJS args): `spec`, JSON from app/export/spec.py (fields, bounds, presets, rules and their messages,
// the lines of model.budget and model.trace with their formulas, the rows of every pass structure, the live
// page's words), and `widgets`, the page's models, found here by name. app/export/spec.py appends BUDGET_FNS and
// MEMORY_FNS (each line's formula compiled to JavaScript) and `return main(cb_obj);`.
// Every function here mirrors a Python one, named in its comment; tests run both on the same inputs in Chromium.
// Whole numbers are BigInt where formulas are exact, so (B, h, T, T) element counts stay exact beyond 2**53.

const S = JSON.parse(spec);
const W = Object.fromEntries(widgets.map((m) => [m.name, m]));
const ST = (window.__transformerShapes ??= {asked: null, cfg: null, dtype: null, expanded: false, rejected: [],
                                             pushed: {}, key: null});

// ---- formatting: model/units.py ----------------------------------------------------------------------------------
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}[c]));

function pyRound(x) {  // Python's round(x) for a float: ties to even
  const r = Math.round(x);
  return (Math.abs(x % 1) === 0.5 && r % 2 !== 0) ? r - 1 : r;
}

function thousands(n) {  // units.thousands: 124439808 -> "124,439,808" (BigInt or Number)
  const s = (typeof n === "bigint" ? n : BigInt(pyRound(n))).toString();
  return s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function pyFixed(x, k) {  // Python's f"{x:.{k}f}" for x >= 0: the double's exact value rounded, ties to even
  const s = x.toFixed(k);
  const exact = x.toFixed(Math.min(100, k + 70));
  const cut = exact.indexOf(".") + (k > 0 ? 1 + k : 0);
  if (!/^\.?50*$/.test(exact.slice(cut))) return s;
  const down = exact.slice(0, cut);
  return Number(down.slice(-1)) % 2 === 0 ? down : s;
}

function sig3(x) {  // units.sig3
  if (x === 0) return "0";
  const digits = Math.max(0, 3 - String(Math.trunc(Math.abs(x))).length);
  let text = pyFixed(Math.abs(x), digits);
  if (text.includes(".")) text = text.replace(/0+$/, "").replace(/\.$/, "");
  return (x < 0 ? "-" : "") + text;
}

function scaled(n, units, fmt) {  // units._scaled
  for (let i = 0; i < units.length; i++) {
    const [scale, unit] = units[i];
    if (Math.abs(n) >= scale) {
      let text = fmt(n / scale, unit);
      if (i > 0 && Math.abs(parseFloat(text.split(" ")[0])) >= units[i - 1][0] / scale) {
        const [bigger, up] = units[i - 1];
        text = fmt(n / bigger, up);
      }
      return text;
    }
  }
  return null;
}

const fmtParams = (n) => scaled(Number(n), S.units.count, (v, u) => `${pyFixed(v, 1)} ${u}`) ?? thousands(n);  // units.params
const fmtFlops = (n) => scaled(Number(n), S.units.si, (v, u) => `${sig3(v)} ${u}FLOP`) ?? `${sig3(Number(n))} FLOP`;  // units.flops
const fmtBytes = (n) => scaled(Number(n), S.units.binary, (v, u) => `${sig3(v)} ${u}`) ?? `${thousands(n)} bytes`;  // units.nbytes

function fmtPercent(x) {  // units.percent
  const p = 100 * x;
  if (p === 0) return "0 %";
  if (p < 0.1) return "< 0.1 %";
  if (p > 99.9 && p < 100) return "99.9 %";
  return `${pyFixed(p, 1)} %`;
}

function fmtValue(x, unit) {  // units.value
  if (x < 0) return "−" + fmtValue(-x, unit);
  if (unit === "params" || unit === "tokens") return thousands(x);
  if (unit === "FLOP") return fmtFlops(x);
  if (unit === "share") return fmtPercent(Number(x));
  if (unit === "bytes") return fmtBytes(x);
  throw new Error(`unknown unit ${unit}`);
}

function fmtShort(x, unit) {  // units.short
  if (unit === "params") return fmtParams(x);
  if (unit === "bytes" && (x < 0 ? -x : x) >= 1024) return `${thousands(x)} bytes`;
  return "";
}

const fmtShape = (dims) => `(${dims.join(", ")})`;  // units.shape
const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, k) => values[k]);

// ---- the rules: model/config.py and model/rules.py --------------------------------------------------------------
function divisors(n) {  // config.divisors
  const small = [], large = [];
  for (let i = 1; i * i <= n; i++) {
    if (n % i === 0) { small.push(i); if (i !== n / i) large.push(n / i); }
  }
  return small.concat(large.reverse());
}

function snapHeads(d, h) {  // config.snap_heads: the divisor of d nearest h, ties to the smaller
  let best = null;
  for (const k of divisors(d)) {
    if (best === null || Math.abs(k - h) < Math.abs(best - h)) best = k;
  }
  return best;
}

const message = (kind, values) => fill(S.messages[kind], Object.fromEntries(
  Object.entries(values).map(([k, v]) => [k, typeof v === "number" ? thousands(v) : v])));  // rules.message

function settle(asked) {  // rules.settle: [cfg, notes]
  const cfg = Object.fromEntries(S.fields.map((f) => [f, asked[f]]));
  const notes = [];
  const h = snapHeads(cfg.d, cfg.h);
  if (h !== cfg.h) { notes.push(message("h", {asked: cfg.h, h, d: cfg.d})); cfg.h = h; }
  if (cfg.T > cfg.T_max) { notes.push(message("T", {asked: cfg.T, T_max: cfg.T_max})); cfg.T = cfg.T_max; }
  return [cfg, notes];
}

function outOfRange(name, value, kept) {  // rules.out_of_range
  const [lo, hi] = S.bounds[name];
  if (Number.isInteger(value) && lo <= value && value <= hi) return null;
  const shown = Number.isInteger(value) ? thousands(value) : String(value);
  return message("range", {name, value: shown, lo, hi, kept});
}

function presetOf(cfg) {  // rules.preset_of
  for (const [name, p] of Object.entries(S.presets)) {
    if (S.preset_model.every((k) => p[k] === cfg[k])) return name;
  }
  return S.custom;
}

function sliderRange(name, value, T_max) {  // words.slider_range
  let [start, end, step] = S.soft[name];
  const hi = S.bounds[name][1];
  if (end === null) end = T_max;
  else while (end < value && end < hi) end = Math.min(2 * end, hi);
  start = Math.min(start, value);
  return [start, Math.max(end, start + 1), step];
}

const rulesLine = (c) => fill(S.rules_line, {d: thousands(c.d), h: thousands(c.h), d_head: thousands(c.d / c.h),
                                            T_max: thousands(c.T_max)});  // words.rules_line

// ---- lines: model.budget(cfg).lines and model.trace(cfg, dtype).lines -------------------------------------------
function symbols(cfg, exact) {  // Config.symbols()
  const s = {B: cfg.B, T: cfg.T, d: cfg.d, h: cfg.h, d_head: cfg.d / cfg.h, L: cfg.L, V: cfg.V, T_max: cfg.T_max};
  return exact ? Object.fromEntries(Object.entries(s).map(([k, v]) => [k, BigInt(v)])) : s;
}

function structureKey(cfg, dtype) {  // memory.structure_key(memory.structure(cfg, dtype))
  const size = {B: cfg.B, T: cfg.T, "T-1": cfg.T - 1, h: cfg.h};
  return [cfg.tie ? "tied" : "untied", S.dtype_class[dtype], ...S.ones.filter((k) => size[k] === 1).map((k) => `${k}=1`)].join(",");
}

function evaluateLines(templates, fns, cfg) {  // each line's value from its formula, then as the page shows it
  const big = symbols(cfg, true), num = symbols(cfg, false);
  return templates.map((t, i) => {
    const value = fns[i](t.exact ? big : num);
    return {key: t.key, label: t.label, formula: t.formula, value: fmtValue(value, t.unit), short: fmtShort(value, t.unit), raw: value};
  });
}

const budgetLines = (cfg) => evaluateLines(S.budget[cfg.tie ? "tied" : "untied"], BUDGET_FNS[cfg.tie ? "tied" : "untied"], cfg);

function memoryLines(cfg, dtype) {
  const key = structureKey(cfg, dtype);
  return evaluateLines(S.structures[key].lines, MEMORY_FNS[key], cfg).filter((x) => S.dtypes[dtype] === 2 || x.key !== "memory/korthikanti");
}

// ---- markup: app/budget.py and app/shapes.py --------------------------------------------------------------------
function linesHtml(lines) {  // budget.lines_html
  const out = [];
  let group = null;
  for (const x of lines) {
    const g = x.key.split("/")[0];
    if (g !== group) { group = g; out.push(`<tr class="grp"><td colspan="2">${esc(S.groups[g])}</td></tr>`); }
    const cls = S.sum_keys.includes(x.key) ? "sum" : x.key.startsWith(S.step_prefix) ? "step" : "";
    const short = x.short ? `<small>${esc(x.short)}</small>` : "";
    out.push(`<tr class="${cls}" data-key="${esc(x.key)}"><td class="l">${esc(x.label)}<code>${esc(x.formula)}</code></td>`
             + `<td class="v">${esc(x.value)}${short}</td></tr>`);
  }
  return `<table class="lines">${out.join("")}</table>`;
}

function headlineHtml(byKey) {  // budget.headline_html
  const n = byKey["params/exact"];
  return `<div class="n"><span class="big">N = ${esc(n.value)}</span> <span class="muted">parameters `
    + `(${esc(n.short)})</span></div><div class="nf muted">N = <code>${esc(n.formula)}</code></div>`;
}

function captionsHtml(byKey) {  // budget.captions_html
  return `<ul class="captions">${S.captions.map((c) => `<li>${c.replace("{mlp_share}", esc(byKey["params/mlp_share"].value))}</li>`).join("")}</ul>`;
}

function shapeRows(cfg, dtype, expanded) {  // model.trace rows at cfg, then shapes.shape_rows
  const st = S.structures[structureKey(cfg, dtype)];
  const big = symbols(cfg, true), atTmax = {...big, T: BigInt(cfg.T_max)};
  const size = (r, s) => parseShape(r.symbolic).reduce((a, [c, sym]) => a * c * (sym === null ? 1n : s[sym]), 1n) * BigInt(r.elem);
  const scale = st.rows.reduce((m, r) => { const b = size(r, atTmax); return b > m ? b : m; }, 0n);
  const L = cfg.L, perBlock = st.rows.filter((r) => r.block).length;
  const out = [];
  const tensor = (r, name, block) => {
    const shape = evalShape(r.symbolic, big), numel = shape.reduce((a, b) => a * b, 1n), nbytes = numel * BigInt(r.elem);
    out.push({kind: "tensor", name, label: r.label, symbolic: r.symbolic, shape: fmtShape(shape), elements: thousands(numel),
              memory: r.view ? "view" : fmtBytes(nbytes), bar: scale > 0n ? Math.min(1, Number(nbytes) / Number(scale)) : 0,
              quadratic: r.symbolic === S.quadratic, in_block: block, view: r.view, saved: r.saved});
  };
  let emitted = false;
  for (const r of st.rows) {
    if (!r.block) { tensor(r, r.name, false); continue; }
    if (emitted) continue;
    emitted = true;
    const group = st.rows.filter((x) => x.block);
    if (!expanded) {
      out.push({kind: "group", name: `${L === 1 ? "block 0" : `blocks 0 … ${L - 1}`} × L = ${thousands(L)}`,
                label: `one block's ${perBlock} tensors; every block repeats these shapes`});
      for (const x of group) tensor(x, x.local, true);
      continue;
    }
    for (let b = 0; b < Math.min(L, S.max_listed_blocks); b++) {
      out.push({kind: "group", name: `block ${b}`, label: `of ${thousands(L)}`});
      for (const x of group) tensor(x, `blocks.${b}.${x.local}`, true);
    }
    if (L > S.max_listed_blocks) {
      out.push({kind: "group", name: `blocks ${S.max_listed_blocks} … ${L - 1}`,
                label: `${thousands(L - S.max_listed_blocks)} more blocks with the same shapes, not listed`});
    }
  }
  if (!st.rows.some((r) => r.name === "loss")) {
    out.push({kind: "absent", name: "loss", label: "none at T = 1: no next token to predict", symbolic: "()"});
  }
  return {rows: out, scale};
}

const DIM = /^(\d*)(B|T_max|T|d_head|d|h|L|V)?$/;  // notation.parse

function parseShape(symbolic) {
  const text = symbolic.trim();
  return text.slice(1, -1).split(",").map((p) => p.trim()).filter((p) => p.length > 0).map((part) => {
    const m = DIM.exec(part);
    if (m === null || !(m[1] || m[2])) throw new Error(`bad dimension ${part} in ${symbolic}`);
    return [m[1] ? BigInt(m[1]) : 1n, m[2] ?? null];
  });
}

const evalShape = (symbolic, values) => parseShape(symbolic).map(([c, sym]) => c * (sym === null ? 1n : values[sym]));

function rowHtml(r) {  // shapes._tr
  if (r.kind === "group") return `<tr class="g"><td colspan="6"><b>${esc(r.name)}</b> <i>${esc(r.label)}</i></td></tr>`;
  const classes = ["t", r.in_block ? "k" : "", r.quadratic ? "q" : "", r.kind === "absent" ? "a" : "", r.view ? "v" : "",
                   r.saved ? "sv" : ""].filter((c) => c).join(" ");
  return `<tr class="${classes}"><td class="n"><b>${esc(r.name)}</b><i>${esc(r.label)}</i><u>${esc(r.symbolic)}</u></td>`
    + `<td class="s">${esc(r.symbolic)}</td><td class="c">${esc(r.shape || "—")}</td>`
    + `<td class="e">${esc(r.elements || "—")}</td><td class="m">${esc(r.memory || "—")}</td>`
    + `<td class="b"><s style="width:${(100 * (r.bar || 0)).toFixed(1)}%"></s></td></tr>`;
}

function tableHtml(rows, dtype, scale, memory) {
  const k = memory.find((x) => x.key === "memory/korthikanti");
  return `<table class="shapes"><thead><tr><th class="n">tensor</th><th class="s">lesson shape</th><th class="c">shape now</th>`
    + `<th class="e">elements</th><th class="m" title="bytes at ${esc(dtype)}">memory</th>`
    + `<th class="b" title="share of ${esc(fmtBytes(scale))}, the largest tensor at T = T_max">size</th></tr></thead>`
    + `<tbody>${rows.map(rowHtml).join("")}</tbody></table>`
    + `<p class="legend muted">bars: share of ${esc(fmtBytes(scale))}, the largest tensor at T = T_max, so they grow as T does. `
    + `<b>view</b>: shares an earlier tensor's storage (no new memory). <span class="dot">●</span> kept for the backward pass.</p>`
    + linesHtml(memory) + (k ? `<p class="note muted">${esc(S.korthikanti_note)}</p>` : "");
}

// ---- widgets -------------------------------------------------------------------------------------------------------
function push(model, prop, value) {  // write a widget without reacting to the echo
  ST.pushed[`${model.name}.${prop}`] = value;
  if (model[prop] !== value) model[prop] = value;
}

function pushSlider(slider, start, end, step, value) {  // one batched change, so the range never clamps the value
  ST.pushed[`${slider.name}.value`] = value;
  if (slider.start !== start || slider.end !== end || slider.step !== step || slider.value !== value) {
    slider.setv({start, end, step, value});
  }
}

const isEcho = (model, prop) => ST.pushed[`${model.name}.${prop}`] === model[prop];

function pushControls(cfg, notes) {
  for (const f of S.int_fields) {
    const slider = W[f], box = W[`${f}_input`];
    if (f === "h") {
      const divs = divisors(cfg.d);
      pushSlider(slider, 0, Math.max(1, divs.length - 1), 1, Math.max(0, divs.indexOf(cfg.h)));
      if (slider.disabled !== (divs.length === 1)) slider.disabled = divs.length === 1;
    } else {
      const [start, end, step] = sliderRange(f, cfg[f], cfg.T_max);
      pushSlider(slider, start, end, step, cfg[f]);
    }
    push(box, "value", cfg[f]);
  }
  push(W.tie, "active", cfg.tie);
  const name = presetOf(cfg);
  push(W.preset, "value", Object.keys(S.preset_labels).find((k) => S.preset_labels[k] === name));
  W.status.text = notes.length ? notes.map((n) => `<div class="status"><span class="n">⚠</span> ${esc(n)}</div>`).join("")
    : `<div class="status muted">${esc(rulesLine(cfg))}</div>`;
}

function render(cfg) {
  const lines = budgetLines(cfg);
  const byKey = Object.fromEntries(lines.map((x) => [x.key, x]));
  W.head.text = headlineHtml(byKey);
  W.lines.text = linesHtml(lines);
  W.captions.text = captionsHtml(byKey);
  const chart = S.chart.map((c) => ({...c, line: byKey[c.key]}));
  const values = chart.map((c) => Number(c.line.raw));
  const top = Math.max(...values), total = Number(byKey["params/exact"].raw);
  const inside = values.map((v) => v > 0.45 * top);  // budget.INSIDE
  W.parts.data = {
    label: chart.map((c) => c.label), value: values, exact: chart.map((c) => thousands(c.line.raw)),
    formula: chart.map((c) => c.line.formula), what: chart.map((c) => c.line.label),
    text: chart.map((c, i) => (c.key === "params/head" && values[i] === 0 ? "0: tied to W_te"
      : !c.in_sum ? `${fmtParams(values[i])} per block` : `${fmtParams(values[i])} · ${fmtPercent(values[i] / total)}`)),
    colour: chart.map((c) => c.colour), align: inside.map((i) => (i ? "right" : "left")),
    offset: inside.map((i) => (i ? -6 : 5)), ink: inside.map((i) => (i ? "#ffffff" : "#1f2937")),
  };
  W.x_range.end = top * 1.1;
  const {rows, scale} = shapeRows(cfg, ST.dtype, ST.expanded);
  W.shapes.text = tableHtml(rows, ST.dtype, scale, memoryLines(cfg, ST.dtype));
}

function update(rejected) {
  const [cfg, notes] = settle(ST.asked);
  ST.cfg = cfg;
  pushControls(cfg, [...rejected, ...notes]);
  const key = JSON.stringify([cfg, ST.dtype, ST.expanded]);
  if (key !== ST.key) { ST.key = key; render(cfg); }
}

function main(obj) {
  if (ST.asked === null || !obj || typeof obj.name !== "string") {  // document_ready: the starting configuration
    ST.asked = Object.fromEntries(S.fields.map((f) => [f, S.initial[f]]));
    ST.dtype = S.initial.dtype;
    window.__ts = {thousands, sig3, fmtParams, fmtFlops, fmtBytes, fmtPercent, fmtValue, fmtShort, settle, outOfRange, presetOf,
                   sliderRange, rulesLine, budgetLines, memoryLines, linesHtml, shapeRows, structureKey, divisors, snapHeads};
    return update([]);
  }
  const name = obj.name, rejected = [];
  if (name === "preset") {
    if (isEcho(obj, "value")) return;
    const chosen = S.preset_labels[obj.value];
    if (chosen !== undefined && chosen !== S.custom) {
      const p = S.presets[chosen];
      for (const k of S.preset_sets) ST.asked[k] = p[k];
    }
  } else if (name === "tie") {
    if (isEcho(obj, "active")) return;
    ST.asked.tie = obj.active;
  } else if (name === "dtype") {
    ST.dtype = Object.keys(S.dtypes)[obj.active];
  } else if (name === "expanded") {
    ST.expanded = obj.active;
  } else if (name.endsWith("_input")) {
    if (isEcho(obj, "value")) return;
    const f = name.slice(0, -"_input".length), v = obj.value;
    const bad = v === null || v === undefined ? "" : outOfRange(f, v, ST.cfg[f]);
    if (bad === null) ST.asked[f] = v;
    else if (bad) rejected.push(bad);
  } else if (S.int_fields.includes(name)) {
    if (isEcho(obj, "value")) return;
    ST.asked[name] = name === "h" ? divisors(ST.cfg.d)[Math.min(obj.value, divisors(ST.cfg.d).length - 1)] : obj.value;
  }
  return update(rejected);
}
