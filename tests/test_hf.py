"""A config.json read exactly as transformers reads it: each type's defaults, keys a type lacks, today's context
lengths, and malformed files refused in one line (model/hf.py, model.config.read_hf).

The reference is transformers itself (a test dependency, never a run-time one): its config class of the file's
`model_type`, built from the same file, and its module on the meta device, counted (`parameters()`) and run once
with its real cache (a prefill of B = 2, T = 6 tokens), whose bytes are the KV cache (a window of W < 6 binds).
"""
from __future__ import annotations

import dataclasses
import json
import logging
import random
import re
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import CONFIG_MAPPING, AutoModelForCausalLM, AutoModelForImageTextToText

from model import budget, hf
from model.cli import main
from model.config import BOUNDS, TABLE_PRESETS, Config, HFConfigError, from_hf, read_hf
from model.memory import kv_cache_lines
from model.passes import MetaShapes
from test_window import cache_bytes

HF = Path(__file__).parent / "hf"
PUBLISHED = HF / "published"  # published models' config.json files, with transformers' counts (its README)
logging.getLogger("transformers").setLevel(logging.ERROR)


def reference(doc: dict) -> tuple[int, int]:
    """transformers' model of `doc` on the meta device: (parameters, KV-cache bytes at fp32 after a prefill of B = 2,
    T = 6 tokens). A mixture of
    experts runs its experts as batched matmuls there (its default grouped_mm wants bf16; its eager loop asks the
    routing's values, which the meta device has not). Its forward runs under `model.passes.MetaShapes`, which answers
    an op seen before at the same sizes with fresh meta tensors of the sizes torch's meta kernel gave (its L blocks and
    the type's other files repeat them), as the explorer's passes do: the same shapes, without running each meta kernel again for every block and file."""
    config = CONFIG_MAPPING[doc["model_type"]](**{k: v for k, v in doc.items() if k != "model_type"})
    experts = {"experts_implementation": "batched_mm"} if doc["model_type"] in hf.MOE_TYPES else {}
    with torch.device("meta"):
        module = AutoModelForCausalLM.from_config(config, attn_implementation="eager", **experts)
    with MetaShapes():
        out = module(input_ids=torch.zeros(*BT, dtype=torch.long, device="meta"), use_cache=True)
    return sum(p.numel() for p in module.parameters()), cache_bytes(out.past_key_values)


def agree(doc: dict) -> None:
    """The explorer and transformers agree on `doc`: the same N and KV cache per token, or both refuse it (the
    explorer in one line)."""
    try:
        expected = reference(doc)
    except Exception:  # transformers' config class or module refuses the file
        with pytest.raises(HFConfigError):
            from_hf(doc)
        return
    assert ours(doc) == expected, doc


BT = (2, 6)  # the reference's prefill


def ours(doc: dict) -> tuple[int, int]:
    """The explorer's N and KV cache at fp32 for `doc` at the reference's B and T."""
    cfg = from_hf(doc, B=BT[0], T=BT[1])
    return budget(cfg).params_exact, kv_cache_lines(cfg, "fp32")[0].value


# A file of each type with every shape key written out, small, chosen so that each key's default differs from the
# file's value and still builds (h = 64 is divided by every type's default h_kv; d_head 8 is set apart from d / h;
# Gemma's h_kv = 8 divides its default h = 8).
MODERN = {"vocab_size": 96, "hidden_size": 128, "intermediate_size": 48, "num_hidden_layers": 2,
          "num_attention_heads": 64, "num_key_value_heads": 16, "head_dim": 8, "max_position_embeddings": 64,
          "tie_word_embeddings": True}
QWEN_WINDOW = {"use_sliding_window": True, "sliding_window": 16, "max_window_layers": 2,
               "layer_types": ["full_attention", "full_attention"]}  # a window no block uses
# A mixture of experts' keys, each unlike its type's default: 4 blocks, every 2nd MoE but block 3 (block 1 only).
QWEN_MOE = {"num_hidden_layers": 4, "num_experts": 8, "num_experts_per_tok": 3, "moe_intermediate_size": 24,
            "decoder_sparse_step": 2, "mlp_only_layers": [3]}
QWEN_MOE_WINDOW = {"use_sliding_window": True, "sliding_window": 16, "max_window_layers": 0,
                   "layer_types": ["full_attention"] * 4}  # a window no block uses
