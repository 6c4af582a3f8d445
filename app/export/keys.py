"""The keys of the exported page's tables (its budgets', pass structures', changes' and training plans' templates),
one definition for the spec that writes them and the page that looks them up (compiled, app/export/compiled.py)."""
from __future__ import annotations

import dataclasses

from model import Config
from model.memory import structure, structure_key
from model.training import TrainSetup

DTYPE_CLASS = {"fp32": "fp32", "bf16": "bf16", "fp16": "bf16"}  # fp16 passes equal bf16's (tests check it)


def pass_key(cfg: Config, dtype: str) -> str:
    """The key of the pass structure of `cfg` at `dtype` (`model.memory.structure_key`; fp16's is bf16's)."""
    return structure_key(structure(cfg, DTYPE_CLASS[dtype]))


def recipe_key(cfg: Config) -> str:
    """The recipe's and the mixture of experts' part of `structure_key` ("" for GPT-2's dense recipe), plus "d_ff"
    where d_ff is set apart from the recipe's default."""
    s = structure(cfg, "fp32")
    base = structure_key(dataclasses.replace(s, recipe=None, moe=None, window=False, gemma=(), oss=(), mla=(),
                                             partial=False, nope=()))
    if structure_key(s) == base:
        return ""
    return structure_key(s)[len(base) + 1:] + (",d_ff" if cfg.ff_dim is not None else "")


def every_part(cfg: Config) -> str:
    """",window_all" where every block is windowed (the budget's and changes' formulas then leave the full blocks
    out), else ""."""
    return ",window_all" if cfg.L_W == cfg.L else ""  # L_W: 0 without a window


def budget_key(cfg: Config) -> str:
    """The key of a budget's line templates: "tied" or "untied", then the recipe's key."""
    return ",".join(x for x in ("tied" if cfg.tie else "untied", recipe_key(cfg)) if x) + every_part(cfg)


def changes_key(cfg: Config, dtype: str) -> str:
    """The key of a changes table's templates: the pass structure and whether d_ff is set apart."""
    return pass_key(cfg, dtype) + (",d_ff" if cfg.ff_dim is not None else "") + every_part(cfg)


def train_variant(s: TrainSetup) -> str:
    """The key of a training setup's discrete choices: D given or by the rule, optimizer, ZeRO stage, recompute, fit."""
    return ",".join(("rule" if s.D is None else "given", s.optimizer, str(s.zero), s.recompute, s.fit))
