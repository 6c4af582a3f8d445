// Transformer Shapes, exported page: the whole page logic, run as one Bokeh CustomJS callback.
//
// Inputs (CustomJS args): `spec`, JSON from app/export/spec.py (fields, bounds, presets, rules and their messages,
// the lines of model.budget and model.trace with their formulas, the rows of every pass structure, the live
// page's words, the training card's line templates), and `widgets`, the page's models, found here by name. app/export/spec.py appends BUDGET_FNS and
// MEMORY_FNS and TRAIN_FNS (each line's formula compiled to JavaScript; a window's WINDOW_FNS, its labels' numbers, and
// MEMORY_ALL_FNS, TRAIN_WINDOW_FNS; latent attention's TRAIN_MLA_FNS) and `return main(cb_obj);`.
// Python's own functions run here compiled (app/export/compiled.py MODULES, by app/export/pyjs.py), as namespaces
// named after their modules: config.divisors, config.Config (Config's properties and methods, as functions of a
// page's configuration: Cfg.d_head(c)), numbers.whole, units.value, rules.settle_values, rules.read_field,
// rules.rules_line, families.recipe_of, changes.title_values, words.slider_range, train_report.human,
// train_query.settle_train, … (tests/test_pyjs.py: the compiler; each module's own tests in test_export*.py: the
// formatters, the rules, the notices, the lines); `py` below gives them Python's builtins and operators.
// Every other function here mirrors a Python one, named in its comment; tests run both on the same inputs in Chromium
// (latent attention's extraKey: tests/test_export_mla.py).
// The controls are data, S.widgets (spec.widget_table: each one's kind, property, field and symbol), read by main's
// ASK and written by pushControls' SHOWN, one function per kind (test_export_mla.py::
// test_every_control_is_in_the_widget_table); the rules' sentences and tables are model/rules.py's and
// model/config.py's.
// Whole numbers are BigInt where formulas are exact, so (B, h, T, T) element counts stay exact beyond 2**53.

// Twins of the markup: the budget card's, the shapes table's and their rows run compiled (app/cards/budget/markup.py,
// app/cards/shapes/markup.py, model/tracing.py's block_groups and window_text, app/templates.py's fill_html); what is
// left mirrors a Python function (named in its comment), by the test that runs both on the same inputs:
//   test_export.py::test_table_rows_are_the_trace (and test_export_mla.py::
//     test_the_shapes_rows_are_the_models_with_the_latent_tensors): shapeRows (the trace's Rows), symbols
//   test_export_recipe_rows.py::test_the_shown_table_carries_the_marks_and_the_legend: tableHtml
//   test_export.py::test_every_line_agrees_with_the_model: evaluateLines (the Lines of budgetLines, memoryLines)
//   test_export_recipe.py::test_changes_lines_and_markup_agree_with_the_model (and test_export_window.py::
//     test_the_changes_card_is_the_models, test_export_mla.py::test_the_changes_card_ends_with_latent_attention):
//     changesGroups (the changes card's groups from its compiled tables), changesCardHtml

// Twins of the training card: each JavaScript function below that mirrors a Python one (named in its comment), by
// the test that runs both on the same inputs in Chromium (everything else of the card is data in S.train: the plan's
// line templates with their compiled formulas, spec._train_template; its markup, formatters and notices run
// compiled: app/cards/train/markup.py, units.*, train_report.human, train_query.settle_train, TrainSetup's properties):
//   test_export.py::test_largest_micro_batch_agrees: largestMicroBatch (its closed form), peakCandidates (which
//     the compiled training.step_phases reads), topPhase, held, template, trainingMemory, savedParts, savedLine,
//     paramsExact, budgetLine, lineOf
//   test_export.py::test_training_lines_agree_with_the_model (and test_export_recipe.py's, test_export_window.py::
//     test_the_training_card_is_the_models): trainPlan (a Plan's fields)
//   test_export.py::test_training_notices_agree_with_settle_train: trainSetup (TrainSetup(**fields), which the
//     compiled train_query.settle_train constructs)
//   test_export.py::test_training_controls_change_the_card: trainAsked, pushTrain, trainChanged

const S = JSON.parse(spec);
const W = Object.fromEntries(widgets.map((m) => [m.name, m]));
const ST = (window.__transformerShapes ??= {asked: null, cfg: null, dtype: null, expanded: false, rejected: [],
                                             pushed: {}, key: null});

// ---- Python's meaning: py, what app/export/pyjs.py compiles Python's builtins, operators and methods to ----------
// Numbers are Number or BigInt (exact counts): each helper takes either. Tests: tests/test_pyjs.py (each helper on
// hostile values against Python), and every compiled module's own (test_export.py's formatters, rules, …).
const isObj = (x) => typeof x === "object" && x !== null && !Array.isArray(x) && !(x instanceof Set);
const big = (x) => typeof x === "bigint";
const isInt = (x) => big(x) || Number.isSafeInteger(x);  // a Number that is a safe integer stands for an int

function arith(op, a, b) {  // a op b as Python computes it: ints exact (a BigInt once past 2**53), floats as floats
  if (!isInt(a) || !isInt(b)) return op(Number(a), Number(b));
  const r = big(a) || big(b) ? null : op(a, b);
  return r !== null && Number.isSafeInteger(r) ? r : op(BigInt(a), BigInt(b));
}

