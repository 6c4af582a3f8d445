"""The Python functions the exported page runs as they are, compiled to JavaScript by `app.export.pyjs`.

Each entry is a JavaScript namespace named after its module (page.js calls `units.value(x, unit)`), a card's module
by the name it is imported as here (`budget_markup` is app/cards/budget/markup.py, `changes_card`
app/cards/recipe/markup.py, `train_query` app/cards/train/settings.py), in an order where a module's functions call
only its own and earlier modules' functions. NATIVE names what page.js writes by hand for a Python class a compiled
function constructs. What else page.js writes by hand is named, with the test that checks it, in its header.
"""
from __future__ import annotations

import functools

from model import budgeting, changes, cli, config, families, memory, numbers, rules, tracing, train_report, training, units
from model.parts import delta, kda, latent, mamba, mamba1, moe, sparse, window
from model.training import TrainSetup

from .. import templates, words
from ..cards.budget import markup as budget_markup
from ..cards.recipe import markup as changes_card
from ..cards.shapes import markup as shapes_markup
from ..cards.train import markup as training_markup
from ..cards.train import settings as train_query
from . import keys
from .pyjs import compile_modules

MODULES = (
    ("config", [config.score_heads, config.largest_B, config.divisors, config.snap_heads, config.swiglu_width,
                config.defaults, config.Config, config.distinct_kinds, config.typed_blocks, config.kind_blocks,
                config.kind_label]),
    ("templates", [templates.fill_html, templates.columns_to_rows, ("TEMPLATES", templates.TEMPLATES)]),
    ("training", [training.TrainSetup, training.step_phases, training.no_peak]),
    ("numbers", [numbers.decimal, numbers.whole, numbers.real, numbers.show]),
    ("units", [units.thousands, units.sig3, units._scaled, units.params, units.flops, units.nbytes, units.percent,
               units.shape, units.scientific, units.plain, units.duration, units.seconds, units.dollars, units._ratio,
               units.yes_no, units.fixed3, units.value, units.short]),
    ("moe_part", [moe.present, moe.structure, moe.dense_width, moe.title_values, moe.order_note]),
    ("window_part", [window.present, window.title_values, window.order_note]),
    ("sparse_part", [sparse.present, sparse.rule_values, sparse.title_values]),
    ("latent_part", [latent.present, latent.structure, latent.rule_values, latent.mha_head, latent.title_values, latent.order_note, latent.no_twin]),
    ("delta_part", [delta.present, delta.symbols, delta.z_view, delta.title_values, ("ORDER_NOTE", delta.ORDER_NOTE),
                    delta.order_note, ("NO_PEAK", delta.NO_PEAK)]),
    ("mamba_part", [mamba.present, mamba.beside, mamba.structure, mamba.symbols, mamba.title_values, ("ORDER_NOTE", mamba.ORDER_NOTE),
                    ("ORDER_NOTE_BESIDE", mamba.ORDER_NOTE_BESIDE), mamba.order_note,
                    ("NO_PEAK", mamba.NO_PEAK)]),
    ("kda_part", [kda.present, kda.symbols, kda.title_values, ("ORDER_NOTE", kda.ORDER_NOTE), kda.order_note,
                  ("NO_PEAK", kda.NO_PEAK)]),
    ("mamba1_part", [mamba1.present, mamba1.chunk, mamba1.symbols, mamba1.title_values, ("ORDER_NOTE", mamba1.ORDER_NOTE),
                     mamba1.order_note, ("NO_PEAK", mamba1.NO_PEAK)]),
    ("rules", [rules.show_value, rules.message, rules.quote, rules.settle_values, rules._settle_heads,
               rules._settle_norm, rules._settle_window, rules._settle_mla, rules._settle_rotary, rules._settle_nope, rules._settle_dense, rules._settle_linear, rules._settle_sparse, rules._settle_sizes, rules.news, rules.out_of_range,
               rules.read_field, rules.read_latent, rules.rule_keys, rules.rules_line, rules.preset_of,
               rules.settle_notes, rules.settle]),
    ("budgeting", [budgeting.chart, budgeting.chart_note]),
    ("budget_markup", [budget_markup.shown, budget_markup.lines_html, budget_markup.headline_html,
                       budget_markup.captions_html, budget_markup.bar_text, budget_markup.budget_parts,
                       budget_markup.chart_html, budget_markup.note_html, budget_markup.panes]),
    ("memory", [memory._factor_values, memory.structure, memory.structure_key]),
    ("keys", [keys.pass_key, keys.recipe_key, keys.every_part, keys.budget_key, keys.changes_key, keys.train_variant]),
    ("tracing", [tracing.blocks_text, tracing._span_text, tracing.block_groups, tracing.window_text, tracing.expanded_rows]),
    ("shapes_markup", [shapes_markup._tensor, shapes_markup._group_heading, shapes_markup.display_rows,
                       shapes_markup.row_title, shapes_markup.row_html, shapes_markup.recipe_legend_html]),
    ("families", [families.recipe_fields, families.recipe_of, families.moe_fields, families.extras_shown]),
    ("changes", [changes.gemma_extras, changes.title_values, changes.no_twin, changes.order_note]),
    ("cli", [cli.extras_preset, cli._flag_value, cli._option, cli.model_options]),
    ("changes_card", [changes_card.export_command, changes_card.uncovered_text, changes_card.changes_html,
                      changes_card.notice_html]),
    ("words", [words.slider_range, words.status_rules, words.field_names]),
    ("train_report", [train_report.human]),
    ("training_markup", [training_markup.memory_bars, training_markup.capacity_label, training_markup.chart_html,
                         training_markup.legend_html, training_markup.headline_html, training_markup.lines_html,
                         training_markup.panes]),
    ("train_query", [train_query.link_number, train_query.number_words, train_query.number, train_query.settle_train,
                     train_query.news]),
)
NATIVE = {config.Config: "configOf",  # page.js: Config(**fields), its defaults and its normalisation (__post_init__)
          TrainSetup: "trainSetup",  # page.js: the defaults, then the fields given (TrainSetup's own checks aside)
          window.window_values: "windowValues",
          training.peak_candidates: "peakCandidates"}  # page.js: each candidate's formula compiled (spec._structure)  # page.js: WINDOW_VALUES' formulas compiled (spec.lines_js)


@functools.cache
def compiled_js() -> str:
    """MODULES as JavaScript (built once a process: every exported page carries the same)."""
    return compile_modules(MODULES, NATIVE)
