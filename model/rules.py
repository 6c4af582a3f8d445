"""The rules that keep a configuration valid while a learner moves sliders, and the words that explain them.

- h must divide d (each head gets d_head = d / h features): h snaps to the nearest divisor (`snap_heads`).
- T must not exceed T_max (the learned position table W_pe has T_max rows and cannot extrapolate): T is clamped.
  With RoPE there is no table: T_max is the context the model was trained for, and T beyond it is kept with a
  notice, not clamped (the module runs and every shape is well defined; only quality past the trained context
  is in question, which no shape or count shows).
- The modern recipe (when `asked` has its fields): h_kv snaps to the divisor of h nearest it; with RoPE, d_head
  must be even, so h snaps to the nearest divisor of d with an even d / h (with d_head set apart, h need not
  divide d at all).
- A mixture of experts (when `asked` has its fields): k, the experts per token, is clamped to E (each token goes to
  k of the E experts).
- A sliding window (when `asked` has its fields): `full_layers` lists blocks below L, so a smaller L drops the
  indices past it (they come back with L); T below W is said to make a windowed block's attention and cache those of a
  full one (nothing is changed). gpt-oss's clamp is a SwiGLU's: another MLP drops it.
- Multi-head latent attention (when `asked` has d_c): every head's K and V come from the latent, so h_kv is h (an h_kv
  asked is dropped) and d_head is d_nope + d_R (a d_head asked is dropped; h need not divide d); it runs eager, with
  RoPE on its d_R features (d_R snaps to even), without biases, QK-norm, a window, sinks or Gemma's attention extras
  (each dropped with a notice naming what latent attention is).
- The LayerNorms' own biases beside matrices without them (`norm_biased`: PhiMoE's, Nemotron's) are dropped under
  RMSNorm (no bias) or bias = all (every LayerNorm has its bias already).
- Every tensor of a pass within torch's 64-bit sizes (`model.config.check_sizes`): h·T at most 2³⁰ (T lowered) and
  B·T at most 2²⁷ tokens per pass (B lowered).
- A field outside `BOUNDS` is rejected and the value in use is kept.
- Choosing a preset sets everything but the batch size B; a configuration "is" a preset when its model matches
  (d, h, L, V, T_max, tie), whatever B and T are.

`settle` takes the values asked for (each already within BOUNDS) and returns a valid `Config` and the notices
that explain any change. The live page, the URL parser and the exported page use these rules and `MESSAGES`
(the exported page's JavaScript fills the same templates; tests run both on the same inputs).

A notice belongs to the change that caused it (`settle_notes`, `news`): the values asked for are remembered (T
asked 5,000 stays 5,000 while T_max is 1,024, so that raising T_max brings it back), so the same rule fires again
on every later change; a page shows a notice only when it is new or about a field the learner just set, and when
the value asked for is not the one the box showed, the notice says so ("12 is the h you chose, …").

`rules_line(cfg)` states the rules that hold for `cfg` itself, one part per rule (`RULES`, picked by `rule_keys`):
"h divides d" only where d_head = d / h, "T ≤ T_max" only with a learned position table.
"""
from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from . import numbers
from .config import (BOUNDS, FIELDS, GPT2_RECIPE_PRESETS, LINKED, MAX_HEAD_T, MAX_TOKENS, NUMBER_BOUNDS, PRESETS, Config,
                     defaults, divisors, largest_B, score_heads, snap_heads)
from .parts.latent import WITHOUT as MLA_WITHOUT
from . import stack
from .parts import latent, sparse

