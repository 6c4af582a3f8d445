"""The pages' menus as data: the presets grouped by family, and the recipe choice.

`FAMILIES` maps a family to its presets in menu order; `TITLES` gives each preset's name as published (tests check
that every preset is in exactly one family). `recipe_fields` and `recipe_of` are the recipe choice: GPT-2 (2019),
the modern recipe (Llama-3 style) or custom.

The menus (`grouped_menu`, `preset_labels`, `menu_groups`) list every preset with `moe=True` (the live page, whose
MLP choice is dense or a mixture of experts, `moe_fields`, and the exported page's menu), and `PAGE_PRESETS`, the
dense presets of full attention, without it: the exported page carries every such preset's figures, and a mixture of
experts', a windowed model's, one with Gemma's or gpt-oss's extras or with latent attention only on the page written
for it. The mixtures of experts (Mixtral 8x7B, Qwen3 30B-A3B) sit in their families; Gemma 3, gpt-oss and DeepSeek
have their own.
"""
from __future__ import annotations

from .config import FAMILY_PRESETS, MODERN, PRESETS, WRITTEN, Config, defaults, snap_heads
from .fields import FAMILIES as FIELD_FAMILIES, linked
from .parts import delta, kda, mamba, mamba1, mlp, moe, positions, sparse, window

MENU_PARTS = (moe, window, positions, sparse, delta, mamba, kda, mamba1)  # the parts whose sizes a preset's menu label names, in this order
FAMILIES: dict[str, tuple[str, ...]] = {
    "GPT-2": ("gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl"),
    "GPT-3": ("gpt3-125m", "gpt3-350m", "gpt3-760m", "gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b"),
    "Llama 3": ("llama3.2-1b", "llama3-8b", "llama3-70b"),
    "Llama 4": ("llama4-scout",),
    "Mistral": ("mistral-7b-v0.1", "mistral-7b", "mistral-nemo-12b", "mixtral-8x7b"),
    "Qwen": ("qwen2.5-0.5b", "qwen2.5-7b", "qwen3-0.6b", "qwen3-4b-instruct-2507", "qwen3-30b-a3b", "qwen3-next-80b-a3b"),
    "Gemma": ("gemma-3-1b", "gemma-3-27b"),
    "gpt-oss": ("gpt-oss-20b",),
    "DeepSeek": ("deepseek-v3", "deepseek-v3.2"),
    "GLM": ("glm-4.5-air",),
    "MiniMax": ("minimax-m2",),
    "Phi": ("phi-4-mini",),
    "SmolLM": ("smollm3-3b",),
    "Kimi": ("kimi-linear-48b-a3b",),
    "Jamba": ("jamba-v0.1",),
}
# every exported page's: the dense presets of full attention and no family's extras, but the families' (the others: the
# page written for one, `python -m app export --preset`)
PAGE_PRESETS: dict[str, Config] = {name: cfg for name, cfg in PRESETS.items()
                                   if cfg.plain and name not in FAMILY_PRESETS}


TITLES: dict[str, str] = {
    "gpt2-small": "GPT-2 small", "gpt2-medium": "GPT-2 medium", "gpt2-large": "GPT-2 large", "gpt2-xl": "GPT-2 XL",
    "gpt3-125m": "GPT-3 125M", "gpt3-350m": "GPT-3 350M", "gpt3-760m": "GPT-3 760M", "gpt3-1.3b": "GPT-3 1.3B",
    "gpt3-2.7b": "GPT-3 2.7B", "gpt3-6.7b": "GPT-3 6.7B", "gpt3-13b": "GPT-3 13B", "gpt3-175b": "GPT-3 175B",
    "llama3.2-1b": "Llama 3.2 1B", "llama3-8b": "Llama 3 8B", "llama3-70b": "Llama 3 70B",
    "mistral-7b-v0.1": "Mistral 7B v0.1", "mistral-7b": "Mistral 7B (v0.2)", "mistral-nemo-12b": "Mistral NeMo 12B",
    "qwen2.5-0.5b": "Qwen2.5 0.5B", "qwen2.5-7b": "Qwen2.5 7B", "qwen3-0.6b": "Qwen3 0.6B",
    "qwen3-4b-instruct-2507": "Qwen3 4B Instruct 2507", "mixtral-8x7b": "Mixtral 8x7B", "qwen3-30b-a3b": "Qwen3 30B-A3B",
    "gemma-3-1b": "Gemma 3 1B", "gemma-3-27b": "Gemma 3 27B (text)", "gpt-oss-20b": "gpt-oss-20b",
    "deepseek-v3": "DeepSeek-V3 (no MTP module)",  # its published 671B: without the multi-token-prediction module
    "deepseek-v3.2": "DeepSeek-V3.2 (no MTP module)",
    "glm-4.5-air": "GLM-4.5-Air (no MTP layer)", "minimax-m2": "MiniMax-M2 (no MTP modules)", "phi-4-mini": "Phi-4-mini",
    "smollm3-3b": "SmolLM3 3B", "llama4-scout": "Llama 4 Scout (text)", "qwen3-next-80b-a3b": "Qwen3-Next 80B-A3B",
    "kimi-linear-48b-a3b": "Kimi Linear 48B-A3B", "jamba-v0.1": "Jamba v0.1",
}