const narrow = (x) => (big(x) && x <= BigInt(Number.MAX_SAFE_INTEGER) && -x <= BigInt(Number.MAX_SAFE_INTEGER)
  ? Number(x) : x);  // an int as a Number while it is safe

function fixed(x, k) {  // f"{x:.{k}f}" for a Number: the double's exact value rounded, ties to even
  if (Math.abs(x) >= 1e21) return BigInt(x).toString() + (k > 0 ? "." + "0".repeat(k) : "");
  const s = x.toFixed(k), exact = x.toFixed(Math.min(100, k + 70)), cut = exact.indexOf(".") + (k > 0 ? 1 + k : 0);
  if (!/^\.?50*$/.test(exact.slice(cut))) return s;
  const down = exact.slice(0, cut);
  return Number(down.slice(-1)) % 2 === 0 ? down : s;
}

function expo(x, k) {  // f"{x:.{k}e}": ties to even on the exact value, a two-digit exponent
  const [exact, power] = Math.abs(x).toExponential(100).split("e");
  const [m, e] = /^50*$/.test(exact.slice(2 + k)) && exact[1 + k] % 2 === 0 ? [exact.slice(0, k ? 2 + k : 1), power]
    : Math.abs(x).toExponential(k).split("e");
  return `${x < 0 ? "-" : ""}${m}e${e[0]}${e.slice(1).padStart(2, "0")}`;
}

function general(x, p) {  // f"{x:.{p}g}": fixed from 10⁻⁴ to 10^p, else exponent; no trailing zeros
  if (x === 0) return "0";
  const e = Number(expo(x, Math.max(p, 1) - 1).split("e")[1]), q = Math.max(p, 1);
  const trim = (t) => (t.includes(".") ? t.replace(/0+$/, "").replace(/\.$/, "") : t);
  if (-4 <= e && e < q) return trim(fixed(x, q - 1 - e));
  const [m, power] = expo(x, q - 1).split("e");
  return `${trim(m)}e${power}`;
}

function pyRepr(x) {  // repr(float) (nan and ±inf too); a whole one as an int
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (Number.isInteger(x)) return Math.abs(x) >= 1e16 ? BigInt(x).toString() : String(x);
  const [m, e] = x.toExponential().split("e"), n = Number(e);
  return n < -4 || n >= 16 ? `${m}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}` : String(x);
}

const STRIP = "\\s\\u001c-\\u001f\\u0085";  // what str.strip() strips besides JavaScript's \s
const stripper = (chars, where) => new RegExp((where !== "r" ? `^[${chars}]+` : "(?!)") + "|"
  + (where !== "l" ? `[${chars}]+$` : "(?!)"), "gu");
const strip = (where) => (s, chars = null) => s.replace(stripper(chars === null ? STRIP
  : chars.replace(/[\]\\^-]/g, "\\$&"), where), "");
function lt(a, b) {  // a < b; tuples (Arrays) item by item, as Python compares them
  if (!Array.isArray(a)) return a < b;
  const i = a.findIndex((x, j) => !py.eq(x, b[j]));
  return i < 0 ? a.length < b.length : lt(a[i], b[i]);
}

const best = (sign) => (...xs) => {  // min / max: of the arguments or of one iterable, the first on a tie; {key} last
  const key = isObj(xs.at(-1)) && "key" in xs.at(-1) ? xs.pop().key : (x) => x;
  const items = xs.length === 1 ? py.list(xs[0]) : xs;
  return items.reduce((a, b) => ((sign > 0 ? lt(key(b), key(a)) : lt(key(a), key(b))) ? b : a));
};

