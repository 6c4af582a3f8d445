"""Families built from Llama's block under their own config classes (issue 40): InternLM3, EXAONE 3, IQuest-Coder,
Granite, Helium, ERNIE 4.5, Seed-OSS, CWM and Ministral, and OLMo 2 and 3 (post-norm wiring, QK-norm over all heads), each read from random small files and compared with transformers' own
module: parameters on the meta device, the bytes of its real cache after a prefill of B × T tokens, and forward FLOPs
equal to FlopCounterMode on its eager CPU forward. Their biases (each type's own flags), windows (CWM's three windowed
blocks to one full) and the files their classes refuse are drawn too; `tests/test_hf.py` leaves out each key in turn.
"""
from __future__ import annotations

import json
import random

import pytest
from transformers import CONFIG_MAPPING

from model import budget, hf
from model.config import HFConfigError, from_hf, read_hf
from test_window import _module, measured, reference

BIAS_FLAGS = {"internlm3": ("qkv_bias", "bias"), "exaone": ("attention_bias", "mlp_bias"),
              "iquestcoder": ("attention_bias", "mlp_bias"), "granite": ("attention_bias", "mlp_bias"),
              "helium": ("attention_bias", "mlp_bias"), "ernie4_5": ("use_bias",),
              "seed_oss": ("attention_bias", "attention_out_bias", "mlp_bias"), "cwm": ("mlp_bias",),
              "olmo2": ("attention_bias",), "olmo3": ("attention_bias",), "ministral": ()}
# the sets of their flags this module builds (InternLM3's class wants both the same; Helium's q, k, v biases with the
# MLP's and Seed-OSS's W_o alone or without q, k, v's are refused: test_files_their_classes_cannot_build_…)
BOTH = [(False, False), (True, False), (False, True), (True, True)]
BUILT = {**{t: BOTH for t in ("exaone", "iquestcoder", "granite")}, "internlm3": [(False, False), (True, True)],
         "helium": BOTH[:3], **dict.fromkeys(("ernie4_5", "cwm", "olmo2", "olmo3"), [(False,), (True,)]),
         "ministral": [()],
         "seed_oss": [(False, False, False), (True, False, False), (True, True, False), (False, False, True),
                      (True, True, True)]}
SPLIT_HEAD = ("exaone", "iquestcoder", "internlm3", "ernie4_5", "seed_oss", "cwm", "olmo2", "olmo3", "ministral")  # head_dim set apart from d / h


def random_doc(rng: random.Random, model_type: str) -> dict:
    """A small random file of `model_type`: heads, widths, biases, the tie and (CWM) windows drawn."""
    h_kv = rng.choice([1, 2])
    h, L = h_kv * rng.choice([1, 2, 3]), rng.randrange(1, 5)
    d_head = 2 * rng.randrange(1, 5)
    doc = {"model_type": model_type, "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
           "num_attention_heads": h, "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(4, 40),
           "hidden_size": h * d_head, "max_position_embeddings": 64, "tie_word_embeddings": rng.random() < 0.5,
           "pad_token_id": 0, "head_dim": d_head}
    if model_type in SPLIT_HEAD and rng.random() < 0.5:
        doc["head_dim"] = 2 * rng.randrange(1, 6)
    if model_type == "granite":  # its values only
        doc.update(embedding_multiplier=rng.uniform(0.5, 12), residual_multiplier=rng.uniform(0.1, 1),
                   attention_multiplier=rng.uniform(0.01, 1), logits_scaling=rng.uniform(1, 16))
    doc.update(rng.choice([dict(zip(BIAS_FLAGS[model_type], on)) for on in BUILT[model_type]]))
    if model_type in ("cwm", "olmo3", "ministral"):
        doc["sliding_window"] = rng.randrange(2, 10)
        if rng.random() < 0.5:
            kinds = ["sliding_attention" if rng.random() < 0.6 else "full_attention" for _ in range(L)]
            doc["layer_types"] = kinds
    return doc


SWEEP = [(t, i) for t in BIAS_FLAGS for i in range(4)]


@pytest.mark.parametrize("model_type, seed", SWEEP, ids=[f"{t}-{i}" for t, i in SWEEP])
def test_random_files_match_transformers_parameters_cache_and_flops(model_type, seed):
    rng = random.Random(f"families-{model_type}-{seed}")
    doc = random_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 13)
    try:
        expected = reference(doc, B, T)
    except Exception:  # noqa: BLE001 - transformers' class or module refuses the file: so does the reader
        with pytest.raises(HFConfigError):
            from_hf(doc, B=B, T=T)
        return
    cfg = from_hf(doc, B=B, T=T)
    assert measured(cfg) == expected


@pytest.mark.parametrize("model_type", [t for t in BIAS_FLAGS if t != "ministral"])  # its defaults cannot run
def test_class_defaults_are_read_exactly(model_type):
    """Each class's defaults (a flagship model) written out as config.json: the reader's N is its module's."""
    cls = CONFIG_MAPPING[model_type]
    doc = {**json.loads(cls().to_json_string()), "model_type": model_type}
    module = _module(doc, "meta")
    assert budget(from_hf(doc)).params_exact == sum(p.numel() for p in module.parameters())


def test_each_flag_sets_the_biases_its_module_builds():
    seed_oss = {"model_type": "seed_oss", "attention_bias": True, "attention_out_bias": True, "mlp_bias": False}
    assert from_hf(seed_oss).bias == "attn"
    assert from_hf({**seed_oss, "mlp_bias": True}).bias == "all"
    assert from_hf({"model_type": "helium", "attention_bias": True}).bias == "qkv"
    assert from_hf({"model_type": "ernie4_5", "use_bias": True}).bias == "all"
    assert from_hf({"model_type": "internlm3", "qkv_bias": True, "bias": True}).bias == "all"


@pytest.mark.parametrize("doc, message", [
    ({"model_type": "seed_oss", "attention_bias": False, "attention_out_bias": True},
     "attention_bias=false, attention_out_bias=true, mlp_bias=false put biases on W_o; this module puts them on"),
    ({"model_type": "seed_oss", "attention_bias": True, "mlp_bias": True},
     "put biases on q, k and v and the MLP's matrices"),
    ({"model_type": "helium", "attention_bias": True, "mlp_bias": True}, "put biases on q, k and v and the MLP's"),
    ({"model_type": "internlm3", "qkv_bias": True, "bias": False}, "InternLM3Config requires both the same"),
    ({"model_type": "helium", "head_dim": 64}, "num_attention_heads × head_dim = 20 × 64 is not hidden_size = 2,560"),
    ({"model_type": "iquestcoder", "use_sliding_window": True}, "IQuestCoderConfig refuses it"),
    ({"model_type": "exaone", "activation_function": "gelu"}, "activation_function=.gelu.: exaone's MLP here runs"),
    ({"model_type": "granite", "logits_scaling": "x"}, "logits_scaling=.x.: logits_scaling .the logits' divisor."),
    ({"model_type": "cwm", "sliding_window": None}, "sliding_window=null: sliding_window .the attention window in "
                                                     "tokens. must be a whole number of at least 1$"),
    ({"model_type": "cwm", "sliding_window": 1}, "sliding_window=1 lets each query see only itself"),
    ({"model_type": "ministral"}, "head_dim is not in the file, and ministral's config class leaves it null"),
])
def test_files_their_classes_cannot_build_are_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)


