"""The explorer's URL query, both ways, as pure functions (no Panel): a link reproduces a view.

    >>> q = parse_query("?B=8&T=512&d=770&h=12&L=12&V=50257&T_max=1024&tie=1")
    >>> q.config.T, q.config.h, q.notices
    (512, 11, ('h snapped 12 → 11: 770 is not divisible by 12',))
    >>> to_query(q.config, q.options)
    '?B=8&T=512&d=770&h=11&L=12&V=50257&T_max=1024&tie=1'

Keys: every field of `model.Config` by its key (`model.fields.Field.key`: its symbol, else its name), listed in the
fields' `linked` order (`CONFIG_KEYS`): the lesson's B, T, d, h, L, V, T_max, tie; the recipe's norm, positions, mlp,
d_ff, h_kv, d_head, bias, qk_norm, attention; a mixture of experts' E, k, d_expert, E_shared, d_shared, shared_gate,
moe_step, dense_first, dense_layers; a window's W and full_layers; latent attention's d_c, d_cq, d_R, d_nope, d_v; and
the families' extras post_norms, embed_scale, query_scale, attn_softcap, final_softcap, sinks, expert_bias,
swiglu_limit, swiglu_alpha. Each is read by its kind (`read_value`): a whole number within its bounds (where the field
may be unset, `none` or `default`: a d_ff of `default` is the recipe's, a W of `none` full attention, a d_c of `none`
no latent attention), 1 or 0, one of its choices, a number above 0 and below 1,000,000 (or `none`), or block indices
(0,1,2, or none). Choosers set a whole group before its keys: `recipe` (gpt2 or modern: every switch, as the page's
recipe choice does) and `moe` (1: the MLP is a mixture of experts, 0: dense; any of its keys on a dense model makes it
one). d_c needs d_R, d_nope and d_v with it; full_layers needs W. Then `preset` (a name in model.PRESETS, overridden
by any field given with it); `dtype` (fp32, bf16, fp16); `expanded` (list all L blocks); and for course pages
`embed=1`, `controls=T,d` and `panels=shapes,budget,values` (see `ViewOptions`); the training run's D, gpu,
gpu_peak, gpu_memory, mfu, gpus, price, optimizer, zero, recompute and fit (see `app.cards.train.settings`); the
inference card's infer_gpu, infer_peak, infer_memory, infer_bandwidth, weights, kv_dtype, group and efficiency (see
`app.cards.infer.settings`). Keys starting with "bokeh-" (added by Bokeh's `server_document` embedding) are skipped.

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

from model import DTYPES, PRESETS, Config, numbers
from model.config import DEFAULT_PRESET, LINKED, WRITTEN, defaults
from model.families import MLP_KINDS, RECIPE_LABELS, moe_fields, recipe_fields
from model.fields import REAL_MAX, UNSET, Field
from model.parts import latent, moe, sparse
from model.rules import did_you_mean, quote, read_layers, settle
from model.training import TrainSetup

from model.inference import InferSetup

from .cards.infer.settings import INFER_KEYS, infer_items, settle_infer
from .cards.train.settings import TRAIN_KEYS, settle_train, train_items

DEFAULT_CONFIG = PRESETS[DEFAULT_PRESET]  # GPT-2 small at B = 8, T = 1,024
# The keys that choose a whole group before its own keys: `recipe` (gpt2 or modern: sets every switch, as the page's
# recipe choice does; keys given with it override it) and `moe` (the MLP: dense or a mixture of experts).
CHOOSERS = {"recipe": "recipe", "moe": "moe"}


def group_keys(fields: Sequence[Field]) -> tuple[str, ...]:
    """The keys of `fields`, each group's chooser (`CHOOSERS`) before its first field's."""
    out: list[str] = []
    for f in fields:
        if f.group in CHOOSERS and CHOOSERS[f.group] not in out:
            out.append(CHOOSERS[f.group])
        out.append(f.key)
    return tuple(out)


CONFIG_KEYS = group_keys(LINKED)  # every field's key and the choosers
CONTROLS = ("preset", *group_keys([f for f in LINKED if f.controlled]))  # `controls=`: the page's controls
PANELS = ("shapes", "budget", "changes", "tokens", "values", "training", "inference")  # what `panels=` may list
OPTION_KEYS = ("preset", "dtype", "expanded", "embed", "controls", "panels")
KEYS = CONFIG_KEYS + OPTION_KEYS + TRAIN_KEYS + INFER_KEYS
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


def read_value(f: Field, raw: str, kept: object) -> tuple[object, str | None]:
    """A link's value of the field `f`, read by its kind (`model.fields.KINDS`), or `kept` and a notice that names
    what the field takes and says the value used instead."""
    if f.kind == "whole":
        return _whole(f, raw, kept)
    if f.kind == "flag":
        return _bool_value(f.key, raw, bool(kept), f.doc)
    if f.kind == "choice":
        return _choice(f, raw, kept)
    if f.kind == "real":
        return _real(f, raw, kept)
    layers, note = read_layers(raw, kept, verb="using", name=f.key)  # "blocks": 0,1,2, or none
    return (kept if layers is None else layers), note


def _whole(f: Field, raw: str, kept: int | None) -> tuple[int | None, str | None]:
    """A whole number within the field's bounds, in the number boxes' grammar (1024, 1,024, 1e3, 4 thousand); where
    the field may be unset (`Field.unset`), "default" is None, its declared default, and so is "none" where None is
    none (W: full attention) or an empty value where it is the recipe's default (d_ff)."""
    text = raw.strip().lower()
    if f.unset and text in ("default", "none" if f.unset == "none" else ""):
        return None, None
    n, note = _int_value(f.key, raw, kept, f.bounds, f.unset)
    return (kept, note) if note else (n, None)


