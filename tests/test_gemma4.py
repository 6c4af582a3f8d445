"""Gemma 4 (gemma4_text, and the gemma4 wrapper's text_config): read where it is Gemma 3's block with unscaled scores
(no per-layer input embeddings, every block's head width head_dim's, no KV sharing, no MoE block), and compared with
transformers' own module: parameters on the meta device, the bytes of its real cache after a prefill of B × T tokens,
and forward FLOPs equal to FlopCounterMode on its eager CPU forward. What is not built yet is refused in one line
naming the part (`model.hf._gemma4`), the class defaults included (their per-layer input embeddings of 256 and their
full blocks' head_dim 512).
"""
from __future__ import annotations

import json
import random

import pytest
import torch
from transformers import AutoModelForImageTextToText, CONFIG_MAPPING, Gemma4TextConfig

from model import budget
from model.config import HFConfigError, from_hf, read_hf
from model.memory import kv_cache_lines
from model.tensor_notation import notation
from test_window import cache_bytes, measured, reference


def random_doc(rng: random.Random) -> dict:
    """A small random gemma4_text file of what is built: heads, widths, window, layer types, biases, tie, soft-cap."""
    h_kv = rng.choice([1, 2])
    h, L, d_head = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 7), 2 * rng.randrange(1, 5)
    doc = {"model_type": "gemma4_text", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(4, 40),
           "hidden_size": h * 2 * rng.randrange(1, 5), "head_dim": d_head, "global_head_dim": d_head,
           "max_position_embeddings": 64, "tie_word_embeddings": rng.random() < 0.5,
           "sliding_window": rng.randrange(2, 10), "hidden_size_per_layer_input": 0,
           "attention_bias": rng.random() < 0.3, "use_double_wide_mlp": rng.random() < 0.3}
    if rng.random() < 0.5:
        doc["final_logit_softcapping"] = rng.choice([15.0, 30.0])
    if rng.random() < 0.5:
        doc["layer_types"] = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(L)]
    return doc


SEEDS = range(10)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_files_match_transformers_parameters_cache_and_flops(seed):
    rng = random.Random(f"gemma4-{seed}")
    doc = random_doc(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 13)
    cfg = from_hf(doc, B=B, T=T)
    assert measured(cfg) == reference(doc, B, T), doc


def test_the_last_block_is_full_attention_as_the_class_forces_it():
    doc = {**random_doc(random.Random("last")), "num_hidden_layers": 3, "sliding_window": 4,
           "layer_types": ["sliding_attention"] * 3}
    reading = read_hf(doc, B=2, T=9)
    assert reading.config.full_layers == (2,)
    assert any("last block read as full_attention" in note for note in reading.notes)
    assert measured(reading.config) == reference(doc, 2, 9)


def test_the_file_transformers_writes_reads_its_per_layer_config():
    """A file written by transformers 5 (`to_json_string`) holds per_layer_config, not global_head_dim: read as its
    class reads it (here every block's head_dim is head_dim's, so it is built)."""
    config = Gemma4TextConfig(vocab_size=40, hidden_size=16, intermediate_size=24, num_hidden_layers=6,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=8, global_head_dim=8,
                              hidden_size_per_layer_input=0, sliding_window=4)
    doc = {**json.loads(config.to_json_string()), "model_type": "gemma4_text"}
    assert measured(from_hf(doc, B=2, T=7)) == reference(doc, 2, 7)


@pytest.mark.parametrize("change, message", [
    ({}, "hidden_size_per_layer_input=256: Gemma 4's per-layer input embeddings"),
    ({"hidden_size_per_layer_input": 0}, "block 5's head_dim = 512 .* Gemma 4's full-attention blocks of their own "
                                         "head width"),
    ({"hidden_size_per_layer_input": 0, "per_layer_config": {"05": {"num_key_value_heads": 2}}},
     "block 5's head_dim = 256 and num_key_value_heads = 2"),
    ({"hidden_size_per_layer_input": 0, "global_head_dim": 256, "attention_k_eq_v": True},
     "attention_k_eq_v=true: Gemma 4's keys as values"),
    ({"hidden_size_per_layer_input": 0, "global_head_dim": 256, "num_kv_shared_layers": 10},
     "num_kv_shared_layers=10: Gemma 4's KV sharing"),
    ({"hidden_size_per_layer_input": 0, "global_head_dim": 256, "enable_moe_block": True},
     "enable_moe_block=true: Gemma 4's mixture of experts beside each block's MLP"),
    ({"hidden_size_per_layer_input": 0, "global_head_dim": 256, "use_bidirectional_attention": "all"},
     "use_bidirectional_attention='all': Gemma 4's bidirectional attention"),
    ({"per_layer_config": {"x": 1}}, "per_layer_config lists 'x'"),
    ({"per_layer_config": {"05": {"intermediate_size": 8}}}, "per_layer_config.05. sets intermediate_size"),
    ({"use_bidirectional_attention": True}, "use_bidirectional_attention=true: .* must be \"vision\", \"all\" or null"),
])
def test_what_is_not_built_is_refused_in_one_line(change, message):
    doc = {**json.loads(Gemma4TextConfig().to_json_string()), "model_type": "gemma4_text", **change}
    doc = {k: v for k, v in doc.items() if not ("global_head_dim" in change and k == "per_layer_config")}
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)


