// Transformer Shapes, exported page: the whole page logic, run as one Bokeh CustomJS callback.
//
// Inputs (CustomJS args): `spec`, JSON from app/export.py `page_spec` (rows traced by model.trace, bounds,
// docs, dtypes and presets from model), and `widgets`, the page's models, found here by name. app/export.py
// appends `budget(s)`, generated from app.export.FORMULAS, and `return main(cb_obj);`.
// Integers are BigInt throughout, so (B, h, T, T) element counts stay exact far beyond 2**53.

const S = JSON.parse(spec);
const W = Object.fromEntries(widgets.map((m) => [m.name, m]));
const STATE = (window.__transformerShapes ??= {last: null, lastKey: null, lastPreset: null});  // what is shown now

// ---- lesson notation: the grammar of model/notation.py -------------------------------------------------
// "(B, h, T, d_head)", "(B, T, 3d)", "()": each dimension is a whole number, a symbol, or coefficient+symbol.
const DIM = /^(\d*)(B|T_max|T|d_head|d|h|L|V)?$/;

function parseShape(symbolic) {
  const text = symbolic.trim();
  if (!(text.startsWith("(") && text.endsWith(")"))) throw new Error(`bad symbolic shape ${symbolic}`);
  return text.slice(1, -1).split(",").map((p) => p.trim()).filter((p) => p.length > 0).map((part) => {
    const m = DIM.exec(part);
    if (m === null || !(m[1] || m[2])) throw new Error(`bad dimension ${part} in ${symbolic}`);
    return [m[1] ? BigInt(m[1]) : 1n, m[2] ?? null];
  });
}

function evalShape(symbolic, values) {
  return parseShape(symbolic).map(([coeff, sym]) => coeff * (sym === null ? 1n : values[sym]));
}

// ---- model.config helpers ------------------------------------------------------------------------------
function divisors(n) {  // model.config.divisors
  const small = [], large = [];
  for (let i = 1; i * i <= n; i++) {
    if (n % i === 0) { small.push(i); if (i !== n / i) large.push(n / i); }
  }
  return small.concat(large.reverse());
}

function snapHeads(d, h) {  // model.config.snap_heads: the divisor of d nearest h, ties to the smaller
  let best = 1;
  for (const k of divisors(d)) {
    if (Math.abs(k - h) < Math.abs(best - h)) best = k;
  }
  return best;
}

function structureKey(cfg) {  // app.export.structure_key
  return `${cfg.T > 1 ? "T>1" : "T=1"},${cfg.tie ? "tied" : "untied"}`;
}

// ---- formatting: the conventions of model/units.py (the live app's and the CLI's), ported line by line ----------------
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));

function thousands(n) {  // format.thousands: 124439808 -> "124,439,808" (BigInt or Number)
  const s = (typeof n === "bigint" ? n : BigInt(Math.round(n))).toString();
  return s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function pyFixed(x, k) {  // Python's f"{x:.{k}f}" for x >= 0: the double's exact value rounded, ties to even
  const s = x.toFixed(k);  // exact too, but ties go away from zero
  const exact = x.toFixed(Math.min(100, k + 70));
  const cut = exact.indexOf(".") + (k > 0 ? 1 + k : 0);
  if (!/^\.?50*$/.test(exact.slice(cut))) return s;
  const down = exact.slice(0, cut);
  return Number(down.slice(-1)) % 2 === 0 ? down : s;
}

function sig3(x) {  // format.sig3: three significant digits (at most two decimals), no trailing zeros
  if (x === 0) return "0";
  const digits = Math.max(0, 3 - String(Math.trunc(Math.abs(x))).length);
  let text = pyFixed(x, digits);
  if (text.includes(".")) text = text.replace(/0+$/, "").replace(/\.$/, "");
  return text;
}

function scaled(n, units, fmt) {  // format._scaled: the largest unit not above n, one up when rounding reaches it
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

const COUNT_UNITS = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "k"]];
const SI = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
const BINARY = [[2 ** 50, "PiB"], [2 ** 40, "TiB"], [2 ** 30, "GiB"], [2 ** 20, "MiB"], [2 ** 10, "KiB"]];

