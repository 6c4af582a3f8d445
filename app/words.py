"""The live page's words and control ranges that the exported page shares, without importing Panel.

The exported page is built with Bokeh alone, so what both pages show is defined here (or in `model`) and read
by the cards (app/cards/: the controls, the budget card, the shapes table) on one side and app/export on the other.
"""
from __future__ import annotations

from model import BOUNDS, Config
from model.config import LINKED
from model.families import MLP_KINDS
from model.numbers import EXAMPLES
from model.rules import rules_line
from model.training import CUSTOM_GPU, GPUS
from model.parts import says

SHORT = {"B": "batch", "T": "sequence length", "d": "model width", "h": "heads (divide d)", "L": "blocks",
         "V": "vocabulary", "T_max": "positions W_pe"}  # the name under each field's symbol, GPT-2's recipe
SHORT_WHEN = {"h": ("apart", "heads"), "T_max": ("rope", "trained context")}  # (condition, the name when it holds):
# "apart", d_head set apart from d / h (h need not divide d); "rope", RoPE's positions (no table W_pe)
SOFT = {"B": (1, 64, 1), "T": (1, None, 1), "d": (64, 4096, 64), "L": (1, 48, 1), "V": (1, 131_072, 1),
        "T_max": (1, 8192, 1)}  # slider (start, end, step); T's end is T_max; h walks the divisors of d
HINT = f"arrow keys move a focused slider; a box takes any value in bounds: {EXAMPLES}"  # after the rules, in the
# status line when no notice applies
CHIP_TIPS = {  # the share card's chips: what each control and panel of an embedded view is
    "preset": "preset: the picker of named models",
    "recipe": "recipe: GPT-2 (2019), modern (Llama-3 style) or custom",
    "moe": "moe: the MLP's switch, dense or a mixture of experts",
    **{f.key: f"{f.key}: {f.about}" for f in LINKED if f.controlled},  # each field's control: its declared doc
    "shapes": "shapes: every tensor of one forward pass", "budget": "budget: parameters and FLOPs per token",
    "changes": "changes: what each change of the modern recipe buys", "tokens": "tokens: a text split into GPT-2 tokens",
    "values": "values: real numbers of one pass at init", "training": "training: from N to a training run",
    "inference": "inference: prefill, decode and tokens per second on a GPU",
}
MOE_SWITCH_DOC = (f"moe: the MLP, {MLP_KINDS['dense']} or {MLP_KINDS['moe']} (a router (d, E) sends each token to k "
                  f"of E experts of width d_expert)")  # the MLP's switch on both pages
TAGLINE = "a decoder-only Transformer's forward pass, shape by shape"  # GPT-2's recipe or the modern one
QUADRATIC = "(B, h, T, T)"  # the attention matrices: the tensors that balloon with T
SHAPES_TITLE = "One forward pass, tensor by tensor"
_SHAPES_INTRO = "In execution order, as <code>model.trace</code> records it. "
SHAPES_NOTES = {  # the shapes card's intro (markup) by the attention switch (model.config.CHOICES["attention"])
    "eager": _SHAPES_INTRO + ("<span style='color:#e8590c;font-weight:600'>Orange</span>: the attention matrices "
                              "(B, h, T, T), which grow with T²."),
    "fused": _SHAPES_INTRO + ("Fused attention makes no (B, h, T, T) tensor, so no row of the heads grows with T² "
                              "(where blocks have a sliding window, its band window_mask (T, T), made once per pass, "
                              "is the one row that does): the kernel keeps a (B, h, T) log-sum-exp, attn.lse, for the "
                              "backward pass. The lines under the table say what eager attention would make here."),
}
MAX_LISTED_BLOCKS = 96  # expanded listing: GPT-3 175B in full; beyond, one line stands for the rest
GROUP_WORDS = {  # the shapes table's block headings (app.cards.shapes.markup.display_rows)
    "all": "{span} × L = {L}", "span_one": "block 0", "span": "blocks 0 … {last}",  # collapsed: one group × L
    "tensors": "one block's {n} tensors", "repeats": "; every block repeats these shapes",
    "window": {"dense": ": {window}", "moe": "; {window}"},  # which blocks slide (model.tracing.window_text)
    "block": "block {b}", "of": "of {L}", "kind": " · {label}",  # expanded: each block, its kinds
    "rest": "blocks {first} … {last}", "rest_label": "{n} more blocks {same}, not listed",
    "same": {"dense": "with the same shapes", "moe": "of the kinds above"},
    "absent": "none at T = 1: no next token to predict",  # the loss's row where there is no loss
}
SUM_KEYS = ("params/exact", "flops/forward_measured")  # budget lines that close a group: a rule above
STEP_PREFIX = "flops/steps/"  # the steps from 2N to the measured count: indented
CAPTIONS = (  # what the sliders show about N, true of every recipe; {mlp_share} is the line params/mlp_share
    "<b>N does not depend on T or B</b>: they size the activations (the shapes), not the weights.",
    "<b>h changes no parameter in GPT-2</b>: the heads split d; W_qkv is (d, 3d) for any h. With fewer K/V heads "
    "h_kv (GQA) or d_head set apart, W_qkv is (d, (h + 2h_kv)·d_head); with latent attention, the matrices that "
    "make q, k and v from the latents are h heads wide. Either way h does count.",
    "<b>The MLP holds ≈ 2/3 of GPT-2's block</b>: 8d² of 12d², biases aside; here {mlp_share}.",
)