const py = {
  bool: (x) => (x instanceof Set ? x.size > 0 : Array.isArray(x) ? x.length > 0 : isObj(x) ? Object.keys(x).length > 0
    : !!x),
  isinstance: (x, types) => types.some((t) => ({bool: typeof x === "boolean", int: typeof x === "boolean" || isInt(x),
    float: typeof x === "number" && !isInt(x), str: typeof x === "string", tuple: Array.isArray(x),
    list: Array.isArray(x), dict: isObj(x)}[t])),  // a whole Number is an int; True is an int, as in Python
  getattr: (o, name, members = {}) => (Object.hasOwn(members, name) ? members[name](o) : o[name]),  // a property too
  fromkeys: (xs) => Object.fromEntries(py.list(xs).map((x) => [x, null])),
  count: (xs, x) => (typeof xs === "string" ? xs.split(x).length - 1 : xs.filter((y) => py.eq(y, x)).length),
  set: (xs = []) => new Set(py.list(xs)),
  map: (f, xs) => py.list(xs).map((x) => f(x)),
  and: (a, rest) => (py.bool(a) ? rest() : a),
  or: (a, rest) => (py.bool(a) ? a : rest()),
  eq: (a, b) => {  // a == b: lists and dicts by value; 1n == 1 and True == 1; None is null (or undefined)
    if (a == null || b == null) return a == null && b == null;
    if (Array.isArray(a) || Array.isArray(b)) {
      return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => py.eq(x, b[i]));
    }
    if (isObj(a) || isObj(b)) {
      const keys = isObj(a) && isObj(b) ? Object.keys(a) : null;
      return keys !== null && keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && py.eq(a[k], b[k]));
    }
    return typeof a === "string" || typeof b === "string" ? a === b : a == b;
  },
  contains: (c, x) => (typeof c === "string" ? c.includes(x) : Array.isArray(c) ? c.some((y) => py.eq(y, x))
    : c instanceof Set ? c.has(x) : Object.hasOwn(c, x)),
  add: (a, b) => (typeof a === "string" ? a + b : Array.isArray(a) ? [...a, ...b] : arith((x, y) => x + y, a, b)),
  sub: (a, b) => arith((x, y) => x - y, a, b),
  mul: (a, b) => (Array.isArray(a) || typeof a === "string" ? (Array.isArray(a) ? Array.from({length: b}, () => a).flat()
    : a.repeat(b)) : arith((x, y) => x * y, a, b)),  // a list or str repeated, or a product
  pow: (a, b) => (isInt(b) && b >= 0 ? arith((x, y) => x ** y, a, b) : Number(a) ** Number(b)),
  neg: (x) => -x,
  div: (a, b) => Number(a) / Number(b),
  floordiv: (a, b) => arith((x, y) => (big(x) ? (x - py.mod(x, y)) / y : Math.floor(x / y)), a, b),
  mod: (a, b) => arith((x, y) => ((x % y) + y) % y, a, b),
  divmod: (a, b) => [py.floordiv(a, b), py.mod(a, b)],
  abs: (x) => (big(x) ? (x < 0n ? -x : x) : Math.abs(x)),
  int: (x) => (typeof x === "string" ? narrow(BigInt(x.trim())) : big(x) ? x : Math.trunc(Number(x))),
  round: (x) => (big(x) ? x : Math.abs(x % 1) === 0.5 && Math.round(x) % 2 !== 0 ? Math.round(x) - 1
    : Math.round(x)),  // round(x): the nearest whole number, ties to even
  str: (x) => (typeof x === "string" ? x : x === null || x === undefined ? "None" : typeof x === "boolean"
    ? (x ? "True" : "False") : typeof x === "number" ? pyRepr(x) : String(x)),
  repr: (x) => (typeof x === "string" ? `'${x.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'` : py.str(x)),
  format: (x, spec) => {  // format(x, spec): [,][.k][f|e|g], the part of the mini-language page.js needs
    const [, comma, digits, type] = /^(,?)(?:\.(\d+))?([feg]?)$/.exec(spec), k = Number(digits ?? 6);
    const n = Number(x), text = !type ? py.str(x) : type === "f" ? fixed(n, k) : type === "e" ? expo(n, k)
      : general(n, k);
    return comma ? text.replace(/^(-?\d+)/, (m) => m.replace(/\B(?=(\d{3})+(?!\d))/g, ",")) : text;
  },
  fmap: (t, named, positional = []) => {  // str.format: {name}, {} and {0}, {{ and }}
    let next = 0;
    return t.replace(/\{\{|\}\}|\{([^{}:!.[\]]*)(?::([^}]*))?\}/g, (m, k, spec) => {  // a name as Python takes it
      if (m === "{{" || m === "}}") return m[0];
      const v = k === "" ? positional[next++] : /^\d+$/.test(k) ? positional[Number(k)] : named[k];
      return spec === undefined ? py.str(v) : py.format(v, spec);
    });
  },
  len: (x) => py.list(x).length,
  iter: (x) => (Array.isArray(x) ? x : typeof x === "string" || x instanceof Set ? Array.from(x) : Object.keys(x)),
  list: (x) => Array.from(py.iter(x)),
  item: (o, i) => {  // o[i]: a negative index from the end; a missing key is an error, as in Python
    const v = typeof o === "string" ? Array.from(o).at(Number(i)) : Array.isArray(o) ? o.at(Number(i)) : o[i];
    if (v === undefined) throw new Error(`no item ${py.repr(i)}`);
    return v;
  },
  get: (o, k, d = null) => (Object.hasOwn(o, k) ? o[k] : d),
  setdefault: (o, k, d = null) => (Object.hasOwn(o, k) ? o[k] : (o[k] = d)),
  pop: (o, k, d = null) => { const v = py.get(o, k, d); delete o[k]; return v; },  // a dict's: d.pop(k, d)
  slice: (o, lo, hi) => (typeof o === "string" ? Array.from(o).slice(lo, hi ?? undefined).join("")
    : o.slice(lo, hi ?? undefined)),  // a str by its characters (code points), as Python counts them
  range: (a, b, s = 1) => (b === undefined ? py.range(0, a) : Array.from({length: Math.max(0, Math.ceil((b - a) / s))},
    (_, i) => a + i * s)),
  enumerate: (xs) => py.list(xs).map((x, i) => [i, x]),
  zip: (...xs) => py.list(xs[0]).slice(0, Math.min(...xs.map(py.len))).map((_, i) => xs.map((x) => py.list(x)[i])),
  any: (xs) => py.list(xs).some(py.bool),
  all: (xs) => py.list(xs).every(py.bool),
  sum: (xs, start = 0) => py.list(xs).reduce((a, b) => a + b, start),
  min: best(1),
  max: best(-1),
  sorted: (xs, {key} = {key: (x) => x}) => py.list(xs).sort((a, b) => (lt(key(a), key(b)) ? -1 : lt(key(b), key(a)) ? 1 : 0)),
  join: (sep, xs) => py.list(xs).join(sep),
  split: (s, sep = null) => (sep === null ? s.split(/\s+/).filter((x) => x) : s.split(sep)),
  rsplit: (s, sep, most) => {  // s.rsplit(sep, 1)
    const i = s.lastIndexOf(sep);
    return most !== 1 ? s.split(sep) : i < 0 ? [s] : [s.slice(0, i), s.slice(i + sep.length)];
  },
  strip: strip(""),
  lstrip: strip("l"),
  rstrip: strip("r"),
  lower: (s) => s.toLowerCase(),
  startswith: (s, p) => (Array.isArray(p) ? p : [p]).some((x) => s.startsWith(x)),
  endswith: (s, p) => (Array.isArray(p) ? p : [p]).some((x) => s.endsWith(x)),
  replace: (s, a, b, n = -1) => (n < 0 ? s.replaceAll(a, b)  // s.replace(a, b, n): the first n
    : s.split(a).map((x, i) => (i === 0 ? x : (i <= n ? b : a) + x)).join("")),
  translate: (s, table) => Array.from(s).map((c) => {
    const v = table[c.codePointAt(0)];
    return v === undefined || v === null ? c : typeof v === "number" ? String.fromCodePoint(v) : v;
  }).join(""),
  fullmatch: (re, s) => re.exec(s),
  resub: (re, f, s) => s.replace(new RegExp(re.source.slice(4, -2), re.flags + "g"), (...m) => f(m.slice(0, -2))),  // re.sub(f, s)
  escape: (s) => s.replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}[c])),  // html.escape
  groups: (m) => m.slice(1).map((g) => g ?? null),
  isprintable: (c) => !/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|(?! )\p{Zs}/u.test(c),
  append: (xs, x) => { xs.push(x); return null; },
  extend: (xs, ys) => { xs.push(...py.list(ys)); return null; },
};