CUSTOM = "custom"
MODEL = tuple(f.name for f in LINKED if f.group != "lesson")  # every field but the lesson's (`asked` may lack them)
PRESET_SETS = tuple(f for f in FIELDS if f != "B")  # the lesson's fields choosing a preset sets; B is kept
PRESET_MODEL = tuple(f for f in PRESET_SETS if f != "T")  # d, h, L, V, T_max, tie: a preset's model, with every
# other field but attention, which is how the model runs (Llama 3 8B written out eagerly is still Llama 3 8B)
PRESET_MATCH = (*PRESET_MODEL, *(f for f in MODEL if f != "attention"))  # what a preset's model is (`preset_of`)
PRESET_ASKS = (*PRESET_SETS, *MODEL)  # what choosing a preset asks for: every field but B, attention included
MESSAGES = {  # {name} is a field; numbers arrive formatted with thousands separators
    "h": "h snapped {asked} → {h}: {d} is not divisible by {asked}",
    "T": ("T clamped {asked} → {T_max}: T cannot exceed T_max = {T_max}, the rows of the learned position table W_pe "
          "(it cannot extrapolate to later positions)"),
    "range": "{name}={value} is out of range: {name} must be from {lo} to {hi}; kept {name}={kept}",
    "h_kv": "h_kv snapped {asked} → {h_kv}: h = {h} is not divisible by {asked}",
    "h_even": "h snapped {asked} → {h}: RoPE rotates pairs of features, so d_head = d / h must be even",
    "context": ("T = {T} is beyond T_max = {T_max}, the context the model was trained for: RoPE has no table to run "
                "out of, so the shapes are shown, but quality past the trained context needs RoPE scaling"),
    "k": "k clamped {asked} → {E}: each token goes to k of the E = {E} experts, so k cannot exceed E",
    "full_layers": ("full_layers {asked} → {full}: the blocks are 0 … {last} at L = {L}, so blocks past them keep no "
                    "full attention (raise L to bring them back)"),
    "window": ("T = {T} is below the window W = {W}: a windowed block attends to and caches all T tokens, as a full "
               "block does (from T = W on, its cache keeps the last W − 1 = {W1})"),
    "clamp": ("swiglu_limit = {limit} dropped: the clamp is a SwiGLU's (gpt-oss's), and the MLP is now {mlp}"),
    "mla_kv": ("h_kv = {asked} dropped: latent attention makes every head's K and V from the one cached latent c_kv "
               "(d_c = {d_c}), so each of the h = {h} heads has its own K and V (h_kv = h); the cache is c_kv and k_rope, "
               "not K and V"),
    "mla_head": ("d_head = {asked} dropped: with latent attention each head's query and key are d_nope + d_R = "
                 "{d_head} wide and its value d_v = {d_v} (set d_nope, d_R and d_v)"),
    "mla_R": "d_R snapped {asked} → {d_R}: RoPE rotates pairs of features, so the rotary width d_R must be even",
    "mla_eager": ("attention stays eager with latent attention: the fused kernel here takes q, k and v of one head "
                  "width, but q and k are d_nope + d_R = {d_head} wide and v d_v = {d_v}"),
    "mla_rope": ("positions stay RoPE with latent attention: it rotates its d_R = {d_R} features by position (choose "
                 "GPT-2's recipe to leave latent attention)"),
    "mla_without": "{name} = {asked} dropped: latent attention is modelled as DeepSeek's, with {none}",
    "kept": "; {asked} is the {name} you chose, kept while other fields change (the box showed {shown})",
    "number": "{name}=\"{text}\" is not a whole number: write {examples}; kept {name}={kept}",
    "odd_d": "d={d} is odd: RoPE needs an even d_head = d / h, so d must be even (or set d_head)",  # refused, not noted
    "rotary_off": "d_rot = {asked} dropped: partial RoPE rotates part of each head's q and k, and {why}",
    "rotary_even": "d_rot snapped {asked} → {d_rot}: RoPE rotates pairs of features, so d_rot must be even",
    "nope_off": "nope_layers {asked} dropped: NoPE blocks leave out RoPE where the others use it, and {why}",
    "nope_layers": ("nope_layers {asked} → {nope}: the blocks are 0 … {last} at L = {L}, so blocks past them are no "
                    "NoPE blocks (raise L to bring them back)"),
    "linear_layers": ("linear_layers {asked} → {linear}: the blocks are 0 … {last} at L = {L}, so blocks past them are "
                      "no Gated DeltaNet blocks (raise L to bring them back)"),
    "mamba_layers": ("mamba_layers {asked} → {linear}: the blocks are 0 … {last} at L = {L}, so blocks past them are "
                     "no Mamba 2 blocks (raise L to bring them back)"),
    "sparse_off": ("the sparse attention indexer (h_I, d_I, T_k) dropped: {why}; every query now sees every earlier "
                   "key"),
    "kda_layers": ("kda_layers {asked} → {linear}: the blocks are 0 … {last} at L = {L}, so blocks past them are no "
                   "Kimi delta attention blocks (raise L to bring them back)"),
    "mamba1_layers": ("mamba1_layers {asked} → {linear}: the blocks are 0 … {last} at L = {L}, so blocks past them are "
                      "no Mamba blocks (raise L to bring them back)"),
    "dense_layers": ("dense_layers {asked} → {dense}: the blocks are 0 … {last} at L = {L}, so blocks past them keep "
                     "no dense MLP (raise L to bring them back)"),
    "norm_biased": "the LayerNorms' own biases (norm_biased) dropped: {why}",
    "norm_plain": "norms without a gain or a bias (norm_plain) dropped: {why}",
    "T_sizes": ("T lowered {asked} → {T}: h·T is at most {most} (2³⁰) with h = {h} heads of (T, T) scores, so that the "
                "(B, h, T, T) scores fit torch's 64-bit sizes"),
    "B_sizes": ("B lowered {asked} → {B}: B·T is at most {most} (2²⁷) tokens per pass at T = {T}, so that every tensor "
                "of the pass fits torch's 64-bit sizes"),
}
# The fields whose change a notice of each kind is news about (besides any change of its text), and the field
# whose asked value it reports ("kept"): model fields, as `asked` names them.
NOTE_ABOUT: dict[str, tuple[str, ...]] = {"h": ("h", "d", "head_dim"), "h_even": ("h", "d", "positions", "head_dim"),
                                          "h_kv": ("kv_heads",), "T": ("T", "T_max", "positions"),
                                          "context": ("T", "T_max", "positions"), "k": ("top_k", "experts"),
                                          "full_layers": ("L", "full_layers"), "window": ("T", "window"),
                                          "clamp": ("mlp",), "mla_kv": ("kv_heads",),
                                          "mla_head": ("head_dim",), "mla_R": ("rope_dim",), "mla_eager": ("attention",),
                                          "mla_rope": ("positions",), "mla_without": tuple(MLA_WITHOUT),
                                          "rotary_off": ("positions", "rotary_dim", "h", "d", "head_dim", "latent_dim"),
                                          "rotary_even": ("rotary_dim",),
                                          "nope_off": ("positions", "nope_layers", "latent_dim"),
                                          "nope_layers": ("L", "nope_layers"),
                                          "linear_layers": ("L", "linear_layers"),
                                          "mamba_layers": ("L", "mamba_layers"),
                                          "sparse_off": ("latent_dim", "q_latent_dim", "rope_dim", "index_dim"),
                                          "kda_layers": ("L", "kda_layers"),
                                          "mamba1_layers": ("L", "mamba1_layers"),
                                          "dense_layers": ("L", "dense_layers"), "norm_biased": ("norm", "bias"),
                                          "norm_plain": ("norm", "bias", "norm_biased"),
                                          "T_sizes": ("T", "h", "index_heads"), "B_sizes": ("B", "T")}