BASE: dict[str, dict] = {
    "gpt2": {"model_type": "gpt2", "vocab_size": 96, "n_positions": 64, "n_embd": 96, "n_layer": 2, "n_head": 4,
             "n_inner": 48, "tie_word_embeddings": False, "add_cross_attention": False},
    "llama": {"model_type": "llama", **MODERN, "attention_bias": True, "mlp_bias": True},
    "mistral": {"model_type": "mistral", **MODERN, "sliding_window": None},
    "ministral3": {"model_type": "ministral3", **MODERN, "sliding_window": 16},
    "qwen2": {"model_type": "qwen2", **MODERN, **QWEN_WINDOW},
    "qwen3": {"model_type": "qwen3", **MODERN, **QWEN_WINDOW, "attention_bias": True},
    "mixtral": {"model_type": "mixtral", **MODERN, "num_local_experts": 4, "num_experts_per_tok": 3, "sliding_window": None},
    "qwen2_moe": {"model_type": "qwen2_moe", **MODERN, **QWEN_MOE, **QWEN_MOE_WINDOW, "qkv_bias": False,
                  "shared_expert_intermediate_size": 40},
    "qwen3_moe": {"model_type": "qwen3_moe", **MODERN, **QWEN_MOE, "attention_bias": True, "use_sliding_window": False,
                  "sliding_window": 16, "layer_types": ["full_attention"] * 4},
    "phi3": {"model_type": "phi3", **MODERN, "sliding_window": 16, "pad_token_id": 95},
    "cohere": {"model_type": "cohere", **MODERN, "attention_bias": True, "use_qk_norm": False},
    "gemma": {"model_type": "gemma", **MODERN, "num_key_value_heads": 8, "attention_bias": True,
              "use_bidirectional_attention": False},
    "gemma2": {"model_type": "gemma2", **MODERN, "num_key_value_heads": 8, "attention_bias": True, "query_pre_attn_scalar": 16, "sliding_window": 3,
               "layer_types": None, "final_logit_softcapping": 20.0, "attn_logit_softcapping": 40.0,
               "hidden_activation": "gelu_pytorch_tanh", "use_bidirectional_attention": False},
    "vaultgemma": {"model_type": "vaultgemma", **MODERN, "num_key_value_heads": 8, "attention_bias": True,
                   "query_pre_attn_scalar": 16, "sliding_window": 3, "layer_types": None, "final_logit_softcapping": 20.0,
                   "attn_logit_softcapping": 40.0, "hidden_activation": "gelu_pytorch_tanh"},
    "gemma3_text": {"model_type": "gemma3_text", **MODERN, "num_key_value_heads": 8, "attention_bias": True, "query_pre_attn_scalar": 16,
                    "sliding_window": 3, "layer_types": ["full_attention", "sliding_attention"],
                    "final_logit_softcapping": 20.0, "attn_logit_softcapping": None,
                    "hidden_activation": "gelu_pytorch_tanh", "use_bidirectional_attention": False,
                    "sliding_window_pattern": 2},
    "gemma4_text": {"model_type": "gemma4_text", **MODERN, "num_key_value_heads": 8, "attention_bias": True,
                    "sliding_window": 3, "layer_types": ["sliding_attention", "full_attention"],
                    "final_logit_softcapping": 20.0, "hidden_activation": "gelu_pytorch_tanh",
                    "use_bidirectional_attention": "vision", "vocab_size_per_layer_input": 50,
                    "hidden_size_per_layer_input": 0, "attention_k_eq_v": False, "num_kv_shared_layers": 0,
                    "enable_moe_block": False, "use_double_wide_mlp": True, "num_experts": None, "top_k_experts": None,
                    "moe_intermediate_size": None, "global_head_dim": 8, "num_global_key_value_heads": 2},
    "gpt_oss": {"model_type": "gpt_oss", **MODERN, "attention_bias": False, "sliding_window": 3,
                "layer_types": ["full_attention", "sliding_attention"], "num_experts_per_tok": 2, "num_local_experts": 4,
                "swiglu_limit": 5.0, "swiglu_alpha": 1.5},
    "internlm3": {"model_type": "internlm3", **MODERN, "attention_bias": False, "mlp_bias": False},  # both or neither
    "exaone": {"model_type": "exaone", **MODERN, "attention_bias": True, "mlp_bias": True},
    "iquestcoder": {"model_type": "iquestcoder", **MODERN, "hidden_size": 1_920, "num_key_value_heads": 4,
                    "attention_bias": True, "mlp_bias": False},  # d a multiple of h, h_kv a divisor, as of h = 40
    "granite": {"model_type": "granite", **MODERN, "attention_bias": False, "mlp_bias": True},
    "granitemoe": {"model_type": "granitemoe", **MODERN, "attention_bias": True, "num_local_experts": 4,
                   "num_experts_per_tok": 3},
    "granitemoeshared": {"model_type": "granitemoeshared", **MODERN, "attention_bias": True, "num_local_experts": 4,
                         "num_experts_per_tok": 3, "shared_intermediate_size": 24},
    "nemotron_h": {"model_type": "nemotron_h", **{k: v for k, v in MODERN.items() if k != "num_hidden_layers"},
                   "layers_block_type": ["linear_attention", "moe", "full_attention", "mlp", "linear_attention", "moe"],
                   "attention_bias": False, "sliding_window": None, "mlp_hidden_act": "relu2", "mlp_bias": False,
                   "ssm_state_size": 8, "mamba_num_heads": 16, "mamba_head_dim": 6, "mamba_hidden_act": "silu",
                   "n_groups": 2, "conv_kernel": 3, "chunk_size": 16, "use_conv_bias": False, "use_bias": True,
                   "n_routed_experts": 4, "n_shared_experts": 1, "moe_intermediate_size": 24,
                   "moe_shared_expert_intermediate_size": 20, "moe_latent_size": None,
                   "num_experts_per_tok": 3},  # Mamba 2 with MoE in blocks 0 and 2, NoPE attention in 1
    "jamba": {"model_type": "jamba", **{k: v for k, v in MODERN.items() if k != "head_dim"}, "num_hidden_layers": 6,
              "num_experts": 4, "num_experts_per_tok": 3, "expert_layer_period": 4, "expert_layer_offset": 0,
              "attn_layer_period": 12, "attn_layer_offset": 3, "mamba_d_state": 8, "mamba_d_conv": 3, "mamba_expand": 1,
              "mamba_dt_rank": 5, "mamba_conv_bias": False, "mamba_proj_bias": True},  # attention without RoPE in
    # block 3, Mamba in the others, experts in blocks 0 and 4; with any one key's default (L = 32, attention every 8th
    # from 3 or every 12th from 4, experts every other or every 4th from 1) the attention blocks keep one kind of MLP
    "falcon_h1": {"model_type": "falcon_h1", **MODERN, "attention_bias": True, "mlp_bias": True, "mamba_d_ssm": 128,
                  "mamba_n_heads": 16, "mamba_d_head": "auto", "mamba_n_groups": 2, "mamba_d_state": 8, "mamba_d_conv": 3,
                  "mamba_expand": 1, "mamba_chunk_size": 16, "mamba_conv_bias": False, "mamba_proj_bias": False,
                  "projectors_bias": False, "mamba_rms_norm": True, "mamba_norm_before_gate": False},  # attention
    # and Mamba 2 in both blocks; d_ssm = mamba_d_ssm / mamba_n_heads with each default (1,024 / 16, 128 / 128)
    "granitemoehybrid": {"model_type": "granitemoehybrid", **MODERN, "num_hidden_layers": 4, "attention_bias": True,
                         "num_local_experts": 4, "num_experts_per_tok": 3, "shared_intermediate_size": 24,
                         "layer_types": ["mamba", "attention", "mamba", "attention"], "position_embedding_type": "rope",
                         "mamba_n_heads": 16, "mamba_n_groups": 2, "mamba_d_state": 8, "mamba_d_head": "auto",
                         "mamba_d_conv": 3,
                         "mamba_expand": 1, "mamba_chunk_size": 16, "mamba_conv_bias": False,
                         "mamba_proj_bias": True},  # Mamba 2 in blocks 0 and 2 (its legacy words), RoPE; mamba_d_head
    # "auto" (d·mamba_expand / mamba_n_heads, its default), so that a default d, expand or heads still splits
    "kimi_linear": {"model_type": "kimi_linear", **MODERN, "num_hidden_layers": 6, "num_key_value_heads": 64,
                    "layer_types": ["linear_attention", "full_attention", "linear_attention", "linear_attention",
                                    "full_attention", "linear_attention"], "mlp_layer_types": ["dense"] + ["sparse"] * 5,
                    "kv_lora_rank": 16, "q_lora_rank": 24, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
                    "v_head_dim": 16, "num_local_experts": 8, "num_experts_per_tok": 3, "moe_intermediate_size": 24,
                    "n_shared_experts": 2, "attention_bias": False, "linear_num_heads": 4, "linear_head_dim": 16, "linear_conv_kernel_dim": 3,
                    "pad_token_id": 0},  # KDA in blocks 0, 2, 3, 5 beside NoPE latent attention (6 blocks: the
    # class's default layer_types has one full block, 4); h_kv = h, as its eager attention needs
    "mellum": {"model_type": "mellum", **MODERN, "attention_bias": True, "sliding_window": 3, "moe_intermediate_size": 24,
               "num_experts_per_tok": 3, "num_experts": 8, "layer_types": ["sliding_attention", "full_attention"],
               "mlp_layer_types": ["dense", "sparse"]},
    "flex_olmo": {"model_type": "flex_olmo", **MODERN, "attention_bias": True, "num_experts": 9,
                  "num_experts_per_tok": 3, "pad_token_id": 0},
    "hyperclovax": {"model_type": "hyperclovax", **MODERN, "attention_bias": True, "mlp_bias": False,
                    "use_post_norm": False},
    "helium": {"model_type": "helium", **MODERN, "hidden_size": 2_560, "num_attention_heads": 20,
               "num_key_value_heads": 4, "head_dim": 128, "attention_bias": True, "mlp_bias": False},  # h·d_head = d
    "ernie4_5": {"model_type": "ernie4_5", **MODERN, "tie_word_embeddings": False, "use_bias": True},
    "seed_oss": {"model_type": "seed_oss", **MODERN, "attention_bias": True, "attention_out_bias": True,
                 "mlp_bias": False},  # q, k and v's biases with the MLP's but not W_o's are refused
    "cwm": {"model_type": "cwm", **MODERN, "hidden_size": 1_920, "mlp_bias": True, "sliding_window": 3,
            "layer_types": ["sliding_attention", "full_attention"]},
    "olmo2": {"model_type": "olmo2", **MODERN, "attention_bias": True},
    "olmo3": {"model_type": "olmo3", **MODERN, "attention_bias": True, "sliding_window": 3,
              "layer_types": ["full_attention", "sliding_attention"]},
    "glm": {"model_type": "glm", **MODERN, "attention_bias": False, "pad_token_id": 0},
    "glm4": {"model_type": "glm4", **MODERN, "attention_bias": False, "pad_token_id": 0},
    "glm4_moe": {"model_type": "glm4_moe", **MODERN, **{k: QWEN_MOE[k] for k in ("num_hidden_layers",
                                                                              "num_experts_per_tok",
                                                                              "moe_intermediate_size")},
                 "attention_bias": True, "n_routed_experts": 8, "n_shared_experts": 2, "first_k_dense_replace": 2,
                 "use_qk_norm": True},
    "minimax_m2": {"model_type": "minimax_m2", **MODERN, "num_experts_per_tok": 3, "num_local_experts": 9,
                   "rotary_dim": 4},
    "starcoder2": {"model_type": "starcoder2", **MODERN, "num_key_value_heads": 8, "sliding_window": 3,
                   "use_bias": True},
    "gpt_bigcode": {"model_type": "gpt_bigcode", "vocab_size": 96, "n_positions": 64, "n_embd": 96, "n_layer": 2,
                    "n_head": 4, "n_inner": 48, "tie_word_embeddings": False, "multi_query": False},
    "olmoe": {"model_type": "olmoe", **{k: v for k, v in MODERN.items() if k != "head_dim"}, "num_experts": 9,
              "num_experts_per_tok": 3, "attention_bias": True},
    "ministral": {"model_type": "ministral", **MODERN, "sliding_window": 3,
                  "layer_types": ["full_attention", "sliding_attention"]},
    "deepseek_v2": {"model_type": "deepseek_v2", **{k: v for k, v in MODERN.items() if k != "head_dim"},
                    "num_hidden_layers": 3, "num_attention_heads": 32, "num_key_value_heads": 32, "attention_bias": False,
                    "mlp_bias": False, "kv_lora_rank": 16, "q_lora_rank": None, "qk_rope_head_dim": 8,
                    "qk_nope_head_dim": 12, "v_head_dim": 10, "moe_intermediate_size": 20, "n_routed_experts": 16,
                    "n_shared_experts": 1, "num_experts_per_tok": 3, "first_k_dense_replace": 1,
                    "topk_method": "group_limited_greedy", "n_group": 4, "topk_group": 2},
    "deepseek_v3": {"model_type": "deepseek_v3", **{k: v for k, v in MODERN.items() if k != "head_dim"},
                    "num_hidden_layers": 3, "num_attention_heads": 128, "num_key_value_heads": 128, "attention_bias": False,
                    "kv_lora_rank": 16, "q_lora_rank": 24, "qk_rope_head_dim": 8, "qk_nope_head_dim": 12,
                    "v_head_dim": 10, "moe_intermediate_size": 20, "n_routed_experts": 16, "n_shared_experts": 2,
                    "num_experts_per_tok": 3, "first_k_dense_replace": 1, "n_group": 2, "topk_group": 2},
    "sarvam_mla": {"model_type": "sarvam_mla", **{k: v for k, v in MODERN.items() if k != "head_dim"},
                   "num_hidden_layers": 3, "num_attention_heads": 64, "num_key_value_heads": 64, "attention_bias": False,
                   "kv_lora_rank": 16, "q_lora_rank": None, "qk_rope_head_dim": 8, "qk_nope_head_dim": 12,
                   "v_head_dim": 10, "moe_intermediate_size": 20, "n_routed_experts": 16, "n_shared_experts": 2,
                   "num_experts_per_tok": 3, "first_k_dense_replace": 1},
    "smollm3": {"model_type": "smollm3", **MODERN, "num_hidden_layers": 4, "attention_bias": True, "mlp_bias": False,
                "use_sliding_window": True, "sliding_window": 3, "no_rope_layers": None, "no_rope_layer_interval": 2,
                "layer_types": None, "pad_token_id": 0},
    "cohere2": {"model_type": "cohere2", **MODERN, "num_hidden_layers": 4, "attention_bias": True, "sliding_window": 3,
                "layer_types": None, "pad_token_id": 0},
    "exaone4": {"model_type": "exaone4", **MODERN, "num_hidden_layers": 4, "sliding_window": 3,
                "sliding_window_pattern": 2, "layer_types": None, "pad_token_id": 0},
    "arcee": {"model_type": "arcee", **MODERN, "attention_bias": True, "mlp_bias": False},
    "apertus": {"model_type": "apertus", **MODERN, "attention_bias": True, "sliding_window": None, "layer_types": None},
    "apertus1p5_text": {"model_type": "apertus1p5_text", **MODERN, "attention_bias": True, "sliding_window": None,
                        "layer_types": None, "output_vocab_size": None},
    "olmo": {"model_type": "olmo", **MODERN, "attention_bias": True, "sliding_window": None, "layer_types": None},
    "nanochat": {"model_type": "nanochat", **MODERN, "num_key_value_heads": 2, "attention_bias": True,
                 "final_logit_softcapping": 15.0,
                 "sliding_window": None, "layer_types": None, "pad_token_id": 0},
    "falcon": {"model_type": "falcon", "vocab_size": 96, "hidden_size": 568, "num_hidden_layers": 2,
               "num_attention_heads": 71, "num_kv_heads": None, "max_position_embeddings": 64, "ffn_hidden_size": 48,
               "tie_word_embeddings": True, "bias": True, "multi_query": True, "new_decoder_architecture": False,
               "parallel_attn": True, "num_ln_in_parallel_attn": None, "alibi": False},  # d = 71·8: its h, 71, and
    # its d, 4,544 = 71·64, each fits the other's default
    **{t: {"model_type": t, "vocab_size": 96, "n_positions": 64, "n_embd": 1_024, "n_layer": 2, "n_head": 16,
           "n_inner": 48, "rotary_dim": 4, "tie_word_embeddings": True} for t in ("gptj", "codegen")},  # d_head 64:
    # rotary_dim's default fits it, h's default is 16
    "olmo_hybrid": {"model_type": "olmo_hybrid", **MODERN, "num_key_value_heads": 2, "attention_bias": True,
                    "sliding_window": None,
                    "layer_types": ["linear_attention", "full_attention"], "linear_num_key_heads": 64,
                    "linear_num_value_heads": 64, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
                    "linear_conv_kernel_dim": 3, "pad_token_id": 0},
    "jais2": {"model_type": "jais2", **MODERN, "hidden_size": 208, "num_attention_heads": 26, "num_key_value_heads": 13,
              "attention_bias": True, "mlp_bias": True},  # its class: h divides d, its default h 26
    "youtu": {"model_type": "youtu", **{k: v for k, v in MODERN.items() if k != "head_dim"}, "num_attention_heads": 64,
              "num_key_value_heads": 64, "attention_bias": False, "kv_lora_rank": 16, "q_lora_rank": None,
              "qk_rope_head_dim": 8, "qk_nope_head_dim": 12, "v_head_dim": 10},
    "llama4_text": {"model_type": "llama4_text", **MODERN, "num_attention_heads": 40, "num_key_value_heads": 8,
                    "num_hidden_layers": 4, "intermediate_size_mlp": 40,
                    "attention_bias": False, "num_experts_per_tok": 2, "num_local_experts": 3, "moe_layers": None,
                    "interleave_moe_layer_step": 2, "use_qk_norm": True, "no_rope_layers": None,
                    "no_rope_layer_interval": 4, "attention_chunk_size": 3, "layer_types": None,
                    "attn_temperature_tuning": True, "pad_token_id": 0},
    "sarvam_moe": {"model_type": "sarvam_moe", **MODERN, "num_hidden_layers": 3, "num_experts_per_tok": 2,
                   "moe_intermediate_size": 24, "attention_bias": True, "n_routed_experts": 8, "n_shared_experts": 2,
                   "first_k_dense_replace": 2, "use_qk_norm": False},
    "solar_open": {"model_type": "solar_open", **{k: v for k, v in MODERN.items() if k != "intermediate_size"},
                   "num_hidden_layers": 3, "num_experts_per_tok": 2, "moe_intermediate_size": 24, "attention_bias": True,
                   "n_routed_experts": 8, "n_shared_experts": 2},
    "aria_text": {"model_type": "aria_text", **MODERN, "num_hidden_layers": 3, "attention_bias": True, "mlp_bias": False,
                  "moe_num_experts": 4, "moe_topk": 1, "moe_num_shared_experts": 1},
    "phimoe": {"model_type": "phimoe", **MODERN, "num_key_value_heads": 4, "num_hidden_layers": 3,
               "attention_bias": True, "lm_head_bias": False, "num_experts_per_tok": 2, "num_local_experts": 4,
               "sliding_window": 5},
    "nemotron": {"model_type": "nemotron", **MODERN, "attention_bias": True, "mlp_bias": False, "num_hidden_layers": 3},
    "stablelm": {"model_type": "stablelm", **{k: v for k, v in MODERN.items() if k != "head_dim"},
                 "hidden_size": 512, "num_attention_heads": 64, "num_key_value_heads": 4, "use_qkv_bias": True,
                 "qk_layernorm": False, "use_parallel_residual": True},  # d_head 8 (its default 80): a quarter even
    "phi": {"model_type": "phi", **MODERN, "hidden_size": 512, "head_dim": 16, "qk_layernorm": False},  # d / h = 8
    "gpt_neox": {"model_type": "gpt_neox", "vocab_size": 96, "hidden_size": 512, "intermediate_size": 48,
                 "num_hidden_layers": 2, "num_attention_heads": 16, "max_position_embeddings": 64,
                 "tie_word_embeddings": True, "use_parallel_residual": False, "attention_bias": False},
    "ernie4_5_moe": {"model_type": "ernie4_5_moe", **MODERN, "num_key_value_heads": 2, "num_hidden_layers": 4,
                     "use_bias": False, "moe_num_experts": 8, "moe_k": 2, "moe_intermediate_size": 24, "moe_num_shared_experts": 1,
                     "moe_layer_start_index": 1, "moe_layer_end_index": 2, "moe_layer_interval": 1, "pad_token_id": 0},
    "dots1": {"model_type": "dots1", **MODERN, "num_hidden_layers": 3, "attention_bias": True,
              "moe_intermediate_size": 24, "n_routed_experts": 8, "n_shared_experts": 2, "num_experts_per_tok": 2,
              "first_k_dense_replace": 1, "sliding_window": 4, "max_window_layers": 2, "layer_types": None},
    "hy_v3": {"model_type": "hy_v3", **MODERN, "num_hidden_layers": 3, "attention_bias": True, "mlp_bias": False,
              "num_experts": 8, "num_experts_per_tok": 2, "num_shared_experts": 2, "moe_intermediate_size": 24,
              "mlp_layer_types": ["sparse", "dense", "sparse"]},
    "glm4_moe_lite": {"model_type": "glm4_moe_lite", **{k: v for k, v in MODERN.items() if k != "head_dim"},
                      "num_hidden_layers": 3, "num_attention_heads": 20, "num_key_value_heads": 20,
                      "attention_bias": False, "kv_lora_rank": 16, "q_lora_rank": None, "qk_rope_head_dim": 8,
                      "qk_nope_head_dim": 12, "v_head_dim": 10, "moe_intermediate_size": 20, "n_routed_experts": 16,
                      "n_shared_experts": 2, "num_experts_per_tok": 3, "mlp_layer_types": ["sparse", "dense", "sparse"]},
    "deepseek_v32": {"model_type": "deepseek_v32", **{k: v for k, v in MODERN.items() if k != "head_dim"},
                     "num_hidden_layers": 3, "num_attention_heads": 128, "num_key_value_heads": 128,
                     "attention_bias": False, "mlp_bias": False, "kv_lora_rank": 16, "q_lora_rank": 12,
                     "qk_rope_head_dim": 8, "qk_nope_head_dim": 12, "v_head_dim": 10, "moe_intermediate_size": 20,
                     "n_routed_experts": 16, "n_shared_experts": 2, "num_experts_per_tok": 3,
                     "first_k_dense_replace": 1, "mlp_layer_types": ["sparse", "dense", "sparse"],
                     "layer_types": ["indexed_attention"] * 3, "index_n_heads": 3, "index_head_dim": 66,
                     "index_topk": 4},  # mlp_layer_types unlike first_k_dense_replace's: the list is read; h and h_kv
    # their class's (a file that leaves one out keeps them equal, as latent attention needs)
    "glm_moe_dsa": {"model_type": "glm_moe_dsa", **{k: v for k, v in MODERN.items() if k != "head_dim"},
                    "num_hidden_layers": 3, "num_attention_heads": 64, "num_key_value_heads": 64,
                    "attention_bias": False, "mlp_bias": False, "kv_lora_rank": 16, "q_lora_rank": 12,
                    "qk_rope_head_dim": 8, "qk_nope_head_dim": 12, "v_head_dim": 10, "moe_intermediate_size": 20,
                    "n_routed_experts": 16, "n_shared_experts": 2, "num_experts_per_tok": 3,
                    "first_k_dense_replace": 2, "mlp_layer_types": None, "layer_types": None,
                    "indexer_types": ["full"] * 3, "index_n_heads": 3, "index_head_dim": 66, "index_topk": 4},
    "qwen3_next": {"model_type": "qwen3_next", **MODERN, **QWEN_MOE, "num_experts": 12, "attention_bias": True,
                   "shared_expert_intermediate_size": 40, "layer_types": ["linear_attention", "full_attention"] * 2,
                   "full_attention_interval": 2, "linear_num_key_heads": 2, "linear_num_value_heads": 48,
                   "linear_key_head_dim": 8, "linear_value_head_dim": 6, "linear_conv_kernel_dim": 3},  # Gated
    # DeltaNet in blocks 0 and 2, with layer_types or without; E at least its class's k = 10
    "qwen3_5_text": {"model_type": "qwen3_5_text", **MODERN, "num_hidden_layers": 4, "attention_bias": True,
                     "layer_types": ["linear_attention", "full_attention"] * 2, "linear_num_key_heads": 2,
                     "linear_num_value_heads": 48, "linear_key_head_dim": 8, "linear_value_head_dim": 6,
                     "linear_conv_kernel_dim": 3, "pad_token_id": 0},
    "qwen3_5_moe_text": {"model_type": "qwen3_5_moe_text", **{k: v for k, v in MODERN.items()
                                                             if k != "intermediate_size"},
                         "num_hidden_layers": 4, "num_experts": 12, "num_experts_per_tok": 3,
                         "moe_intermediate_size": 24, "shared_expert_intermediate_size": 40, "attention_bias": True,
                         "layer_types": ["linear_attention", "full_attention"] * 2, "linear_num_key_heads": 2,
                         "linear_num_value_heads": 48, "linear_key_head_dim": 8, "linear_value_head_dim": 6,
                         "linear_conv_kernel_dim": 3, "pad_token_id": 0},
    "minicpm3": {"model_type": "minicpm3", **{k: v for k, v in MODERN.items() if k != "head_dim"}, "hidden_size": 160,
                 "num_attention_heads": 40, "num_key_value_heads": 40, "attention_bias": False, "mlp_bias": False,
                 "kv_lora_rank": 16, "q_lora_rank": None, "qk_rope_head_dim": 8, "qk_nope_head_dim": 12,
                 "v_head_dim": 10},
}


