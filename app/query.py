"""The explorer's URL query, both ways, as pure functions (no Panel): a link reproduces a view.

    >>> q = parse_query("?B=8&T=512&d=770&h=12&L=12&V=50257&T_max=1024&tie=1")
    >>> q.config.T, q.config.h, q.notices
    (512, 11, ('h snapped 12 → 11: 770 is not divisible by 12',))
    >>> to_query(q.config, q.options)
    '?B=8&T=512&d=770&h=11&L=12&V=50257&T_max=1024&tie=1'

Keys: the Config fields B, T, d, h, L, V, T_max, tie; `preset` (a name in model.PRESETS, overridden by any
field given with it); `dtype` (fp32, bf16, fp16); `expanded` (list all L blocks); and for course pages
`embed=1`, `controls=T,d` and `panels=shapes,budget,values` (see `ViewOptions`); the training run's D, gpu,
gpu_peak, gpu_memory, mfu, gpus, price, optimizer, zero, recompute and fit (see `app.cards.train.settings`); the
inference card's infer_gpu, infer_peak, infer_memory, infer_bandwidth, weights, kv_dtype, group and efficiency (see
`app.cards.infer.settings`); the mixture of experts (`MOE_KEYS`): `moe` (1: the MLP is a mixture of experts, 0:
dense), its sizes by their symbols E, k, d_expert, E_shared, d_shared, and the fields shared_gate, moe_step,
dense_first, dense_layers (block indices, e.g. 0,1,2); the window (`WINDOW_KEYS`): W (a whole number, or none:
full attention) and full_layers (block indices);
multi-head latent attention (`MLA_KEYS`, by their symbols): d_c (none: no latent attention), d_cq (none: q projected
from x directly), d_R, d_nope and d_v, whole numbers (d_c needs d_R, d_nope and d_v with it);
and the family's extras (`EXTRA_KEYS`, by field name): Gemma's post_norms, embed_scale (1 or 0), query_scale (a whole
number), attn_softcap, final_softcap, and gpt-oss's sinks, expert_bias (1 or 0), swiglu_limit, swiglu_alpha (numbers
above 0; none: unset). Keys starting with "bokeh-" (added
by Bokeh's `server_document` embedding) are skipped.

Hostile input never raises: every problem (not a whole number, out of range, d % h != 0, T > T_max, a
repeated or unknown key, an overlong query) becomes a notice naming the problem and what is shown instead,
and the result is always a valid `model.Config`. Notices quote user text; escape them before showing as HTML.

A served page's query comes from the server's request, already split by Tornado into `request.arguments`
(latin-1 keys, bytes values, invalid UTF-8 and all): `query_from_arguments` turns that back into a query
string for `parse_query`, losing nothing but the order of different keys.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields as dc_fields
from urllib.parse import parse_qsl, urlencode

from model import BOUNDS, DTYPES, PRESETS, Config, numbers
from model.config import (DEFAULT_PRESET, DEFAULTS, FIELDS, GEMMA_DEFAULTS, GEMMA_DOCS, GEMMA_FIELDS, LAYOUT_BOUNDS,
                          LAYOUT_FIELDS, MODEL_CHOICES as CHOICES, MOE_DEFAULTS, MOE_DOCS, MOE_FIELDS, MOE_SYMBOLS,
                          MLA_DEFAULTS, MLA_EXAMPLE, MLA_SYMBOLS, OPTIONAL_SYMBOLS, OSS_DEFAULTS, OSS_DOCS, OSS_FIELDS,
                          QUERY_SCALE_MAX, RECIPE_DOCS, RECIPE_FIELDS, WINDOW_DEFAULTS)
from model.families import MLP_KINDS, RECIPE_LABELS, moe_fields, recipe_fields
from model.rules import EXTRA_FIELDS, did_you_mean, quote, read_latent, read_layers, read_window, settle
from model.training import TrainSetup

from model.inference import InferSetup

from .cards.infer.settings import INFER_KEYS, infer_items, settle_infer
from .cards.train.settings import TRAIN_KEYS, settle_train, train_items

DEFAULT_CONFIG = PRESETS[DEFAULT_PRESET]  # GPT-2 small at B = 8, T = 1,024
# The modern recipe's URL keys (issue 15): the switches by their field names, the sizes by their symbols, and
# `recipe` (gpt2 or modern: sets every switch, as the page's recipe choice does; keys given with it override it).
RECIPE_KEYS = ("recipe", "norm", "positions", "mlp", "d_ff", "h_kv", "d_head", "bias", "qk_norm", "attention")
# The mixture of experts' URL keys: the MLP choice `moe`, the sizes by their symbols, the layout by field names.
MOE_KEYS = ("moe", *MOE_SYMBOLS.values(), "shared_gate", *LAYOUT_FIELDS)
LAYOUT_KEYS = LAYOUT_FIELDS  # which blocks are MoE
MOE_CONTROLS = ("moe", *MOE_SYMBOLS.values(), *LAYOUT_KEYS)  # the page's MLP switch and its boxes (not shared_gate)
WINDOW_KEYS = ("W", "full_layers")  # the sliding window and the blocks kept full beside it (boxes on the page)
MLA_KEYS = tuple(MLA_SYMBOLS.values())  # latent attention's widths d_c, d_cq, d_R, d_nope, d_v (boxes on the page)
EXTRA_KEYS = (*GEMMA_FIELDS, *OSS_FIELDS)  # Gemma's and gpt-oss's extras, by field name (a preset's line on the page)
EXTRA_DEFAULTS = {**GEMMA_DEFAULTS, **WINDOW_DEFAULTS, **OSS_DEFAULTS, **MLA_DEFAULTS}
EXTRA_DOCS = {**GEMMA_DOCS, **OSS_DOCS}
CONTROLS = ("preset", "B", "T", "d", "h", "L", "V", "T_max", "tie", *RECIPE_KEYS, *MOE_CONTROLS,
            *WINDOW_KEYS, *MLA_KEYS)  # `controls=`
PANELS = ("shapes", "budget", "changes", "tokens", "values", "training", "inference")  # what `panels=` may list
OPTION_KEYS = ("preset", "dtype", "expanded", "embed", "controls", "panels")
KEYS = FIELDS + RECIPE_KEYS + MOE_KEYS + WINDOW_KEYS + MLA_KEYS + EXTRA_KEYS + OPTION_KEYS + TRAIN_KEYS + INFER_KEYS
FIELD_OF = {symbol: name for name, symbol in OPTIONAL_SYMBOLS.items()}  # "d_ff" -> "ff_dim"
MAX_QUERY_CHARS = 2_000  # longer queries are cut: no link needs more, and a hostile one costs nothing
MAX_VALUE_CHARS = 40  # longer values are rejected before any parsing
MAX_NOTICES = 8
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class ViewOptions:
    """How the page is laid out: chrome or embed, which controls and panels, bytes per element, blocks listed."""

    embed: bool = False  # no title or explanation, sized for an iframe
    controls: tuple[str, ...] = CONTROLS  # subset of CONTROLS, in that order
    panels: tuple[str, ...] = PANELS  # subset of PANELS, in that order
    dtype: str = "fp32"  # bytes per float element in the shapes table
    expanded: bool = False  # list every block instead of one "× L" group


@dataclass(frozen=True)
class Query:
    """A parsed query: always a valid Config and options, plus a notice per problem found."""

    config: Config = DEFAULT_CONFIG
    options: ViewOptions = field(default_factory=ViewOptions)
    notices: tuple[str, ...] = ()
    train: TrainSetup = field(default_factory=TrainSetup)  # the training run's settings
    infer: InferSetup = field(default_factory=InferSetup)  # the inference card's GPU and formats


show = quote  # user text for a notice (model.rules.quote)


def _int_value(key: str, raw: str, fallback: int, bounds: tuple[int, int] | None = None) -> tuple[int, str | None]:
    lo, hi = bounds or BOUNDS[key]
    text = raw.strip()
    if not text:
        return fallback, f"{key} has no value; using {key}={fallback:,}"
    if len(text) > MAX_VALUE_CHARS:  # before int(): 4,300 digits and more raise ValueError
        return fallback, f'{key}="{show(text)}" is too long: {key} is a whole number from {lo:,} to {hi:,}; using {key}={fallback:,}'
    n = numbers.whole(text)  # the grammar of every number box: 1024, 1,024, 1_024, 1e3, 4 thousand
    if n is None:
        digits = " written with the digits 0–9" if any(c.isdigit() and not c.isascii() for c in text) else ""
        return fallback, f'{key}="{show(text)}" is not a whole number from {lo:,} to {hi:,}{digits}; using {key}={fallback:,}'
    if not lo <= n <= hi:
        return fallback, (f"{key}={numbers.show(n, text)} is out of range: {key} must be from {lo:,} to {hi:,}; "
                          f"using {key}={fallback:,}")
    return n, None


def _bool_value(key: str, raw: str, fallback: bool, meaning: str) -> tuple[bool, str | None]:
    text = raw.strip().lower()
    if text in _TRUE:
        return True, None
    if text in _FALSE:
        return False, None
    return fallback, f'{key}="{show(raw)}" is not 1 or 0 ({key}=1: {meaning}); using {key}={int(fallback)}'


def _names_value(key: str, raw: str, allowed: tuple[str, ...], allow_none: bool) -> tuple[tuple[str, ...], str | None]:
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    if [p.lower() for p in parts] == ["all"]:
        return allowed, None
    if allow_none and [p.lower() for p in parts] == ["none"]:
        return (), None
    unknown = [p for p in parts if p not in allowed]
    chosen = tuple(name for name in allowed if name in parts)
    note = None
    if unknown:
        names = ", ".join(f'"{show(p, 16)}"' for p in unknown[:5]) + (" …" if len(unknown) > 5 else "")
        note = f"{key}: ignored {names}; choose from {','.join(allowed)}"
    if not chosen:
        extra = " or none" if allow_none else ""
        note = f"{key}={show(raw)!s} names none of {','.join(allowed)}{extra}; showing all"
        chosen = allowed
    return chosen, note


def _unknown_notice(keys: list[str]) -> str:
    lower = {k.lower(): k for k in KEYS}
    described = []
    for k in keys[:5]:
        hint = f" (did you mean {lower[k.lower()]}?)" if k.lower() in lower else ""
        described.append(f'"{show(k, 16)}"{hint}')
    more = f" and {len(keys) - 5} more" if len(keys) > 5 else ""
    return f"ignored unknown key{'s' if len(keys) > 1 else ''} {', '.join(described)}{more}; known keys: {', '.join(KEYS)}"


def query_from_arguments(arguments: Mapping[str, Sequence[bytes | str]] | None) -> str:
    """A server request's parsed query (Tornado's `request.arguments`) as a query string: "?T=%C2%B2&d=768".

    Tornado decodes keys as latin-1 and keeps values as bytes; both are read here as UTF-8, invalid bytes as
    "\ufffd", so "²", "①", NUL bytes and broken percent-encoding all reach `parse_query` as text. Values
    that are not bytes or str (a malformed token payload) are skipped. Never raises.
    """
    items: list[tuple[str, str]] = []
    for key, values in (arguments or {}).items():
        name = _utf8(key.encode("latin-1", "replace") if isinstance(key, str) else key)
        for value in values if isinstance(values, (list, tuple)) else [values]:
            if isinstance(value, (bytes, str)):
                items.append((name, _utf8(value)))
    return "?" + urlencode(items) if items else ""


def _utf8(raw: bytes | str) -> str:
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw


def _cut(text: str) -> str:
    """The query's first MAX_QUERY_CHARS characters, less a field cut short there (a cut number must not be read as
    a smaller one), unless the cut value is already too long for any key: then it stays, to be named in a notice."""
    head = text[:MAX_QUERY_CHARS]
    if text[MAX_QUERY_CHARS:MAX_QUERY_CHARS + 1] == "&":
        return head
    complete, _, last = head.rpartition("&")
    cut = parse_qsl(last, keep_blank_values=True, errors="replace")
    return head if cut and len(cut[0][1].strip()) > MAX_VALUE_CHARS else complete


def _pairs(search: str | None) -> tuple[dict[str, str], list[str]]:
    """First value of each key, and notices about length, repeated and unknown keys."""
    notes: list[str] = []
    text = search if isinstance(search, str) else ""
    text = text[1:] if text.startswith("?") else text
    if len(text) > MAX_QUERY_CHARS:
        notes.append(f"the link's query is {len(text):,} characters long; only the first {MAX_QUERY_CHARS:,} were read")
        text = _cut(text)
    first: dict[str, str] = {}
    counts: dict[str, int] = {}
    unknown: list[str] = []
    for key, value in parse_qsl(text, keep_blank_values=True, errors="replace"):
        if key.startswith("bokeh-"):  # added by Bokeh's server_document / autoload.js, not by the user
            continue
        if key not in KEYS:
            if key not in unknown:
                unknown.append(key)
            continue
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, value)
    for key, n in counts.items():
        if n > 1:
            notes.append(f'{key} is given {n} times; using the first, {key}="{show(first[key])}"')
    if unknown:
        notes.append(_unknown_notice(unknown))
    return first, notes


def _options(values: dict[str, str], notes: list[str]) -> ViewOptions:
    base = ViewOptions()
    opts: dict[str, object] = {}
    if "embed" in values:
        opts["embed"], note = _bool_value("embed", values["embed"], base.embed, "no title, sized for an iframe")
        notes += [note] if note else []
    if "expanded" in values:
        opts["expanded"], note = _bool_value("expanded", values["expanded"], base.expanded, "list every block")
        notes += [note] if note else []
    if "dtype" in values:
        dtype = values["dtype"].strip().lower()
        if dtype in DTYPES:
            opts["dtype"] = dtype
        else:
            notes.append(f'dtype="{show(values["dtype"])}" is not one of {", ".join(DTYPES)}; using fp32')
    for key, allowed, allow_none in (("controls", CONTROLS, True), ("panels", PANELS, False)):
        if key in values:
            opts[key], note = _names_value(key, values[key], allowed, allow_none)
            notes += [note] if note else []
    return ViewOptions(**{**{f.name: getattr(base, f.name) for f in dc_fields(base)}, **opts})


def parse_query(search: str | None) -> Query:
    """Parse `window.location.search` ("?B=8&T=1024&..."; the "?" is optional) into a valid view. Never raises."""
    values, notes = _pairs(search)
    base = DEFAULT_CONFIG
    if "preset" in values:
        name = values["preset"].strip().lower()
        if name in PRESETS:
            base = PRESETS[name]
        else:
            notes.append(f'preset="{show(values["preset"])}" is unknown{did_you_mean(name, PRESETS)}; presets: '
                         f'{", ".join(PRESETS)}; using {DEFAULT_PRESET}')
    asked: dict[str, object] = {k: getattr(base, k) for k in (*FIELDS, *RECIPE_FIELDS, *MOE_FIELDS, *EXTRA_FIELDS)}
    for key in FIELDS:
        if key not in values:
            continue
        if key == "tie":
            asked[key], note = _bool_value(key, values[key], base.tie, "the head reuses W_te, as GPT-2")
        else:
            asked[key], note = _int_value(key, values[key], getattr(base, key))
        notes += [note] if note else []
    _recipe_values(values, asked, notes)
    _moe_values(values, asked, notes)
    _extra_values(values, asked, notes)
    try:
        config, settled = settle(asked)
    except ValueError as e:  # a layout of blocks, a mixture of experts or a recipe no Config takes: without it
        layout = {k: MOE_DEFAULTS[k] for k in LAYOUT_KEYS}
        fallbacks = (((layout, "showing every block MoE"), (MOE_DEFAULTS, f"showing a {MLP_KINDS['dense']}"))
                     if asked["experts"] is not None else ())
        fallbacks += ((EXTRA_DEFAULTS, "showing it without the window, latent attention and the family's extras"),)
        fix, said = next(((f, w) for f, w in fallbacks if _settles({**asked, **f})),
                         ({**DEFAULTS, **MOE_DEFAULTS, **EXTRA_DEFAULTS}, "showing GPT-2's recipe"))
        notes.append(f"{e}; {said}")
        config, settled = settle({**asked, **fix})
    notes += settled
    options = _options(values, notes)
    train, train_notes = settle_train({k: values[k] for k in TRAIN_KEYS if k in values})
    notes += train_notes
    infer, infer_notes = settle_infer({k: values[k] for k in INFER_KEYS if k in values})
    notes += infer_notes
    if len(notes) > MAX_NOTICES:
        notes = notes[: MAX_NOTICES - 1] + [f"… and {len(notes) - MAX_NOTICES + 1} more problems with this link"]
    return Query(config=config, options=options, notices=tuple(notes), train=train, infer=infer)


def _recipe_values(values: dict[str, str], asked: dict[str, object], notes: list[str]) -> None:
    """The recipe keys of a query into `asked` (the recipe first, then each key given); a bad value keeps the
    preset's and gets a notice."""
    if "recipe" in values:
        name = values["recipe"].strip().lower()
        if name in ("gpt2", "modern"):
            asked.update(recipe_fields(name, int(asked["h"])))
        else:
            notes.append(f'recipe="{show(values["recipe"])}" is not gpt2 or modern ({RECIPE_LABELS["gpt2"]}, '
                         f'{RECIPE_LABELS["modern"]}); using the preset\'s')
    for key in CHOICES:
        if key in values:
            choice = values[key].strip().lower()
            if choice in CHOICES[key]:
                asked[key] = choice
            else:
                notes.append(f'{key}="{show(values[key])}" is not one of {", ".join(CHOICES[key])} '
                             f'({RECIPE_DOCS[key]}); using {key}={asked[key]}')
    if "qk_norm" in values:
        asked["qk_norm"], note = _bool_value("qk_norm", values["qk_norm"], bool(asked["qk_norm"]), RECIPE_DOCS["qk_norm"])
        notes += [note] if note else []
    for symbol, name in FIELD_OF.items():
        if symbol in values:
            kept = asked[name]
            if values[symbol].strip().lower() in ("", "default"):
                asked[name] = None
                continue
            value, note = _int_value(symbol, values[symbol], -1)
            if note:
                notes.append(note.replace(f"using {symbol}=-1", f"using the recipe's default {symbol}" if kept is None
                                          else f"using {symbol}={kept:,}"))
            else:
                asked[name] = value