NOTE_FIELD = {"h": ("h", "h"), "h_even": ("h", "h"), "h_kv": ("kv_heads", "h_kv"), "T": ("T", "T"),
              "context": ("T", "T"), "k": ("top_k", "k"), "full_layers": ("full_layers", "full_layers"),
              "window": ("T", "T"), "clamp": ("swiglu_limit", "swiglu_limit"), "mla_R": ("rope_dim", "d_R"),
              "rotary_off": ("rotary_dim", "d_rot"), "rotary_even": ("rotary_dim", "d_rot"),
              "nope_off": ("nope_layers", "nope_layers"), "nope_layers": ("nope_layers", "nope_layers"),
              "linear_layers": ("linear_layers", "linear_layers"), "mamba_layers": ("mamba_layers", "mamba_layers"),
              "sparse_off": ("index_heads", "h_I"),
              "kda_layers": ("kda_layers", "kda_layers"), "mamba1_layers": ("mamba1_layers", "mamba1_layers"),
              "dense_layers": ("dense_layers", "dense_layers"), "norm_biased": ("norm_biased", "norm_biased"),
              "norm_plain": ("norm_plain", "norm_plain"), "T_sizes": ("T", "T"), "B_sizes": ("B", "B"),
              # what latent attention drops is not kept: no "you chose" (d_c, asked as shown, never adds it)
              **{k: ("latent_dim", "d_c") for k in ("mla_kv", "mla_head", "mla_eager", "mla_rope", "mla_without")}}