def test_every_model_type_has_a_base_file_and_a_table():
    assert set(BASE) == set(hf.MODEL_TYPES) == set(hf.DEFAULTS) == set(hf.EXTRAS) == set(hf.NULLABLE)
    for model_type, table in hf.DEFAULTS.items():
        assert set(table) <= set(BASE[model_type]), model_type  # every shape key is written out, so each can go


@pytest.mark.parametrize("model_type", hf.MODEL_TYPES)
def test_the_defaults_are_transformers_config_classes(model_type):
    """Each entry of a type's table is the default of that field in transformers' config class; the extras that
    its module or cache reads are no fields of it."""
    fields = {f.name: f.default for f in dataclasses.fields(CONFIG_MAPPING[model_type])}
    for key, default in {**hf.DEFAULTS[model_type], **hf.ROUTER.get(model_type, {})}.items():
        assert fields[key] == default, (model_type, key)
    assert not set(hf.EXTRAS[model_type]) & set(fields)
    assert hf.PAD_DEFAULTS.get(model_type) == fields.get("pad_token_id")
    assert hf.TRANSFORMERS_VERSION == __import__("transformers").__version__


@pytest.mark.parametrize("model_type", hf.MODEL_TYPES)
def test_null_is_taken_where_the_class_takes_it(model_type):
    types = {f.name: str(f.type) for f in dataclasses.fields(CONFIG_MAPPING[model_type])}
    nullable = {k for k in hf.DEFAULTS[model_type] if "None" in types[k]}
    assert {k for k in hf.NULLABLE[model_type] if k in hf.DEFAULTS[model_type]} == nullable