// ---- formatting: model/units.py, compiled (app/export/compiled.py: units.value, units.params, …) -----------------

// ---- the rules: model/rules.py compiled (rules.settle_values, read_field, …), model/numbers.py and config.py's too
const Cfg = config.Config;  // Config's properties and methods as functions of a page's configuration: Cfg.d_head(c)

function configOf(fields) {  // Config(**fields): its defaults, __post_init__'s normalisation and the checks a page meets
  const c = Object.fromEntries(S.all_fields.map((f) => [f, fields[f] ?? S.field_defaults[f] ?? null]));
  for (const f of Cfg.defaults_written(c)) c[f] = null;  // a default written out is the default (None)
  if (c.sinks && c.attention === "fused") throw new Error(S.sinks_fused);  // Config.__post_init__ (_check_oss)
  if (c.positions === "rope" && !Cfg.mla(c) && Cfg.d_head(c) % 2) throw new Error(py.fmap(S.odd_d_head, {d_head: Cfg.d_head(c)}));
  return c;
}

const fieldLabel = (f, name) => templates.fill_html(S.html.field_label, {field: f, doc: S.docs[f], name});  // page.field_label

// ---- lines: model.budget(cfg).lines and model.trace(cfg, dtype).lines -------------------------------------------
function symbols(cfg, exact) {  // Config.symbols(), with h_kv and d_ff always (a GPT-2 plan's formulas name h_kv)
  const s = {h_kv: Cfg.h_kv(cfg), d_ff: Cfg.d_ff(cfg), ...Cfg.symbols(cfg)};
  return exact ? Object.fromEntries(Object.entries(s).map(([k, v]) => [k, BigInt(v)])) : s;
}

const windowValues = (cfg) => (cfg.window == null ? {} : Object.fromEntries(Object.entries(WINDOW_FNS)
  .map(([k, f]) => [k, units.thousands(f(symbols(cfg, true)))])));  // memory.window_values: the numbers windowed labels name

const covered = (cfg, dtype) => keys.budget_key(cfg) in S.budget && keys.pass_key(cfg, dtype) in S.structures;  // spec.covered

function evaluateLines(lines, fns, cfg) {  // each line (model.figures.Line) with its value from its compiled formula
  const big = symbols(cfg, true), num = symbols(cfg, false);
  return lines.map((t, i) => ({key: t.key, label: t.label, formula: t.formula, value: fns[i](t.exact ? big : num), unit: t.unit}));
}

const budgetLines = (cfg) => evaluateLines(S.budget[keys.budget_key(cfg)], BUDGET_FNS[keys.budget_key(cfg)], cfg);

function memoryLines(cfg, dtype) {
  const key = keys.pass_key(cfg, dtype), all = S.structures[key].lines_all && symbols(cfg, false).L_W === cfg.L;  // every block windowed
  return evaluateLines(S.structures[key][all ? "lines_all" : "lines"], (all ? MEMORY_ALL_FNS : MEMORY_FNS)[key], cfg)
    .filter((x) => S.dtypes[dtype] === 2 || x.key !== "memory/korthikanti").map((x) => ({...x, label: py.fmap(x.label, {dtype, ...windowValues(cfg)})}));
}

// ---- markup: app/templates.py's TEMPLATES (S.html), filled by the compiled templates.fill_html -------------------
function shapeRows(cfg, dtype, expanded) {  // the trace's rows at cfg (model.tracing.Row), shown by shapes_markup.display_rows
  const key = keys.pass_key(cfg, dtype), st = S.structures[key], blocks = config.kind_blocks(cfg);
  const big = symbols(cfg, true), atTmax = {...big, T: BigInt(cfg.T_max)};
  const shapeOf = (i, s) => DIM_FNS[key][i].map((f) => f(s));  // each dimension compiled (spec.py)
  const count = (shape) => shape.reduce((a, b) => a * b, 1n);
  const scale = st.rows.reduce((m, r, i) => { const b = count(shapeOf(i, atTmax)) * BigInt(r.elem); return b > m ? b : m; }, 0n);
  const rows = st.rows.map((r, i) => {  // a block row: its kind's first block, and the number of its kind's blocks
    const kind = r.block ? r.kind ?? "dense" : null, first = r.block ? blocks[kind][0] : null, shape = shapeOf(i, big);
    return {...r, name: r.block ? `blocks.${first}.${r.local}` : r.name, block: first, kind, shape, numel: count(shape),
            nbytes: count(shape) * BigInt(r.elem), repeat: r.block ? blocks[kind].length : 1};
  });
  return {rows: shapes_markup.display_rows(cfg, rows, scale, expanded, st.only ?? []), scale, legend: st.legend ?? []};
}

