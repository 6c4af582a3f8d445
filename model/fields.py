"""A field of `Config`, declared once: `Field` (name, symbol, kind, default, bounds, doc) and its generic checks.

Every field lives in the part it shapes (`model.parts`: the token table's `embed_scale`, attention's `kv_heads`, the
mixture of experts' `experts`, ...), or among the lesson's global dims (`model.config.DIMS`: B, T, d, h, L, V,
T_max). Everything that names a field is made from its declaration: `Config`'s dataclass fields and their checks,
the bounds, the page's parameters (`app.state.ExplorerState`), its controls (a box, a switch or a checkbox by kind,
where `controlled`), the URL keys (`Field.key`, read by kind: `app.query`), the command line's options (`Field.flag`,
by kind: `model.cli`), the share card's chips and the exported page's controls. A link's keys, the page's controls and
the share card list fields in `linked` order; a link and the command line write values in `written` order.

Kinds:
- "whole": a whole number within `bounds` (an optional one may be None: the recipe's default, or unset);
- "flag": True or False;
- "choice": one of `choices`, the first GPT-2's (the default);
- "real": a number above 0 and below `REAL_MAX` (a value only: a soft-cap, a clamp), or None;
- "blocks": block indices, a sorted tuple of whole numbers from 0 to L − 1 (checked against L by its part).
"""
from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass

REAL_MAX = 1e6  # a "real" field (a soft-cap, a clamp) is above 0 and below this
KINDS = ("whole", "flag", "choice", "real", "blocks")
# The pages' groups of fields, in `Config`'s order: the lesson's sliders (and the head's tying), the recipe's switches
# and sizes, the MLP's other choice (a mixture of experts), the values a published model adds with no control of their
# own (a line on the page), a sliding window's and latent attention's widths (boxes where the model has them), and
# Gated DeltaNet's sizes (set by a file, a preset or a link).
GROUPS = ("lesson", "recipe", "moe", "extras", "window", "latent", "linear")
FAMILIES = {"gemma": "Gemma", "oss": "gpt-oss"}  # whose extras an "extras" field is (`Field.family`): the family's name
UNSET = ("none", "default")  # what a link writes for a value's None (`app.query`); a whole number's: `Field.unset`
RECIPE_KINDS = ("choice", "whole", "flag", "blocks")  # the order a link and the command line write the recipe in (`written`)


@dataclass(frozen=True)
class Field:
    """One field of `Config`. `symbol` is the lesson's name of the size it sets (h_kv for `kv_heads`): its bounds'
    key, the name a box and a URL read it by, and the name its formulas use; a field without one (a switch, a layout)
    goes by its own name."""

    name: str  # the Config field: "kv_heads"
    kind: str  # one of KINDS
    doc: str  # what it is, in the lesson's words (of its symbol, where it has one)
    default: object = None
    symbol: str | None = None  # "h_kv"
    bounds: tuple[int, int] | None = None  # inclusive, for "whole"
    choices: tuple[str, ...] = ()  # for "choice": GPT-2's first
    menu: tuple[str, ...] | None = None  # the choices the pages' menus offer, where fewer (default: all)
    optional: bool = False  # None is a value: the recipe's default ("whole"), unset ("real")
    more: str = ""  # what the field's doc adds to its symbol's: " (default none: full attention)"
    cli: str | None = None  # the command line's option where it is not `--` + the key ("--experts" for E)
    example: str = ""  # a published model's value, for messages: DeepSeek-V3's d_c "512"
    required: bool = False  # no default: Config(B=..., T=..., ...) must give it (the global dims)
    group: str = "recipe"  # which of the pages' groups of controls sets it (`GROUPS`)
    family: str = ""  # an "extras" field's: whose extras it is (`FAMILIES`: "gemma", "oss")
    tensors: bool = False  # a recipe flag that changes which tensors a pass makes (`model.memory.Structure.flags`)
    says: str = ""  # an "extras" field's words where set, formatted with `cfg` ("scores soft-capped at {cfg.…:g}")
    control: bool = True  # False: no control of its own on the live page (a link, a preset or a config.json sets it)
    needs: str = ""  # the field whose part this one sizes: the page takes it only where that one is set (k: experts)
    absent: str = ""  # on a field others need: the page's notice when one of them is set without it ({key}: its key)
    unset: str = ""  # an optional whole number's None where a link may write it: "default" (the recipe's d_ff; a link
    # writes default or nothing) or "none" (no window; none or default); "": only its part unsets it (E: moe=0)

    @property
    def key(self) -> str:
        """The field's name in a link and a box: its symbol, else its name ("d_ff", "E", "norm", "moe_step")."""
        return self.symbol or self.name

    @property
    def flag(self) -> str:
        """The command line's option: "--d-ff", "--h-kv", "--W", "--experts", "--T-max"."""
        return self.cli or "--" + self.key.replace("_", "-")

    @property
    def options(self) -> tuple[str, ...]:
        """A switch's choices as the pages' menus offer them (`menu`, else every choice)."""
        return self.choices if self.menu is None else self.menu

    @property
    def about(self) -> str:
        """The field's doc as a page's tooltip or an option's help gives it: its symbol's, with what the field adds."""
        return self.doc + self.more

    @property
    def controlled(self) -> bool:
        """The live page has a control for it: a slider and a box (a whole number, a list of blocks), a switch (a
        choice) or a checkbox (a flag). The extras have none (a line on the page says them)."""
        return self.control and self.group != "extras"

    @property
    def annotation(self) -> str:
        """Its type as `Config` declares it: "int", "int | None", "bool", "str", "float | None", "tuple[int, ...]"."""
        base = {"whole": "int", "flag": "bool", "choice": "str", "real": "float", "blocks": "tuple[int, ...]"}[self.kind]
        return f"{base} | None" if self.optional else base