def _settles(asked: dict[str, object]) -> bool:
    try:
        settle(asked)
    except ValueError:
        return False
    return True


def _moe_values(values: dict[str, str], asked: dict[str, object], notes: list[str]) -> None:
    """The mixture of experts' keys into `asked`: `moe` (or any of its sizes on a dense model) sets the MLP choice
    (`model.families.moe_fields`), then each key given; a bad value keeps the one in use and gets a notice."""
    on = None
    if "moe" in values:
        on, note = _bool_value("moe", values["moe"], asked["experts"] is not None,
                               f"the MLP is a {MLP_KINDS['moe']} (E, k, d_expert); 0: a {MLP_KINDS['dense']}")
        notes += [note] if note else []
    given = [k for k in MOE_KEYS[1:] if k in values]
    if given and on is None:
        on = True
    if on is not None and _settles(asked):
        asked.update(moe_fields(settle(asked)[0], on))
    if asked["experts"] is None:
        if given:
            notes.append(f"{', '.join(given)}: ignored with moe=0 (a {MLP_KINDS['dense']} has no experts)")
        return
    fields_of = {symbol: name for name, symbol in MOE_SYMBOLS.items()}
    for key in given:
        name = fields_of.get(key, key)
        kept = asked[name]
        if key == "shared_gate":
            asked[name], note = _bool_value(key, values[key], bool(kept), MOE_DOCS[name])
        elif key == "dense_layers":
            layers, note = read_layers(values[key], kept, verb="using")
            asked[name] = kept if layers is None else layers
        else:
            asked[name], note = _int_value(key, values[key], kept if kept is not None else -1, LAYOUT_BOUNDS.get(key))
            if note and kept is None:
                asked[name], note = None, note.replace(f"using {key}=-1", "using none")
        notes += [note] if note else []