const tableHtml = (rows, dtype, scale, memory, legend) => templates.fill_html(S.html.table, {dtype, scale: units.nbytes(scale),
  rows: rows.map((r) => shapes_markup.row_html(r, py.str, "")).join(""), legend: shapes_markup.recipe_legend_html(legend),
  lines: budget_markup.lines_html(memory.map(budget_markup.shown)),
  korthikanti: memory.some((x) => x.key === "memory/korthikanti") ? S.korthikanti_note : ""});

// ---- what each change buys: model/changes.py changes(), app/cards/recipe/markup.py ------------------------------
function changesGroups(cfg, dtype) {  // changes_card.changes_groups(changes(cfg, dtype)): {groups} or {notice}
  const tv = changes.title_values(cfg), why = changes.no_twin(cfg);
  if (why !== null) return {notice: why};  // changes.twin's refusals
  if (Cfg.gpt2_recipe(cfg)) return {groups: [{key: "twin", title: S.changes.titles.twin, lines: []}]};
  const key = keys.changes_key(cfg, dtype), table = S.changes.tables[key];
  if (!table) {  // carried at the page's dtype only, or not at all
    const at = S.initial.dtype, command = `${changes_card.export_command(cfg)} --dtype ${dtype}`;
    return {notice: S.changes.tables[keys.changes_key(cfg, at)] ? py.fmap(S.changes.other_dtype, {page_dtype: at, dtype, command})
      : changes_card.uncovered_text(cfg)};
  }
  const big = symbols(cfg, true), num = symbols(cfg, false);
  return {groups: table.groups.map((g, gi) => ({key: g.key, title: py.fmap(S.changes.titles[g.title], tv),
    lines: g.lines.map((t, i) => budget_markup.shown({...t, label: py.fmap(t.label, tv), value: CHANGES_FNS[key][gi][i](t.exact ? big : num)}))}))};
}

function changesCardHtml(cfg, dtype) {  // changes_card.changes_html, or its notice
  const c = changesGroups(cfg, dtype);
  return c.notice ? changes_card.notice_html(c.notice) : changes_card.changes_html(c.groups, dtype, changes.order_note(cfg));
}

// ---- the training run: model/training.py plan(), model/train_report.py, app/cards/train/ (view, settings) ----
const TS = S.train;
const trainSetup = (fields) => ({...TS.default, ...fields});  // TrainSetup(**fields), for train_query.settle_train
const Setup = training.TrainSetup;  // its properties as functions of a setup: Setup.device(s), Setup.act_dtype(s)

function lineOf(lines, fns, key, cfg) {  // a line of budget(cfg) or of a structure's lines, by key: [template, value]
  const i = lines.findIndex((x) => x.key === key);
  return [lines[i], fns[i](symbols(cfg, lines[i].exact))];
}

const budgetLine = (cfg, key) => lineOf(S.budget[keys.budget_key(cfg)], BUDGET_FNS[keys.budget_key(cfg)], key, cfg);  // budget.line
const paramsExact = (cfg) => Number(budgetLine(cfg, "params/exact")[1]);  // budget(cfg).params_exact
const savedLine = (cfg, dtype, L = cfg.L) => lineOf(S.structures[keys.pass_key(cfg, dtype)].lines,  // its "memory/saved"
  MEMORY_FNS[keys.pass_key(cfg, dtype)], "memory/saved", {...cfg, L});

function savedParts(cfg, dtype, exact = false) {  // training.saved_parts: the saved formula at L = 0 and L = 1
  const rest = savedLine(cfg, dtype, 0)[1], block = savedLine(cfg, dtype, 1)[1] - rest;
  return exact ? [rest, block] : [Number(rest), Number(block)];
}

function peakCandidates(cfg, setup) {  // training.peak_candidates: [{name, moment, value, formula}] (spec._structure)
  const dtype = Setup.act_dtype(setup), key = keys.pass_key(cfg, dtype), other = S.structures[key].other[setup.recompute];
  const s = {...symbols(cfg, true), S_block: BigInt(savedParts(cfg, dtype, true)[1])};
  s.S_other = OTHER_FNS[key][setup.recompute](s);  // what each block the pass does not run holds
  return S.structures[key].peak.map((c, i) => ({name: c.phase, moment: c.moment, value: Number(PEAK_FNS[key][i](s)),
                                                formula: py.fmap(c.formula, {each: other.formula})}));
}

const topPhase = (phases) => phases.reduce((a, b) => (b.value > a.value ? b : a));  // max(phases), the first on a tie
const template = (setup, key) => TS.variants[keys.train_variant(setup)].find((i) => TS.templates[i].key === key);  // spec
const held = (N, setup) => TRAIN_FNS[template(setup, "memory/peak")]({N, n: setup.gpus, M_top: 0});  // state_bytes
// (training.state_bytes: weights + gradients + optimizer states, the peak's formula without its phase)
const trainingMemory = (cfg, setup, N) => held(N, setup) + topPhase(training.step_phases(cfg, setup)).value;  // training.training_memory

