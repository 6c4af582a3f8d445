"""The numbers of a values pass (`model.values`) as display records, a text report and JSON.

Records first (`summary_lines`, `scaling_rows`, `stat_rows`), then formatting; the CLI prints them and the
page (app/cards/tensors/view.py) renders the same records, so both show the same labels and numbers.
"""
from __future__ import annotations

import json
import math
import textwrap
from dataclasses import asdict, dataclass

import numpy as np

from . import units
from .layout import MIN_WRAPPED, paragraph
from .report import header
from .scaling import Scaling
from .config import Config
from .parts import says
from .values import EAGER_RUN, MAX_T, Values

LESSON = ("Dividing by √d_head keeps the scores at unit variance; unscaled, their std is √d_head (8 at d_head = 64), "
          "and a logit 8 above its neighbours gets e⁸ ≈ 3,000× the mass: softmax turns one-hot and stops learning.")
INIT = "GPT-2's initialisation: weights N(0, 0.02), biases 0, LayerNorm gains 1"


def scale_words(cfg: Config) -> str:
    """The width the √d_head comparison is made at, as the card's heading names it: d_head; with latent attention
    d_head = d_nope + d_R, q and k's head width; with Gemma's query_pre_attn_scalar the scale this model uses
    instead (the comparison stays the lesson's, at √d_head)."""
    width = says(cfg, "values/d_head", "d_head") + f" = {cfg.d_head:,}"
    if cfg.query_scale is not None:  # None where it equals d_head (Config)
        width += f"; this model divides by √query_scale = √{cfg.query_scale:,} instead"
    return width


def num(x: float | None) -> str:
    """A measured value with four significant digits: 0.02003, 10.97, -3.142, 1.2e-07, -inf; "—" for None."""
    if x is None:
        return "—"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return f"{x:.4g}"


def run_line(v: Values) -> str:
    """What ran, and why B and T are what they are."""
    p = v.plan
    cut = f" (of {p.n_tokens:,}; at most {MAX_T})" if p.n_tokens > v.cfg.T else ""
    asked = f"; the page's T = {p.asked.T:,}" if p.asked.T != v.cfg.T else ""
    eager = f"; {EAGER_RUN}" if p.asked.attention != v.cfg.attention else ""
    return (f"B = 1 (more sequences would repeat these numbers); T = {v.cfg.T}: the first tokens of the text{cut}"
            f"{asked}{eager}")


def scaled_line(v: Values) -> str | None:
    """The label of a scaled-down copy (None when the model asked for ran), naming the reasons."""
    if not v.plan.scaled:
        return None
    a = v.plan.asked
    return (f"Scaled-down copy of the model asked for (d={a.d:,}, h={a.h:,}, L={a.L:,}), which is too large here: "
            f"{'; '.join(v.plan.reasons)}")


def loss_line(v: Values) -> str:
    if v.loss is None:
        return f"loss: none at T = 1 (no next token to predict); ln V = ln {v.cfg.V:,} = {v.ln_V:.3f}"
    return (f"loss at init {v.loss:.3f}  ·  ln V = ln {v.cfg.V:,} = {v.ln_V:.3f}  "
            f"(difference {v.loss - v.ln_V:+.3f}): an untrained model guesses about uniformly over V tokens")


@dataclass(frozen=True)
class ScalingRow:
    """One line of the √d_head comparison: a source of q, k, without and with the scale."""

    label: str
    std: tuple[str, str]  # (q·kᵀ, q·kᵀ / √d_head)
    max_prob: tuple[str, str]
    entropy: tuple[str, str]


def scaling_rows(v: Values) -> list[ScalingRow]:
    """The lesson's unit-variance q, k, this model's q, k at init, and uniform attention for reference."""
    def row(label: str, s: Scaling) -> ScalingRow:
        return ScalingRow(label, (f"{s.unscaled.std:.2f}", f"{s.scaled.std:.2f}"),
                          (f"{s.unscaled.max_prob:.3f}", f"{s.scaled.max_prob:.3f}"),
                          (f"{s.unscaled.entropy:.3f}", f"{s.scaled.entropy:.3f}"))
    u = v.unit
    return [row("unit-variance q, k (the lesson's assumption)", u), row("this model's q, k at init", v.scaling),
            ScalingRow("uniform attention (every earlier token alike)", ("0", "0"),
                       (f"{u.uniform_max_prob:.3f}",) * 2, (f"{u.uniform_entropy:.3f}",) * 2)]


def scaling_note(v: Values) -> str:
    """The experiment's finding at this d_head, in one sentence with its numbers."""
    u = v.unit
    ratio = units.thousands(u.mass_ratio) if u.mass_ratio < 1e15 else f"{u.mass_ratio:.2g}"
    return (f"At d_head = {u.d_head:,}: unit-variance q·kᵀ has std {u.unscaled.std:.2f} (√d_head = "
            f"{u.sqrt_d_head:.2f}), so a score one std above its neighbour gets e^{u.unscaled.std:.2f} ≈ {ratio}× the "
            f"weight; divided by √d_head the std is {u.scaled.std:.2f}. This model's own q, k at init are smaller "
            f"(std {v.scaling.scaled.std:.2f} after the scale), so its attention starts near uniform.")