def _extra_values(values: dict[str, str], asked: dict[str, object], notes: list[str]) -> None:
    """The window's and the family's extras' keys into `asked`; a bad value keeps the one in use and gets a notice."""
    if "W" in values:
        window, note = read_window(values["W"], asked["window"], verb="using")
        if window is not None:
            asked.update(window=None, full_layers=()) if window == "none" else asked.update(window=window)
        notes += [note] if note else []
    if "full_layers" in values:
        layers, note = read_layers(values["full_layers"], asked["full_layers"], verb="using", name="full_layers")
        if asked["window"] is None:
            note = "full_layers: ignored without W (the blocks kept full beside a sliding window; set W=512, say)"
        elif layers is not None:
            asked["full_layers"] = layers
        notes += [note] if note else []
    _mla_values(values, asked, notes)
    for key in (k for k in EXTRA_KEYS if k in values):
        kept = asked[key]
        if isinstance(EXTRA_DEFAULTS[key], bool):
            asked[key], note = _bool_value(key, values[key], bool(kept), EXTRA_DOCS[key])
        else:
            asked[key], note = _extra_number(key, values[key], kept)
        notes += [note] if note else []


def _mla_values(values: dict[str, str], asked: dict[str, object], notes: list[str]) -> None:
    """Latent attention's keys into `asked`: d_c (none: without latent attention), d_cq (none: q from x directly), d_R,
    d_nope, d_v; a bad value keeps the one in use, and d_c without d_R, d_nope and d_v (or those without d_c) gets a
    notice and leaves latent attention as it was."""
    given = [k for k in MLA_KEYS if k in values]
    if not given:
        return
    fields_of = {symbol: name for name, symbol in MLA_SYMBOLS.items()}
    before = {name: asked[name] for name in MLA_SYMBOLS}
    for key in given:
        name, kept = fields_of[key], asked[fields_of[key]]
        if key in ("d_c", "d_cq") and values[key].strip().lower() == "none":
            asked.update(MLA_DEFAULTS if key == "d_c" else {name: None})
            continue
        if key == "d_cq":
            number, note = read_latent(values[key], kept, verb="using")
            number = kept if number is None else number
        else:
            number, note = _int_value(key, values[key], kept if kept is not None else -1)
            number, note = (kept, note.replace(f"using {key}=-1", "using none")) if note and kept is None else (number, note)
        asked[name] = number
        notes += [note] if note else []
    if asked["latent_dim"] is None and any(asked[n] is not None for n in MLA_SYMBOLS):
        notes.append(f"{', '.join(k for k in given if k != 'd_c')}: ignored without d_c (the widths of multi-head "
                     f"latent attention; DeepSeek-V3: {_mla_example()})")
        asked.update(MLA_DEFAULTS)
    elif asked["latent_dim"] is not None and (missing := [s for n, s in MLA_SYMBOLS.items()
                                                          if asked[n] is None and n != "q_latent_dim"]):
        notes.append(f"d_c={asked['latent_dim']:,} sets multi-head latent attention, which needs {' and '.join(missing)} "
                     f"too (DeepSeek-V3: {_mla_example()}); using the attention without it")
        asked.update(before)