def test_ministral_8b_is_its_published_count():
    """Ministral-8B-Instruct-2410's shape keys (36 blocks of d 4,096, 32 heads of 128, 8 K/V heads, d_ff 12,288, V
    131,072): 8,019,808,256 parameters, transformers' module; layer_types here mixes windowed and full blocks (a
    window changes no count), read as its mask and cache read them."""
    doc = {"model_type": "ministral", "vocab_size": 131_072, "hidden_size": 4_096, "intermediate_size": 12_288,
           "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
           "max_position_embeddings": 32_768, "sliding_window": 32_768, "tie_word_embeddings": False,
           "layer_types": ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(36)]}
    cfg = from_hf(doc)
    assert cfg.full_layers == tuple(range(0, 36, 4)) and cfg.window == 32_768
    module = _module(doc, "meta")
    assert budget(cfg).params_exact == sum(p.numel() for p in module.parameters()) == 8_019_808_256


def test_the_notes_name_what_changes_values_only():
    notes = read_hf({"model_type": "granite", "embedding_multiplier": 12.0}).notes
    assert any("times embedding_multiplier" in n and "divided by logits_scaling" in n for n in notes)
    cwm = read_hf({"model_type": "cwm", "num_hidden_layers": 8})
    assert cwm.config.full_layers == (0, 4) and cwm.config.window == 8_192
    assert any(n.startswith("a sliding window W = 8,192 (sliding_window (not in the file: cwm's default)) on 6 of "
                            "the 8 blocks") for n in cwm.notes)


def test_a_type_that_needs_a_part_not_built_is_refused_naming_that_part():
    """Each type of `NOT_BUILT` is one transformers builds as a causal LM, none is read, and its class's defaults are
    refused in one line that names the part it needs."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    assert set(hf.NOT_BUILT) <= set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    assert not set(hf.NOT_BUILT) & set(hf.MODEL_TYPES)
    for model_type, part in hf.NOT_BUILT.items():
        with pytest.raises(hf.PartNotBuilt) as e:
            from_hf({"model_type": model_type, "num_hidden_layers": 4})
        assert str(e.value) == (f"config.json: model_type='{model_type}' is not read here yet: it needs {part}, which "
                                f"this explorer does not build yet; give a model of one of the {len(hf.MODEL_TYPES)} "
                                f"types it reads (gpt2, llama, mistral, qwen3, …)")
    assert {"kimi_linear", "nemotron_h", "jamba", "falcon_h1"} <= set(hf.MODEL_TYPES)  # Kimi delta attention,
    # Nemotron-H's layers, Jamba's Mamba, Falcon-H1's parallel hybrid block: built
    assert "Mamba" in hf.NOT_BUILT["falcon_mamba"]  # the first Mamba alone, no attention block: not modelled


def starcoder2_doc(rng: random.Random) -> dict:
    """StarCoder2: LayerNorms and biases everywhere, a GELU MLP, RoPE, GQA, a window on every block or none."""
    h_kv = rng.choice([1, 2])
    h, d_head = h_kv * rng.choice([1, 2, 3]), 2 * rng.randrange(1, 5)
    return {"model_type": "starcoder2", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
            "num_attention_heads": h, "num_key_value_heads": h_kv, "hidden_size": h * d_head,
            "intermediate_size": rng.randrange(4, 40), "max_position_embeddings": 64,
            "tie_word_embeddings": rng.random() < 0.5, "sliding_window": rng.choice([None, rng.randrange(2, 9)]),
            "hidden_act": rng.choice(["gelu_pytorch_tanh", "gelu"])}


def gpt_bigcode_doc(rng: random.Random) -> dict:
    """GPT-BigCode (SantaCoder, StarCoder 1): GPT-2's block with one K/V head, or all h (multi_query false)."""
    h = rng.choice([1, 2, 3, 4])
    return {"model_type": "gpt_bigcode", "vocab_size": rng.randrange(8, 60), "n_positions": rng.randrange(12, 64),
            "n_embd": h * rng.randrange(1, 8), "n_layer": rng.randrange(1, 4), "n_head": h,
            "n_inner": rng.choice([None, rng.randrange(4, 40)]), "multi_query": rng.random() < 0.7,
            "tie_word_embeddings": rng.random() < 0.5}


def olmoe_doc(rng: random.Random) -> dict:
    """OLMoE: every block a mixture of experts, QK-norm over all heads' width."""
    h_kv = rng.choice([1, 2])
    h, d_head, E = h_kv * rng.choice([1, 2, 3]), 2 * rng.randrange(1, 5), rng.randrange(1, 6)
    return {"model_type": "olmoe", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
            "num_attention_heads": h, "num_key_value_heads": h_kv, "hidden_size": h * d_head,
            "intermediate_size": rng.randrange(2, 20), "num_experts": E, "num_experts_per_tok": rng.randrange(1, E + 1),
            "max_position_embeddings": 64, "tie_word_embeddings": rng.random() < 0.3, "pad_token_id": 0,
            "attention_bias": rng.random() < 0.5, "norm_topk_prob": rng.random() < 0.5}


MORE = [(kind, i) for kind in ("starcoder2", "gpt_bigcode", "olmoe") for i in range(4)]


@pytest.mark.parametrize("kind, seed", MORE, ids=[f"{k}-{i}" for k, i in MORE])
def test_more_random_files_match_transformers_parameters_cache_and_flops(kind, seed):
    from test_moe import _module as moe_module  # eager experts on the CPU, batched on the meta device

    rng = random.Random(f"{kind}-{seed}")
    doc = {"starcoder2": starcoder2_doc, "gpt_bigcode": gpt_bigcode_doc, "olmoe": olmoe_doc}[kind](rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T, build=moe_module if kind == "olmoe" else _module)


@pytest.mark.parametrize("doc, message", [
    ({"model_type": "starcoder2", "use_bias": False}, "use_bias=false leaves StarCoder2's LayerNorms their biases"),
    ({"model_type": "olmoe", "head_dim": 64}, "head_dim=64: OLMoE's QK-norm is hidden_size = 2,048 wide"),
    ({"model_type": "gpt_bigcode", "activation_function": "relu"}, "activation_function='relu': gpt_bigcode's MLP"),
])
def test_what_these_modules_cannot_be_is_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message):
        from_hf(doc)