def slider_range(name: str, value: int, T_max: int) -> tuple[int, int, int]:
    """(start, end, step) of the slider for `name` showing `value`.

    The soft range, with the end doubled until it reaches `value` (capped at the bound), so the range
    depends only on the value's order of magnitude: L = 96 gives 1 … 96 and stays so at L = 95.
    """
    start, end, step = SOFT[name]
    if end is None:  # T: up to T_max, or T's own bound where the context is longer (Mistral NeMo: 1,024,000)
        end = min(T_max, BOUNDS["T"][1])
    else:
        while end < value and end < BOUNDS[name][1]:
            end = min(2 * end, BOUNDS[name][1])
    start = min(start, value)
    return start, max(end, start + 1), step


def shapes_title_html(attention: str) -> str:
    """The exported shapes card's title and intro at `attention` (the live card draws SHAPES_TITLE and the note)."""
    return f"<h2>{SHAPES_TITLE}</h2><p class='muted'>{SHAPES_NOTES[attention]}</p>"


def status_rules(cfg: Config) -> str:
    """The status line's reminder of the rules at this configuration (`model.rules.rules_line`) and the hint."""
    return f"{rules_line(cfg)} · {HINT}"


def field_names(cfg: Config) -> dict[str, str]:
    """The names under h and T_max at `cfg` (SHORT, or SHORT_WHEN's where its condition holds)."""
    holds = {"apart": cfg.head_apart, "rope": cfg.positions == "rope"}  # latent attention's heads are d_nope + d_R
    # wide: h need not divide d
    return {f: name if holds[when] else SHORT[f] for f, (when, name) in SHORT_WHEN.items()}


# --- the training card (app/cards/train/view.py; the exported page shows the same) ----------------------------------
PARTS = (  # the chart's stacked parts: (column, legend, colour)
    ("weights", "weights", "#64748b"),
    ("grads", "gradients", "#a3b1c2"),
    ("optimizer", "optimizer states", "#5b4fd6"),
    ("activations", "saved activations", "#2f9e44"),
    ("transient", "alive at the peak, not saved", "#e8590c"),
    ("kv", "KV cache", "#1098ad"),
)
ROWS = ("serving, whole model", "training, per GPU")  # bottom to top
GPU_LABELS = {**{f"{g.label} · {g.peak_tflops:,.0f} TFLOP/s": k for k, g in GPUS.items()},
              "custom: your own peak and memory": CUSTOM_GPU}
OPTIMIZER_LABELS = {"mixed: 2 + 2 + 12 bytes": "adam-mixed", "fp32: 4 + 4 + 8": "adam-fp32"}
ZERO_LABELS = {"0": 0, "1: states": 1, "2: + grads": 2, "3: + weights": 3}
RECOMPUTE_LABELS = {"none": "none", "full: keep block inputs": "full"}
FIT_LABELS = {"Hoffmann et al. 2022": "hoffmann", "Besiroglu et al. 2024 refit": "besiroglu"}
TRAIN_CONTROLS = {  # each control's label, keyed as the URL (app.cards.train.settings.TRAIN_KEYS)
    "D": "D, training tokens", "gpu": "GPU", "gpu_peak": "peak, TFLOP/s", "gpu_memory": "memory, GiB",
    "mfu": "MFU, 0 to 1", "gpus": "n, GPUs", "price": "$ per GPU-hour (assumed)",
    "optimizer": "Adam: weights + gradients + states", "zero": "ZeRO stage", "recompute": "activation recomputation",
    "fit": "loss fit",
}
CHINCHILLA_RULE = "Chinchilla's rule: D = 20·N"  # the live card's switch; the exported page's blank D