def _mla_example() -> str:
    """DeepSeek-V3's latent attention as link keys: "d_c=512&d_cq=1536&d_R=64&d_nope=128&d_v=128"."""
    return "&".join(f"{MLA_SYMBOLS[n]}={v.replace(',', '')}" for n, v in MLA_EXAMPLE.items())


def _extra_number(key: str, raw: str, kept: float | None) -> tuple[float | int | None, str | None]:
    """query_scale (a whole number) or a soft-cap or clamp (a number above 0 and below 1,000,000); "none" unsets."""
    text = raw.strip()
    if text.lower() in ("none", "default"):
        return None, None
    number = numbers.whole(text) if key == "query_scale" else numbers.real(text)
    lo, hi = (1, QUERY_SCALE_MAX) if key == "query_scale" else (0, 1_000_000)
    if len(text) <= MAX_VALUE_CHARS and number is not None and (lo <= number <= hi if key == "query_scale"
                                                               else lo < number < hi):
        return number, None
    what = f"a whole number from {lo:,} to {hi:,}" if key == "query_scale" else "a number above 0 and below 1,000,000"
    return kept, (f'{key}="{show(raw)}" is not {what}, or none ({EXTRA_DOCS[key]}); using '
                  f'{key}={"none" if kept is None else number_text(kept)}')