@dataclass(frozen=True)
class ExpertRow:
    """One MoE block's routing at init: the tokens each expert got and how far the busiest is from balanced."""

    block: int
    tokens: tuple[int, ...]  # per expert, E entries, summing to T·k
    busiest: str  # "3.4× balanced" (the most any expert got ÷ T·k/E)
    idle: int  # experts that got no token


def expert_title(v: Values) -> str:
    """The heading of the routing rows: what balanced would be."""
    c = v.cfg
    return (f"Tokens per expert at init (is routing balanced before training?): T·k = {c.T * c.k:,} rows over "
            f"E = {c.E:,} experts, balanced {num(v.balanced_share)} each")


def expert_rows(v: Values) -> list[ExpertRow]:
    """Each MoE block's tokens per expert (none for a dense model)."""
    share = v.balanced_share
    return [ExpertRow(b, t, f"{num(max(t) / share)}× balanced", t.count(0)) for b, t in sorted(v.expert_tokens.items())]


@dataclass(frozen=True)
class StatRow:
    name: str  # as model.trace's expanded rows: "blocks.0.attn.q"
    mean: str
    std: str
    min: str
    max: str
    note: str = ""  # e.g. "56 of 100 entries are −inf (the mask), left out"


def stat_rows(v: Values, blocks: list[int] | None = None) -> list[StatRow]:
    """Statistics rows in execution order: every tensor outside the blocks, and the blocks listed (all by default)."""
    keep = set(range(v.cfg.L) if blocks is None else blocks)
    out = []
    for name, s in v.stats.items():
        if name.startswith("blocks.") and int(name.split(".")[1]) not in keep:
            continue
        note = f"{units.thousands(s.neg_inf)} of {units.thousands(s.n + s.neg_inf)} entries −inf (masked), left out" \
            if s.neg_inf else ""
        out.append(StatRow(name, num(s.mean), num(s.std), num(s.min), num(s.max), note))
    return out


def uniform_line(v: Values, block: int, head: int) -> str:
    """Why the attention weights at init look alike: each causal row is close to uniform, 1/(t + 1) for query t,
    and how close, measured on this pass (every weight over its row's 1/(t + 1))."""
    a = v.attention(block, head).astype(np.float64)
    t, j = np.indices(a.shape)
    ratio = (a * (t + 1))[j <= t]
    return (f"Near uniform, as an untrained model's attention is: query t spreads its weight over the t + 1 tokens it "
            f"may see, about 1/(t + 1) each (here every weight is {ratio.min():.2f} to {ratio.max():.2f} times its "
            f"row's 1/(t + 1)), because q and k at init are small; training makes rows peaked.")


def attention_text(v: Values, block: int, head: int, limit: int = 16) -> list[str]:
    """The weights of one block and head as rows of two-decimal numbers (the first `limit` tokens)."""
    a = v.attention(block, head)
    n = min(limit, v.cfg.T)
    width = max(4, *(len(t) for t in v.tokens[:n])) if n else 4
    lines = [" " * (width + 2) + " ".join(f"{j:>4}" for j in range(n))]
    for t in range(n):
        cells = " ".join("   0" if a[t, j] == 0 else f"{a[t, j]:4.2f}" for j in range(n))
        lines.append(f"{v.tokens[t].replace(chr(10), '↵')[:width]:>{width}}  {cells}")
    above, row_err = v.causal_check(block, head)
    lines.append(f"above the diagonal: largest weight {num(above)} (exactly 0); rows sum to 1 within {row_err:.1e}")
    if n < v.cfg.T:
        lines.append(f"(first {n} of {v.cfg.T} tokens shown)")
    return lines


