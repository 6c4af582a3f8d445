"""Every causal-LM model type transformers builds, read as a practitioner would (issue 40's measurement): its config
class's defaults (each class describes a flagship) written out as config.json, read by the explorer
(`model.config.read_hf`), and N compared with transformers' module of the same class on the meta device (a multimodal wrapper's text model
and head, what the explorer reads of it).

Prints the types read exactly, any N that differs (a wrong N is a bug), the types refused for a part not built yet
(naming it), and each other refusal's one line. transformers is a
test dependency (`make install-test`); nothing is fetched. Run: python benchmarks/families.py  (about a minute)
"""
from __future__ import annotations

import json
import logging
import warnings

import torch
from transformers import CONFIG_MAPPING, AutoModelForCausalLM
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

from model import hf
from model.budgeting import budget
from model.config import read_hf


def measure(model_type: str) -> tuple[str, str]:
    """("exact" | "differs" | "needs a part" | "refused" | "unbuilt", what): one type's class defaults, read and
    counted ("needs a part": refused naming a part not built yet, `model.hf.PartNotBuilt`)."""
    try:
        cls = CONFIG_MAPPING[model_type]
        doc = {**json.loads(cls().to_json_string()), "model_type": model_type}
    except Exception as e:  # noqa: BLE001 - a class that cannot build its own defaults
        return "unbuilt", f"the config class: {str(e)[:80]}"
    try:
        cfg = read_hf(doc).config
    except hf.PartNotBuilt as e:
        return "needs a part", str(e)
    except ValueError as e:
        return "refused", str(e)
    try:
        with torch.device("meta"):
            module = AutoModelForCausalLM.from_config(cls())
    except Exception as e:  # noqa: BLE001 - transformers cannot build its own defaults (MinistralConfig's head_dim)
        return "unbuilt", f"transformers' module of the defaults: {str(e)[:80]}"
    theirs = _text_parameters(module) if model_type in hf.WRAPPERS else _parameters(module)
    ours = budget(cfg).params_exact
    return ("exact", f"{ours:,}") if ours == theirs else ("differs", f"ours {ours:,}, transformers' {theirs:,}")


def _parameters(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _text_parameters(module: torch.nn.Module) -> int:
    """A multimodal wrapper's text model and head (the head where it is not tied): what the explorer reads of it."""
    text = getattr(module.model, "language_model", module.model)  # Llama 4's causal LM: its text model itself
    head = 0 if module.lm_head.weight is text.embed_tokens.weight else module.lm_head.weight.numel()
    return _parameters(text) + head


def main() -> None:
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    results = {t: measure(t) for t in sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)}
    for kind in ("exact", "differs", "needs a part", "refused", "unbuilt"):
        names = [t for t, (k, _) in results.items() if k == kind]
        print(f"{kind}: {len(names)}")
        for t in names:
            print(f"  {t:<28}{results[t][1]}")


if __name__ == "__main__":
    main()