def _int_value(key: str, raw: str, fallback: int | None, bounds: tuple[int, int],
               unset: str = "") -> tuple[int | None, str | None]:
    """A whole number within `bounds`, or `fallback` and the notice, which says a None fallback as what None is
    (`unset`: "default", the recipe's default; else none) and names none among what the field takes where it does."""
    lo, hi = bounds
    text = raw.strip()
    using = (f"{key}={fallback:,}" if fallback is not None else
             f"the recipe's default {key}" if unset == "default" else f"{key}=none")
    takes = f"from {lo:,} to {hi:,}" + (", or none" if unset == "none" else "")
    if not text:
        return fallback, f"{key} has no value; using {using}"
    if len(text) > MAX_VALUE_CHARS:  # before int(): 4,300 digits and more raise ValueError
        return fallback, f'{key}="{show(text)}" is too long: {key} is a whole number {takes}; using {using}'
    n = numbers.whole(text)  # the grammar of every number box: 1024, 1,024, 1_024, 1e3, 4 thousand
    if n is None:
        digits = " written with the digits 0–9" if any(c.isdigit() and not c.isascii() for c in text) else ""
        takes = takes.replace(f" to {hi:,}", f" to {hi:,}{digits}", 1)
        return fallback, f'{key}="{show(text)}" is not a whole number {takes}; using {using}'
    if not lo <= n <= hi:
        return fallback, f"{key}={numbers.show(n, text)} is out of range: {key} must be {takes}; using {using}"
    return n, None


def _choice(f: Field, raw: str, kept: str) -> tuple[str, str | None]:
    """One of the field's choices (case aside)."""
    choice = raw.strip().lower()
    if choice in f.choices:
        return choice, None
    return kept, f'{f.key}="{show(raw)}" is not one of {", ".join(f.choices)} ({f.about}); using {f.key}={kept}'