const fmtParams = (n) => scaled(Number(n), COUNT_UNITS, (v, u) => `${pyFixed(v, 1)} ${u}`) ?? thousands(n);  // format.params
const fmtFlops = (n) => scaled(Number(n), SI, (v, u) => `${sig3(v)} ${u}FLOP`) ?? `${sig3(Number(n))} FLOP`;  // format.flops
const fmtBytes = (n) => scaled(Number(n), BINARY, (v, u) => `${sig3(v)} ${u}`) ?? `${thousands(n)} B`;  // format.nbytes

function fmtPercent(x) {  // format.percent: one decimal, never rounded up to 100
  const p = 100 * x;
  if (p === 0) return "0 %";
  if (p < 0.1) return "< 0.1 %";
  if (p > 99.9 && p < 100) return "99.9 %";
  return `${pyFixed(p, 1)} %`;
}

const fmtShape = (dims) => `(${dims.join(", ")})`;  // format.shape

// ---- reading and correcting the widgets ----------------------------------------------------------------
function readConfig(notes) {
  const cfg = {};
  for (const f of S.fields) {
    const [lo, hi] = S.bounds[f];
    let v = Number(W[f].value);
    if (!Number.isFinite(v)) v = S.initial[f];
    v = Math.round(v);
    if (v < lo || v > hi) {
      const fixed = Math.min(hi, Math.max(lo, v));
      notes.push(`${f} = ${thousands(v)} is out of range: ${f} (${S.docs[f]}) must be from ${thousands(lo)} to ${thousands(hi)}; set to ${thousands(fixed)}`);
      v = fixed;
    }
    cfg[f] = v;
  }
  // app/rules.py's two rules and wording (the live app's): h snaps to a divisor of d, T is clamped to T_max.
  if (cfg.d % cfg.h !== 0) {
    const snapped = snapHeads(cfg.d, cfg.h);
    notes.push(`h snapped ${thousands(cfg.h)} → ${thousands(snapped)}: ${thousands(cfg.d)} is not divisible by ${thousands(cfg.h)}`
               + ` (each head gets d_head = d / h features, so h must divide d)`);
    cfg.h = snapped;
  }
  if (cfg.T > cfg.T_max) {
    notes.push(`T clamped ${thousands(cfg.T)} → ${thousands(cfg.T_max)}: T cannot exceed T_max = ${thousands(cfg.T_max)}, the rows of the `
               + `learned position table W_pe (it cannot extrapolate to later positions)`);
    cfg.T = cfg.T_max;
  }
  cfg.tie = Boolean(W.tie.active);
  cfg.dtype = S.dtypes[W.dtype.value] !== undefined ? W.dtype.value : S.initial.dtype;
  return cfg;
}

const configKey = (cfg) => S.fields.map((f) => `${f}=${cfg[f]}`).join(",") + `,tie=${cfg.tie},dtype=${cfg.dtype}`;

function writeConfig(cfg) {  // show the corrected values (only those that differ, so echoes write nothing)
  for (const f of S.fields) {
    const slider = W[f], box = W[`${f}_input`];
    if (slider.end < cfg[f]) slider.end = cfg[f];
    if (slider.value !== cfg[f]) slider.value = cfg[f];
    if (box.value !== cfg[f]) box.value = cfg[f];
  }
  if (W.tie.active !== cfg.tie) W.tie.active = cfg.tie;
  if (W.dtype.value !== cfg.dtype) W.dtype.value = cfg.dtype;
  const match = Object.entries(S.presets).find(([, p]) => S.fields.every((f) => p[f] === cfg[f]) && p.tie === cfg.tie);
  const name = match ? match[0] : "custom";
  STATE.lastPreset = name;
  if (W.preset.value !== name) W.preset.value = name;
}

function applyInput(box) {  // a typed value moves its slider (a cleared box takes the slider's value)
  const f = box.name.slice(0, -"_input".length);
  if (box.value === null || box.value === undefined) return;
  if (W[f].end < box.value) W[f].end = Math.min(box.value, S.bounds[f][1]);
  W[f].value = box.value;
}

function applyPreset(name) {
  const p = S.presets[name];
  if (p === undefined) return;
  for (const f of S.fields) {
    if (W[f].end < p[f]) W[f].end = p[f];
    W[f].value = p[f];
  }
  W.tie.active = p.tie;
}