# DeepseekV2Config's num_experts_per_tok defaults to null: its router's torch.topk(scores, k=None) raises on the CPU
FAILS_ON_A_REAL_DEVICE = {("deepseek_v2", "num_experts_per_tok"): "num_experts_per_tok is null .the default of "
                                                                  "DeepseekV2Config.: the router picks",
                          # MinistralConfig leaves head_dim null: its attention's head_dim ** -0.5 fails
                          ("ministral", "head_dim"): "head_dim is not in the file, and ministral's config class leaves "
                                                     "it null, which its module cannot run",
                          # YoutuConfig's h_kv = 16 (or h = 16) beside the file's 64: num_key_value_groups h // h_kv
                          # repeats the latent's h heads of K and V 4 times (or 0), which the CPU's matmul refuses
                          ("youtu", "num_attention_heads"): "num_key_value_heads=64 with latent attention: K and V of "
                                                            "all num_attention_heads=16 heads",
                          ("youtu", "num_key_value_heads"): "num_key_value_heads=16 with latent attention: K and V of "
                                                            "all num_attention_heads=64 heads",
                          # KimiLinearConfig's h = h_kv = 32 beside the file's 64: the same repeat of K and V
                          ("kimi_linear", "num_attention_heads"): "num_key_value_heads=64 with latent attention: K and "
                                                                  "V of all num_attention_heads=32 heads",
                          ("kimi_linear", "num_key_value_heads"): "num_key_value_heads=32 with latent attention: K and "
                                                                  "V of all num_attention_heads=64 heads"}


# A key whose default, where the file leaves it out, sets a part of Gemma 4 not built here: refused, naming the part
# (Gemma4TextConfig's per-layer input embeddings of 256; its full blocks' head_dim 512, or d_head 256 beside the file's
# global_head_dim 8)
NOT_BUILT_DEFAULTS = {("gemma4_text", "hidden_size_per_layer_input"): "per-layer input embeddings",
                      ("gemma4_text", "global_head_dim"): "full-attention blocks of their own head width",
                      ("gemma4_text", "head_dim"): "full-attention blocks of their own head width"}


@pytest.mark.parametrize("model_type, key", [(t, k) for t in hf.MODEL_TYPES for k in [None, *hf.DEFAULTS[t], *hf.EXTRAS[t]]
                                             if k is None or k in BASE[t]])
def test_each_key_left_out_takes_the_types_default(model_type, key):
    """The base file, one shape key taken away (None: none), read by the explorer and built by transformers: the
    same parameters and the same KV cache per token, or a refusal that names the key."""
    doc = {k: v for k, v in BASE[model_type].items() if k != key}
    if (model_type, key) in FAILS_ON_A_REAL_DEVICE:  # the meta device builds and runs it; a real one cannot
        with pytest.raises(HFConfigError, match=FAILS_ON_A_REAL_DEVICE[model_type, key]):
            from_hf(doc)
        return
    if (model_type, key) in NOT_BUILT_DEFAULTS:  # transformers builds it; the refusal names the part not built
        reference(doc)
        with pytest.raises(HFConfigError, match=NOT_BUILT_DEFAULTS[model_type, key]):
            from_hf(doc)
        return
    agree(doc)
    if key in hf.NULL_FAILS.get(model_type, ()) and hf.DEFAULTS[model_type].get(key, 0) is None:  # its class's null,
        # which its module cannot run (dots1's experts): transformers fails to build it, and the refusal names the key
        with pytest.raises(HFConfigError, match=f"{key} is not in the file, and {model_type}'s config class leaves it"):
            from_hf(doc)
        return
    if key in hf.DEFAULTS[model_type] and key not in hf.RULE_KEYS and not (key == "num_hidden_layers" and (
            "layer_types" in doc or "mlp_layer_types" in doc)):  # a per-block list then sets L too (both refuse)
        assert f"{key} = " in read_hf(doc).notes[0]  # "not in the file, so <type>'s defaults …: <key> = <default>"


@pytest.mark.parametrize("model_type", ["llama", "mistral", "ministral3", "phi3", "cohere", "qwen2", "qwen3"])
def test_random_files_match_transformers(model_type):
    rng = random.Random(model_type)
    for _ in range(8):
        h_kv = rng.choice([1, 2, 4])
        h = h_kv * rng.choice([1, 2, 3])
        doc = {"model_type": model_type, "vocab_size": rng.randrange(8, 300), "num_hidden_layers": rng.randrange(1, 4),
               "num_attention_heads": h, "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(8, 200),
               "max_position_embeddings": rng.randrange(8, 100_000), "tie_word_embeddings": rng.random() < 0.5}
        if rng.random() < 0.5:
            doc["head_dim"] = 2 * rng.randrange(1, 20)
            doc["hidden_size"] = rng.randrange(8, 200)
        else:
            doc["hidden_size"] = h * 2 * rng.randrange(1, 12)
        for key in ("attention_bias", "mlp_bias"):
            if rng.random() < 0.5:
                doc[key] = rng.random() < 0.5
        if model_type in ("mistral", "ministral3", "phi3"):
            doc["sliding_window"] = rng.choice([None, rng.randrange(2, 9)])
        if model_type in ("ministral3", "phi3"):  # their pad_token_id (11, 32,000) is a row of the token table
            doc["pad_token_id"] = rng.randrange(0, doc["vocab_size"])
        agree(doc)