def sarvam_doc(rng: random.Random, model_type: str) -> dict:
    """Sarvam's two types, as DeepSeek-V3's and GLM-4.5's random files under their own names, some keys under the
    names their classes' attribute_map also reads (num_experts, num_shared_experts)."""
    from test_mla import random_doc as deepseek_doc
    from test_rotary import glm4_moe_doc

    doc = {**(deepseek_doc(rng) if model_type == "sarvam_mla" else glm4_moe_doc(rng)), "model_type": model_type}
    if model_type == "sarvam_moe" and rng.random() < 0.5:
        del doc["partial_rotary_factor"]  # its class's 1.0, not GLM-4.5's 0.5
    if rng.random() < 0.5:
        doc["num_experts"], doc["num_shared_experts"] = doc.pop("n_routed_experts"), doc.pop("n_shared_experts")
    return doc


SARVAM = [(t, i) for t in ("sarvam_mla", "sarvam_moe") for i in range(4)]


@pytest.mark.parametrize("model_type, seed", SARVAM, ids=[f"{t}-{i}" for t, i in SARVAM])
def test_sarvam_files_are_read_as_the_module_transformers_builds_for_them(model_type, seed):
    """SarvamMLAConfig and SarvamMoEConfig subclass DeepSeek-V3's and GLM-4.5's classes, and transformers builds those
    types' modules from them: N, the real cache's bytes and FlopCounterMode's FLOPs equal the explorer's."""
    from test_mla import _module as mla_module
    from test_moe import _module as moe_module

    rng = random.Random(f"{model_type}-{seed}")
    doc = sarvam_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 10)
    build = mla_module if model_type == "sarvam_mla" else moe_module
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T, build=build), doc


def test_sarvam_defaults_and_notes():
    """Sarvam-105B's and Sarvam-30B's class defaults (transformers' modules: 106,031,763,456 and 32,152,648,064), no
    multi-token-prediction layer (their own num_mtp_layers = 0), and the note that names the module read."""
    mla, moe = read_hf({"model_type": "sarvam_mla"}), read_hf({"model_type": "sarvam_moe"})
    assert budget(mla.config).params_exact == 106_031_763_456 and budget(moe.config).params_exact == 32_152_648_064
    assert moe.config.rotary_dim is None  # RoPE over all of each head, its class's partial_rotary_factor = 1.0
    assert not any("multi-token-prediction" in n for n in (*mla.notes, *moe.notes))
    assert "sarvam_mla: transformers builds deepseek_v3's module from it (SarvamMLAConfig subclasses " \
           "DeepseekV3Config)" in mla.notes[1]
    assert any("num_mtp_layers = 2" in n or "num_nextn_predict_layers = 2" in n
               for n in read_hf({"model_type": "sarvam_moe", "num_mtp_layers": 2}).notes)
    with pytest.raises(HFConfigError, match="n_routed_experts=9 and num_experts=8 set the same thing"):
        from_hf({"model_type": "sarvam_mla", "num_experts": 8, "n_routed_experts": 9})


# --- types whose module is another's parts in a new arrangement (issue 40, the second batch) -------------------------
def youtu_doc(rng: random.Random) -> dict:
    """Youtu-LLM: DeepSeek-V3's latent attention (with or without the queries' latent) in Llama's block, every MLP a
    dense SwiGLU of width intermediate_size."""
    from test_mla import random_doc as deepseek_doc

    moe = ("moe_intermediate_size", "n_routed_experts", "n_group", "topk_group", "num_experts_per_tok",
           "n_shared_experts", "first_k_dense_replace")
    doc = {k: v for k, v in deepseek_doc(rng).items() if k not in moe}
    return {**doc, "model_type": "youtu", "tie_word_embeddings": rng.random() < 0.5}


def vaultgemma_doc(rng: random.Random) -> dict:
    """VaultGemma: Gemma 2's random file (GeGLU, √d, query_pre_attn_scalar, soft-caps, every other block windowed or
    as layer_types lists them) without the sandwich norms."""
    from test_gemma import random_doc as gemma_doc

    doc = {**gemma_doc(rng, "gemma2"), "model_type": "vaultgemma", "sliding_window": rng.randrange(2, 10)}
    if rng.random() < 0.5:
        doc["layer_types"] = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(doc["num_hidden_layers"])]
    return doc


def granitemoe_doc(rng: random.Random) -> dict:
    """Granite MoE: Mixtral's random file (experts of width intermediate_size in every block) with Granite's scales,
    attention biases and (sometimes) head_dim apart from d / h."""
    from test_moe import random_doc as moe_doc

    doc = {**moe_doc(rng, "mixtral"), "model_type": "granitemoe", "attention_bias": rng.random() < 0.5}
    doc.update(embedding_multiplier=rng.uniform(0.5, 12), residual_multiplier=rng.uniform(0.1, 1),
               attention_multiplier=rng.uniform(0.01, 1), logits_scaling=rng.uniform(1, 16))
    if rng.random() < 0.5:
        doc["head_dim"] = 2 * rng.randrange(1, 6)
    return doc


def granitemoeshared_doc(rng: random.Random) -> dict:
    """Granite MoE Shared: Granite MoE's random file with a shared SwiGLU expert, or none (width 0)."""
    return {**granitemoe_doc(rng), "model_type": "granitemoeshared",
            "shared_intermediate_size": rng.choice([0, rng.randrange(1, 20)])}


def mellum_doc(rng: random.Random) -> dict:
    """Mellum: Qwen3-MoE's random file (QK-norm per head, experts of width moe_intermediate_size) with its per-block
    lists: a window on the blocks layer_types lists sliding, a dense MLP on those mlp_layer_types lists dense."""
    from test_moe import random_doc as moe_doc

    doc = {k: v for k, v in moe_doc(rng, "qwen3_moe").items() if k not in ("decoder_sparse_step", "mlp_only_layers")}
    L = doc["num_hidden_layers"]
    doc.update(model_type="mellum", head_dim=2 * rng.randrange(1, 5), sliding_window=rng.randrange(2, 10))
    if rng.random() < 0.7:
        doc["layer_types"] = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(L)]
    if rng.random() < 0.7:
        doc["mlp_layer_types"] = [rng.choice(["dense", "sparse"]) for _ in range(L)]
    if rng.random() < 0.5:
        doc["num_local_experts"] = doc.pop("num_experts")  # its class's attribute_map: the same field
    return doc


def flex_olmo_doc(rng: random.Random) -> dict:
    """FlexOlmo: OLMoE's random file (experts of width intermediate_size in every block) on OLMo 2's post-norm block,
    head_dim sometimes apart from d / h (its QK-norm is h · d_head wide)."""
    doc = {**olmoe_doc(rng), "model_type": "flex_olmo"}
    if rng.random() < 0.5:
        doc["head_dim"] = 2 * rng.randrange(1, 6)
    if rng.random() < 0.5:
        doc["num_local_experts"] = doc.pop("num_experts")  # its class's attribute_map
    return doc