def family_of(name: str) -> str:
    """The family of a preset: family_of("llama3-8b") == "Llama 3"."""
    return next(f for f, names in FAMILIES.items() if name in names)


def menu_label(name: str) -> str:
    """A preset as a menu shows it: "Llama 3 8B · L 32, d 4,096"; "Mixtral 8x7B · L 32, d 4,096, top-2 of 8 experts";
    "Gemma 3 1B · L 26, d 1,152, W 512 on 22"."""
    cfg = PRESETS[name]
    return f"{TITLES[name]} · L {cfg.L}, d {cfg.d:,}" + "".join(part.menu_words(cfg) for part in MENU_PARTS)


def grouped_menu(moe: bool = False) -> dict[str, dict[str, str]]:
    """Family -> {menu label -> preset name} of every preset (`moe`: the pages' menu, live and exported) or of the dense
    ones of full attention (`PAGE_PRESETS`: what every exported page carries), families and presets in menu order; a
    family with none of them is left out."""
    listed = PRESETS if moe else PAGE_PRESETS
    menu = {family: {menu_label(n): n for n in names if n in listed} for family, names in FAMILIES.items()}
    return {family: labels for family, labels in menu.items() if labels}


# --- the recipe choice: GPT-2 (2019), the modern recipe (Llama-3 style), or custom ---------------------------------
RECIPE_LABELS = {"gpt2": "GPT-2 (2019)", "modern": "modern (Llama-3 style)", "custom": "custom"}
KV_GROUP = 4  # the modern recipe's h / h_kv: 4 query heads per K/V head, as Llama 3 8B (32 / 8)


