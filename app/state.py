"""`ExplorerState`: the page's single source of truth, as parameters with the model's bounds and docs.

Widgets write the fields (B, T, d, h, L, V, T_max, tie); the state settles them with `app.rules.settle`
(h snaps to a divisor of d, T is clamped to T_max) and publishes one valid `model.Config` in `config`, which
every view watches. The values a user asked for are remembered, so dragging d through 770 snaps h 12 → 11
and back to 12 at 768, and lowering then raising T_max brings T back.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable

import param

import model
from model import DTYPES, PRESETS, Budget, Config, Trace
from model import tokenizer
from model.formula import evaluate_shape
from model.config import CONFIG_FIELDS, FIELD, FIELDS, LINKED, names
from model.fields import Field
from model import families
from model.families import RECIPE_LABELS, moe_fields, recipe_fields, recipe_of
from model.rules import (CUSTOM, MODEL as MODEL_FIELDS, PRESET_ASKS, Note, news, preset_of, read_field, read_latent,
                         read_layers, read_window, settle_notes)
from model.inference import InferSetup, Serving, serving
from model.training import Plan, TrainSetup, plan

from .query import DEFAULT_CONFIG

__all__ = ["CUSTOM", "ExplorerState", "preset_labels"]

SAMPLE_TEXT = ("The Transformer reads text as tokens: pieces of words, each an id in a vocabulary of V = 50,257. "
               "Its attention compares every token with every earlier one.")


def preset_labels() -> dict[str, str]:
    """The live page's preset menu, label -> name: every preset, the mixtures of experts included
    (`model.families.preset_labels`)."""
    return families.preset_labels(moe=True)


@functools.lru_cache(maxsize=512)
def _bar_scale(cfg: Config, dtype: str) -> int:
    trace = model.trace(cfg, dtype)
    symbols = {**cfg.symbols(), "T": cfg.T_max}
    best = 0
    for row in trace.rows:
        per_element = row.nbytes // row.numel if row.numel else DTYPES[dtype]
        best = max(best, math.prod(evaluate_shape(row.symbolic, symbols)) * per_element)
    return best


def bar_scale(trace: Trace) -> int:
    """Bytes of the largest tensor of `trace`'s pass at T = T_max: each row's lesson shape evaluated at
    T = T_max (`model.formula.evaluate_shape`) times that row's bytes per element. The same trace, no second pass."""
    return _bar_scale(trace.cfg, trace.dtype)


# MODEL_FIELDS: what the recipe, the MLP choice, the window, a preset's extras (Gemma's, gpt-oss's) and latent
# attention set, besides FIELDS (`model.rules.MODEL`)
BOXES = {f.key: f.name for f in LINKED if f.controlled and f.group != "lesson" and f.kind in ("whole", "blocks")}
# key -> field of the boxes besides the lesson's sliders': "d_ff" -> "ff_dim", "E" -> "experts", "moe_step" -> itself,
# "d_c" -> "latent_dim"


def _param(f: Field) -> param.Parameter:
    """The page's parameter of a Config field, from its declaration: its kind, bounds, doc and the default
    configuration's value."""
    default, doc = getattr(DEFAULT_CONFIG, f.name), f.about
    if f.kind == "whole":
        return param.Integer(default=default, allow_None=f.optional, bounds=f.bounds, doc=doc)
    if f.kind == "flag":
        return param.Boolean(default=default, doc=doc)
    if f.kind == "choice":
        return param.Selector(default=default, objects=list(f.choices), doc=doc)
    if f.kind == "real":
        return param.Number(default=default, allow_None=True, doc=doc)
    return param.Parameter(default=default, doc=doc)  # "blocks": a tuple of block indices


# Every field of Config as a parameter, made from its declaration (`model.config.CONFIG_FIELDS`).
_ConfigFields = param.parameterized_class("_ConfigFields", {f.name: _param(f) for f in CONFIG_FIELDS})