function largestMicroBatch(cfg, setup, N) {  // training.largest_micro_batch: its closed form, the same float operations
  const capacity = Setup.capacity(setup), h = held(N, setup), values = (B) => peakCandidates({...cfg, B}, setup).map((x) => x.value), v2 = values(2);
  if (h + Math.max(...v2) > capacity) return trainingMemory({...cfg, B: 1}, setup, N) <= capacity ? 1 : 0;  // trainingMemory at B = 2
  const v3 = values(3);
  return Math.min(config.largest_B(cfg.T), ...v2.flatMap((a, i) => (v3[i] > a ? [2 + Math.floor((capacity - h - a) / (v3[i] - a))] : [])));
}

function trainPlan(cfg, setup) {  // training.plan: {lines, memory, serve, setup} (spec._train_template filled)
  const N = paramsExact(cfg), dtype = Setup.act_dtype(setup), dev = Setup.device(setup), [rest, block] = savedParts(cfg, dtype);
  const D = setup.D === null ? TS.chinchilla * N : setup.D, capacity = Setup.capacity(setup);
  const phases = training.step_phases(cfg, setup), top = topPhase(phases);
  const byPhase = Object.fromEntries(phases.map((x) => [x.name, x]));
  const [measured, M] = budgetLine(cfg, "flops/forward_measured");  // the recipe's measured forward FLOPs per token
  const s = {...symbols(cfg, false), N, D, C: 6 * N * D, P: dev.peak_tflops * 1e12, MFU: setup.mfu, n: setup.gpus,
             price: setup.price, S_rest: rest, S_block: block, M: Number(M), M_top: top.value, capacity,
             fits: held(N, setup) + top.value <= capacity, max_B: largestMicroBatch(cfg, setup, N),
             ...Object.fromEntries(phases.map((x) => [TS.phase_symbols[x.name], x.value]))};
  const phased = (i) => !TS.templates[i].phase || TS.templates[i].phase in byPhase;  // T = 1: no loss, no backward pass
  const ids = TS.variants[keys.train_variant(setup)].filter(phased);
  s.G = TRAIN_FNS[template(setup, "chinchilla/G")](s);
  const slots = {...windowValues(cfg), M: measured.formula, saved: savedLine(cfg, dtype)[0].formula,
                 top: TS.phase_symbols[top.name], phase: top.name};
  const lines = ids.map((i) => {
    const t = TS.templates[i], windowed = cfg.window != null && t.window, every = windowed && s.L_W === cfg.L;
    const latent = Cfg.mla(cfg) && t.recipe;  // latent attention's cache: c_kv and k_rope (spec._serving_lines)
    const r = Cfg.gpt2_recipe(cfg) || !t.recipe ? t : latent ? t.mla : every ? t.window_all : windowed ? t.window : t.recipe;
    const value = (latent ? TRAIN_MLA_FNS[i] : windowed ? TRAIN_WINDOW_FNS[i] : TRAIN_FNS[i])(s);
    const v = {...slots, ...byPhase[t.phase]};
    return {key: t.key, label: py.fmap(r.label, v), formula: py.fmap(r.formula, v), value, unit: t.unit,
            human: train_report.human({key: t.key, value, unit: t.unit})};
  });
  const v = (k) => lines.find((x) => x.key === k).value;  // training.Memory: the fields the card shows
  const memory = {peak_phase: top.name, ...Object.fromEntries(TS.memory.map((k) => [k, v(`memory/${k}`)]))};
  return {cfg, setup, lines, memory, serve_weights_bytes: v("serve/weights"), kv_cache_bytes: v("serve/kv_cache")};  // a Plan's
}

const RADIOS = ["optimizer", "zero", "recompute"];  // the card's radio buttons; its other inputs hold text

function trainAsked() {  // training.TrainingView.asked: the inputs' values (each train_ and its key) by the URL's keys
  const custom = W.train_gpu.value === TS.custom_gpu, read = (k, w) => (RADIOS.includes(k)
    ? String(TS.labels[k][w.active][0]) : k in TS.field && !custom ? null : w.value);  // TS.field: a custom GPU's
  return Object.fromEntries(TS.keys.map((k) => [k, read(k, W[`train_${k}`])]));
}

function pushTrain(setup, notes) {  // the inputs show the settled setup (TrainingView._push) and the notices
  const custom = setup.gpu === TS.custom_gpu, shown = {...setup, ...(custom ? {} : TS.custom_start)};
  for (const k of TS.keys) {
    const v = shown[TS.field[k] ?? k], w = W[`train_${k}`];
    if (RADIOS.includes(k)) push(w, "active", TS.labels[k].findIndex((x) => x[0] === v));
    else push(w, "value", k in TS.choices ? v : v === null ? "" : train_query.link_number(v));  // 300,000,000,000: training._text
  }
  if (W.train_gpu_peak.visible !== custom) W.train_gpu_peak.visible = W.train_gpu_memory.visible = custom;
  W.train_notices.text = templates.fill_html(S.html.warnings, {notes: notes.map((text) => ({text}))});
}