def glm4_doc(rng: random.Random) -> dict:
    """GLM-4-0414: GLM's random file (RoPE on part of each head, biases on q, k and v or none) with its norms on
    attention's and the MLP's outputs."""
    from test_rotary import random_doc as rotary_doc

    doc = {**rotary_doc(rng), "model_type": "glm4", "attention_bias": rng.random() < 0.5}
    doc.pop("sliding_window")
    if rng.random() < 0.5:
        doc.pop("partial_rotary_factor", None)
        doc.pop("rope_parameters", None)
    return doc


def hyperclovax_doc(rng: random.Random) -> dict:
    """HyperCLOVA X: Granite's random file (its scales, its biases) with Peri-LN's norms on the outputs or without."""
    doc = {**random_doc(rng, "granite"), "model_type": "hyperclovax", "use_post_norm": rng.random() < 0.7}
    if rng.random() < 0.5:
        doc["attention_multiplier"] = None  # its class's d_head^-0.5
    if rng.random() < 0.5:
        del doc["head_dim"]  # its class's d / h
    return doc


def solar_open_doc(rng: random.Random) -> dict:
    """Solar Open: GLM-4.5's random file with experts in every block, no QK-norm and RoPE over all of each head (its
    class deletes first_k_dense_replace, use_qk_norm and intermediate_size: a file's are ignored, as its module
    ignores them); sometimes its experts under their other name (num_local_experts)."""
    from test_rotary import glm4_moe_doc

    doc = {k: v for k, v in glm4_moe_doc(rng).items() if k not in ("partial_rotary_factor", "use_qk_norm")}
    doc["model_type"] = "solar_open"
    if rng.random() < 0.5:  # keys its class deletes: ignored
        doc.update(intermediate_size=rng.randrange(2, 20), use_qk_norm=True)
    else:
        doc.pop("first_k_dense_replace")
        doc.pop("intermediate_size")
    if rng.random() < 0.5:
        doc["num_local_experts"] = doc.pop("n_routed_experts")
    return doc


def aria_text_doc(rng: random.Random) -> dict:
    """Aria's text model: Mixtral's random file under Aria's names (moe_num_experts, moe_topk) with its ungated shared
    SwiGLU of width intermediate_size · moe_num_shared_experts (or none), attention biases and head_dim drawn."""
    from test_moe import random_doc as moe_doc

    doc = moe_doc(rng, "mixtral")
    doc.update(model_type="aria_text", moe_num_experts=doc.pop("num_local_experts"),
               moe_topk=doc.pop("num_experts_per_tok"), moe_num_shared_experts=rng.randrange(0, 3),
               attention_bias=rng.random() < 0.5, pad_token_id=0)
    if rng.random() < 0.5:
        doc["head_dim"] = 2 * rng.randrange(1, 6)
    return doc


def ernie4_5_moe_doc(rng: random.Random) -> dict:
    """ERNIE 4.5 MoE: Mixtral's random file under ERNIE's names (moe_num_experts, moe_k) with experts of their own width,
    a shared SwiGLU of moe_intermediate_size · moe_num_shared_experts (or none), which blocks are MoE drawn from
    moe_layer_start_index, moe_layer_end_index (-1: the last block) and moe_layer_interval, head_dim drawn."""
    from test_moe import random_doc as moe_doc

    doc = moe_doc(rng, "mixtral")
    L = doc["num_hidden_layers"]
    doc.update(model_type="ernie4_5_moe", moe_num_experts=doc.pop("num_local_experts"),
               moe_k=doc.pop("num_experts_per_tok"), moe_intermediate_size=rng.randrange(2, 30),
               moe_num_shared_experts=rng.randrange(0, 3), pad_token_id=0)
    for key, value in (("moe_layer_start_index", rng.randrange(0, L)), ("moe_layer_interval", rng.randrange(1, L + 1)),
                       ("moe_layer_end_index", rng.choice([-1, rng.randrange(0, L)]))):
        if rng.random() < 0.7:
            doc[key] = value
    if rng.random() < 0.5:
        doc["head_dim"] = 2 * rng.randrange(1, 6)
    return doc


def phimoe_doc(rng: random.Random) -> dict:
    """PhiMoE: Mixtral's random file (at least 2 experts: its router always picks 2, whatever num_experts_per_tok says)
    with attention biases, a window on every block and head_dim drawn; its LayerNorms keep their biases."""
    from test_moe import random_doc as moe_doc

    doc = moe_doc(rng, "mixtral")
    doc.update(model_type="phimoe", num_local_experts=max(2, doc["num_local_experts"]),
               attention_bias=rng.random() < 0.5, router_jitter_noise=rng.uniform(0, 0.1))
    if rng.random() < 0.4:
        doc["sliding_window"] = rng.randrange(2, 10)
    if rng.random() < 0.5:
        doc["head_dim"] = 2 * rng.randrange(1, 6)
    return doc


def nemotron_doc(rng: random.Random) -> dict:
    """Nemotron (Nemotron-4, Minitron): a random file with its ReLU² MLP, biased LayerNorms (always), the matrices'
    biases, head_dim and partial_rotary_factor (its class's 0.5) drawn."""
    doc = {**random_doc(rng, "granite"), "model_type": "nemotron", "mlp_bias": rng.random() < 0.5,
           "attention_bias": rng.random() < 0.5}
    for key in ("embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling", "pad_token_id"):
        doc.pop(key, None)
    doc["head_dim"] = rng.choice([None, 4 * rng.randrange(1, 4)])
    if rng.random() < 0.5:
        doc["partial_rotary_factor"] = rng.choice([0.25, 0.5, 1.0])
    return doc


def stablelm_doc(rng: random.Random) -> dict:
    """StableLM 2: a random file with its biased LayerNorms (always), q, k and v biases, the parallel block and
    partial_rotary_factor (its class's 0.25) drawn; heads of 8 or 16 features, so that a quarter of each is even."""
    h_kv = rng.choice([1, 2])
    h = h_kv * rng.choice([1, 2, 3])
    doc = {"model_type": "stablelm", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
           "num_attention_heads": h, "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(4, 40),
           "hidden_size": h * rng.choice([8, 16]), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.5, "use_qkv_bias": rng.random() < 0.5,
           "use_parallel_residual": rng.random() < 0.5}
    if rng.random() < 0.5:
        doc["partial_rotary_factor"] = rng.choice([0.25, 0.5, 1.0])
    return doc


def gpt_neox_doc(rng: random.Random) -> dict:
    """GPT-NeoX (Pythia): a random file with its biased LayerNorms and MLP, attention's biases, the parallel block
    with a norm each or the lesson's sequential one, and rotary_pct (its class's 0.25) or a partial_rotary_factor."""
    h = rng.choice([1, 2, 3, 4])
    doc = {"model_type": "gpt_neox", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
           "num_attention_heads": h, "intermediate_size": rng.randrange(4, 40), "hidden_size": h * rng.choice([4, 8, 12]),
           "max_position_embeddings": 64, "tie_word_embeddings": rng.random() < 0.5,
           "use_parallel_residual": rng.random() < 0.6, "attention_bias": rng.random() < 0.5,
           "hidden_act": rng.choice(["gelu", "gelu_new", "gelu_fast"])}
    if rng.random() < 0.5:
        doc[rng.choice(["rotary_pct", "partial_rotary_factor"])] = rng.choice([0.25, 0.5, 1.0])
    return doc