@pytest.mark.parametrize("model_type", hf.MOE_TYPES)
def test_random_mixtures_of_experts_match_transformers(model_type):
    """Random small files of each mixture of experts: total parameters and the KV cache per token as transformers'
    module on the meta device (or both refuse); experts, k, widths and (Qwen) which blocks are MoE drawn too."""
    rng = random.Random(model_type)
    for _ in range(8):
        h_kv = rng.choice([1, 2, 4])
        h = h_kv * rng.choice([1, 2, 3])
        L = rng.randrange(1, 5)
        E = rng.randrange(1, 9)
        doc = {"model_type": model_type, "vocab_size": rng.randrange(8, 300), "num_hidden_layers": L,
               "num_attention_heads": h, "num_key_value_heads": h_kv, "intermediate_size": rng.randrange(8, 200),
               "max_position_embeddings": rng.randrange(8, 100_000), "tie_word_embeddings": rng.random() < 0.5,
               "num_experts_per_tok": rng.randrange(1, E + 1), "hidden_size": h * 2 * rng.randrange(1, 12)}
        doc["num_local_experts" if model_type == "mixtral" else "num_experts"] = E
        if model_type != "mixtral":
            doc.update(moe_intermediate_size=rng.randrange(4, 100), decoder_sparse_step=rng.randrange(1, 3),
                       mlp_only_layers=rng.sample(range(L), rng.randrange(0, L)))
        if model_type == "qwen2_moe":
            doc.update(shared_expert_intermediate_size=rng.randrange(4, 100), qkv_bias=rng.random() < 0.5)
        if model_type == "qwen3_next":  # every block full attention (its Gated DeltaNet blocks are not built)
            doc.update(shared_expert_intermediate_size=rng.randrange(4, 100), full_attention_interval=1)
        if model_type == "granitemoehybrid":  # an attention block at least, and small Mamba 2 heads
            doc.update(num_local_experts=E, layer_types=["full_attention"] + ["mamba"] * (L - 1), mamba_n_heads=2,
                       mamba_d_state=4, mamba_chunk_size=8, shared_intermediate_size=rng.randrange(0, 50))
        if model_type == "kimi_linear":  # KDA in block 0 beside NoPE latent attention (all MoE but block 0), h_kv = h
            doc.update(num_hidden_layers=max(L, 2), num_key_value_heads=h, moe_intermediate_size=rng.randrange(4, 100),
                       layer_types=["linear_attention"] + ["full_attention"] * (max(L, 2) - 1), pad_token_id=0,
                       linear_num_heads=2, linear_head_dim=4)
        if model_type == "jamba":  # attention in the even blocks (dense: the experts in the odd ones), Mamba in the odd
            doc.update(attn_layer_period=2, attn_layer_offset=0, mamba_d_state=4)
        if model_type in ("qwen3_moe", "qwen3_next") and rng.random() < 0.5:
            doc["attention_bias"] = rng.random() < 0.5
        if rng.random() < 0.3:
            doc["norm_topk_prob" if model_type != "mixtral" else "router_jitter_noise"] = rng.choice([True, False]) \
                if model_type != "mixtral" else 0.01
        agree(doc)


def test_gpt2_files_match_transformers():
    rng = random.Random(2)
    for _ in range(8):
        h = rng.choice([1, 2, 3, 4])
        doc = {"model_type": "gpt2", "vocab_size": rng.randrange(8, 300), "n_positions": rng.randrange(4, 3000),
               "n_embd": h * rng.randrange(1, 30), "n_layer": rng.randrange(1, 4), "n_head": h,
               "tie_word_embeddings": rng.random() < 0.5}
        if rng.random() < 0.5:
            doc["n_inner"] = rng.randrange(1, 200)
        assert ours(doc) == reference(doc), doc


@pytest.mark.parametrize("doc, ignored", [
    ({**BASE["mistral"], "attention_bias": True, "mlp_bias": True}, "attention_bias, mlp_bias"),
    ({**BASE["qwen3"], "mlp_bias": True}, "mlp_bias"),
    ({**BASE["qwen2"], "attention_bias": False, "mlp_bias": True}, "attention_bias, mlp_bias"),
    ({**BASE["mistral"], "layer_types": ["full_attention", "full_attention"]}, ""),
    ({**BASE["llama"], "num_local_experts": 8, "num_experts_per_tok": 2}, "num_experts_per_tok, num_local_experts"),
    ({**BASE["gpt2"], "head_dim": 7, "n_ctx": 2048, "num_key_value_heads": 2}, "num_key_value_heads, head_dim, n_ctx"),
])
def test_keys_the_type_does_not_have_are_ignored_as_transformers_ignores_them(doc, ignored):
    assert ours(doc) == reference(doc)
    notes = [n for n in read_hf(doc).notes if n.startswith("ignored")]
    assert notes == ([f"ignored, as transformers ignores them ({doc['model_type']} has no such setting): {ignored}"]
                     if ignored else [])


def test_gpt2_sizes_its_position_table_by_n_positions_alone():
    doc = {k: v for k, v in BASE["gpt2"].items() if k != "n_positions"} | {"n_ctx": 2_048}
    cfg = from_hf(doc)
    assert cfg.T_max == 1_024 and ours(doc) == reference(doc)  # W_pe has GPT2Config's 1,024 rows, not n_ctx's
    aliased = {k: v for k, v in BASE["gpt2"].items() if k != "n_embd"} | {"hidden_size": 96}
    assert from_hf(aliased).d == 96 and ours(aliased) == reference(aliased)  # GPT2Config's attribute_map


def test_qwen3_attention_bias_is_on_q_k_v_and_w_o():
    cfg = from_hf(BASE["qwen3"])
    assert cfg.bias == "attn" and (cfg.qkv_bias, cfg.proj_bias, cfg.mlp_bias) == (True, True, False)


@pytest.mark.parametrize("attention, mlp, bias", [(False, False, "none"), (True, False, "attn"), (False, True, "mlp"),
                                                  (True, True, "all")])
def test_llama_biases(attention, mlp, bias):
    doc = {**BASE["llama"], "attention_bias": attention, "mlp_bias": mlp}
    assert from_hf(doc).bias == bias and ours(doc) == reference(doc)


# --- windows ----------------------------------------------------------------------------------------------------
def test_mistral_without_sliding_window_takes_the_4096_window():
    doc = {k: v for k, v in BASE["mistral"].items() if k != "sliding_window"} | {"max_position_embeddings": 32_768}
    assert CONFIG_MAPPING["mistral"](**{k: v for k, v in doc.items() if k != "model_type"}).sliding_window == 4_096
    read = read_hf(doc)
    assert (read.config.window, read.config.full_layers) == (4_096, ())
    assert ("a sliding window W = 4,096 (sliding_window (not in the file: mistral's default)) on every block: each "
            "query sees the last W keys, and a windowed block's KV cache keeps W − 1 = 4,095 tokens after a prefill"
            in read.notes)
    agree(doc)


MIXED = "masks every block of .* but layer_types lists full_attention blocks"
NO_WINDOW = "layer_types lists sliding_attention blocks but no window applies"
NEVER = "attention never windows, but transformers' cache would keep only"


@pytest.mark.parametrize("doc, window, full", [
    ({**BASE["mistral"], "sliding_window": 4}, 4, ()),
    ({**BASE["mistral"], "sliding_window": 8}, 8, ()),  # longer than T: the cache keeps every token
    ({**BASE["qwen2"], "max_window_layers": 1, "layer_types": None}, 16, (0,)),  # block 1 is windowed
    ({**BASE["qwen2"], "sliding_window": 3, "layer_types": ["full_attention", "sliding_attention"]}, 3, (0,)),
    ({**BASE["qwen3"], "sliding_window": 2, "layer_types": ["sliding_attention", "sliding_attention"]}, 2, ()),
    ({**BASE["qwen2"], "use_sliding_window": False, "layer_types": ["sliding_attention", "full_attention"]}, NO_WINDOW,
     None),
    ({**BASE["qwen3"], "use_sliding_window": False, "layer_types": None, "max_window_layers": 0}, None, ()),
    # transformers' cache reads sliding_window and layer_types for every type, its config class's fields or not
    ({**BASE["llama"], "sliding_window": 4}, NEVER, None),
    ({**BASE["gpt2"], "sliding_window": 2, "layer_types": ["sliding_attention", "full_attention"]}, NEVER, None),
    ({**BASE["llama"], "sliding_window": 4, "layer_types": ["full_attention", "full_attention"]}, None, ()),
    ({**BASE["mistral"], "layer_types": ["sliding_attention", "full_attention"]}, NO_WINDOW, None),
    ({**BASE["mistral"], "sliding_window": 4, "layer_types": ["full_attention", "sliding_attention"]}, MIXED, None),
    ({**BASE["mixtral"], "sliding_window": 4}, 4, ()),
    ({**BASE["qwen3_moe"], "use_sliding_window": True, "sliding_window": 5, "layer_types": None}, 5, ()),
    ({**BASE["qwen3_moe"], "use_sliding_window": True, "sliding_window": 5}, MIXED, None),
])
def test_a_window_is_read_as_transformers_masks_and_caches_it(doc, window, full):
    if isinstance(window, str):
        with pytest.raises(HFConfigError, match=window):
            from_hf(doc)
        return
    cfg = from_hf(doc)
    assert (cfg.window, cfg.full_layers) == (window, full)
    assert ours(doc) == reference(doc)