def _real(f: Field, raw: str, kept: float | None) -> tuple[float | None, str | None]:
    """A number above 0 and below REAL_MAX (a soft-cap, a clamp), or none (default too): unset."""
    text = raw.strip()
    if text.lower() in UNSET:
        return None, None
    number = numbers.real(text) if len(text) <= MAX_VALUE_CHARS else None
    if number is not None and 0 < number < REAL_MAX:
        return number, None
    return kept, (f'{f.key}="{show(raw)}" is not a number above 0 and below {REAL_MAX:,.0f}, or none ({f.about}); '
                  f'using {f.key}={"none" if kept is None else number_text(kept)}')


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
    asked: dict[str, object] = {f.name: getattr(base, f.name) for f in LINKED}
    _read_fields(_group("lesson"), values, asked, notes)
    _recipe_values(values, asked, notes)
    _moe_values(values, asked, notes)
    _window_values(values, asked, notes)
    _latent_values(values, asked, notes)
    _read_fields(_group("linear"), values, asked, notes)
    _read_fields(_group("extras"), values, asked, notes)
    try:
        config, settled = settle(asked)
    except ValueError as e:  # a layout of blocks, a mixture of experts or a recipe no Config takes: without it
        layout = {k: defaults("moe")[k] for k in moe.LAYOUT}
        fallbacks = (((layout, "showing every block MoE"), (defaults("moe"), f"showing a {MLP_KINDS['dense']}"))
                     if asked["experts"] is not None else ())
        fallbacks += ((EXTRAS, "showing it without the window, latent attention, Gated DeltaNet and the family's "
                               "extras"),)
        fix, said = next(((f, w) for f, w in fallbacks if _settles({**asked, **f})),
                         ({**defaults("recipe"), **defaults("moe"), **EXTRAS}, "showing GPT-2's recipe"))
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


EXTRAS = {**defaults("window"), **defaults("latent"), **defaults("linear"), **defaults("extras")}  # a model without
# them (a fallback)


def _group(group: str) -> list[Field]:
    """A group's fields (`model.fields.GROUPS`), in `linked` order."""
    return [f for f in LINKED if f.group == group]


def _read_fields(fields: Sequence[Field], values: dict[str, str], asked: dict[str, object], notes: list[str]) -> None:
    """Each of `fields` the link gives, read by its kind into `asked` (`read_value`): a bad value keeps the one in
    use and gets a notice. A field unset takes the fields that need it back to their defaults (W=none: no
    full_layers; d_c=none: none of latent attention's widths)."""
    for f in fields:
        if f.key not in values:
            continue
        asked[f.name], note = read_value(f, values[f.key], asked[f.name])
        notes += [note] if note else []
        if asked[f.name] is None:
            asked.update({d.name: d.default for d in LINKED if d.needs == f.name and d is not f})


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
    _read_fields(_group("recipe"), values, asked, notes)


def _settles(asked: dict[str, object]) -> bool:
    try:
        settle(asked)
    except ValueError:
        return False
    return True


def _moe_values(values: dict[str, str], asked: dict[str, object], notes: list[str]) -> None:
    """The mixture of experts' keys into `asked`: `moe` (or any of its keys on a dense model) sets the MLP choice
    (`model.families.moe_fields`), then each key given; a bad value keeps the one in use and gets a notice."""
    on = None
    if "moe" in values:
        on, note = _bool_value("moe", values["moe"], asked["experts"] is not None,
                               f"the MLP is a {MLP_KINDS['moe']} (E, k, d_expert); 0: a {MLP_KINDS['dense']}")
        notes += [note] if note else []
    given = [f for f in _group("moe") if f.key in values]
    if given and on is None:
        on = True
    if on is not None and _settles(asked):
        asked.update(moe_fields(settle(asked)[0], on))
    if asked["experts"] is None:
        if given:
            notes.append(f"{', '.join(f.key for f in given)}: ignored with moe=0 (a {MLP_KINDS['dense']} has no "
                         f"experts)")
        return
    _read_fields(given, values, asked, notes)


def _window_values(values: dict[str, str], asked: dict[str, object], notes: list[str]) -> None:
    """The window's keys into `asked`: W (none: full attention), then the fields that need a window (full_layers,
    chunked)."""
    window, *needing = _group("window")
    _read_fields([window], values, asked, notes)
    for field in needing:
        if field.key in values and asked[field.needs] is None:
            notes.append(f"{field.key}: ignored without {window.key} (it shapes a window: set {window.key}=512, say)")
        else:
            _read_fields([field], values, asked, notes)