def recipe_fields(recipe: str, h: int) -> dict[str, object]:
    """The recipe fields that choosing `recipe` sets at h heads: GPT-2's defaults (and its multi-head attention: no
    latent attention), or the modern recipe (RMSNorm, RoPE, SwiGLU at its default d_ff, no biases, h_kv the divisor
    of h nearest h / 4, no QK-norm, fused attention; latent attention, where the model has it, keeps its own rules:
    `model.rules`)."""
    if recipe == "gpt2":
        return {**defaults("recipe"), **defaults("latent")}
    if recipe == "modern":
        return {**defaults("recipe"), **MODERN, "kv_heads": snap_heads(h, max(1, h // KV_GROUP))}
    raise ValueError(f"recipe must be gpt2 or modern to set the switches, got {recipe!r}")


SWITCH_LABELS: dict[str, dict[str, str]] = {  # each choice of a switch as the pages' menus name it
    "norm": {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"},
    "positions": {"learned": "learned table W_pe", "rope": "RoPE"},
    "mlp": {"gelu": "GELU", "swiglu": "SwiGLU", "geglu": "GeGLU", "relu2": "ReLU²", "xielu": "xIELU"},  # GeGLU, ReLU², xIELU: their families'
    "bias": {"all": "biases everywhere", "none": "no biases", "qkv": "q, k, v biases only",
             "attn": "q, k, v and W_o biases", "mlp": "MLP biases only"},
    "attention": {"eager": "eager (written out)", "fused": "fused (SDPA, FlashAttention)"},
}
QK_NORM_LABEL = "QK-norm"
# what names a recipe; d_ff and h_kv are sizes, and attention is how a recipe runs (either way it is the same model)
SWITCHES = (*(f.name for f in WRITTEN if f.group == "recipe" and f.kind in ("choice", "flag") and f.name != "attention"),
            "head_dim")  # the recipe's switches and flags (a part's included), and d_head set apart


def recipe_of(cfg: Config) -> str:
    """"gpt2" when every recipe field is GPT-2's; "modern" when the switches are the modern recipe's, at any d_ff
    and h_kv (Llama 3 8B: d_ff = 14,336, h_kv = 8); else "custom"."""
    if cfg.gpt2_recipe:
        return "gpt2"
    modern = recipe_fields("modern", cfg.h)
    return "modern" if all(getattr(cfg, f) == modern[f] for f in SWITCHES) else "custom"


CUSTOM = "custom"  # model.rules.CUSTOM: the fields match no preset
CUSTOM_LABEL = "custom (your own values)"
OWN = "Your own"  # the menu group of CUSTOM_LABEL


def preset_labels(moe: bool = False) -> dict[str, str]:
    """Menu label -> preset name for every preset of the menu (`grouped_menu`), family by family, then CUSTOM_LABEL
    -> "custom"."""
    return {**{label: name for family in grouped_menu(moe).values() for label, name in family.items()},
            CUSTOM_LABEL: CUSTOM}


def menu_groups(moe: bool = False) -> dict[str, list[str]]:
    """Family -> the menu labels of its presets (`grouped_menu`), then OWN -> [CUSTOM_LABEL]: a grouped select's
    options."""
    return {**{family: list(labels) for family, labels in grouped_menu(moe).items()}, OWN: [CUSTOM_LABEL]}


def sandwich_only(cfg: Config) -> bool:
    """Of Gemma's extras, the model has its sandwich norms only (GLM-4, HyperCLOVA X): they are named as what they are,
    not as Gemma's."""
    return cfg.post_norms and cfg.mlp != "geglu" and not any(getattr(cfg, f.name) != f.default for f in WRITTEN
                                                             if f.family == "gemma" and f.name != "post_norms")


def borrowed(cfg: Config) -> bool:
    """Gemma's extras on a model that is not Gemma (neither its GeGLU nor its token rows × √d): GLM-4's and HyperCLOVA
    X's sandwich norms, nanochat's soft-capped logits. They are named as what they are, not as Gemma's."""
    return cfg.mlp != "geglu" and not cfg.embed_scale and any(getattr(cfg, f.name) != f.default for f in WRITTEN
                                                              if f.family == "gemma")


# The fields `extras_line` reads: the MLP (GeGLU, a family's), each family's extras, and each part's field that has no
# control of its own; a page written for one config.json shows its line while these stay the file's (app.export)
EXTRAS_FIELDS = ("mlp", *(f.name for f in linked(WRITTEN) if f.says and (f.family or f.group in ("recipe", "window")
                                                                          and not f.control)))


def extras_shown(cfg: Config, preset: str | None, lines: dict[str, str], own: dict) -> str:
    """The extras line the page written for one config.json shows at `cfg` (compiled into it: app/export): `preset`'s
    line among `lines` (each preset's `extras_line`) where `cfg` has a preset's extras, else the file's own line
    (`own`: {"fields": its values of `EXTRAS_FIELDS`, "line": its `extras_line`}) while `cfg` keeps those values,
    else none."""
    if preset is not None and preset in lines:
        return lines[preset]
    if all(getattr(cfg, name) == value for name, value in own["fields"].items()):
        return own["line"]
    return ""


def extras_line(cfg: Config) -> str | None:
    """Gemma's and gpt-oss's extras in words with their values, or None: "Gemma's extras: GeGLU, sandwich norms,
    embeddings × √d, scores soft-capped at 50, logits at 30"; "gpt-oss's extras: attention sinks, the experts' biases,
    a SwiGLU clamped at 7 (α = 1.702)"; then any part's field that has no control of its own and is set, in its words
    ("a parallel block: …"). The pages show them as what they are; a link carries them (app.query)."""
    parts = []
    for family in cfg.extras_of:  # each family's extras in the order a link lists them (`model.fields.linked`)
        said = [SWITCH_LABELS["mlp"][cfg.mlp]] if mlp.FAMILY_OF.get(cfg.mlp) == family else []
        said += [f.says.format(cfg=cfg) for f in linked(WRITTEN)
                 if f.family == family and f.says and getattr(cfg, f.name) != f.default]
        own = family == "gemma" and borrowed(cfg)  # GLM-4's, HyperCLOVA X's, nanochat's: named as what they are
        parts.append(", ".join(said) if own else f"{FIELD_FAMILIES[family]}'s extras: " + ", ".join(said))
    parts += [f.says.format(cfg=cfg) for f in linked(WRITTEN)  # a part's field with no control of its own, where set
              if f.group in ("recipe", "window") and not f.control and f.says and getattr(cfg, f.name) != f.default]
    return "; ".join(parts) or None


# --- the MLP choice: dense, or a mixture of experts ------------------------------------------------------------
MLP_KINDS = {"dense": "dense MLP", "moe": "mixture of experts"}  # the live page's switch "moe", as its menu names it
MOE_START = {"experts": 8, "top_k": 2}  # a dense model made MoE: Mixtral's top-2 of 8, each expert the dense MLP


def moe_fields(cfg: Config, moe: bool) -> dict[str, object]:
    """The fields that choosing a dense MLP or a mixture of experts sets at `cfg` (nothing where it already is one):
    MoE gets E = 8 experts, k = 2 per token, each of the dense MLP's width (d_expert = d_ff: Mistral 7B made MoE is
    Mixtral 8x7B); dense drops every expert (and gpt-oss's biases on them) and, where no block was dense, keeps
    d_ff = d_expert (Mixtral 8x7B made dense is Mistral 7B)."""
    if moe == cfg.moe:
        return {}
    if moe:
        return {**defaults("moe"), **MOE_START, "expert_dim": cfg.d_ff}
    dense = "dense" in cfg.mlp_kinds
    oss = {"expert_bias": False} if cfg.expert_bias else {}  # gpt-oss's biases go with its experts
    return {**defaults("moe"), **oss, **({} if dense else {"ff_dim": cfg.d_expert})}