def chinchilla_rule(cfg: Config) -> str:
    """The live card's switch at `cfg`: CHINCHILLA_RULE, at N_active for a mixture of experts (as model.training
    counts it: D = 20·N_active)."""
    return CHINCHILLA_RULE + says(cfg, "train/rule")
# The training card's headline (app/cards/train/markup.py headline_html, compiled): "{key}" is a plan line's
# value in words (model.train_report.human, escaped); T, gpus, device and phase, the run's; "{rule}" one of
# HEADLINE_RULE (D by Chinchilla's rule, "{chinchilla}" per parameter, or given) and "{fits}" one of HEADLINE_FITS (fits; does not fit, and the
# largest B that does; not even B = 1 fits), each filled from the same values first.
HEADLINE = """<div class="head">
<div>D = <b>{compute/D}</b> ({rule}) · C = 6·{N}·D = <b>{compute/C_6ND}</b>
({compute/C_6ND_pf_days}) · measured <b>{compute/C_measured}</b></div>
<div>On {gpus} × {device} at {time/mfu} MFU: <b>{time/gpu_hours}</b>,
<b>{time/wall_days}</b> of wall-clock time, <b>{time/cost}</b>
<span class="muted">at {time/price} per GPU-hour, an assumption</span></div>
<div>Training memory per GPU: <b>{memory/peak}</b> at the step's peak, in the {phase}
(the parts sum to {memory/total}), of {memory/capacity}: {fits}.
Serving holds <b>{serve/total}</b> ({serve/kv_per_token} of KV cache per token of context{past}).</div>
</div>"""
HEADLINE_PAST = {"full": "", "window": " past the window"}  # "{past}": a windowed block's cache stays at W − 1 tokens
HEADLINE_RULE = {"rule": "Chinchilla's rule, {chinchilla} per{active} parameter",
                 "given": "{compute/tokens_per_param} per{active} parameter"}
# "{N}" and "{active}": a mixture of experts counts the run at N_active, as model.training's lines say
HEADLINE_N = {"dense": {"N": "N", "active": ""}, "moe": {"N": "N_active", "active": " active"}}
HEADLINE_FITS = {"fits": '<span class="fits">fits</span>; the largest micro-batch at T = {T} is B = <b>{memory/max_B}</b>',
                 "some": '<span class="nofit">does not fit</span>; the largest micro-batch that fits is B = '
                         '<b>{memory/max_B}</b>',
                 "none": '<span class="nofit">does not fit</span>; not even B = 1 fits: raise ZeRO, recompute, or add '
                         'GPUs'}
TRAIN_TITLE = ("<h2>From N to a training run</h2><p class='muted'>How many tokens this N should see, the compute, "
               "time and cost on real GPUs, and the memory to train and to serve.</p>")

# the exported page's training card for a mixture of experts (its line templates are a dense model's)
TRAIN_MOE = ("A mixture of experts trains at C = 6·N_active·D, with every expert's weights, gradients and optimizer "
             "states in memory: this page's training card is for dense models; print this model's with: {command}")
# "{N}": HEADLINE_N's, N or a mixture of experts' N_active
TRAIN_NOTE = ("MFU, model FLOPs utilisation: observed tokens/s × 6{N} ÷ the GPUs' peak FLOP/s (PaLM's definition, which "
              "also counts attention's 12·L·T·h·d_head per token, 12·L·T·d where h·d_head = d; here time follows "
              "C = 6·{N}·D). Peaks are dense BF16 without "
              "sparsity; GPU memory is the nominal capacity, a little of which the CUDA context takes. Memory is per GPU with data parallelism (each GPU a replica, ZeRO sharding "
              "the states over the n GPUs); tensor and pipeline parallelism, which runs of GPT-3's size also use, are "
              "not modelled. Activations: what autograd saves for the backward pass, measured at B and T of the sliders "
              "(the micro-batch). The step's peak adds what it holds without saving: the logits (B, T, V) and their "
              "copies in the loss, the gradients flowing back, Adam's temporaries; each phase's worst moment is "
              "measured on the meta device, and on CPU the predicted peak matched the measured one to within 240 "
              "bytes (benchmarks/bench_train_memory.py). Fits and the largest micro-batch are the peak's.")
TRAIN_NOTES = {kind: TRAIN_NOTE.format_map(n) for kind, n in HEADLINE_N.items()}  # "dense", "moe"