def phi_doc(rng: random.Random) -> dict:
    """Phi-1, 1.5 and 2: a random file with its parallel block on one LayerNorm, biases everywhere and on the head, K/V
    heads, head_dim and partial_rotary_factor (its class's 0.5) drawn; heads of 4, 8 or 12 features, so that the part
    rotated is even."""
    h_kv = rng.choice([1, 2])
    h = h_kv * rng.choice([1, 2, 3])
    doc = {"model_type": "phi", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
           "num_attention_heads": h, "num_key_value_heads": rng.choice([h_kv, None]),
           "intermediate_size": rng.randrange(4, 40), "hidden_size": h * rng.choice([4, 8, 12]),
           "max_position_embeddings": 64, "tie_word_embeddings": rng.random() < 0.5,
           "hidden_act": rng.choice(["gelu_new", "gelu"])}
    if rng.random() < 0.5:
        doc["partial_rotary_factor"] = rng.choice([0.5, 1.0])
    return doc


def olmo_doc(rng: random.Random) -> dict:
    """OLMo 1: a random file with its LayerNorms of neither a gain nor a bias, attention's biases, K/V heads, head_dim
    apart from d / h, and clip_qkv (values) drawn."""
    h_kv = rng.choice([1, 2])
    h, d_head = h_kv * rng.choice([1, 2, 3]), 2 * rng.randrange(1, 5)
    doc = {"model_type": "olmo", "vocab_size": rng.randrange(8, 60), "num_hidden_layers": rng.randrange(1, 4),
           "num_attention_heads": h, "num_key_value_heads": h_kv, "hidden_size": h * d_head,
           "intermediate_size": rng.randrange(4, 40), "max_position_embeddings": 64,
           "tie_word_embeddings": rng.random() < 0.5, "attention_bias": rng.random() < 0.5,
           "clip_qkv": rng.choice([None, 8.0])}
    if rng.random() < 0.4:
        doc["head_dim"] = 2 * rng.randrange(1, 6)
    return doc


def dots1_doc(rng: random.Random) -> dict:
    """dots.llm1: GLM-4.5's random file (DeepSeek-V3's experts, groups, dense first blocks) on Qwen3's attention (QK-norm
    per head, biases on q, k, v and W_o or none), windows from max_window_layers on or as layer_types lists them."""
    from test_rotary import glm4_moe_doc

    doc = {k: v for k, v in glm4_moe_doc(rng).items() if k not in ("partial_rotary_factor", "use_qk_norm")}
    L = doc["num_hidden_layers"]
    doc.update(model_type="dots1", sliding_window=rng.choice([None, rng.randrange(2, 10)]))
    if rng.random() < 0.5:
        doc["max_window_layers"] = rng.randrange(0, L + 1)
    elif doc["sliding_window"] is not None:
        doc["layer_types"] = [rng.choice(["sliding_attention", "full_attention"]) for _ in range(L)]
    if rng.random() < 0.3:
        del doc["first_k_dense_replace"]  # its class's 0: every block a mixture of experts
    return doc


def hy_v3_doc(rng: random.Random) -> dict:
    """Hunyuan 3: Qwen3-MoE's random file (QK-norm per head) with a sigmoid router, a shared SwiGLU of width
    moe_intermediate_size · num_shared_experts (0: intermediate_size, as its module falls back) and its dense blocks as
    mlp_layer_types lists them (default: the first)."""
    from test_moe import random_doc as moe_doc

    doc = {k: v for k, v in moe_doc(rng, "qwen3_moe").items()
           if k not in ("decoder_sparse_step", "mlp_only_layers", "norm_topk_prob")}
    L = doc["num_hidden_layers"]
    doc.update(model_type="hy_v3", head_dim=2 * rng.randrange(1, 5), num_shared_experts=rng.randrange(0, 3),
               router_scaling_factor=rng.uniform(0.5, 3))
    if rng.random() < 0.6:
        doc["mlp_layer_types"] = [rng.choice(["dense", "sparse"]) for _ in range(L)]
    if rng.random() < 0.5:
        doc["num_local_experts"] = doc.pop("num_experts")
    return doc


def glm4_moe_lite_doc(rng: random.Random) -> dict:
    """GLM-4 MoE Lite: DeepSeek-V3's random file (latent attention with or without the queries' latent, groups, shared
    experts) with its sparse blocks as mlp_layer_types lists them (default: all but the first; first_k_dense_replace
    not read), d_R as head_dim at times (its other name, which overwrites qk_rope_head_dim), RoPE's pairs interleaved
    or not."""
    from test_mla import random_doc as deepseek_doc

    doc = {**deepseek_doc(rng), "model_type": "glm4_moe_lite", "rope_interleave": rng.random() < 0.5}
    L = doc["num_hidden_layers"]
    if rng.random() < 0.6:
        doc["mlp_layer_types"] = [rng.choice(["dense", "sparse"]) for _ in range(L)]
    if rng.random() < 0.4:
        doc["head_dim"] = doc.pop("qk_rope_head_dim") if rng.random() < 0.5 else 2 * rng.randrange(1, 4)
    if rng.random() < 0.3:
        doc["num_nextn_predict_layers"] = 1
    return doc


def minicpm3_doc(rng: random.Random) -> dict:
    """MiniCPM3: DeepSeek-V2's random latent attention (d a multiple of h, as its class requires) in Llama's block with
    every MLP a dense SwiGLU, its multipliers (values) and its class's nulls (v_head_dim: d // h, h_kv: h) at times."""
    from test_mla import random_doc as deepseek_doc

    moe = ("moe_intermediate_size", "n_routed_experts", "n_group", "topk_group", "num_experts_per_tok",
           "n_shared_experts", "first_k_dense_replace", "topk_method")
    doc = {k: v for k, v in deepseek_doc(rng, "deepseek_v2").items() if k not in moe}
    doc.update(model_type="minicpm3", tie_word_embeddings=rng.random() < 0.5, scale_emb=rng.uniform(0.5, 12),
               scale_depth=rng.choice([None, rng.uniform(0.5, 2)]), dim_model_base=rng.choice([None, rng.randrange(1, 9)]))
    if rng.random() < 0.3:
        doc["v_head_dim"] = None
    if rng.random() < 0.3:
        doc["num_key_value_heads"] = None
    return doc


def _plain(doc: dict, device: str):
    return _module(doc, device)


def _experts(doc: dict, device: str):
    from test_moe import _module as moe_module  # eager experts on the CPU, batched on the meta device

    return moe_module(doc, device)


def _latent(doc: dict, device: str):
    from test_mla import _module as mla_module

    return mla_module(doc, device)