# kind -> (field asked, its symbol)
BESIDE = stack.mamba.KEY + "_beside"  # the rule of Mamba 2 beside attention in every block (`ssm_parallel`)
RULES = {  # the status line's parts; each is true of the configurations `rule_keys` gives it to
    "divides": "h divides d (d_head = {d} / {h} = {d_head})",
    "divides_even": "h divides d, into an even d_head for RoPE (d_head = {d} / {h} = {d_head})",
    "apart": "d_head = {d_head}, set apart from d / h: h need not divide d",
    "latent": ("latent attention: q and k per head d_nope + d_R = {d_head}, v d_v = {d_v}, every head's K and V from "
               "the latent d_c = {d_c} (h need not divide d)"),
    "sparse": ("sparse attention: each query sees the top T_k = {T_k} keys of an indexer of h_I = {h_I} heads of "
               "d_I = {d_I}"),
    "kv": "h_kv divides h ({h} / {h_kv} = {group} query heads per K/V head)",
    "table": "T ≤ T_max = {T_max} (W_pe has T_max rows)",
    "context": "T may pass T_max = {T_max}, the trained context (no learned position table to run out of)",
    **{part.KEY: (f"{part.NAME} in {{{part.COUNT}}} of the L = {{L}} blocks: a fixed state per sequence in attention's "
                  "place, no KV cache there") for part in stack.STATEFUL},  # a hybrid's
    BESIDE: (f"{stack.mamba.NAME} beside attention in all L = {{L}} blocks: a fixed state per sequence beside each "
             "block's KV cache"),  # a parallel hybrid's (`model.parts.hybrid`)
}
STATEFUL_RULES = tuple((part.BLOCKS, part.KEY, part.COUNT) for part in stack.STATEFUL)  # its blocks' field, rule, count


@dataclass(frozen=True)
class Note:
    """A notice `settle` gives: its text, its kind (a key of MESSAGES), what it is about (NOTE_ABOUT), and the text
    without what it says of a remembered value (MESSAGES["kept"]), by which a later change recognises it."""

    kind: str
    text: str
    about: tuple[str, ...]
    base: str


def message(kind: str, **values: int | str | tuple[int, ...]) -> str:
    """MESSAGES[kind] filled in, whole numbers with thousands separators, a list of blocks as "5,11" (or "none"):
    message("h", asked=12, h=11, d=770)."""
    return MESSAGES[kind].format(**{k: show_value(v) for k, v in values.items()})


def show_value(value: object) -> str:
    """A value as a notice writes it: 1,024; block indices "5,11,17" ("none" for no block); 7 for 7.0."""
    if isinstance(value, tuple):
        return ",".join(map(str, value)) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def settle(asked: Mapping[str, int | bool]) -> tuple[Config, list[str]]:
    """A valid Config as close as possible to `asked` (all of FIELDS, each in bounds), and what was changed.

    >>> cfg, notes = settle(dict(B=8, T=2048, d=770, h=12, L=12, V=50257, T_max=1024, tie=True))
    >>> cfg.h, cfg.T, notes[0]
    (11, 1024, 'h snapped 12 → 11: 770 is not divisible by 12')
    """
    config, notes = settle_notes(asked)
    return config, [n.text for n in notes]


def settle_notes(asked: Mapping[str, int | bool], shown: Config | None = None,
                 changed: Iterable[str] = ()) -> tuple[Config, list[Note]]:
    """`settle`, each notice as a `Note`. Where `shown` (the configuration the page showed before this change)
    showed another value than the one asked for and remembered, and the change did not set that field itself
    (`changed`: the fields it set), the notice says so (MESSAGES["kept"])."""
    changed = set(changed)
    values = {k: asked[k] for k in FIELDS}
    values.update({k: asked[k] for k in MODEL if k in asked})
    notes: list[Note] = []

    def note(kind: str, **fill: int | str) -> None:
        base = text = message(kind, **fill)
        field, symbol = NOTE_FIELD[kind]
        was = getattr(shown, symbol) if shown is not None else None
        if was is not None and field not in changed and asked.get(field) is not None and asked[field] != was:
            text += message("kept", asked=asked[field], name=symbol, shown=was)
        notes.append(Note(kind, text, NOTE_ABOUT[kind], base))

    settle_values(values, note)
    return Config(**values), notes