class ExplorerState(_ConfigFields):
    """Configuration, display choices and the text to tokenize; `config` is always a valid `model.Config`. The
    configuration's fields are parameters made from their declarations (`_ConfigFields`); these are the page's own."""

    recipe = param.Selector(default="gpt2", objects=list(RECIPE_LABELS), doc="GPT-2 (2019), the modern recipe "
                            "(Llama-3 style) or custom; choosing gpt2 or modern sets every switch")
    preset = param.Selector(default="gpt2-small", objects=[*PRESETS, CUSTOM],
                            doc="the named model the fields match; choosing one sets T, d, h, L, V, T_max, tie and "
                                "the recipe (and the mixture of experts, the window, the family's extras and latent "
                                "attention)")
    dtype = param.Selector(default="fp32", objects=list(DTYPES), doc="bytes per floating-point element in the table")
    expanded = param.Boolean(default=False, doc="list every block instead of one group repeated × L")
    text = param.String(default=SAMPLE_TEXT, doc="text split into GPT-2 tokens")
    train = param.ClassSelector(class_=TrainSetup, default=TrainSetup(),
                                doc="the training run: tokens D, GPU, MFU, GPU count, price, optimizer, ZeRO, recompute")
    infer = param.ClassSelector(class_=InferSetup, default=InferSetup(),
                                doc="the inference card: its GPU, the weights' and KV cache's formats, group, efficiency")
    config = param.ClassSelector(class_=Config, constant=True, doc="the valid configuration every view shows")
    notices = param.List(default=[], item_type=str, constant=True,
                         doc="why the configuration differs from what was asked (h snapped, T clamped, input rejected)")

    def __init__(self, config: Config | None = None, **params) -> None:
        config = config or DEFAULT_CONFIG
        fields = {k: getattr(config, k) for k in (*FIELDS, *MODEL_FIELDS)}
        super().__init__(**{**fields, "config": config, "preset": preset_of(config), "recipe": recipe_of(config),
                            **params})
        self._asked: dict[str, object] = {k: getattr(self, k) for k in (*FIELDS, *MODEL_FIELDS)}
        self._settling = False
        self._notes: list[Note] = []  # every rule's note at the last settle, said or not (model.rules.news)
        self._settle()
        self.param.watch(self._on_fields, [*FIELDS, *MODEL_FIELDS])
        self.param.watch(self._on_preset, ["preset"])
        self.param.watch(self._on_recipe, ["recipe"])

    # --- writing ---------------------------------------------------------------------------------------------
    def apply(self, config: Config) -> None:
        """Show exactly `config` (every field, B included), as a link or a test would."""
        self._asked = {k: getattr(config, k) for k in (*FIELDS, *MODEL_FIELDS)}
        self._settle()

    def set_field(self, name: str, value: object) -> bool:
        """Set a field from raw widget input: a slider's int or a box's text (`model.numbers`' grammar: 1024,
        1,024, 1e3, 70 million), dense_layers' and full_layers' lists of block indices ("0,1,2", "none"), the window
        W ("none": full attention), a switch's choice or a checkbox. Text that is no whole number, or a value outside
        model.BOUNDS, is rejected with a notice and the value in use is kept; empty text changes nothing; E_shared = 0
        drops the shared experts' width and gate, W = none the full blocks' list; d_cq = none projects q from x
        directly. A field of a part this model lacks (`Field.needs`) gets that part's notice (`Field.absent`): a
        mixture of experts' on a dense model says to choose the MoE first, full_layers without a window to set W
        first, a latent attention width without latent attention to choose DeepSeek-V3 first. True if taken."""
        if name == "moe":  # the MLP choice: dense, or a mixture of experts (model.families.moe_fields)
            self._asked.update(moe_fields(self.config, bool(value)))
            self._settle(changed=names("moe"))
            return True
        f = FIELD[name]
        if f.needs and getattr(self.config, f.needs) is None:  # a part this model lacks: its switch first
            self._settle([FIELD[f.needs].absent.format(key=f.key)], changed=())
            return False
        if f.kind == "flag":
            self._asked[name] = bool(value)
            self._settle(changed=[name])
            return True
        if f.kind == "choice":
            if value not in f.choices:
                self._settle([f"{name}={value!r} is not one of {', '.join(f.choices)}; kept {name}={getattr(self, name)}"],
                             changed=())
                return False
            self._asked[name] = value
            self._settle(changed=[name])
            return True
        kept = getattr(self.config, f.key)  # d_ff, h_kv, d_head, E, k, …: the value in use, by its key
        if f.kind == "blocks":  # block indices, "0,1,2" or "none"
            number, rejected = read_layers(value, kept, name=name) if isinstance(value, str) else (None, None)
        elif name == "window":  # W, or "none": full attention
            number, rejected = read_window(value, kept)
        elif name == "q_latent_dim":  # d_cq, or "none": q projected from x directly
            number, rejected = read_latent(value, kept)
        else:
            number, rejected = read_field(f.key, value, kept=kept)
        if number is None:
            self._settle([rejected] if rejected else [], changed=())  # nothing changed
            return False
        self._asked[name] = None if number == "none" else number
        if name == "window" and number == "none":  # full attention everywhere: no blocks kept full apart
            self._asked["full_layers"] = ()
        if name == "shared_experts" and number == 0:  # no shared experts: no width or gate of theirs either
            self._asked.update(shared_dim=None, shared_gate=False)
        self._settle(changed=[name])
        return True

    def _on_fields(self, *events: param.parameterized.Event) -> None:
        if self._settling:
            return
        for event in events:
            self._asked[event.name] = event.new
        self._settle(changed=[e.name for e in events])

    def _on_preset(self, event: param.parameterized.Event) -> None:
        if self._settling or event.new == CUSTOM:
            return
        preset = PRESETS[event.new]
        self._asked.update({k: getattr(preset, k) for k in PRESET_ASKS})
        self._settle()

    def _on_recipe(self, event: param.parameterized.Event) -> None:
        if self._settling or event.new == "custom":
            return
        self._asked.update(recipe_fields(event.new, self.config.h))  # GPT-2's leaves latent attention
        self._settle(changed=(*names("recipe"), *names("latent")))  # the MLP's kind stays: a mixture of experts in either
        # recipe

    def _settle(self, rejected: list[str] | None = None, changed: Iterable[str] = (*FIELDS, *MODEL_FIELDS)) -> None:
        """Apply the rules to what was asked and publish fields, config, preset and notices in one update.

        `changed`: the fields this change set (default all: a preset, a link, `apply`). Notices are the change's
        own (`model.rules.news`): a rule that fires again on a later change of another field says nothing new,
        and one about a value asked for earlier says that it was remembered."""
        try:
            config, notes = settle_notes(self._asked, shown=self.config, changed=changed)
            said = news(notes, self._notes, changed)
        except ValueError as e:  # a recipe no Config takes (an odd d with RoPE): keep what is shown, say why
            config, notes, said = self.config, [], [f"{e}; kept the configuration shown"]
            self._asked = {k: getattr(config, k) for k in (*FIELDS, *MODEL_FIELDS)}
        self._notes = notes
        values = {k: getattr(config, k) for k in (*FIELDS, *MODEL_FIELDS)}
        values.update(config=config, preset=preset_of(config), recipe=recipe_of(config),
                      notices=[*(rejected or []), *said])
        changed = {k: v for k, v in values.items() if getattr(self, k) != v}  # a press changes two or three
        self._settling = True
        try:
            with param.edit_constant(self):
                self.param.update(**changed)
        finally:
            self._settling = False

    # --- watching: a view recomputes on its own inputs only --------------------------------------------------
    def on_inputs(self, callback: Callable[[], None], inputs: Iterable[str]) -> None:
        """Call `callback()` once per update in which any of `inputs` changed: Config field names (B, T, d, h,
        L, V, T_max, tie) and state parameters (dtype, expanded, text). An update that changes only other
        fields (T for a panel that depends on d and L only) calls nothing."""
        inputs = list(inputs)
        fields = [n for n in inputs if n in FIELDS]
        if any(f not in ("B", "T") for f in fields):  # the model's fields: its recipe shapes it as much
            fields += [f for f in MODEL_FIELDS if f not in fields]
        inputs = [n for n in inputs if n not in MODEL_FIELDS]
        params = [n for n in inputs if n not in FIELDS]
        unknown = [n for n in params if n not in self.param]
        if unknown:
            raise ValueError(f"unknown inputs {unknown}: use Config fields {FIELDS} or state parameters")

        def changed(*events: param.parameterized.Event) -> None:
            for e in events:
                if e.name != "config" or any(getattr(e.old, f) != getattr(e.new, f) for f in fields):
                    callback()
                    return

        self.param.watch(changed, (["config"] if fields else []) + params)

    # --- reading: everything the views show comes from the model ---------------------------------------------
    @property
    def trace(self) -> Trace:
        """Every tensor of one forward pass at `config` and `dtype`."""
        return model.trace(self.config, self.dtype)

    @property
    def bar_scale(self) -> int:
        """Bytes of the largest tensor at T = T_max, the scale of the memory bars (from the one trace)."""
        return bar_scale(self.trace)

    @property
    def budget(self) -> Budget:
        """Parameters and FLOPs of `config`."""
        return model.budget(self.config)

    @property
    def plan(self) -> Plan:
        """Tokens, compute, time, cost and memory of training `config` (its B, T) under `train`."""
        return plan(self.config, self.train)

    @property
    def serving(self) -> Serving:
        """The prefill, a decode step and the roofline of `config` (its B and T) under `infer`, with the charts'
        points."""
        return serving(self.config, self.infer)

    @property
    def tokens(self) -> tokenizer.Tokens:
        """`text` split into GPT-2 tokens (capped at tokenizer.MAX_TEXT_CHARS characters)."""
        return tokenizer.tokenize(self.text)