# each type: its random file and how transformers' module of it is built for the reference
SECOND = {"youtu": (youtu_doc, _latent), "vaultgemma": (vaultgemma_doc, _plain),
          "granitemoe": (granitemoe_doc, _experts), "granitemoeshared": (granitemoeshared_doc, _experts),
          "mellum": (mellum_doc, _experts), "flex_olmo": (flex_olmo_doc, _experts),
          "glm4": (glm4_doc, _plain), "hyperclovax": (hyperclovax_doc, _plain),
          "solar_open": (solar_open_doc, _experts), "aria_text": (aria_text_doc, _experts),
          "dots1": (dots1_doc, _experts), "hy_v3": (hy_v3_doc, _experts),
          "glm4_moe_lite": (glm4_moe_lite_doc, _latent), "minicpm3": (minicpm3_doc, _plain),
          "ernie4_5_moe": (ernie4_5_moe_doc, _experts), "phimoe": (phimoe_doc, _experts),
          "nemotron": (nemotron_doc, _plain), "stablelm": (stablelm_doc, _plain), "gpt_neox": (gpt_neox_doc, _plain),
          "phi": (phi_doc, _plain), "olmo": (olmo_doc, _plain)}
SECOND_SWEEP = [(t, i) for t in SECOND for i in range(4)]


@pytest.mark.parametrize("model_type, seed", SECOND_SWEEP, ids=[f"{t}-{i}" for t, i in SECOND_SWEEP])
def test_second_batch_random_files_match_transformers_parameters_cache_and_flops(model_type, seed):
    make, build = SECOND[model_type]
    rng = random.Random(f"{model_type}-{seed}")
    doc = make(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 10)
    assert measured(from_hf(doc, B=B, T=T)) == reference(doc, B, T, build=build), doc


# each class's defaults (its flagship), N as transformers' module counts it on the meta device
SECOND_DEFAULTS = {"youtu": 1_961_560_064, "vaultgemma": 2_614_222_080, "granitemoe": 37_039_116_288,
                   "granitemoeshared": 37_039_116_288,  # no shared expert: its class's width 0
                   "mellum": 12_149_923_072, "flex_olmo": 33_270_665_216,
                   "glm4": 9_400_279_040, "hyperclovax": 6_738_677_760, "solar_open": 102_651_793_408,
                   "aria_text": 18_517_069_824, "hy_v3": 295_033_528_320, "glm4_moe_lite": 29_943_390_976,
                   "minicpm3": 4_073_875_968, "ernie4_5_moe": 21_825_437_888,
                   "phimoe": 41_872_793_600, "stablelm": 2_795_443_200, "gpt_neox": 20_554_567_680,
                   "phi": 1_418_270_720, "olmo": 6_888_095_744}


@pytest.mark.parametrize("model_type", SECOND_DEFAULTS)
def test_second_batch_class_defaults_are_read_exactly(model_type):
    doc = {**json.loads(CONFIG_MAPPING[model_type]().to_json_string()), "model_type": model_type}
    n = budget(from_hf(doc)).params_exact
    assert n == sum(p.numel() for p in _module(doc, "meta").parameters()) == SECOND_DEFAULTS[model_type]


def test_layernorms_with_biases_beside_matrices_without_them_are_read_and_named():
    """PhiMoE's, Nemotron's and StableLM's LayerNorms keep their biases whatever their matrices' (`norm_biased`); the
    parts those types need and this module does not build are refused in one line each; Nemotron's class leaves h_kv
    null, which its attention cannot run."""
    from model.families import extras_line

    phimoe = from_hf({"model_type": "phimoe"})
    assert (phimoe.norm, phimoe.bias, phimoe.norm_biased, phimoe.k) == ("layernorm", "none", True, 2)
    assert "LayerNorms with biases beside matrices without them" in extras_line(phimoe)
    from model.report import recipe_text

    assert recipe_text(phimoe).startswith("LayerNorm with biases, RoPE") and "no biases on the matrices" in \
        recipe_text(phimoe)  # not "no biases": its LayerNorms have theirs
    assert from_hf({"model_type": "nemotron", "num_key_value_heads": 8, "attention_bias": True,
                    "mlp_bias": True}).norm_biased is False  # bias "all": every LayerNorm has its bias already
    refusals = {("phimoe", "lm_head_bias", True): "lm_head_bias=true puts a bias on PhiMoE's head",
                ("phimoe", "num_local_experts", 1): "always picks 2 experts per token; give at least 2",
                ("stablelm", "qk_layernorm", True): "LayerNorm on each head's q and k",
                ("stablelm", "head_dim", 64): "heads of d / h = 80",
                ("nemotron", "num_key_value_heads", None): "num_key_value_heads=null"}
    for (model_type, key, value), message in refusals.items():
        with pytest.raises(HFConfigError, match=message):
            from_hf({"model_type": model_type, key: value})
    with pytest.raises(hf.PartNotBuilt):
        from_hf({"model_type": "stablelm", "qk_layernorm": True})
    from model.rules import settle

    asked = {**{k: getattr(phimoe, k) for k in ("B", "T", "d", "h", "L", "V", "T_max", "tie", "norm", "positions",
                                               "mlp", "bias", "kv_heads", "experts", "top_k", "expert_dim")},
             "norm_biased": True}
    for change, notice in (({"norm": "rmsnorm"}, "an RMSNorm has no bias"),
                           ({"bias": "all"}, "bias = all gives every LayerNorm its bias")):
        cfg, notes = settle({**asked, **change})
        assert not cfg.norm_biased and notes == [f"the LayerNorms' own biases (norm_biased) dropped: {notice}"]
    assert settle(asked)[0].norm_biased and settle(asked)[1] == []
    note = read_hf({"model_type": "phimoe", "num_experts_per_tok": 4}).notes
    assert any("num_experts_per_tok = 4 is not what PhiMoE's router (sparsemixer) runs" in n for n in note)


def test_youtu_is_latent_attention_with_dense_mlps():
    reading = read_hf({"model_type": "youtu"})
    cfg = reading.config
    assert cfg.mla and cfg.block_kinds == ("dense",) * 32 and cfg.d_ff == 6_144 and cfg.tie
    assert not any("multi-token-prediction" in n for n in reading.notes)
    assert any("ignored" in n and "n_routed_experts" in n
               for n in read_hf({"model_type": "youtu", "n_routed_experts": 8}).notes)


def test_vaultgemma_is_gemma_2_without_its_sandwich_norms():
    gemma2, vault = from_hf({"model_type": "gemma2"}), from_hf({"model_type": "vaultgemma"})
    assert not vault.post_norms and vault.embed_scale and vault.attn_softcap == 50.0 and vault.final_softcap == 30.0
    assert budget(gemma2).params_exact - budget(vault).params_exact == 26 * 2 * 2_304
    assert vault.full_layers == gemma2.full_layers == tuple(range(1, 26, 2)) and vault.window == 4_096
    assert any("ignored" in n and "use_bidirectional_attention" in n
               for n in read_hf({"model_type": "vaultgemma", "use_bidirectional_attention": True}).notes)