def settle_values(values: dict, note) -> None:
    """Every rule of the module docstring on `values` (the fields asked for; changed in place), each change said by
    `note(kind, **fill)`; a d no Config takes raises ValueError. The exported page runs it compiled (app/export)."""
    if values.get("latent_dim") is not None:  # latent attention: d_head = d_nope + d_R, h_kv = h
        _settle_mla(values, note)
    elif values.get("head_dim") is None:  # d_head = d / h: h must divide d (and, with RoPE, leave d / h even)
        _settle_heads(values, note)
    kv = values.get("kv_heads")
    if kv is not None and values["h"] % kv:
        values["kv_heads"] = snap_heads(values["h"], kv)
        note("h_kv", asked=kv, h_kv=values["kv_heads"], h=values["h"])
    E, k = values.get("experts"), values.get("top_k")
    if E is not None and k is not None and k > E:
        values["top_k"] = E
        note("k", asked=k, E=E)
    if values["T"] > values["T_max"]:
        if values.get("positions", "learned") == "learned":
            note("T", asked=values["T"], T_max=values["T_max"])
            values["T"] = values["T_max"]
        else:
            note("context", T=values["T"], T_max=values["T_max"])
    _settle_norm(values, note)
    _settle_window(values, note)
    _settle_rotary(values, note)
    _settle_nope(values, note)
    _settle_dense(values, note)
    _settle_linear(values, note)
    _settle_sparse(values, note)
    _settle_sizes(values, note)


def _settle_sizes(values: dict, note) -> None:
    """h·T within MAX_HEAD_T (T lowered) and B·T within MAX_TOKENS (B lowered): `model.config.check_sizes`."""
    q = score_heads(values["h"], values.get("index_heads"))
    if q * values["T"] > MAX_HEAD_T:
        T = MAX_HEAD_T // q
        note("T_sizes", asked=values["T"], T=T, most=MAX_HEAD_T, h=q)
        values["T"] = T
    if values["B"] * values["T"] > MAX_TOKENS:
        B = largest_B(values["T"])
        note("B_sizes", asked=values["B"], B=B, most=MAX_TOKENS, T=values["T"])
        values["B"] = B


def _settle_norm(values: dict, note) -> None:
    """The LayerNorms' own biases (`norm_biased`) only beside matrices without them: with RMSNorm, or with biases on
    every linear (which give the LayerNorms theirs), they are dropped. Norms without a gain or a bias (`norm_plain`)
    likewise where the LayerNorms have biases (an RMSNorm without a gain is nanochat's: kept)."""
    if values.get("norm_biased"):
        why = ("an RMSNorm has no bias" if values.get("norm", "layernorm") != "layernorm" else
               "bias = all gives every LayerNorm its bias" if values.get("bias", "all") == "all" else "")
        if why:
            note("norm_biased", why=why)
            values["norm_biased"] = False
    if values.get("norm_plain"):
        layer = values.get("norm", "layernorm") == "layernorm"
        why = ("bias = all gives every LayerNorm its gain and bias" if layer and values.get("bias", "all") == "all"
               else "the LayerNorms keep their biases (norm_biased)" if layer and values.get("norm_biased") else "")
        if why:
            note("norm_plain", why=why)
            values["norm_plain"] = False


def _settle_sparse(values: dict, note) -> None:
    """DeepSeek sparse attention's rules: its indexer reads the queries' latent (d_cq) and rotates d_R of its d_I
    features; where latent attention, its query latent or a d_I of at least d_R is missing, the indexer is dropped."""
    if values.get("index_heads") is None:
        return
    why = ("it reads latent attention's queries' latent, and there is no latent attention"
           if values.get("latent_dim") is None else
           "it reads the queries' latent d_cq, and q is projected from x directly (d_cq none)"
           if values.get("q_latent_dim") is None else
           f"it rotates d_R = {values['rope_dim']:,} of its d_I = {values['index_dim']:,} features, so d_I must be at "
           "least d_R" if values.get("rope_dim") is not None and values.get("index_dim") is not None
           and values["index_dim"] < values["rope_dim"] else None)
    if why is not None:
        note("sparse_off", why=why)
        values.update(index_heads=None, index_dim=None, index_topk=None)


def _settle_dense(values: dict, note) -> None:
    """A mixture of experts' dense blocks listed by index: only blocks below L (the others dropped)."""
    dense, L = tuple(values.get("dense_layers", ())), values["L"]
    if any(i >= L for i in dense):
        values["dense_layers"] = tuple(i for i in dense if i < L)
        note("dense_layers", asked=dense, dense=values["dense_layers"], last=L - 1, L=L)