function renderTrain(cfg) {
  // a mixture of experts' compute is N_active's and its memory every expert's; a chunked rule's peak has no formula
  // (Gated DeltaNet's, KDA's, Mamba 2's: training.no_peak): the CLI prints its card
  const why = Cfg.moe(cfg) ? TS.moe : training.no_peak(cfg);
  W.train_controls.visible = W.train_body.visible = !why;
  if (why) {
    W.train_head.text = changes_card.notice_html(py.fmap(why, {command: `python -m model ${cli.model_options(cfg)} --table train`}));
    return;
  }
  for (const [k, v] of Object.entries(training_markup.panes(trainPlan(cfg, ST.setup)))) W[k].text = v;
}

function trainChanged(obj) {  // TrainingView._changed: a box's bad text keeps the value in use; only news shows
  const [setup, notes] = train_query.settle_train(trainAsked(), ST.setup);
  const said = train_query.news(notes, ST.trainSaid, obj.name.slice("train_".length));  // train_D: D
  [ST.setup, ST.trainSaid] = [setup, notes];
  pushTrain(setup, said);
  renderTrain(ST.cfg);
}

// ---- the inference card: tables that app/export/spec.py _inference made in Python, picked by the card's menus ----
const IS = S.infer;
const inferKey = () => [W.infer_gpu.value, W.infer_weights.value, W.infer_kv_dtype.value].join(",");  // spec.infer_key
const isInferCfg = (cfg) => S.all_fields.every((f) => JSON.stringify(cfg[f] ?? null) === JSON.stringify(IS.cfg[f] ?? null));

function renderInfer(cfg) {  // the table of the menus' choices; on another configuration, the command for its page
  const refused = IS.refused ?? (isInferCfg(cfg) ? null : py.fmap(IS.elsewhere, {command: changes_card.export_command(cfg)}));
  W.infer_notice.text = refused === null ? "" : changes_card.notice_html(refused);
  W.infer_figures.visible = refused === null;
  if (refused !== null) return;
  const t = IS.tables[inferKey()];
  [W.infer_head.text, W.infer_knee.text] = [IS.rows[t.head], IS.rows[t.knee]];  // the pool of distinct markup
  W.infer_lines.text = IS.frame[0] + t.lines.map((i) => IS.rows[i]).join("") + IS.frame[1];
  for (const [k, v] of Object.entries(t.charts)) W[`infer-${k}`].data = v;  // in place: the same sources
}

// ---- widgets -------------------------------------------------------------------------------------------------------
function push(model, prop, value) {  // write a widget without reacting to the echo
  ST.pushed[`${model.name}.${prop}`] = value;
  if (model[prop] !== value) model[prop] = value;
}

const isEcho = (model, prop) => ST.pushed[`${model.name}.${prop}`] === model[prop];

const boxValue = (c, w) => (w.symbol === w.field ? c[w.field] : py.getattr(c, w.symbol, Cfg));  // sizes_view: the value in use

const SHOWN = {  // what a control of each kind (S.widgets: spec.widget_table) shows for c: controls.controls_view
  set: (w, c) => c[w.field],
  label: (w, c) => fieldLabel(w.field, words.field_names(c)[w.field]),  // words.field_names: the recipe renames h and T_max
  box: (w, c) => units.thousands(boxValue(c, w)),
  latent: (w, c) => (c[w.field] == null ? "none" : units.thousands(c[w.field])),  // d_cq: none, q projected from x directly
  recipe: (w, c) => families.recipe_of(c),
  moe: (w, c) => (Cfg.moe(c) ? "moe" : "dense"),
  preset: (w, c) => Object.keys(S.preset_labels).find((k) => S.preset_labels[k] === rules.preset_of(c)),
};

function pushSlider(slider, cfg, f) {  // controls._field_view, in one batched change: the range never clamps the value
  const divs = f === "h" ? config.divisors(cfg.d) : null;  // h walks the divisors of d: its positions are their indices
  const [start, end, step] = divs ? [0, Math.max(1, divs.length - 1), 1] : words.slider_range(f, cfg[f], cfg.T_max);
  const value = divs ? Math.max(0, divs.indexOf(cfg.h)) : cfg[f];
  ST.pushed[`${slider.name}.value`] = value;
  if (slider.start !== start || slider.end !== end || slider.step !== step || slider.value !== value) {
    slider.setv({start, end, step, value});
  }
  if (divs && slider.disabled !== (divs.length === 1)) slider.disabled = divs.length === 1;
}

function pushControls(cfg, notes) {  // every control of S.widgets the page has, as controls_view shows it
  const holds = {dense: Cfg.mlp_kinds(cfg).includes("dense"), not_mla: !Cfg.mla(cfg), mla: Cfg.mla(cfg), moe: Cfg.moe(cfg)};
  for (const [name, w] of Object.entries(S.widgets)) {
    if (W[name] === undefined) continue;  // the MLP's switch and boxes, latent attention's: on their pages only
    if (w.when !== null) push(W[name], "visible", holds[w.when]);
    if (w.kind === "slider") pushSlider(W[name], cfg, w.field);
    else if (w.kind in SHOWN && (w.when === null || holds[w.when])) push(W[name], w.prop, SHOWN[w.kind](w, cfg));
  }
  W.status.text = templates.fill_html(S.html.status, {notes: notes.map((text) => ({text})), rules: words.status_rules(cfg),
                                          extras: families.extras_shown(cfg, cli.extras_preset(cfg), S.extras_lines, S.own_extras)});
}