def number_text(value: float | int) -> str:
    """A soft-cap, clamp or query_scale as a link writes it: 30, 7, 1.702 (the shortest text that reads back)."""
    text = repr(float(value)) if isinstance(value, float) else str(value)
    return text[:-2] if text.endswith(".0") else text


def parse_config(search: str | None) -> tuple[Config, list[str]]:
    """Just the configuration of a query and every notice about the query: (config, notices)."""
    q = parse_query(search)
    return q.config, list(q.notices)


def recipe_items(config: Config) -> list[tuple[str, str]]:
    """The recipe keys that differ from GPT-2's (none for GPT-2's recipe, so the lesson's links stay as they are), a
    mixture of experts' keys, the window's and the family's extras' where set."""
    items = []
    for key in CHOICES:
        if getattr(config, key) != DEFAULTS[key]:
            items.append((key, getattr(config, key)))
    for symbol, name in FIELD_OF.items():
        if getattr(config, name) is not None:
            items.append((symbol, str(getattr(config, name))))
    if config.qk_norm:
        items.append(("qk_norm", "1"))
    if config.moe:  # E, k and d_expert always; the rest where not default
        items += [(symbol, str(getattr(config, name))) for name, symbol in MOE_SYMBOLS.items()
                  if name in ("experts", "top_k", "expert_dim") or getattr(config, name) != MOE_DEFAULTS[name]]
        items += [("shared_gate", "1")] if config.shared_gate else []
        items += [(k, str(getattr(config, k))) for k in ("moe_step", "dense_first") if getattr(config, k) != MOE_DEFAULTS[k]]
        items += [("dense_layers", ",".join(map(str, config.dense_layers)))] if config.dense_layers else []
    if config.mla:  # d_cq only where the queries have a latent
        items += [(symbol, str(getattr(config, name))) for name, symbol in MLA_SYMBOLS.items()
                  if getattr(config, name) is not None]
    if config.window is not None:
        items.append(("W", str(config.window)))
        items += [("full_layers", ",".join(map(str, config.full_layers)))] if config.full_layers else []
    for key in EXTRA_KEYS:
        value = getattr(config, key)
        if value != EXTRA_DEFAULTS[key]:
            items.append((key, "1" if value is True else number_text(value)))
    return items


def to_query(config: Config, options: ViewOptions | None = None, train: TrainSetup | None = None,
             infer: InferSetup | None = None) -> str:
    """The query that reproduces `config`, `options`, `train` and `infer`: every Config field, the rest where not
    default."""
    options = options or ViewOptions()
    items: list[tuple[str, str]] = [(k, str(int(getattr(config, k)))) for k in FIELDS]
    items += recipe_items(config)
    items += train_items(train) if train is not None else []
    items += infer_items(infer) if infer is not None else []
    default = ViewOptions()
    if options.dtype != default.dtype:
        items.append(("dtype", options.dtype))
    if options.expanded:
        items.append(("expanded", "1"))
    if options.embed:
        items.append(("embed", "1"))
    if options.controls != default.controls:
        items.append(("controls", ",".join(options.controls) or "none"))
    if options.panels != default.panels:
        items.append(("panels", ",".join(options.panels)))
    return "?" + urlencode(items, safe=",")