def _settle_linear(values: dict, note) -> None:
    """Gated DeltaNet's, Mamba 2's, Kimi delta attention's and Mamba's rules: only blocks below L (the others dropped;
    with none left, the sizes too)."""
    for name in ("linear_layers", "mamba_layers", "kda_layers", "mamba1_layers"):
        linear, L = tuple(values.get(name, ())), values["L"]
        if any(i >= L for i in linear):
            values[name] = tuple(i for i in linear if i < L)
            note(name, asked=linear, linear=values[name], last=L - 1, L=L)
            if not values[name]:
                values.update(defaults("linear"))


def _settle_rotary(values: dict, note) -> None:
    """Partial rotary's rules: an even d_rot (snapped up, within d_head), and none without RoPE, with latent attention
    or wider than d_head (dropped: all of each head rotated)."""
    r = values.get("rotary_dim")
    if r is None:
        return
    d_head = values.get("head_dim") or values["d"] // values["h"]
    why = "positions are now learned (the table W_pe)" if values.get("positions", "learned") != "rope" else \
        "latent attention rotates its own d_R" if values.get("latent_dim") is not None else \
        f"d_rot must be at most d_head = {d_head:,} (RoPE now rotates all of each head)" if r > d_head else ""
    if why:
        note("rotary_off", asked=r, why=why)
        values["rotary_dim"] = None
    elif r % 2:
        values["rotary_dim"] = r + 1 if r + 1 <= d_head else r - 1
        note("rotary_even", asked=r, d_rot=values["rotary_dim"])


def _settle_nope(values: dict, note) -> None:
    """NoPE blocks' rules: none without RoPE, or with latent attention (dropped) but beside Kimi delta attention's
    blocks or in every block (Kimi Linear and its all-attention twin, `model.parts.positions` checks the same), and
    only blocks below L (the others dropped)."""
    nope, L = tuple(values.get("nope_layers", ())), values["L"]
    if not nope:
        return
    kimi = len(values.get("kda_layers", ())) > 0 or len(set(nope)) == L
    why = "positions are now learned (the table W_pe)" if values.get("positions", "learned") != "rope" else \
        "latent attention rotates its d_R in every block" if values.get("latent_dim") is not None and not kimi else ""
    if why:
        note("nope_off", asked=nope, why=why)
        values["nope_layers"] = ()
    elif any(i >= L for i in nope):
        values["nope_layers"] = tuple(i for i in nope if i < L)
        note("nope_layers", asked=nope, nope=values["nope_layers"], last=L - 1, L=L)


def _settle_window(values: dict, note) -> None:
    """The window's rules (module docstring): full_layers below L, T below W said, the clamp only on a SwiGLU."""
    full, L, W = tuple(values.get("full_layers", ())), values["L"], values.get("window")
    if W is not None and any(i >= L for i in full):
        values["full_layers"] = tuple(i for i in full if i < L)
        note("full_layers", asked=full, full=values["full_layers"], last=L - 1, L=L)
    if W is not None and values["T"] < W:
        note("window", T=values["T"], W=W, W1=W - 1)
    if values.get("swiglu_limit") is not None and values.get("mlp") != "swiglu":
        note("clamp", limit=values["swiglu_limit"], mlp=values.get("mlp"))
        values.update(swiglu_limit=None, swiglu_alpha=None)


MLA_NONE = {"bias": "no biases", "qk_norm": "no QK-norm", "window": "no sliding window", "sinks": "no attention sinks",
            "post_norms": "no sandwich norms", "query_scale": "the scale 1/√(d_nope + d_R)",
            "attn_softcap": "no soft-cap on its scores"}  # what latent attention is modelled without, in words
# Latent attention's rules, in order (`_settle_mla`): field -> the value it takes, the kind of the notice that says so.
MLA_SETS = {"kv_heads": (None, "mla_kv"), "head_dim": (None, "mla_head"), "attention": ("eager", "mla_eager"),
            "positions": ("rope", "mla_rope"), **{name: (MLA_WITHOUT[name], "mla_without") for name in MLA_NONE}}