function ariaLabel(model, selector, label) {  // name an element inside a widget's view for screen readers
  const view = Bokeh.index.find_one(model);  // (Bokeh's views hold the DOM; its models have no aria-label)
  for (const el of view?.shadow_el?.querySelectorAll(selector) ?? []) el.setAttribute("aria-label", label);
}

function render(cfg) {  // every card; where this page does not carry the model, each card says so (the export command)
  W.shapes_title.text = S.shapes_titles[cfg.attention];  // its intro says what this attention makes
  W.changes.text = changesCardHtml(cfg, ST.dtype);
  renderInfer(cfg);
  if (!covered(cfg, ST.dtype)) {
    for (const name of ["head", "shapes", "train_head"]) W[name].text = changes_card.notice_html(changes_card.uncovered_text(cfg));
    for (const name of ["lines", "captions", "train_lines", "train_legend"]) W[name].text = "";
    return;
  }
  for (const [k, v] of Object.entries(budget_markup.panes({lines: budgetLines(cfg)}))) W[k].text = v;  // W.head, …
  const {rows, scale, legend} = shapeRows(cfg, ST.dtype, ST.expanded);
  W.shapes.text = tableHtml(rows, ST.dtype, scale, memoryLines(cfg, ST.dtype), legend);
  renderTrain(cfg);
}

function update(rejected, changed = S.all_fields) {  // ExplorerState._settle; changed null: no field (dtype, listing)
  let cfg, notes, said;
  if (changed === null) [cfg, notes, said] = [ST.cfg, ST.notes, ST.said];
  else {
    try {
      [cfg, notes] = rules.settle_notes(ST.asked, ST.cfg, changed);
      said = rules.news(notes, ST.notes, changed);
    } catch (e) {  // a configuration no Config takes: keep the one shown, say why
      ST.asked = {...ST.cfg};
      [cfg, notes, said] = [ST.cfg, [], [`${e.message}; kept the configuration shown`]];
    }
  }
  if (ST.cfg !== null && JSON.stringify(cfg) !== JSON.stringify(ST.cfg)) W.train_notices.text = "";  // a later change
  [ST.cfg, ST.notes, ST.said] = [cfg, notes, said];
  pushControls(cfg, [...rejected, ...said]);
  const key = JSON.stringify([cfg, ST.dtype, ST.expanded]);
  if (key !== ST.key) { ST.key = key; render(cfg); }
}

function askBox(w, obj, rejected) {  // a box's text: rules.read_field (read_latent for d_cq), by its field's symbol
  const kept = boxValue(ST.cfg, w), text = obj.value ?? "";
  const [v, bad] = w.kind === "latent" ? rules.read_latent(text, kept) : rules.read_field(w.symbol, text, kept);
  if (v === null) { if (bad) rejected.push(bad); return []; }  // no field changed
  ST.asked[w.field] = v === "none" ? null : v;
}

const ASK = {  // what a control of each kind (S.widgets) asks for: app/cards/controls/view.py Controls.ask
  slider: (w, obj) => {
    const divs = config.divisors(ST.cfg.d);  // h's slider walks the divisors of d
    ST.asked[w.field] = w.field === "h" ? divs[Math.min(obj.value, divs.length - 1)] : obj.value;
  },
  set: (w, obj) => { ST.asked[w.field] = obj[w.prop]; },  // a switch or a checkbox
  box: askBox,
  latent: askBox,
  preset: (w, obj) => {  // "custom" describes a state: nothing to apply
    const p = rules.PRESETS[S.preset_labels[obj.value]];
    for (const k of p ? S.preset_asks : []) ST.asked[k] = p[k];
  },
  recipe: (w, obj) => { if (obj.value !== "custom") Object.assign(ST.asked, families.recipe_fields(obj.value, ST.cfg.h)); },
  moe: (w, obj) => { Object.assign(ST.asked, families.moe_fields(ST.cfg, obj.value === "moe")); },
  dtype: (w, obj) => { ST.dtype = Object.keys(S.dtypes)[obj.active]; },
  expanded: (w, obj) => { ST.expanded = obj.active; },
};

function main(obj) {
  if (ST.asked === null || !obj || typeof obj.name !== "string") {  // document_ready: the starting configuration
    ST.asked = Object.fromEntries(S.all_fields.map((f) => [f, S.initial[f]]));
    ST.dtype = S.initial.dtype;
    ST.setup = {...S.initial_train};
    [ST.notes, ST.said, ST.trainSaid] = [[], [], []];
    pushTrain(ST.setup, []);
    for (const [name, w] of Object.entries(S.widgets)) {
      if (w.aria) ariaLabel(W[name], w.aria, `${w.field}: ${S.docs[w.field]}`);
    }
    window.__ts = {...COMPILED, py, fieldLabel, budgetLines, memoryLines, shapeRows, trainPlan, largestMicroBatch,
                   savedParts, paramsExact, changesGroups, covered};
    return update([]);
  }
  const name = obj.name, w = S.widgets[name];
  if (name.startsWith("infer_")) return renderInfer(ST.cfg);  // a menu of the inference card
  if (name.startsWith("train_")) {
    if (isEcho(obj, ["train_optimizer", "train_zero", "train_recompute"].includes(name) ? "active" : "value")) return;
    return trainChanged(obj);
  }
  if (w === undefined) return update([]);
  if (isEcho(obj, w.prop)) return;
  const rejected = [];
  return update(rejected, ASK[w.kind](w, obj, rejected) ?? w.changes);  // the fields it set (null: none)
}