def test_a_head_width_of_d_over_h_is_floored_as_transformers_floors_it():
    """Mistral's class sets head_dim = hidden_size // num_attention_heads: 128 // 48 = 2 features a head, set apart."""
    doc = {**BASE["mistral"], "head_dim": None, "num_attention_heads": 48}
    assert from_hf(doc).head_dim == 2 and ours(doc) == reference(doc)


# --- RoPE's settings, in both spellings ---------------------------------------------------------------------------
@pytest.mark.parametrize("rope", [
    {"rope_theta": 500_000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}},
    {"rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0}},
    {"rope_parameters": {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 1.0}},
    {"partial_rotary_factor": 1},
])
def test_rope_settings_change_no_shape(rope):
    doc = {**BASE["llama"], **rope}
    assert ours(doc) == reference(doc)


@pytest.mark.parametrize("rope, given", [
    ({"partial_rotary_factor": 0.5}, "partial_rotary_factor = 0.5"),
    ({"rope_parameters": {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5}},
     "rope_parameters.partial_rotary_factor = 0.5"),
])
def test_partial_rotary_is_ignored_where_the_types_module_ignores_it(rope, given):
    """Llama's rotary embedding reads no partial_rotary_factor: it rotates all d_head features, and so does the
    reading, saying so (Phi-3's reads it: tests/test_rotary.py)."""
    doc = {**BASE["llama"], **rope}
    assert ours(doc) == reference(doc) and from_hf(doc).rotary_dim is None
    assert f"ignored, as transformers' llama module ignores it (RoPE rotates all d_head features): {given}" in \
        read_hf(doc).notes


# --- today's context lengths ---------------------------------------------------------------------------------
COUNTS = json.loads((PUBLISHED / "counts.json").read_text())


@pytest.mark.parametrize("name", ["mistral-nemo-12b", "qwen3-4b-instruct-2507"])
def test_todays_context_lengths_are_read_and_counted_exactly(name):
    doc = json.loads((PUBLISHED / f"{name}.json").read_text())
    read = read_hf(doc)
    assert budget(read.config).params_exact == COUNTS[name]["parameters"]
    T_max = doc["max_position_embeddings"]
    assert read.config.T_max == T_max and read.config.T == 8_192
    assert f"T set to 8,192 of the {T_max:,}-token context (T_max, from max_position_embeddings)" in read.notes


@pytest.mark.parametrize("name", ["mistral-nemo-12b", "qwen3-4b-instruct-2507", "mixtral-8x7b", "qwen3-30b-a3b"])
def test_the_preset_is_its_published_file(name):
    from model import PRESETS

    assert PRESETS[name] == from_hf(json.loads((PUBLISHED / f"{name}.json").read_text()))


# --- mixtures of experts ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, active", [("mixtral-8x7b", 12_879_925_248), ("qwen3-30b-a3b", 3_353_032_704)])
def test_published_mixtures_of_experts_are_counted_total_and_active(name, active):
    doc = json.loads((PUBLISHED / f"{name}.json").read_text())
    b = budget(from_hf(doc))
    assert (b.params_exact, b.params_active) == (COUNTS[name]["parameters"], active)


def test_the_routings_grouping_is_named_as_changing_no_shape():
    doc = {**BASE["qwen3_moe"], "n_group": 4, "topk_group": 2}
    assert ours(doc) == ours(BASE["qwen3_moe"]) == reference(doc)
    assert read_hf(doc).notes[-1] == ("ignored, as transformers ignores them (qwen3_moe routes over all E experts): "
                                      "n_group, topk_group, the routing's grouping (DeepSeek's experts in groups), "
                                      "which changes no shape or count either")


def test_the_router_settings_are_read_and_named_as_changing_no_shape():
    doc = {**BASE["qwen3_moe"], "norm_topk_prob": True, "router_aux_loss_coef": 0.01}
    assert ours(doc) == ours({**doc, "norm_topk_prob": False}) == reference(doc)
    note = read_hf(doc).notes[-1]
    assert note.startswith("the router's settings, which change no shape or count: norm_topk_prob = true (the k weights "
                           "renormalised to sum to 1, as this module does); router_aux_loss_coef = 0.01")
    assert "output_router_logits = false (the default)" in note
    assert "norm_topk_prob = false (the default) (the k weights used as softmax gives them" in \
        read_hf(BASE["qwen2_moe"]).notes[-1]
    assert "router_jitter_noise = 0.0 (the default) (noise on the router's input in training)" in \
        read_hf(BASE["mixtral"]).notes[-1]


@pytest.mark.parametrize("change, message", [
    ({"norm_topk_prob": "yes"}, "norm_topk_prob='yes': norm_topk_prob (whether the k weights are renormalised to sum "
                                "to 1) must be true or false"),
    ({"router_aux_loss_coef": -1}, "router_aux_loss_coef=-1: router_aux_loss_coef (the load-balancing loss's weight) "
                                   "must be a number from 0"),
    ({"num_experts": -1}, "num_experts=-1: num_experts (the routed experts E) must be a whole number of at least 0"),
    ({"num_experts_per_tok": 9}, "k=9 exceeds E=8: each token goes to k of the E experts, so k must be from 1 to 8 "
                                 "(config.json: E = num_experts, k = num_experts_per_tok)"),
    ({"moe_intermediate_size": 0}, "moe_intermediate_size=0: moe_intermediate_size (each expert's width d_expert)"),
    ({"mlp_only_layers": "0"}, "mlp_only_layers='0': mlp_only_layers (the blocks that keep a dense MLP) must be a list "
                               "of block indices such as [0, 1] or null"),
    ({"mlp_only_layers": [True]}, "mlp_only_layers=[True]"),
    ({"num_experts": 5_000}, "num_experts=5,000 is out of range: E (routed experts of an MoE block"),
])
def test_a_bad_mixture_of_experts_is_one_line(change, message):
    with pytest.raises(HFConfigError, match=re.escape(message)):
        from_hf({**BASE["qwen3_moe"], **change})


@pytest.mark.parametrize("change, kinds, note", [
    ({"mlp_only_layers": [3, 7, -1]}, ("dense", "moe", "dense", "dense"),
     "mlp_only_layers lists 7, -1, beyond the 4 blocks: ignored, as transformers ignores them"),
    ({"num_experts": 0}, ("dense",) * 4, "num_experts = 0: every block is dense, its MLP of width "
                                         "intermediate_size = 48"),
    ({"decoder_sparse_step": 5}, ("dense",) * 4, "decoder_sparse_step = 5 and mlp_only_layers leave no block a "
                                                 "mixture of experts: every block is dense, its MLP of width intermediate_size = 48"),
    ({"decoder_sparse_step": 1, "mlp_only_layers": []}, ("moe",) * 4,
     "intermediate_size = 48 (a dense block's MLP) changes nothing here: every block is a mixture of experts"),
])
def test_which_blocks_are_moe_as_transformers_builds_them(change, kinds, note):
    doc = {**BASE["qwen3_moe"], **change}
    read = read_hf(doc)
    assert read.config.block_kinds == kinds and note in read.notes
    assert ours(doc) == reference(doc)


def test_deepseek_v1_is_refused_by_name():
    listed = f"the {len(hf.MODEL_TYPES)} types read here .gpt2, llama, mistral, ministral3, qwen2, qwen3, …: python -m " \
             "model --help lists them.$"
    with pytest.raises(HFConfigError, match=f"model_type='deepseek' is not one of {listed}"):
        from_hf({**json.loads((PUBLISHED / "deepseek-v3.json").read_text()), "model_type": "deepseek"})


def test_llama4_scouts_context_is_a_number_not_a_table():
    cfg = from_hf({**BASE["llama"], "max_position_embeddings": 10_485_760})
    assert cfg.T_max == 10_485_760 and cfg.T == 8_192
    assert budget(cfg).params_exact == budget(from_hf(BASE["llama"], T=8_192)).params_exact  # RoPE: no table


def test_the_cli_says_what_it_did_with_t(tmp_path, capsys):
    path = PUBLISHED / "mistral-nemo-12b.json"
    assert main(["--hf-config", str(path), "--table", "budget"]) == 0
    out, err = capsys.readouterr()
    assert "12,247,782,400" in out
    assert err == f"note: {path}: T set to 8,192 of the 1,024,000-token context (T_max, from max_position_embeddings)\n"


# --- malformed files: one line each, never a traceback ---------------------------------------------------------------
def _file(**change) -> bytes:
    doc = {**BASE["llama"], **change}
    return json.dumps({k: v for k, v in doc.items() if v is not ...}, allow_nan=True).encode()