def _settle_mla(values: dict, note) -> None:
    """Latent attention's rules (module docstring): h_kv = h, d_head = d_nope + d_R, an even d_R, eager attention
    with RoPE, and none of `MLA_WITHOUT` (each dropped with a notice)."""
    R = values.get("rope_dim")
    if R is not None and R % 2:
        values["rope_dim"] = min(R + 1, BOUNDS["d_R"][1] - BOUNDS["d_R"][1] % 2)
        note("mla_R", asked=R, d_R=values["rope_dim"])
    R, nope, v = values.get("rope_dim"), values.get("nope_dim"), values.get("value_dim")
    if None in (R, nope, v):
        return  # the Config names what latent attention still needs
    widths = {"d_c": values["latent_dim"], "h": values["h"], "d_head": nope + R, "d_v": v, "d_R": R}
    for name, (value, kind) in MLA_SETS.items():  # absent: what latent attention is without, else GPT-2's recipe
        if values.get(name, MLA_WITHOUT.get(name, defaults("recipe").get(name))) != value:
            note(kind, **widths, name=name, asked=values.get(name), none=MLA_NONE.get(name))
            values[name] = value
            if name == "window":  # no window: no blocks kept full beside it
                values["full_layers"] = ()


def news(notes: Iterable[Note], before: Iterable[Note], changed: Iterable[str]) -> list[str]:
    """The notices a change brings: each note that was not given before it, or is about a field it `changed`.

    A rule that fires again on a later change (T asked beyond T_max while d moves) says nothing new."""
    said, changed = {n.base for n in before}, set(changed)
    return [n.text for n in notes if n.base not in said or any(f in changed for f in n.about)]