// ---- rendering -----------------------------------------------------------------------------------------
function computeRows(cfg) {
  const big = {B: BigInt(cfg.B), T: BigInt(cfg.T), d: BigInt(cfg.d), h: BigInt(cfg.h),
               d_head: BigInt(cfg.d / cfg.h), L: BigInt(cfg.L), V: BigInt(cfg.V), T_max: BigInt(cfg.T_max)};
  const elem = BigInt(S.dtypes[cfg.dtype]), intBytes = BigInt(S.int_bytes);
  return S.variants[structureKey(cfg)].map((r) => {
    const shape = evalShape(r.symbolic, big);
    const numel = shape.reduce((a, b) => a * b, 1n);
    const quadratic = parseShape(r.symbolic).filter(([, s]) => s === "T").length >= 2;
    return {...r, shape, numel, nbytes: numel * (r.float ? elem : intBytes), repeat: r.block ? big.L : 1n, quadratic};
  });
}

function rowHtml(r, maxBytes) {
  const pct = maxBytes > 0n ? Math.max(0.5, 100 * Number(r.nbytes) / Number(maxBytes)) : 0;
  return `<tr data-name="${esc(r.name)}" data-bytes="${r.nbytes}" class="${r.block ? "in-block" : ""}">`
    + `<td class="name"><code>${esc(r.block ? r.local : r.name)}</code><span class="label">${esc(r.label)}</span></td>`
    + `<td class="sym"><code>${esc(r.symbolic)}</code></td>`
    + `<td class="shape"><code>${fmtShape(r.shape)}</code></td>`
    + `<td class="num">${thousands(r.numel)}</td>`
    + `<td class="mem"><span class="bytes">${fmtBytes(r.nbytes)}</span>`
    + `<span class="bar"><span class="fill${r.quadratic ? " quad" : ""}" style="width:${pct.toFixed(1)}%"></span></span></td></tr>`;
}

function shapesHtml(cfg, rows) {
  const maxBytes = rows.reduce((m, r) => (r.nbytes > m ? r.nbytes : m), 0n);
  const total = rows.reduce((a, r) => a + r.nbytes * r.repeat, 0n);
  const body = [];
  let inBlock = false;
  for (const r of rows) {
    if (r.block && !inBlock) {
      body.push(`<tr class="group"><td colspan="5">blocks.0 … blocks.${cfg.L - 1}: <b>× L = ${thousands(cfg.L)}</b> blocks, each makes these tensors (shapes and memory per block)</td></tr>`);
    } else if (!r.block && inBlock) {
      body.push(`<tr class="group end"><td colspan="5">end of the blocks</td></tr>`);
    }
    inBlock = r.block;
    body.push(rowHtml(r, maxBytes));
  }
  const key = configKey(cfg);
  return `<h2>Every tensor of one forward pass</h2>`
    + `<p class="hint">d_head = d / h = ${cfg.d / cfg.h}. Bars: memory of each tensor relative to the largest; `
    + `<span class="swatch quad"></span> grows with T² (the attention scores).</p>`
    + `<div class="scroll"><table class="shapes" data-config="${esc(key)}"><thead><tr><th>tensor</th><th>notation</th>`
    + `<th>shape</th><th class="num">elements</th><th>memory (${esc(cfg.dtype)})</th></tr></thead>`
    + `<tbody>${body.join("")}</tbody><tfoot><tr><td colspan="3">all activations of the pass (block rows × L, no reuse)</td>`
    + `<td></td><td class="mem" data-key="activation_bytes" data-bytes="${total}">${fmtBytes(total)}</td></tr></tfoot></table></div>`;
}