@pytest.mark.parametrize("doc, message", [
    ({"model_type": "granitemoe", "num_local_experts": None}, "num_local_experts=null: granitemoe's config class keeps"),
    ({"model_type": "granitemoe", "logits_scaling": "x"}, "logits_scaling=.x.: logits_scaling .the logits' divisor."),
    ({"model_type": "mellum", "num_mtp_layers": 2}, "num_mtp_layers=2: MellumConfig refuses more than one"),
    ({"model_type": "mellum", "rope_parameters": {"rope_theta": 1e4}}, "MellumConfig reads one object of RoPE's "
                                                                        "settings per kind of block"),
    ({"model_type": "mellum", "rope_parameters": {"full_attention": {"rope_theta": 1e4, "partial_rotary_factor": 0.5}}},
     "partial_rotary_factor=0.5 rotates 64 of each head's d_head = 128 features, but Mellum's module multiplies"),
    ({"model_type": "mellum", "mlp_layer_types": ["moe"] * 28}, "must be a list of .dense. or .sparse., one per block"),
    ({"model_type": "hyperclovax", "hidden_size": 100}, "hidden_size=100 is not a multiple of num_attention_heads=32"),
    ({"model_type": "granitemoeshared", "shared_intermediate_size": -1}, "shared_intermediate_size=-1: "
                                                                         "shared_intermediate_size .the shared expert's"),
])
def test_what_the_second_batch_cannot_build_is_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)


def test_granitemoeshared_adds_one_ungated_swiglu_expert_where_its_width_is_set():
    none, shared = from_hf({"model_type": "granitemoeshared"}), from_hf({"model_type": "granitemoeshared",
                                                                           "shared_intermediate_size": 1_024})
    assert none.shared_experts == 0 and (shared.shared_experts, shared.d_shared, shared.shared_gate) == (1, 1_024, False)
    assert budget(shared).params_exact - budget(none).params_exact == 32 * 3 * 4_096 * 1_024