def _latent_values(values: dict[str, str], asked: dict[str, object], notes: list[str]) -> None:
    """Latent attention's keys into `asked`: d_c (none: without latent attention), d_cq (none: q from x directly),
    d_R, d_nope, d_v; a bad value keeps the one in use, and d_c without d_R, d_nope and d_v (or those without d_c)
    gets a notice and leaves latent attention as it was."""
    fields = _group("latent")
    given = [f.key for f in fields if f.key in values]
    if not given:
        return
    before = {f.name: asked[f.name] for f in fields}
    _read_fields(fields, values, asked, notes)
    switch = fields[0]  # d_c: the one the others need
    if asked[switch.name] is None and any(asked[f.name] is not None for f in fields):
        notes.append(f"{', '.join(k for k in given if k != switch.key)}: ignored without {switch.key} (the widths of "
                     f"multi-head latent attention; DeepSeek-V3: {_latent_example()})")
        asked.update(defaults("latent"))
    elif asked[switch.name] is not None and (missing := [f.key for f in fields if asked[f.name] is None
                                                         and not f.unset and f not in sparse.FIELDS]):  # those only
        # the part unsets
        notes.append(f"{switch.key}={asked[switch.name]:,} sets multi-head latent attention, which needs "
                     f"{' and '.join(missing)} too (DeepSeek-V3: {_latent_example()}); using the attention without it")
        asked.update(before)
    elif asked[sparse.FIELDS[0].name] is None and sparse.FIELDS[0].key in values:  # h_I=none: no indexer
        asked.update({f.name: None for f in sparse.FIELDS})
    elif (set_ := [f.key for f in sparse.FIELDS if asked[f.name] is not None]) and len(set_) < len(sparse.FIELDS):
        missing = [f.key for f in sparse.FIELDS if asked[f.name] is None]
        example = "&".join(f"{f.key}={f.example.replace(',', '')}" for f in sparse.FIELDS)
        notes.append(f"{' and '.join(set_)} set DeepSeek sparse attention's indexer, which needs {' and '.join(missing)} "
                     f"too (DeepSeek-V3.2: {example}); using the attention without it")
        asked.update({f.name: before[f.name] for f in sparse.FIELDS})


def _latent_example() -> str:
    """DeepSeek-V3's latent attention as link keys: "d_c=512&d_cq=1536&d_R=64&d_nope=128&d_v=128"."""
    return "&".join(f"{f.key}={f.example.replace(',', '')}" for f in latent.FIELDS)


def number_text(value: float | int) -> str:
    """A soft-cap, clamp or query_scale as a link writes it: 30, 7, 1.702 (the shortest text that reads back)."""
    text = repr(float(value)) if isinstance(value, float) else str(value)
    return text[:-2] if text.endswith(".0") else text


def parse_config(search: str | None) -> tuple[Config, list[str]]:
    """Just the configuration of a query and every notice about the query: (config, notices)."""
    q = parse_query(search)
    return q.config, list(q.notices)


def value_text(value: object) -> str:
    """A field's value as a link writes it: 1 or 0, block indices "5,11", a number's shortest text (`number_text`)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return number_text(value) if isinstance(value, (int, float)) else str(value)


def config_items(config: Config) -> list[tuple[str, str]]:
    """The keys of `config` (`model.config.WRITTEN` order): the lesson's every one, the others where not their
    default (GPT-2's recipe adds none, so the lesson's links stay as they are)."""
    return [(f.key, value_text(getattr(config, f.name))) for f in WRITTEN
            if f.group == "lesson" or getattr(config, f.name) != f.default]


def to_query(config: Config, options: ViewOptions | None = None, train: TrainSetup | None = None,
             infer: InferSetup | None = None) -> str:
    """The query that reproduces `config`, `options`, `train` and `infer`: every Config field, the rest where not
    default."""
    options = options or ViewOptions()
    items = config_items(config)
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