DEEP = b"[" * 100_000 + b"]" * 100_000
MALFORMED: list[tuple[str, bytes, str]] = [  # (name, file, what the one line must say)
    ("not JSON", b"{nope", "config.json is not JSON (Expecting property name"),
    ("empty", b"", "config.json is not JSON"),
    ("an array", b"[1, 2]", "must hold a JSON object of keys and values, got a JSON array"),
    ("a string", b'"llama"', "got a JSON string"),
    ("a number", b"42", "got a JSON number"),
    ("null", b"null", "got a JSON null"),
    ("not UTF-8", b'{"model_type": "llama", "name": "\xff\xfe"}', "config.json is not UTF-8 text (byte 0xff"),
    ("huge", b'{"pad": "' + b"x" * hf.MAX_BYTES + b'"}', "config.json is over 1,000,000 bytes, the most read"),
    ("deep arrays", DEEP, "nests arrays or objects too deeply"),
    ("deep value", b'{"model_type": "llama", "hidden_size": ' + DEEP + b"}", "nests arrays or objects too deeply"),
    ("no model_type", _file(model_type=...), f"model_type=null is not one of the {len(hf.MODEL_TYPES)} types read "
                                             "here (gpt2, llama, mistral, ministral3, qwen2, qwen3, …: python -m model "
                                             "--help lists them) (the file has no model_type)"),
    ("model_type a number", _file(model_type=3), "model_type=3 is not one of"),
    ("unknown model_type", _file(model_type="gemma5_text"), "model_type='gemma5_text' is not one of"),
    ("size as text", _file(hidden_size="128"), "hidden_size='128': hidden_size (the model width d) must be a whole "
                                               "number of at least 1"),
    ("size as float", _file(hidden_size=128.0), "hidden_size=128.0: hidden_size"),
    ("size zero", _file(hidden_size=0), "hidden_size=0: hidden_size"),
    ("size negative", _file(num_hidden_layers=-2), "num_hidden_layers=-2: num_hidden_layers (the number of blocks L)"),
    ("size NaN", _file(vocab_size=float("nan")), "vocab_size=nan: vocab_size (the vocabulary size V) must be"),
    ("size infinite", _file(intermediate_size=float("inf")), "intermediate_size=inf: intermediate_size"),
    ("size absurd", _file(hidden_size=10**40), "hidden_size=a 41-digit number is out of range: d (model width"),
    ("size true", _file(hidden_size=True), "hidden_size=true: hidden_size"),
    ("size null", _file(hidden_size=None), "hidden_size=null: hidden_size"),
    ("h_kv zero", _file(num_key_value_heads=0), "num_key_value_heads=0: num_key_value_heads (the heads h_kv of K and V) "
                                                "must be a whole number of at least 1 or null"),
    ("h_kv null where the class refuses it", _file(model_type="mistral", num_key_value_heads=None),
     "num_key_value_heads=null: num_key_value_heads (the heads h_kv of K and V) must be a whole number of at least 1"),
    ("d_head null where the class refuses it", _file(model_type="qwen3", head_dim=None), "head_dim=null: head_dim"),
    ("llama's d not a multiple of h", _file(num_attention_heads=48),
     "hidden_size=128 is not a multiple of num_attention_heads=48, which transformers' LlamaConfig requires"),
    ("d_head zero", _file(head_dim=0), "head_dim=0: head_dim (the features per head d_head"),
    ("h_kv as text", _file(num_key_value_heads="16"), "num_key_value_heads='16'"),
    ("h_kv does not divide h", _file(num_key_value_heads=12), "h_kv=12 does not divide h=64"),
    ("odd d_head with RoPE", _file(head_dim=7), "d_head=7 is odd: RoPE rotates pairs of features"),
    ("V too large", _file(vocab_size=10**7), "vocab_size=10,000,000 is out of range: V (vocabulary size (rows of W_te)) "
                                             "must be from 1 to 524,288"),
    ("L too large", _file(num_hidden_layers=5_000), "num_hidden_layers=5,000 is out of range: L"),
    ("context too long", _file(max_position_embeddings=10**9), "max_position_embeddings=1,000,000,000 is out of range: "
                                                               "T_max"),
    ("d_ff too large", _file(intermediate_size=10**6), "intermediate_size=1,000,000 is out of range: d_ff"),
    ("flag as text", _file(tie_word_embeddings="no"), "tie_word_embeddings='no': tie_word_embeddings (whether the head "
                                                      "is tied to W_te) must be true or false"),
    ("flag as number", _file(attention_bias=1), "attention_bias=1: attention_bias"),
    ("window as text", _file(model_type="mistral", sliding_window="8"), "sliding_window='8': sliding_window"),
    ("window as list", _file(model_type="mistral", sliding_window=[8]), "sliding_window=[8]: sliding_window"),
    ("window and layer types", _file(model_type="mistral", sliding_window=8, layer_types=["full_attention"] * 2),
     "sliding_window=8 masks every block of mistral, but layer_types lists full_attention blocks"),
    ("window of a llama", _file(sliding_window=8), "sliding_window=8: llama's attention never windows"),
    ("layer_types a number", _file(model_type="qwen2", layer_types=3), "layer_types=3: layer_types (each block's "
                                                                       "attention) must be a list of words"),
    ("layer_types too short", _file(model_type="qwen2", layer_types=["full_attention"]),
     "layer_types lists 1 blocks, num_hidden_layers is 2"),
    ("layer_types unknown", _file(model_type="qwen2", layer_types=["global", "full_attention"]),
     "layer_types lists 'global': each block's attention must be one of full_attention, sliding_attention, "
     "chunked_attention, linear_attention"),
    ("layer_types chunked", _file(model_type="qwen2", layer_types=["chunked_attention", "full_attention"]),
     "layer_types lists chunked_attention, which qwen2's module does not mask (Llama 4's chunked attention is "
     "llama4_text's)"),
    ("use_sliding_window as text", _file(model_type="qwen2", use_sliding_window="yes"), "use_sliding_window='yes'"),
    ("max_window_layers negative", _file(model_type="qwen2", max_window_layers=-1), "max_window_layers=-1"),
    ("rope_parameters a word", _file(rope_parameters="fast"), "rope_parameters='fast': rope_parameters (RoPE's "
                                                              "settings) must be an object"),
    ("rope_scaling a number", _file(rope_scaling=5), "rope_scaling=5: rope_scaling"),
    ("partial above 1", _file(partial_rotary_factor=1.5), "partial_rotary_factor=1.5: partial_rotary_factor (the "
                                                          "share of each head RoPE rotates) must be a number above 0"),
    ("partial NaN", _file(partial_rotary_factor=float("nan")), "partial_rotary_factor=nan: partial_rotary_factor"),
    ("rope_theta negative", _file(rope_theta=-1), "rope_theta=-1: rope_theta (RoPE's base θ) must be a number above 0"),
    ("nested rope_theta null", _file(rope_parameters={"rope_type": "default", "rope_theta": None}),
     "rope_parameters.rope_theta=null: rope_parameters.rope_theta (RoPE's base θ) must be a number above 0"),
    ("nested partial factor", _file(rope_parameters={"rope_type": "default", "rope_theta": 1e4,
                                                     "partial_rotary_factor": "half"}),
     "rope_parameters.partial_rotary_factor='half': rope_parameters.partial_rotary_factor (the share of each head"),
    ("rope_type unknown", _file(rope_parameters={"rope_type": "warp", "rope_theta": 1e4}),
     "rope_parameters.rope_type='warp' is not a RoPE scaling rule transformers knows"),
    ("gpt2 cross-attention", json.dumps({**BASE["gpt2"], "add_cross_attention": True}).encode(),
     "add_cross_attention=true adds cross-attention layers"),
    ("gpt2 no positions", json.dumps({**BASE["gpt2"], "n_positions": 0}).encode(), "n_positions=0: n_positions"),
    ("gpt2 n_inner zero", json.dumps({**BASE["gpt2"], "n_inner": 0}).encode(), "n_inner=0: n_inner"),
    ("gpt2 aliases disagree", json.dumps({**BASE["gpt2"], "hidden_size": 128}).encode(),
     "n_embd=96 and hidden_size=128 set the same thing (the model width d) to different values"),
]


def _read(data: bytes):
    """The Python surface: the bytes parsed, then Config.from_hf."""
    return Config.from_hf(hf.parse(data))


def test_at_least_forty_malformed_files():
    assert len(MALFORMED) >= 40 and len({name for name, _, _ in MALFORMED}) == len(MALFORMED)