def test_mellum_reads_its_per_block_lists():
    doc = {"model_type": "mellum", "num_hidden_layers": 3, "mlp_layer_types": ["dense", "sparse", "sparse"],
           "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]}
    cfg = from_hf(doc)
    assert cfg.block_kinds == ("dense", "moe", "moe") and cfg.attn_kinds == ("sliding", "full", "sliding")
    assert cfg.window == 1_024 and cfg.qk_norm and cfg.E == 64
    assert from_hf({"model_type": "mellum"}).window is None  # its class's layer_types: every block full
    notes = read_hf({**doc, "mlp_layer_types": ["dense"] * 3}).notes
    assert any(n.startswith("mlp_layer_types lists every block dense") for n in notes)


def test_flex_olmo_is_olmo_2s_post_norm_block_with_olmoes_experts():
    cfg = from_hf({"model_type": "flex_olmo"})
    assert cfg.post_norm and cfg.qk_norm_wide and cfg.block_kinds == ("moe",) * 32
    assert (cfg.E, cfg.k, cfg.d_expert) == (7, 5, 11_008)


def test_glm4_is_glm_with_plain_rmsnorms_on_each_output():
    glm, glm4 = from_hf({"model_type": "glm"}), from_hf({"model_type": "glm4"})
    assert glm4.post_norms and not glm.post_norms and glm4.rotary_dim == glm.rotary_dim == 64 and glm4.bias == "qkv"
    assert budget(glm4).params_exact - budget(glm).params_exact == 40 * 2 * 4_096


def test_hyperclovax_puts_a_norm_on_each_output_where_use_post_norm():
    on, off = from_hf({"model_type": "hyperclovax"}), from_hf({"model_type": "hyperclovax", "use_post_norm": False})
    assert on.post_norms and not off.post_norms
    assert budget(on).params_exact - budget(off).params_exact == 32 * 2 * 4_096
    assert any("the logits times logits_scaling" in n for n in read_hf({"model_type": "hyperclovax"}).notes)


@pytest.mark.parametrize("model_type, title, extras", [
    ("glm4", "sandwich norms: an RMSNorm on attention's and the MLP's output before each residual add",
     "sandwich norms; RoPE on d_rot = 64"),
    ("hyperclovax", "sandwich norms: an RMSNorm on attention's and the MLP's output", "sandwich norms"),
    ("vaultgemma", "Gemma's extras: the token rows times √d, the scores soft-capped, the logits soft-capped: values, "
                   "but the soft-caps are tensors of the pass", "Gemma's extras: GeGLU, embeddings × √d"),
])
def test_sandwich_norms_are_named_as_what_they_are(model_type, title, extras):
    """GLM-4's and HyperCLOVA X's norms on each output are Gemma's sandwich norms without Gemma's other extras: the
    changes step and the extras line name them, not Gemma; VaultGemma's step names the extras it has, no norms."""
    from model.changes import changes
    from model.families import extras_line

    cfg = read_hf({"model_type": model_type, "num_hidden_layers": 2}).config
    step = next(s for s in changes(cfg).steps if s.key == "gemma")
    assert step.title.startswith(title) and extras_line(cfg).startswith(extras)
    assert ("Gemma" in step.lines[0].label) == (model_type == "vaultgemma")


def test_solar_open_is_glm_4_5s_experts_in_every_block_beside_llamas_attention():
    cfg = from_hf({"model_type": "solar_open", "first_k_dense_replace": 3, "use_qk_norm": True})
    assert cfg.block_kinds == ("moe",) * 48 and not cfg.qk_norm and cfg.rotary_dim is None and cfg.bias == "none"
    assert (cfg.E, cfg.k, cfg.d_expert, cfg.E_shared, cfg.d_shared) == (128, 8, 1_280, 1, 1_280)
    assert from_hf({"model_type": "solar_open", "attention_bias": True}).bias == "qkv"  # W_o never has one
    notes = read_hf({"model_type": "solar_open", "intermediate_size": 9, "num_nextn_predict_layers": 1}).notes
    assert any(n.startswith("ignored") and "intermediate_size" in n for n in notes)
    assert any("multi-token-prediction layer (num_nextn_predict_layers = 1)" in n for n in notes)
    assert not any("multi-token-prediction" in n for n in read_hf({"model_type": "solar_open"}).notes)
    with pytest.raises(HFConfigError, match="partial_rotary_factor=0.5 gives RoPE 64 of d_head = 128 features, but "
                                            "solar_open's attention multiplies all 128"):
        from_hf({"model_type": "solar_open", "rope_parameters": {"rope_theta": 1e6, "partial_rotary_factor": 0.5}})


def test_aria_text_is_llama_with_experts_and_an_ungated_shared_swiglu():
    cfg = from_hf({"model_type": "aria_text"})
    assert cfg.block_kinds == ("moe",) * 32 and (cfg.E, cfg.k, cfg.d_expert) == (8, 2, 4_096)
    assert (cfg.E_shared, cfg.d_shared, cfg.shared_gate) == (2, 4_096, False)
    none = from_hf({"model_type": "aria_text", "moe_num_shared_experts": 0})
    assert budget(cfg).params_exact - budget(none).params_exact == 32 * 3 * 4_096 * 2 * 4_096
    with pytest.raises(HFConfigError, match="mlp_bias=true puts biases on Aria's shared experts but not on its routed"):
        from_hf({"model_type": "aria_text", "mlp_bias": True})


def test_dots1_is_qwen3s_attention_with_deepseek_v3s_experts():
    doc = {"model_type": "dots1", "num_hidden_layers": 64, "n_routed_experts": 128, "n_shared_experts": 2,
           "num_experts_per_tok": 6, "first_k_dense_replace": 1}
    cfg = from_hf(doc)
    assert cfg.qk_norm and cfg.block_kinds == ("dense",) + ("moe",) * 63 and (cfg.E_shared, cfg.d_shared) == (2, 1_408)
    assert cfg.window == 4_096 and cfg.full_layers == tuple(range(62))  # its class's max_window_layers = 62
    assert from_hf({**doc, "num_hidden_layers": 62}).window is None
    for key in ("n_routed_experts", "n_shared_experts", "num_experts_per_tok"):
        with pytest.raises(HFConfigError, match=f"{key}=null: dots1's config class keeps it null and its module "):
            from_hf({**doc, key: None})


def test_hy_v3_reads_its_dense_blocks_from_mlp_layer_types_and_its_shared_expert_as_its_module_builds_it():
    cfg = from_hf({"model_type": "hy_v3", "num_hidden_layers": 3, "first_k_dense_replace": 2})
    assert cfg.block_kinds == ("dense", "moe", "moe") and cfg.qk_norm and (cfg.E_shared, cfg.d_shared) == (1, 1_536)
    zero = read_hf({"model_type": "hy_v3", "num_hidden_layers": 3, "num_shared_experts": 0})
    assert (zero.config.E_shared, zero.config.d_shared) == (1, 13_312)
    assert any("replaces by intermediate_size = 13,312" in n for n in zero.notes)
    assert any(n.startswith("ignored") and "first_k_dense_replace" in n
               for n in read_hf({"model_type": "hy_v3", "first_k_dense_replace": 2}).notes)
    with pytest.raises(HFConfigError, match="mlp_bias=true puts biases on Hunyuan 3's dense and shared MLPs"):
        from_hf({"model_type": "hy_v3", "mlp_bias": True})


def test_glm4_moe_lite_is_deepseek_v3s_modules_with_its_sparse_blocks_from_mlp_layer_types():
    reading = read_hf({"model_type": "glm4_moe_lite", "num_hidden_layers": 3, "first_k_dense_replace": 2})
    cfg = reading.config
    assert cfg.mla and cfg.block_kinds == ("dense", "moe", "moe") and (cfg.d_R, cfg.d_nope, cfg.d_v) == (64, 192, 256)
    assert (cfg.E, cfg.k, cfg.E_shared, cfg.d_shared, cfg.d_cq) == (64, 4, 1, 1_536, 768)
    assert any(n.startswith("ignored") and "first_k_dense_replace" in n for n in reading.notes)
    assert not any("multi-token-prediction" in n for n in reading.notes)
    sparse = from_hf({"model_type": "glm4_moe_lite", "num_hidden_layers": 3, "mlp_layer_types": ["sparse", "dense",
                                                                                                  "sparse"]})
    assert sparse.block_kinds == ("moe", "dense", "moe")
    both = read_hf({"model_type": "glm4_moe_lite", "qk_rope_head_dim": 32, "head_dim": 16})  # head_dim set last
    assert both.config.d_R == 16 and any("qk_rope_head_dim = 32 is not read: head_dim = 16" in n for n in both.notes)
    assert from_hf({"model_type": "glm4_moe_lite", "head_dim": 32}).d_R == 32
    assert any("multi-token-prediction module (num_nextn_predict_layers = 1)" in n
               for n in read_hf({"model_type": "glm4_moe_lite", "num_nextn_predict_layers": 1}).notes)
    with pytest.raises(HFConfigError, match="partial_rotary_factor=0.5 gives RoPE 32 of qk_rope_head_dim = 64 "
                                            "features, but glm4_moe_lite's attention multiplies all 64"):
        from_hf({"model_type": "glm4_moe_lite", "partial_rotary_factor": 0.5})
    with pytest.raises(HFConfigError, match="num_key_value_heads=4 with latent attention"):
        from_hf({"model_type": "glm4_moe_lite", "num_key_value_heads": 4})


def test_minicpm3_is_deepseek_v2s_latent_attention_with_dense_mlps_and_its_multipliers_as_values():
    reading = read_hf({"model_type": "minicpm3", "head_dim": 99, "scale_depth": None, "dim_model_base": None})
    cfg = reading.config
    assert cfg.mla and cfg.block_kinds == ("dense",) * 62 and cfg.d_ff == 6_400 and cfg.tie and cfg.bias == "none"
    assert (cfg.d_c, cfg.d_cq, cfg.d_R, cfg.d_nope, cfg.d_v) == (256, 768, 32, 64, 2_560 // 40)  # v_head_dim: d // h
    assert any("head_dim = 99 is ignored: MiniCPM3Config sets head_dim to qk_rope_head_dim" in n for n in reading.notes)
    assert any("scale_emb" in n and "scale_depth / √L" in n and "dim_model_base" in n for n in reading.notes)
    assert not any("multi-token-prediction" in n for n in reading.notes)
    assert from_hf({"model_type": "minicpm3", "partial_rotary_factor": 0.5}).d_R == 32  # its default RoPE ignores it


@pytest.mark.parametrize("doc, message", [
    ({"model_type": "minicpm3", "mlp_bias": True}, "mlp_bias=true puts biases on MiniCPM3's MLP matrices"),
    ({"model_type": "minicpm3", "attention_bias": True}, "attention_bias=true puts biases on latent attention"),
    ({"model_type": "minicpm3", "hidden_size": 100}, "hidden_size=100 is not a multiple of num_attention_heads=40"),
    ({"model_type": "minicpm3", "num_key_value_heads": 8}, "num_key_value_heads=8 with latent attention"),
    ({"model_type": "minicpm3", "dim_model_base": 0}, "dim_model_base=0: MiniCPM3Config takes a whole number"),
    ({"model_type": "minicpm3", "scale_emb": "x"}, "scale_emb=.x.: scale_emb .the token rows' scale."),
    ({"model_type": "minicpm3", "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e4,
                                                    "partial_rotary_factor": 0.5}},
     "partial_rotary_factor=0.5 gives RoPE 16 of qk_rope_head_dim = 32 features, but minicpm3's attention"),
])
def test_what_minicpm3_cannot_build_is_refused_in_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message) as e:
        from_hf(doc)
    assert "\n" not in str(e.value)