def text(v: Values, block: int = 0, head: int = 0, expand: bool = False, width: int | None = None) -> str:
    """The plain-text report of `python -m model --values`, its sentences fitted to `width` (None: never wrapped)."""
    def say(*sentences: str) -> list[str]:
        return [line for x in sentences for line in paragraph(x, width)]

    lines = [*say(f"Real values of one forward pass at init (seed {v.seed}; {INIT})"), *header(v.cfg, width),
             *say(run_line(v))]
    if (s := scaled_line(v)) is not None:
        lines += say(s)
    lines += [*say(f"pass: {v.seconds:.2f} s (build, initialise, forward; one at a time per process)"), "",
              *say(loss_line(v)), "",
              *say("residual stream std: embed " + num(v.embed_std) + ", after blocks "
                   + ", ".join(f"{b}: {num(s)}" for b, s in enumerate(v.resid_std))), "",
              *say(f"Why √d_head ({scale_words(v.cfg)}, T = {v.cfg.T}, causal rows): {LESSON}")]
    rows = scaling_rows(v)
    w = max(len(r.label) for r in rows)
    if width is not None:  # the labels wrap to leave the three pairs of numbers (61 characters) their place
        w = max(MIN_WRAPPED, min(w, width - 61))
    lines.append(f"  {'':<{w}}  {'score std':>17}  {'largest weight':>17}  {'entropy, nats':>17}")
    lines.append(f"  {'':<{w}}  " + "  ".join(f"{'q·kᵀ':>8} {'/√d_head':>8}" for _ in range(3)))
    for r in rows:
        first, *more = textwrap.wrap(r.label, w) if len(r.label) > w else [r.label]
        lines.append(f"  {first:<{w}}  " + "  ".join(f"{a:>8} {b:>8}" for a, b in (r.std, r.max_prob, r.entropy)))
        lines += [f"  {x}" for x in more]
    lines += [*paragraph(scaling_note(v), width, "  "), "", f"Attention weights, block {block}, head {head} "
              "(row: query token t; column: key token j):"]
    if v.expert_tokens:
        routing = [expert_title(v) + ":"] + [f"  block {r.block}: {' '.join(map(str, r.tokens))}  (busiest "
                                             f"{r.busiest}, {r.idle} idle)" for r in expert_rows(v)]
        lines[-1:-1] = routing + [""]
    lines += ["  " + x for x in attention_text(v, block, head)]
    lines += paragraph(uniform_line(v, block, head), width, "  ")
    shown = None if expand else [block]
    lines += ["", "Per-tensor statistics (" + ("every block" if expand else f"block {block}; --expand lists every block")
              + "):"]
    srows = stat_rows(v, shown)
    wn = max(len(r.name) for r in srows)
    lines.append(f"  {'tensor':<{wn}}  {'mean':>10} {'std':>10} {'min':>10} {'max':>10}")
    for r in srows:
        row = f"  {r.name:<{wn}}  {r.mean:>10} {r.std:>10} {r.min:>10} {r.max:>10}"
        if r.note and width is not None and len(row) + 2 + len(r.note) > width:  # the note under its row
            lines += [row, *paragraph(r.note, width, "      ")]
        else:
            lines.append(row + (f"  {r.note}" if r.note else ""))
    return "\n".join(lines) + "\n"


def _finite(x: float | None) -> float | str | None:
    return x if x is None or math.isfinite(x) else ("-inf" if x < 0 else "inf")


def as_dict(v: Values, block: int = 0, head: int = 0) -> dict:
    """Everything the text shows, as plain data (JSON-safe: infinities as strings)."""
    def scale(s: Scaling) -> dict:
        d = asdict(s)
        d["mass_ratio"] = _finite(s.mass_ratio) if s.mass_ratio < 1e300 else "inf"
        return d
    return {
        "config": {**asdict(v.cfg), "d_head": v.cfg.d_head},
        "asked": {**asdict(v.plan.asked), "d_head": v.plan.asked.d_head},
        "scaled_down": v.plan.scaled, "reasons": list(v.plan.reasons),
        "params": v.plan.params, "activation_bytes": v.plan.activation_bytes,
        "seed": v.seed, "seconds": v.seconds, "tokens": list(v.tokens), "ids": list(v.ids),
        "loss": v.loss, "ln_V": v.ln_V, "embed_std": v.embed_std, "resid_std": list(v.resid_std),
        "scaling": {"lesson": LESSON, "unit_variance": scale(v.unit), "model": scale(v.scaling)},
        "attention": {"block": block, "head": head, "weights": v.attention(block, head).tolist()},
        **({"expert_tokens": {"balanced": v.balanced_share, "blocks": {str(b): list(t) for b, t in
                                                                      sorted(v.expert_tokens.items())}}}
           if v.expert_tokens else {}),
        "stats": {name: {k: _finite(x) if isinstance(x, float) else x for k, x in asdict(s).items()}
                  for name, s in v.stats.items()},
    }


def as_json(v: Values, block: int = 0, head: int = 0) -> str:
    return json.dumps(as_dict(v, block, head), indent=2, ensure_ascii=False) + "\n"


def add_arguments(p) -> None:
    """`python -m model --values --text "..."` options (argparse)."""
    g = p.add_argument_group("real values (a forward pass at init, on CPU)")
    g.add_argument("--values", action="store_true", help="run one real forward pass at init on --text and print its "
                   "numbers: loss vs ln V, attention, √d_head, per-tensor statistics")
    g.add_argument("--text", default=None, help="the text for --values (its first T tokens, at most 64)")
    g.add_argument("--seed", type=int, default=0, help="initialisation seed for --values (default 0)")
    g.add_argument("--block", type=int, default=0, help="block whose attention --values prints (default 0)")
    g.add_argument("--head", type=int, default=0, help="head whose attention --values prints (default 0)")


def cli_output(args, cfg, width: int | None = None) -> str:
    """The report for parsed CLI arguments; ValueError (one line) for bad input. Above the limits it runs the
    scaled-down copy, labelled, as the page does."""
    if args.text is None:
        raise ValueError('--values needs --text "..." (the text whose first tokens go through the model)')
    if args.table or args.markdown or args.csv:
        raise ValueError("--values prints text or --json; drop --table, --markdown and --csv")
    from .values import values

    v = values(cfg, args.text, args.seed, scale_down=True)
    v.attention(args.block, args.head)  # ValueError naming the ranges
    return as_json(v, args.block, args.head) if args.json else text(v, args.block, args.head, args.expand, width)