def test_the_class_defaults_are_refused_naming_the_per_layer_input_embeddings():
    """Gemma4TextConfig's defaults (gemma-4-E2B's docstring checkpoint) have per-layer input embeddings, which are not
    built here: refused, not counted wrong."""
    doc = {**json.loads(Gemma4TextConfig().to_json_string()), "model_type": "gemma4_text"}
    with pytest.raises(HFConfigError, match="per-layer input embeddings"):
        from_hf(doc)


def test_the_shapes_table_names_every_tensor_in_the_lessons_notation():
    cfg = from_hf(random_doc(random.Random("shapes")) | {"num_hidden_layers": 2, "layer_types": None}, B=2, T=5)
    rows = notation(cfg)
    assert rows and all(shape.startswith("(") for shape, _ in rows.values())
    assert any("scores" in name for name in rows) and cfg.query_scale == 1 and cfg.qk_norm and cfg.post_norms


@pytest.mark.parametrize("tie", [None, True, False])
def test_the_gemma4_wrapper_reads_its_text_model(tie):
    """A gemma4 file: its text_config read as gemma4_text, the head tied as Gemma4Config ties it; N and the cache
    equal transformers' multimodal module's, run on the CPU (its meta prefill cannot run)."""
    text = {"vocab_size": 64, "hidden_size": 32, "intermediate_size": 24, "num_hidden_layers": 3,
            "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "global_head_dim": 16,
            "hidden_size_per_layer_input": 0, "sliding_window": 3, "max_position_embeddings": 64}
    doc = {"model_type": "gemma4", "text_config": text, **({"tie_word_embeddings": tie} if tie is not None else {})}
    config = CONFIG_MAPPING["gemma4"](**{k: v for k, v in doc.items() if k != "model_type"})
    module = AutoModelForImageTextToText.from_config(config, attn_implementation="eager")
    language = module.model.language_model
    head = 0 if module.lm_head.weight is language.embed_tokens.weight else module.lm_head.weight.numel()
    with torch.no_grad():
        out = module(input_ids=torch.zeros(2, 6, dtype=torch.long), use_cache=True)
    cfg = from_hf(doc, B=2, T=6)
    assert budget(cfg).params_exact == sum(p.numel() for p in language.parameters()) + head
    assert kv_cache_lines(cfg, "fp32")[0].value == cache_bytes(out.past_key_values)
    assert any("left out: the vision and audio towers" in note for note in read_hf(doc).notes)


PAGE_DOC = {"model_type": "gemma4_text", "vocab_size": 64, "hidden_size": 32, "intermediate_size": 24,
            "num_hidden_layers": 6, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
            "global_head_dim": 16, "hidden_size_per_layer_input": 0, "sliding_window": 4,
            "max_position_embeddings": 64, "final_logit_softcapping": 30.0}


@pytest.mark.parametrize("table", ["shapes", "budget", "kv"])
def test_every_table_prints_for_a_gemma4_file(table, tmp_path, capsys):
    from pagetools import run_cli

    path = tmp_path / "config.json"
    path.write_text(json.dumps(PAGE_DOC))
    code, out, err = run_cli(["--hf-config", str(path), "--table", table, "--T", "9"], capsys)
    assert code == 0 and "Traceback" not in err and out.strip()


def test_the_live_page_reads_a_gemma4_file():
    from app.cards.recipe.view import read_config_json
    from model.config import Config

    cfg, notice = read_config_json(json.dumps(PAGE_DOC), Config(B=2, T=8, d=24, h=4, L=1, V=40))
    assert cfg.gemma and cfg.window == 4 and cfg.full_layers == (5,) and notice.startswith("read gemma4_text")


def test_the_exported_page_is_written_for_a_gemma4_file(tmp_path):
    from test_export import export

    path, out = tmp_path / "config.json", tmp_path / "gemma4.html"
    path.write_text(json.dumps(PAGE_DOC))
    done = export(out, "--hf-config", str(path), "--T", "9")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert out.stat().st_size > 0


def test_the_exported_page_refuses_the_class_defaults_in_one_line(tmp_path):
    from test_export import export

    path, out = tmp_path / "config.json", tmp_path / "x.html"
    path.write_text(Gemma4TextConfig().to_json_string())
    done = export(out, "--hf-config", str(path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "per-layer input embeddings" in done.stderr
    assert not out.exists()