@pytest.mark.parametrize("name, data, message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_file_is_one_line_in_python_and_on_the_cli(name, data, message, tmp_path, capsys):
    with pytest.raises(ValueError) as caught:  # HFConfigError, never TypeError, KeyError or RecursionError
        _read(data)
    assert isinstance(caught.value, HFConfigError) and "\n" not in str(caught.value)
    assert message in str(caught.value), str(caught.value)
    path = tmp_path / "config.json"
    path.write_bytes(data)
    with pytest.raises(SystemExit) as done:
        main(["--hf-config", str(path)])
    out, err = capsys.readouterr()
    assert done.value.code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_transformers_is_a_test_dependency_only():
    """Reading a config.json, the CLI and the page's modules never import transformers."""
    import subprocess
    import sys

    code = ("import sys, json; import model, model.cli, model.hf, app.page, app.export.spec; "
            "from model.config import read_hf; read_hf(json.load(open(sys.argv[1]))); "
            "print('transformers' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(PUBLISHED / "mistral-nemo-12b.json")], capture_output=True,
                          text=True, cwd=Path(__file__).parents[1], timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**40, 10**40) | st.floats() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(model_type=st.sampled_from([*hf.MODEL_TYPES, "gemma4_text", None]),
       change=st.dictionaries(st.sampled_from([*hf.SHAPE_KEYS, "rope_theta", "model_type"]), _JSON, max_size=4))
def test_any_values_give_a_config_or_one_line(model_type, change):
    """Whatever the values of the shape keys, Config.from_hf returns a Config or raises HFConfigError in one line."""
    assert_config_or_one_line({**BASE.get(model_type, BASE["llama"]), "model_type": model_type, **change})


@settings(max_examples=200, deadline=None)
@given(model_type=st.sampled_from(["llama", "qwen3", "olmo_hybrid", "gemma3_text"]),
       inner=st.dictionaries(st.sampled_from(["rope_theta", "rope_type", "partial_rotary_factor", "factor"]), _JSON,
                             max_size=3))
def test_any_rope_parameters_give_a_config_or_one_line(model_type, inner):
    """Whatever rope_parameters holds (a nested θ null or a string), Config.from_hf returns a Config or raises
    HFConfigError in one line."""
    assert_config_or_one_line({**BASE[model_type], "rope_parameters": inner})


def assert_config_or_one_line(doc: dict) -> None:
    """`from_hf(doc)` is a Config, or HFConfigError in one line of under 600 characters."""
    try:
        cfg = from_hf(doc)
    except HFConfigError as e:
        assert "\n" not in str(e) and len(str(e)) < 600
    else:
        assert isinstance(cfg, Config)


@pytest.mark.parametrize("sizes", [{}, {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                                        "num_key_value_heads": 2, "intermediate_size": 32, "moe_intermediate_size": 16,
                                        "shared_expert_intermediate_size": 24, "num_experts": 4,
                                        "num_experts_per_tok": 2, "vocab_size": 100}])
def test_the_qwen2_moe_file_transformers_writes_reads_exactly(sizes, tmp_path):
    """Qwen2MoeConfig writes "sliding_window": 0 beside "use_sliding_window": false: no window, as its module reads it
    (its N and KV cache equal transformers' module's); with the window on, 0 is refused in one line."""
    CONFIG_MAPPING["qwen2_moe"](**sizes).save_pretrained(tmp_path)
    doc = json.loads((tmp_path / "config.json").read_text())
    assert doc["sliding_window"] == 0 and doc["use_sliding_window"] is False
    assert from_hf(doc).window is None and ours(doc) == reference(doc)
    with pytest.raises(HFConfigError, match="sliding_window=0: sliding_window .the attention window in tokens. must"):
        from_hf({**doc, "use_sliding_window": True})


def text_and_head(module: torch.nn.Module) -> tuple[torch.nn.Module, torch.nn.Module]:
    """A multimodal module's text model and head: Gemma 3's, Mistral 3's and LLaVA's `model.language_model` and
    `lm_head`, Llama 4's language model (a causal LM of its own) `language_model.model` and `language_model.lm_head`."""
    if hasattr(module, "model"):
        return module.model.language_model, module.lm_head
    return module.language_model.model, module.language_model.lm_head


def wrapped(doc: dict) -> tuple[int, int]:
    """transformers' multimodal model of the wrapper file `doc` on the meta device: its text model's parameters (the
    language model and the head where it is not tied) and the KV-cache bytes at fp32 after a text-only prefill."""
    config = CONFIG_MAPPING[doc["model_type"]](**{k: v for k, v in doc.items() if k != "model_type"})
    experts = {"experts_implementation": "batched_mm"} if hf.WRAPPERS[doc["model_type"]].text in hf.MOE_TYPES else {}
    with torch.device("meta"):
        module = AutoModelForImageTextToText.from_config(config, attn_implementation="eager", **experts)
    text, lm_head = text_and_head(module)
    head = 0 if lm_head.weight is text.embed_tokens.weight else lm_head.weight.numel()
    runs = module if hasattr(module, "model") else module.language_model  # Llama 4's text-only forward: its LM's
    out = runs(input_ids=torch.zeros(*BT, dtype=torch.long, device="meta"), use_cache=True)
    return sum(p.numel() for p in text.parameters()) + head, cache_bytes(out.past_key_values)


TEXT = {"vocab_size": 96, "hidden_size": 64, "intermediate_size": 48, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 64}
# Qwen3.5's text models: 4 blocks (3 Gated DeltaNet, 1 attention), small Gated DeltaNet sizes, small experts
QWEN3_5_TEXT = {"num_hidden_layers": 4, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
                "linear_key_head_dim": 8, "linear_value_head_dim": 8}
WRAPPER_TEXT = {"qwen3_5": QWEN3_5_TEXT,
                "gemma4": {"hidden_size_per_layer_input": 0, "global_head_dim": 16},  # what Gemma 4 reads here
                "qwen3_5_moe": {**QWEN3_5_TEXT, "intermediate_size": None, "num_experts": 8, "num_experts_per_tok": 2,
                                "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16}}


# gemma4's multimodal module cannot run a prefill on the meta device (Tensor.item): tests/test_gemma4.py runs it on the CPU
@pytest.mark.parametrize("wrapper", sorted(w for w in hf.WRAPPERS if w != "gemma4"))
@pytest.mark.parametrize("tie", [None, True, False])
@pytest.mark.parametrize("text_tie", [None, True, False])
def test_a_multimodal_wrapper_reads_its_text_model_as_transformers_builds_it(wrapper, tie, text_tie):
    """gemma3, mistral3, llava, llama4 and qwen3_5 files: the text model's N (the head tied as the wrapper ties it) and KV cache equal
    transformers' multimodal module's, and a note names what is left out."""
    text = {k: v for k, v in {**TEXT, **WRAPPER_TEXT.get(wrapper, {})}.items() if v is not None}
    text.update({"tie_word_embeddings": text_tie} if text_tie is not None else {})
    doc = {"model_type": wrapper, "text_config": text, **({"tie_word_embeddings": tie} if tie is not None else {})}
    assert ours(doc) == wrapped(doc)
    assert any(note.startswith(f"the text model of a {wrapper} file: text_config, read as "
                               f"{hf.WRAPPERS[wrapper].text}") and "left out: the " in note for note in read_hf(doc).notes)


@pytest.mark.parametrize("doc, message", [
    ({"model_type": "gemma3", "text_config": [1]}, "config.json: text_config=.1.: a gemma3 file's text_config must be"),
    ({"model_type": "mistral3", "text_config": {**TEXT, "hidden_size": -4}},
     "config.json's text_config .mistral3.: hidden_size=-4"),
    ({"model_type": "llava", "text_config": {"model_type": "bert"}},
     "config.json's text_config .llava.: model_type='bert' is not one of"),
    ({"model_type": "gemma3", "tie_word_embeddings": "yes"}, "tie_word_embeddings='yes': tie_word_embeddings"),
])
def test_a_bad_wrapper_is_one_line(doc, message):
    with pytest.raises(HFConfigError, match=message):
        from_hf(doc)


@settings(max_examples=150, deadline=None)
@given(wrapper=st.sampled_from(sorted(hf.WRAPPERS)),
       top=st.dictionaries(st.sampled_from(["text_config", "tie_word_embeddings", "vision_config"]), _JSON, max_size=2),
       inner=st.dictionaries(st.sampled_from([*hf.SHAPE_KEYS, "model_type"]), _JSON, max_size=3))
def test_any_wrapper_gives_a_config_or_one_line(wrapper, top, inner):
    """Whatever a multimodal wrapper's text_config and tie hold, a Config or HFConfigError in one line."""
    assert_config_or_one_line({"model_type": wrapper, "text_config": {**TEXT, **inner}, **top})


# Presets of issue 40's families: the config class's defaults (each class describes that flagship) and the model card.
FLAGSHIPS = {"gemma-7b": ("gemma", 8_537_680_896), "phi-3-mini": ("phi3", 3_821_079_552)}  # their classes' defaults


@pytest.mark.parametrize("name", FLAGSHIPS)
def test_a_flagship_preset_is_its_config_class_and_transformers_count(name):
    """The preset is what the reader makes of the class's defaults, and its N is transformers' module's on the meta
    device (Gemma 7B's card: 8.54B; Phi-3-mini's: 3.8B)."""
    model_type, published = FLAGSHIPS[name]
    preset = TABLE_PRESETS[name]
    doc = {**json.loads(CONFIG_MAPPING[model_type]().to_json_string()), "model_type": model_type}
    assert read_hf(doc, B=preset.B, T=preset.T).config == preset
    with torch.device("meta"):
        module = AutoModelForCausalLM.from_config(CONFIG_MAPPING[model_type]())
    assert budget(preset).params_exact == sum(p.numel() for p in module.parameters()) == published