function budgetHtml(cfg, b, share, activation) {
  const pctOfN = (x) => {
    const d = 100 * (Number(x) - Number(b.params_exact)) / Number(b.params_exact);
    return `${d < 0 ? "−" : "+"}${pyFixed(Math.abs(d), 2)} % vs N`;
  };
  const item = (label, key, value, note) =>
    `<div class="kpi"><dt>${label}</dt><dd><span class="v" data-key="${key}">${value}</span>${note ? ` <small data-note="${key}">${note}</small>` : ""}</dd></div>`;
  const approx = cfg.tie ? "12Ld² + (V + T_max)d" : "12Ld² + (V + T_max)d + Vd";
  return `<h2>Budget</h2><dl class="kpis">`
    + item("Parameters N (exact: weights, biases, LayerNorms)", "params_exact", thousands(b.params_exact), `≈ ${fmtParams(b.params_exact)}`)
    + item(`Lesson approximation ${approx}`, "params_approx", thousands(b.params_approx), pctOfN(b.params_approx))
    + item("Forward FLOPs per token, 2N", "flops_fwd_per_token", thousands(b.flops_fwd_per_token), `≈ ${fmtFlops(b.flops_fwd_per_token)}`)
    + item("Training FLOPs per token, 6N", "flops_train_per_token", thousands(b.flops_train_per_token), `≈ ${fmtFlops(b.flops_train_per_token)}`)
    + item("Forward FLOPs per token as the code runs, L(24d² + 4Td) + 2Vd", "flops_fwd_measured_per_token",
           thousands(b.flops_fwd_measured_per_token), `≈ ${fmtFlops(b.flops_fwd_measured_per_token)}`)
    + item("Attention's share of them, 4LTd", "attn_share", fmtPercent(share),
           `equals the dense 24Ld² at T = 6d = <span data-key="T_attn_equals_dense">${thousands(b.T_attn_equals_dense)}</span>`)
    + item(`Activation memory of one forward pass (${esc(cfg.dtype)})`, "activation_bytes_kpi", fmtBytes(activation),
           `${thousands(activation)} bytes`)
    + `</dl>`;
}

function updateChart(b) {
  const parts = [["params_emb", "#4c78a8"], ["params_attn", "#e45756"], ["params_mlp", "#54a24b"],
                 ["params_norms", "#b279a2"], ["params_head", "#f58518"]];
  const total = Number(b.params_exact);
  const src = W.params_source;
  src.data = {
    part: ["embeddings", "attention × L", "MLP × L", "LayerNorms", "head"],
    value: parts.map(([k]) => Number(b[k])),
    text: parts.map(([k]) => (b[k] === 0n ? "0 (tied to W_te)" : `${fmtParams(b[k])} · ${fmtPercent(Number(b[k]) / total)}`)),
    exact: parts.map(([k]) => thousands(b[k])),
    color: parts.map(([, c]) => c),
  };
}

function render(cfg, notes) {
  const s = {B: BigInt(cfg.B), T: BigInt(cfg.T), d: BigInt(cfg.d), h: BigInt(cfg.h), L: BigInt(cfg.L),
             V: BigInt(cfg.V), T_max: BigInt(cfg.T_max), tie: cfg.tie ? 1n : 0n};
  const b = budget(s);
  const share = Number(b.flops_attn_per_token) / Number(b.flops_fwd_measured_per_token);
  const rows = computeRows(cfg);
  const activation = rows.reduce((a, r) => a + r.nbytes * r.repeat, 0n);
  W.notice.text = notes.length ? `<div class="notice" role="status">${notes.map((n) => `<p>${esc(n)}</p>`).join("")}</div>` : "";
  W.budget.text = budgetHtml(cfg, b, share, activation);
  W.shapes.text = shapesHtml(cfg, rows);
  updateChart(b);
}

// BokehJS runs CustomJS callbacks asynchronously, so the widget writes below come back later as events of
// their own ("echoes"). An echo carries the value last shown, so it moves nothing, and it finds the widgets
// showing the last rendered config, so it renders nothing: the notice of the change that caused the
// corrections stays.
function main(obj) {
  const name = obj && typeof obj.name === "string" ? obj.name : "";
  if (name === "preset" && obj.value !== STATE.lastPreset) applyPreset(obj.value);
  else if (name.endsWith("_input") && obj.value !== STATE.last?.[name.slice(0, -"_input".length)]) applyInput(obj);
  const notes = [];
  const cfg = readConfig(notes);
  writeConfig(cfg);
  const key = configKey(cfg);
  if (notes.length === 0 && key === STATE.lastKey) return;
  STATE.last = cfg;
  STATE.lastKey = key;
  render(cfg, notes);
}