def _settle_heads(values: dict, note) -> None:
    d, asked = values["d"], values["h"]
    h = snap_heads(d, asked)
    if h != asked:
        note("h", asked=asked, h=h, d=d)
    if values.get("positions") == "rope" and (d // h) % 2:
        even = [k for k in divisors(d) if (d // k) % 2 == 0]
        if not even:
            raise ValueError(message("odd_d", d=d))
        h = min(even, key=lambda k: (abs(k - asked), k))
        note("h_even", asked=asked, h=h)
    values["h"] = h


def rule_keys(cfg: Config) -> list[str]:
    """Which RULES hold for `cfg`: how h and d_head relate, whether h_kv has its own heads, and T's limit."""
    heads = ("latent" if latent.present(cfg) else "apart" if cfg.head_dim is not None else
             "divides_even" if cfg.positions == "rope" else "divides")
    return [heads, *(["sparse"] if sparse.present(cfg) else []),
            *[BESIDE if cfg.ssm_parallel else key for blocks, key, _ in STATEFUL_RULES if getattr(cfg, blocks)],
            *(["kv"] if cfg.h_kv != cfg.h else []),
            "table" if cfg.positions == "learned" else "context"]


def rules_line(cfg: Config) -> str:
    """The rules that tie `cfg`'s fields together, in one line with its own numbers."""
    values = {"d": cfg.d, "h": cfg.h, "d_head": cfg.d_head, "h_kv": cfg.h_kv, "group": cfg.h // cfg.h_kv,
              "T_max": cfg.T_max, "L": cfg.L, **latent.rule_values(cfg), **sparse.rule_values(cfg),
              **{count: len(getattr(cfg, blocks)) for blocks, _, count in STATEFUL_RULES}}
    return " · ".join(RULES[k].format(**{k: f"{v:,}" for k, v in values.items()}) for k in rule_keys(cfg))


def out_of_range(name: str, value: object, kept: int, text: str | None = None) -> str | None:
    """The notice for a value outside NUMBER_BOUNDS (or not a whole number), None when `value` is fine; `text`, the
    value as typed, stands for a huge one in the notice."""
    lo, hi = NUMBER_BOUNDS[name]
    if isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi:
        return None
    whole_number = isinstance(value, int) and not isinstance(value, bool)
    shown = numbers.show(value, text if text is not None else str(value)) if whole_number else repr(value)
    return message("range", name=name, value=shown, lo=lo, hi=hi, kept=kept)


def read_field(name: str, value: object, kept: int) -> tuple[int | None, str | None]:
    """A field's input as a whole number within NUMBER_BOUNDS, or (None, the notice): a slider's int, or a box's text
    in the number grammar (`model.numbers`: 1024, 1,024, 1e3, 70 million). Empty text is no input: (None, None)."""
    if isinstance(value, str):
        text = value.strip(" \t")
        if not text:
            return None, None
        number = numbers.whole(text) if len(text) <= numbers.MAX_CHARS else None
        if number is None:
            return None, message("number", name=name, text=quote(text), examples=numbers.EXAMPLES, kept=kept)
        rejected = out_of_range(name, number, kept, text)
        return (None, rejected) if rejected else (number, None)
    rejected = out_of_range(name, value, kept)
    return (None, rejected) if rejected else (value, None)


def read_layers(text: str, kept: tuple[int, ...], verb: str = "kept",
                name: str = "dense_layers") -> tuple[tuple[int, ...] | None, str | None]:
    """A list of block indices (`name`: dense_layers or full_layers), "0,1,2" ("" or "none": no block), or (None,
    the notice, which says the list `verb`: "kept" on a page, "using" for a link). Whether each index is below L is
    the Config's rule."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if [p.lower() for p in parts] in ([], ["none"]):
        return (), None
    found = [numbers.whole(p) if len(p) <= numbers.MAX_CHARS else None for p in parts[:BOUNDS["L"][1]]]
    if any(n is None or n < 0 for n in found):
        return None, (f'{name}="{quote(text)}" is not a list of block indices (0,1,2: whole numbers from 0 to '
                      f'L − 1, or none); {verb} {name}={show_value(tuple(kept))}')
    return tuple(found), None


def read_window(value: object, kept: int | None, verb: str = "kept") -> tuple[int | str | None, str | None]:
    """The window W's input: a whole number within BOUNDS["W"], "none" (full attention: returned as "none"), or
    (None, the notice, which says the W `verb`). Empty text is no input: (None, None)."""
    if isinstance(value, str) and value.strip().lower() == "none":
        return "none", None
    number, rejected = read_field("W", value, kept=kept if kept is not None else 0)
    if rejected:
        lo, hi = BOUNDS["W"]
        rejected = (rejected.rsplit("; ", 1)[0] + f" (W: {lo:,} to {hi:,} keys, or none for full attention); {verb} "
                    f"W={show_value(kept) if kept is not None else 'none'}")
    return number, rejected


LATENT_NONE = ", or none (q projected from x directly); {verb} d_cq={kept}"  # read_latent's end of a notice


def read_latent(value: object, kept: int | None, verb: str = "kept") -> tuple[int | str | None, str | None]:
    """The queries' latent width d_cq: a whole number within BOUNDS["d_cq"], "none" (q projected from x directly:
    returned as "none"), or (None, the notice, which says the d_cq `verb`). Empty text is no input: (None, None)."""
    if isinstance(value, str) and value.strip().lower() == "none":
        return "none", None
    number, rejected = read_field("d_cq", value, kept=kept if kept is not None else 0)
    if rejected:
        rejected = rejected.rsplit("; ", 1)[0] + LATENT_NONE.format(verb=verb, kept=show_value(kept) if kept is not None
                                                                    else "none")
    return number, rejected


def did_you_mean(word: str, names: Iterable[str]) -> str:
    """" (did you mean gpt2-small?)" for the name nearest a mistyped `word` (case aside), or ""."""
    names = list(names)
    lower = {n.lower(): n for n in names}
    near = difflib.get_close_matches(word.strip().lower(), list(lower), n=1, cutoff=0.7)
    return f" (did you mean {lower[near[0]]}?)" if near else ""


def quote(text: str, limit: int = 24) -> str:
    """User text for a notice: unprintable characters as "�", at most `limit` characters, with an ellipsis."""
    text = "".join(c if c.isprintable() else "\ufffd" for c in text[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def preset_of(config: Config) -> str:
    """The preset with this model (d, h, L, V, T_max, tie, the recipe, the mixture of experts, the window and Gemma's
    or gpt-oss's extras; any B and T, either attention), or "custom"."""
    for name, preset in PRESETS.items():
        if all(getattr(preset, k) == getattr(config, k) for k in PRESET_MATCH):
            return name
    return CUSTOM


@functools.cache
def preset_labels() -> dict[str, str]:
    """Menu label -> preset name, e.g. "GPT-2 small · L 12, d 768" -> "gpt2-small"; plus "custom"."""
    sizes = {"small": "small", "medium": "medium", "large": "large", "xl": "XL"}
    labels = {}
    for name in GPT2_RECIPE_PRESETS:  # the page's menu: the 2019 recipe (the modern presets: issue 15)
        cfg = PRESETS[name]
        family, size = name.split("-", 1)
        title = f"GPT-2 {sizes[size]}" if family == "gpt2" else f"GPT-3 {size.upper()}"
        labels[f"{title} · L {cfg.L}, d {cfg.d:,}"] = name
    return {**labels, "custom (your own values)": CUSTOM}