def by_name(fields: Iterable[Field]) -> dict[str, Field]:
    """name -> Field."""
    return {f.name: f for f in fields}


def linked(fields: Iterable[Field]) -> tuple[Field, ...]:
    """`fields` (in `Config`'s order) as a link, the command line and the share card list them: the pages' groups of
    controls in their order, then the extras, which have none of their own, family by family (`FAMILIES`), each
    family's switches before its values (Gemma's post_norms, embed_scale, then query_scale, attn_softcap, ...)."""
    families = list(FAMILIES)

    def place(f: Field) -> tuple[int, int, int]:
        extra = f.group == "extras"
        return (extra, families.index(f.family) if extra else 0, extra and f.kind != "flag")

    return tuple(sorted(fields, key=place))


def written(fields: Iterable[Field]) -> tuple[Field, ...]:
    """`fields` in the order a link (`app.query.to_query`) and the command line (`model.cli`) write their values:
    `linked`, but the recipe's switches first, then its sizes, then QK-norm (?norm=rmsnorm&…&attention=fused&d_ff=
    14336&h_kv=8, and --norm rmsnorm … --d-ff 14336 --h-kv 8 --qk-norm)."""
    out = linked(fields)
    first = {f.group: i for i, f in reversed(list(enumerate(out)))}  # each group's place
    return tuple(sorted(out, key=lambda f: (first[f.group], RECIPE_KINDS.index(f.kind) if f.group == "recipe" else 0)))


def whole(name: str, value: object, bounds: tuple[int, int], doc: str) -> int:
    """`value` as an int if it is a whole number within `bounds`, else ValueError naming the bounds."""
    lo, hi = bounds
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a whole number from {lo:,} to {hi:,}, got {value!r}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name}={value:,} is out of range: {name} ({doc}) must be from {lo:,} to {hi:,}")
    return value


def flag(name: str, value: object) -> None:
    """ValueError unless `value` is True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")


def real(name: str, value: object, doc: str) -> None:
    """ValueError unless `value` is None or a number above 0 and below REAL_MAX."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)
                              or not 0 < value < REAL_MAX):
        raise ValueError(f"{name} must be a number above 0 and below 1,000,000 ({doc}), got {value!r}")


def blocks(name: str, value: object) -> tuple[int, ...]:
    """A list of block indices as a sorted tuple without repeats, else ValueError naming what is expected."""
    if not isinstance(value, (tuple, list)) or any(isinstance(i, bool) or not isinstance(i, numbers.Integral)
                                                   for i in value):
        raise ValueError(f"{name} must be a list of block indices (whole numbers from 0 to L − 1), got {value!r}")
    return tuple(sorted({int(i) for i in value}))


def below(name: str, blocks: tuple[int, ...], L: int) -> None:
    """ValueError unless every block index of the field `name` (a "blocks" field) is one of the L blocks."""
    outside = [i for i in blocks if not 0 <= i < L]
    if outside:
        raise ValueError(f"{name} lists block {outside[0]:,}, but the blocks are 0 … {L - 1:,}: list indices below "
                         f"L={L:,}")


def choice(f: Field, value: object) -> None:
    """ValueError unless `value` is one of the field's choices."""
    if value not in f.choices:
        raise ValueError(f"{f.name} must be one of {', '.join(f.choices)} ({f.doc}), got {value!r}")


def blocks_text(blocks: tuple[int, ...]) -> str:
    """Block indices as the tables write them: "0 … 2"; "1, 3, …, 47" (every 2nd); "0, 4 … 9, 12"."""
    if len(blocks) > 2:
        step = blocks[1] - blocks[0]
        if all(b - a == step for a, b in zip(blocks, blocks[1:])):
            return f"{blocks[0]} … {blocks[-1]}" if step == 1 else f"{blocks[0]}, {blocks[1]}, …, {blocks[-1]}"
    runs: list[list[int]] = []
    for b in blocks:
        if runs and b == runs[-1][-1] + 1:
            runs[-1].append(b)
        else:
            runs.append([b])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}, {r[1]}" if len(r) == 2 else f"{r[0]} … {r[-1]}"
                     for r in runs)
