"""A Hugging Face config.json read exactly as transformers reads it: `read(doc)` -> `Reading`.

transformers builds a model from a config.json through the config class of its `model_type`: a key the file
leaves out takes that class's default, and a key the class and its module never read is ignored. This reader
does the same, from data:

- `DEFAULTS`: one table per model type, each shape key's default in transformers' config class
  (`TRANSFORMERS_VERSION`; tests build the classes and compare every entry). A default that is None is
  resolved as the class resolves it (`num_key_value_heads` None -> h, `head_dim` None -> d / h,
  GPT-2's `n_inner` None -> 4d).
- `SHAPE_KEYS`: every key that shapes a model of some type we know, with what it sets. A key of that list the
  file's type does not have (mistral's `attention_bias`, qwen3's `mlp_bias`, a `num_local_experts` in a llama
  file) is ignored, as transformers ignores it, and the reading says so.
- Both spellings of RoPE's settings: the top-level `rope_theta` / `rope_scaling` / `partial_rotary_factor`, and
  transformers 5's `rope_parameters`. Only `partial_rotary_factor` changes a shape (RoPE rotating part of a
  head); θ and the scaling rules change values only.
- Sliding windows (`_window`): the window W and which blocks attend through it, as transformers' module masks them
  and its cache keeps them (mistral's default window of 4,096 included): the fields `window` and `full_layers`. Where
  the two disagree (a llama or gpt2 file's window, which the cache applies but the attention does not; a mistral,
  mixtral or qwen3_moe file whose layer_types keeps some blocks' cache whole while the mask windows every block) the
  file is refused by name.
- A key whose value (given or the type's default) changes what would be built but is not modelled is refused by
  name: cross-attention.
- Partial rotary (`_rotary`): partial_rotary_factor sets d_rot = int(d_head · factor) where the type's module reads it
  (Phi-3's, for Phi-4-mini); every other type's module ignores it, and so does the reading, saying so.
- Phi-3 and Phi-4 (phi3): Llama's block with fused qkv and gate_up matrices (the same parameters and FLOPs), a window
  on every block where sliding_window is set, as Mistral's; a partial_rotary_factor below 1 rotates part of each
  head (Phi-4-mini's 0.75).
- Command R (cohere): a parallel block (`model.parts.parallel`), one LayerNorm without bias per block; its per-head
  QK-norm (use_qk_norm, Command R+) is refused by name.
- Gemma 1 (gemma): GeGLU (hidden_act "gelu", the released files' word, read as its tanh approximation, as
  GemmaConfig reads it), embeddings scaled by √d; no window, no soft-caps, no sandwich norms.
- Multimodal wrappers (`WRAPPERS`: gemma3, mistral3, llava): their text_config, read as its own type, the head
  tied as the wrapper ties it; the vision tower and projector are named as left out.
- Gemma 2 and 3 (gemma2, gemma3_text): GeGLU, sandwich norms, embeddings scaled by √d, query_pre_attn_scalar, the
  soft-caps (Gemma 2's scores make its attention eager, as transformers runs it), QK-norm in Gemma 3, and the layer
  types' defaults (Gemma 2 every other block windowed, Gemma 3 all but every sliding_window_pattern-th, 6).
- Gemma 4's text model (gemma4_text, and the gemma4 wrapper's text_config) where it is Gemma 3's block with unscaled
  scores (`_gemma4`): five windowed blocks to one full, the last always full; its proportional RoPE, v's norm without a
  gain and layer_scalar are values. Its per-layer input embeddings, full blocks of their own head width
  (global_head_dim, per_layer_config), keys as values, KV sharing, the MoE block and bidirectional attention are
  refused in one line each, naming the part not built (the class defaults: their per-layer input embeddings).
- gpt-oss (gpt_oss): attention sinks (which make its attention eager, as transformers runs it: it has no sdpa), the
  router's and the experts' biases, the clamped SwiGLU's limit and gain (values), every other block windowed.
- Mixtures of experts (mixtral, qwen2_moe, qwen3_moe, gpt_oss): the experts E, k per token and their width,
  Qwen2-MoE's shared expert with its sigmoid gate, which blocks are MoE (decoder_sparse_step, mlp_only_layers; an
  index beyond the blocks is ignored, as transformers ignores it; no MoE block at all reads as a dense model). The router's settings
  (`ROUTER`: norm_topk_prob, the load-balancing loss, jitter) change no shape: they are read, checked and named.
- VaultGemma (vaultgemma): Gemma 2 without the norms on attention's and the MLP's outputs (a norm before each only).
- Granite MoE (granitemoe): Granite's scales (values) with Mixtral's experts, of width intermediate_size, in every block.
- Granite MoE Shared (granitemoeshared): Granite MoE with one shared SwiGLU expert of width shared_intermediate_size
  (input_linear (d, 2·d_shared), output_linear), no gate, added to the routed experts' output; none where it is 0.
- Mellum (mellum): Qwen3-MoE's block (QK-norm per head), a window on the blocks layer_types lists sliding (its class's
  default: none), a dense MLP of width intermediate_size on those mlp_layer_types lists dense (default: none).
- FlexOlmo (flex_olmo): OLMo 2's post-norm block (QK-norm over all heads' width) with OLMoE's experts, of width
  intermediate_size, in every block.
- GLM-4-0414 (glm4): GLM's block (RoPE on half of each head, biases on q, k and v) with a plain RMSNorm on attention's
  and on the MLP's output before each residual add (post_self_attn_layernorm, post_mlp_layernorm: `post_norms`).
- HyperCLOVA X (hyperclovax): Granite's block and scales (its logits multiplied, not divided) with a plain RMSNorm on
  attention's and on the MLP's output where use_post_norm (Peri-LN; its class's default: `post_norms`).
- Youtu-LLM (youtu): DeepSeek-V3's latent attention in Llama's block, every MLP a dense SwiGLU (its class deletes the
  experts' keys).
- Aria's text model (aria_text): Llama's block with Mixtral's experts (moe_num_experts, moe_topk, of width
  intermediate_size) in every block and one ungated shared SwiGLU of width intermediate_size · moe_num_shared_experts
  (E_shared experts of width d_expert: the same matrices' sizes); mlp_bias, which biases the shared SwiGLU only, refused.
- ERNIE 4.5 MoE (ernie4_5_moe): ERNIE 4.5's block (RoPE's pairs interleaved) with experts (moe_num_experts, moe_k,
  of width moe_intermediate_size) in every moe_layer_interval-th block from moe_layer_start_index to
  moe_layer_end_index (-1: the last block), a shared SwiGLU of width moe_intermediate_size · moe_num_shared_experts,
  and its router's correction bias, a parameter of E per MoE block (`score_bias`: it picks each token's experts, not
  their weights); use_bias, which biases its head and shared experts but not its routed experts, refused.
- PhiMoE (phimoe, Phi-3.5-MoE): Mixtral's experts in every block beside LayerNorms that keep their biases
  (`norm_biased`) whatever attention_bias puts on q, k, v and W_o; its router (sparsemixer) always picks 2 experts per
  token, whatever num_experts_per_tok says (k = 2); a window on every block where sliding_window is set; lm_head_bias
  refused.
- Nemotron (nemotron, Nemotron-4 and Minitron): LayerNorm1P (biased LayerNorms, the gain 1 + g a value), the ReLU² MLP
  of two matrices, RoPE on half of each head (its class's partial_rotary_factor 0.5); its class's null h_kv refused.
- Phi-1, 1.5 and 2 (phi): a parallel block on one LayerNorm (`parallel`), biases everywhere and a bias on the head's
  logits (`head_bias`), a GELU MLP, RoPE on half of each head (its class's partial_rotary_factor 0.5; an odd count,
  which its attention cannot fit, refused); its LayerNorm on q's and k's heads (qk_layernorm) refused as a part not built.
- GPT-NeoX (gpt_neox; GPT-NeoX-20B, Pythia): biased LayerNorms, a GELU MLP with biases (attention's by attention_bias,
  the LayerNorms' kept without them), q, k and v in one matrix (its rows head by head: values only), RoPE on a quarter
  of each head (rotary_pct, or partial_rotary_factor), and, by use_parallel_residual, a parallel block with a norm
  each (`parallel_norms`: x + Attn(ln_1(x)) + MLP(ln_2(x))); head_dim other than d / h refused.
- StableLM 2 (stablelm): biased LayerNorms, RoPE on a quarter of each head (an odd count, which its attention
  broadcasts wider than d_head, refused), q, k and v biased by use_qkv_bias, a parallel block on one norm by
  use_parallel_residual; its per-head q and k LayerNorms (qk_layernorm) refused as a part not built.
- dots.llm1 (dots1): Qwen3's attention (QK-norm per head, windows on the blocks from max_window_layers on where
  sliding_window is set) with DeepSeek-V3's experts (a sigmoid router with a correction bias and groups, shared experts
  of width moe_intermediate_size · n_shared_experts) in the blocks from first_k_dense_replace on; its class's null
  experts and k, which its module cannot run, refused.
- Hunyuan 3 (hy_v3): QK-norm per head, biases on q, k, v and W_o by attention_bias, experts from a sigmoid router
  with a correction bias (no groups) and a shared SwiGLU of width moe_intermediate_size · num_shared_experts (0 falls
  back to intermediate_size, as its module's `or` does) in the blocks mlp_layer_types lists sparse (default: all but
  the first); mlp_bias, which biases the dense and shared MLPs only, refused.
- Solar Open (solar_open): Llama's block (q, k and v biased by attention_bias, W_o never) with GLM-4.5's experts (a
  sigmoid router, shared experts of width moe_intermediate_size · n_shared_experts) in every block; its class deletes
  intermediate_size, first_k_dense_replace and use_qk_norm (a file's are ignored, as its module ignores them); RoPE on
  all of each head (a partial_rotary_factor below 1, which its attention cannot run, is refused).
- GLM-4 MoE Lite (glm4_moe_lite): DeepSeek-V3's modules (latent attention, RoPE's pairs interleaved by rope_interleave;
  experts from a sigmoid router with a correction bias and groups, shared experts of width moe_intermediate_size ·
  n_shared_experts) in the blocks mlp_layer_types lists sparse (default: all but the first; first_k_dense_replace is
  not read); head_dim is its class's other name of qk_rope_head_dim, and a file's head_dim is the one set (it
  overwrites qk_rope_head_dim); a partial_rotary_factor its attention cannot run refused.
- DeepSeek-V3.2 (deepseek_v32) and GLM-5 (glm_moe_dsa): GLM-4 MoE Lite's blocks (latent attention, a query latent
  always) with DeepSeek sparse attention (`_sparse`: index_n_heads, index_head_dim and index_topk as the fields
  index_heads, index_dim, index_topk), blocks sparse by mlp_layer_types (default: from first_k_dense_replace on);
  layer_types lists indexed_attention only; GLM-5's "shared" indexer layers (indexer_types, or index_topk_freq /
  index_topk_pattern), which reuse another layer's top-k and hold no indexer, refused in one line.
- MiniCPM3 (minicpm3): DeepSeek-V2's latent attention (RoPE's pairs as rotate-half, not interleaved) in Llama's block,
  every MLP a dense SwiGLU; its multipliers are values (the token rows times scale_emb, each branch times
  scale_depth / √L, the hidden state divided by hidden_size / dim_model_base before the head); v_head_dim null reads
  as its class's hidden_size // num_attention_heads; mlp_bias (MLP biases beside latent attention) refused.
- NoPE blocks (`_nope`: the field `nope_layers`): SmolLM3's (smollm3: no_rope_layers, or every
  no_rope_layer_interval-th block; its NoPE blocks windowed where use_sliding_window), Command A's (cohere2) and
  EXAONE 4's (exaone4: post-norms and QK-norm per head) full-attention blocks, Llama 4's.
- Llama 4 (llama4_text, and the llama4 wrapper's text_config, its head tied by text_config's own flag): chunked
  attention in its RoPE blocks (`_llama4_blocks`: the fields `window`, `full_layers`, `chunked`), QK-norm without a
  gain (`qk_l2`), its NoPE blocks' temperature (`attn_temperature`), MoE blocks by interleave_moe_layer_step or
  moe_layers beside one shared expert, its dense blocks' MLP of intermediate_size_mlp.
- Arcee AFM (arcee) and Jais 2 (jais2): Llama's block with the ReLU² MLP of two matrices; Jais 2's LayerNorms with
  biases, read where its matrices have theirs too.
- Qwen3-Next (qwen3_next) where every block is full attention (layer_types, or full_attention_interval = 1): QK-norm
  per head, partial RoPE (its class's partial_rotary_factor 0.25), an output gate on the heads (`attn_gate`: q_proj's
  rows hold each head's query and gate), Qwen2-MoE's experts with the gated shared expert, blocks MoE by
  decoder_sparse_step and mlp_only_layers. A file with any linear_attention block is refused in one line naming the
  Gated DeltaNet layers it needs (`PART_BLOCKS`, `_hybrid_blocks`); the keys that size only them are named as not read.
- Nemotron-H and Nemotron 3 (nemotron_h): layers of one operation each, x + op(norm(x)) (layers_block_type, or the
  legacy hybrid_override_pattern's letters M, *, -, E), read in pairs as the lesson's blocks (`_nemotron_h`): a Mamba 2
  or attention layer and the MLP or mixture-of-experts layer after it, the same parameters, FLOPs and cache. Its
  attention has no RoPE and no biases, its MLP and experts are ReLU² without a gate, one shared ReLU² MLP beside the
  experts (DeepSeek-V3's sigmoid router: values), the head never tied. A layer that pairs with none (a Mamba 2 layer
  before an attention layer, as in Nemotron 3 Nano's pattern) is refused in one line: not modelled yet.
- `SAME_MODULE` types (sarvam_mla, sarvam_moe): their class subclasses DeepSeek-V3's or GLM-4.5's and transformers
  builds that type's module: read as it, from their own class's defaults and key names. Qwen3.5's text models
  (qwen3_5_text, qwen3_5_moe_text; `SAME_BLOCKS`) likewise, as qwen3_next: their module runs its blocks, projections
  split otherwise.

Every value is checked for its type, and a size for being a whole number of at least 1; a problem raises
`HFConfigError` (a ValueError) in one line that names the key, the value and what is expected. The bounds of
the sizes are `model.config`'s, which builds the `Config` (`model.config.from_hf`): this module imports nothing
from the rest of `model`.
"""
from __future__ import annotations

import dataclasses
import json
import math
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass

TRANSFORMERS_VERSION = "5.24.0"  # the config classes DEFAULTS were taken from
MAX_BYTES = 1_000_000  # a config.json is a few kB (one with a per-layer list, tens of kB): longer is refused
MODEL_TYPES = ("gpt2", "llama", "mistral", "ministral3", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe",
               "gemma", "gemma2", "gemma3_text", "phi3", "cohere", "gpt_oss", "deepseek_v2", "deepseek_v3",
               "internlm3", "exaone", "iquestcoder", "granite", "helium", "ernie4_5", "seed_oss", "cwm", "olmo2", "olmo3", "glm", "glm4_moe", "minimax_m2", "starcoder2", "gpt_bigcode",
               "olmoe", "ministral", "sarvam_mla", "sarvam_moe", "smollm3", "cohere2", "exaone4", "arcee", "jais2",
               "youtu", "vaultgemma", "granitemoe", "granitemoeshared", "mellum", "flex_olmo", "glm4", "hyperclovax",
               "llama4_text", "solar_open", "aria_text", "dots1", "hy_v3", "glm4_moe_lite", "deepseek_v32", "glm_moe_dsa",
               "minicpm3", "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "granitemoehybrid", "kimi_linear",
               "nemotron_h", "jamba", "falcon_h1", "gemma4_text", "ernie4_5_moe", "phimoe", "nemotron", "stablelm",
               "gpt_neox", "phi", "apertus", "apertus1p5_text", "olmo", "olmo_hybrid", "gptj", "codegen", "falcon",
               "nanochat")
LLAMA_KIN = ("internlm3", "exaone", "iquestcoder")  # LlamaConfig's subclasses, run by Llama's own module
GEMMA_TYPES = ("gemma2", "gemma3_text", "vaultgemma")
MOE_TYPES = ("llama4_text", "mixtral", "qwen2_moe", "qwen3_moe", "gpt_oss", "deepseek_v2", "deepseek_v3", "glm4_moe", "minimax_m2",
             "olmoe", "sarvam_mla", "sarvam_moe", "granitemoe",
             "granitemoeshared", "mellum", "flex_olmo", "solar_open", "aria_text", "dots1", "hy_v3", "glm4_moe_lite",
             "deepseek_v32", "glm_moe_dsa",
             "qwen3_next", "qwen3_5_moe_text", "granitemoehybrid", "kimi_linear", "nemotron_h", "jamba", "ernie4_5_moe", "phimoe")
# Types whose config class subclasses another type's and whose causal LM is that type's own module (transformers' auto
# map builds DeepseekV3ForCausalLM for sarvam_mla): read as that type, from their own class's defaults and key names,
# with what their class's __post_init__ sets where the file has nothing (no multi-token-prediction layer: their own
# num_mtp_layers = 0; Sarvam-MoE's RoPE over all of each head).
SAME_MODULE = {"sarvam_mla": "deepseek_v3", "sarvam_moe": "glm4_moe", "qwen3_5_text": "qwen3_next",
               "qwen3_5_moe_text": "qwen3_next"}
SAME_MODULE_SETS = {"sarvam_mla": {"num_nextn_predict_layers": 0},
                    "sarvam_moe": {"num_nextn_predict_layers": 0, "partial_rotary_factor": 1.0},
                    "qwen3_5_text": {"num_experts": 0},  # every block dense
                    "qwen3_5_moe_text": {"decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": True}}
# Types whose own module runs the blocks of the type they are read as, with matrices split otherwise (Qwen3.5's Gated
# DeltaNet projects q, k, v, z, b and a by four matrices where Qwen3-Next's does by two): the same parameters, FLOPs and
# cache; the note says so in place of "transformers builds that type's module".
SAME_BLOCKS = {"qwen3_5_text": "Qwen3-Next's blocks (its every MLP dense), its Gated DeltaNet's projections split "
                               "into four matrices: the same parameters, FLOPs and cache",
               "qwen3_5_moe_text": "Qwen3-Next's blocks (every block's MLP a mixture of experts with a gated shared "
                                   "expert), its Gated DeltaNet's projections split into four matrices: the same "
                                   "parameters, FLOPs and cache"}

# The shape keys of each type and their defaults in transformers' config class of that type.
DEFAULTS: dict[str, dict[str, object]] = {
    "gpt2": {  # GPT2Config
        "vocab_size": 50_257, "n_positions": 1_024, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": None,
        "tie_word_embeddings": True, "add_cross_attention": False,
    },
    "gptj": {  # GPTJConfig (GPT-J 6B): one LayerNorm read by a parallel block, RoPE on rotary_dim features of each head,
        # biases on the MLP and the head only
        "vocab_size": 50_400, "n_positions": 2_048, "n_embd": 4_096, "n_layer": 28, "n_head": 16, "n_inner": None,
        "rotary_dim": 64, "tie_word_embeddings": False,
    },
    "codegen": {  # CodeGenConfig (CodeGen 6B): GPT-J's block, q, k and v in one matrix laid out in 4 groups
        "vocab_size": 50_400, "n_positions": 2_048, "n_embd": 4_096, "n_layer": 28, "n_head": 16, "n_inner": None,
        "rotary_dim": 64, "tie_word_embeddings": False,
    },
    "falcon": {  # FalconConfig (Falcon-7B): one LayerNorm read by a parallel block, one K/V head (multi_query), RoPE;
        # Falcon-40B and 180B's new_decoder_architecture: num_kv_heads K/V heads, a LayerNorm each for attention and the
        # MLP (num_ln_in_parallel_attn, 2 there by default); null flags are false, as its module reads them
        "vocab_size": 65_024, "hidden_size": 4_544, "num_hidden_layers": 32, "num_attention_heads": 71,
        "num_kv_heads": None, "max_position_embeddings": 2_048, "tie_word_embeddings": True, "bias": False,
        "multi_query": True, "new_decoder_architecture": False, "parallel_attn": True,
        "num_ln_in_parallel_attn": None, "alibi": False, "ffn_hidden_size": None,
    },
    "llama": {  # LlamaConfig
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
    },
    "mistral": {  # MistralConfig
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 14_336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "sliding_window": 4_096,
    },
    "ministral3": {  # Ministral3Config: Mistral's block, no window by default, the queries scaled by position (values)
        "vocab_size": 131_072, "hidden_size": 4_096, "intermediate_size": 14_336, "num_hidden_layers": 34,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 262_144,
        "tie_word_embeddings": False, "sliding_window": None,
    },
    "qwen2": {  # Qwen2Config
        "vocab_size": 151_936, "hidden_size": 4_096, "intermediate_size": 22_016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 32_768,
        "tie_word_embeddings": False, "use_sliding_window": False, "sliding_window": 4_096, "max_window_layers": 28,
        "layer_types": None,
    },
    "qwen3": {  # Qwen3Config
        "vocab_size": 151_936, "hidden_size": 4_096, "intermediate_size": 22_016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "max_position_embeddings": 32_768,
        "tie_word_embeddings": False, "attention_bias": False, "use_sliding_window": False, "sliding_window": 4_096,
        "max_window_layers": 28, "layer_types": None,
    },
    "mixtral": {  # MixtralConfig: every block MoE, each expert of width intermediate_size
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 14_336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "sliding_window": None, "num_experts_per_tok": 2, "num_local_experts": 8,
    },
    "qwen2_moe": {  # Qwen2MoeConfig: a shared expert with a sigmoid gate; dense blocks of width intermediate_size
        "vocab_size": 151_936, "hidden_size": 2_048, "intermediate_size": 5_632, "num_hidden_layers": 24,
        "num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 32_768,
        "tie_word_embeddings": False, "use_sliding_window": False, "sliding_window": 4_096, "max_window_layers": 28,
        "decoder_sparse_step": 1, "moe_intermediate_size": 1_408, "shared_expert_intermediate_size": 5_632,
        "num_experts_per_tok": 4, "num_experts": 60, "mlp_only_layers": None, "qkv_bias": True, "layer_types": None,
    },
    "qwen3_moe": {  # Qwen3MoeConfig
        "vocab_size": 151_936, "hidden_size": 2_048, "intermediate_size": 6_144, "num_hidden_layers": 24,
        "num_attention_heads": 32, "num_key_value_heads": 4, "max_position_embeddings": 32_768,
        "tie_word_embeddings": False, "attention_bias": False, "use_sliding_window": False, "sliding_window": 4_096,
        "decoder_sparse_step": 1, "moe_intermediate_size": 768, "num_experts_per_tok": 8, "num_experts": 128,
        "mlp_only_layers": None,
    },
    "gemma": {  # GemmaConfig: GeGLU, tok · √d, no window, no soft-caps, no sandwich norms
        "vocab_size": 256_000, "hidden_size": 3_072, "intermediate_size": 24_576, "num_hidden_layers": 28,
        "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256, "max_position_embeddings": 8_192,
        "tie_word_embeddings": True, "attention_bias": False, "use_bidirectional_attention": None,
    },
    "phi3": {  # Phi3Config: Llama's block with q, k, v in one matrix and gate and up in another
        "vocab_size": 32_064, "hidden_size": 3_072, "intermediate_size": 8_192, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "sliding_window": None,
    },
    "cohere": {  # CohereConfig: a parallel block, one LayerNorm without bias per block, the logits scaled (a value)
        "vocab_size": 256_000, "hidden_size": 8_192, "intermediate_size": 22_528, "num_hidden_layers": 40,
        "num_attention_heads": 64, "num_key_value_heads": None, "max_position_embeddings": 8_192,
        "tie_word_embeddings": True, "attention_bias": False, "use_qk_norm": False,
    },
    "cohere2": {  # Cohere2Config (Command R7B, Command A): Cohere's parallel block, three windowed blocks with RoPE to
        # one full block without (NoPE)
        "vocab_size": 256_000, "hidden_size": 8_192, "intermediate_size": 22_528, "num_hidden_layers": 40,
        "num_attention_heads": 64, "num_key_value_heads": None, "max_position_embeddings": 8_192,
        "tie_word_embeddings": True, "attention_bias": False, "sliding_window": 4_096, "layer_types": None,
    },
    "gemma2": {  # Gemma2Config: every other block windowed, scores and logits soft-capped
        "vocab_size": 256_000, "hidden_size": 2_304, "intermediate_size": 9_216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 8_192,
        "tie_word_embeddings": True, "attention_bias": False, "query_pre_attn_scalar": 256, "sliding_window": 4_096,
        "layer_types": None, "final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0,
        "hidden_activation": "gelu_pytorch_tanh", "use_bidirectional_attention": None,
    },
    "vaultgemma": {  # VaultGemmaConfig: Gemma 2's block without its norms on attention's and the MLP's outputs
        "vocab_size": 256_000, "hidden_size": 2_304, "intermediate_size": 9_216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 8_192,
        "tie_word_embeddings": True, "attention_bias": False, "query_pre_attn_scalar": 256, "sliding_window": 4_096,
        "layer_types": None, "final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0,
        "hidden_activation": "gelu_pytorch_tanh",
    },
    "gemma3_text": {  # Gemma3TextConfig: five windowed blocks to one full, QK-norm, no soft-caps
        "vocab_size": 262_208, "hidden_size": 2_304, "intermediate_size": 9_216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131_072,
        "tie_word_embeddings": True, "attention_bias": False, "query_pre_attn_scalar": 256, "sliding_window": 4_096,
        "layer_types": None, "final_logit_softcapping": None, "attn_logit_softcapping": None,
        "hidden_activation": "gelu_pytorch_tanh", "use_bidirectional_attention": False,
    },
    "gemma4_text": {  # Gemma4TextConfig: Gemma 3's block, five windowed blocks to one full (the last always full), the
        # scores unscaled; per-layer input embeddings, the full blocks' own head width, KV sharing and a mixture of
        # experts beside the MLP are read and refused where set (`_gemma4`)
        "vocab_size": 262_144, "hidden_size": 2_304, "intermediate_size": 9_216, "num_hidden_layers": 30,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131_072,
        "tie_word_embeddings": True, "attention_bias": False, "sliding_window": 512, "layer_types": None,
        "final_logit_softcapping": None, "hidden_activation": "gelu_pytorch_tanh", "use_bidirectional_attention": None,
        "vocab_size_per_layer_input": 262_144, "hidden_size_per_layer_input": 256, "attention_k_eq_v": False,
        "num_kv_shared_layers": 0, "enable_moe_block": False, "use_double_wide_mlp": False, "num_experts": None,
        "top_k_experts": None, "moe_intermediate_size": None,
    },
    "internlm3": {  # InternLM3Config (a LlamaConfig): its biases all or none
        "vocab_size": 128_512, "hidden_size": 4_096, "intermediate_size": 10_240, "num_hidden_layers": 48,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 32_768,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
    },
    "exaone": {  # ExaoneConfig (a LlamaConfig; num_layers and activation_function are its other names)
        "vocab_size": 102_400, "hidden_size": 4_096, "intermediate_size": 14_336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
    },
    "iquestcoder": {  # IQuestCoderConfig (a LlamaConfig)
        "vocab_size": 76_800, "hidden_size": 5_120, "intermediate_size": 27_648, "num_hidden_layers": 80,
        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
    },
    "granite": {  # GraniteConfig: Llama's block, its embeddings, residual branches, scores and logits scaled (values)
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
    },
    "smollm3": {  # SmolLM3Config (SmolLM3-3B): Llama's block, every no_rope_layer_interval-th block without RoPE
        "vocab_size": 128_256, "hidden_size": 2_048, "intermediate_size": 11_008, "num_hidden_layers": 36,
        "num_attention_heads": 16, "num_key_value_heads": 4, "max_position_embeddings": 32_768,
        "tie_word_embeddings": True, "attention_bias": False, "mlp_bias": False, "use_sliding_window": False,
        "sliding_window": None, "no_rope_layers": None, "no_rope_layer_interval": 4, "layer_types": None,
    },
    "llama4_text": {  # Llama4TextConfig (Llama 4 Scout's text model): chunked attention with RoPE and QK-norm in three
        # blocks of four, full attention without RoPE (NoPE) in every fourth; 16 experts, 1 per token, and a shared one
        "vocab_size": 202_048, "hidden_size": 5_120, "intermediate_size": 8_192, "intermediate_size_mlp": 16_384,
        "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
        "max_position_embeddings": 131_072, "tie_word_embeddings": False, "attention_bias": False,
        "num_experts_per_tok": 1, "num_local_experts": 16, "moe_layers": None, "interleave_moe_layer_step": 1,
        "use_qk_norm": True, "no_rope_layers": None, "no_rope_layer_interval": 4, "attention_chunk_size": 8_192,
        "layer_types": None, "attn_temperature_tuning": True,
    },
    "nemotron": {  # NemotronConfig (Nemotron-4, Minitron): LayerNorm1P with biases, a ReLU² MLP of two matrices, RoPE on
        # half of each head (its class's partial_rotary_factor 0.5); h_kv null, which its attention cannot run
        "vocab_size": 256_000, "hidden_size": 6_144, "intermediate_size": 24_576, "num_hidden_layers": 32,
        "num_attention_heads": 48, "head_dim": None, "num_key_value_heads": None, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
    },
    "phi": {  # PhiConfig (Phi-1, 1.5 and 2): a parallel block on one LayerNorm, biases everywhere and on the head, a GELU
        # MLP, RoPE on half of each head (its class's partial_rotary_factor 0.5)
        "vocab_size": 51_200, "hidden_size": 2_048, "intermediate_size": 8_192, "num_hidden_layers": 24,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "qk_layernorm": False,
    },
    "gpt_neox": {  # GPTNeoXConfig (GPT-NeoX-20B, Pythia): LayerNorms with biases, a GELU MLP with biases, q, k and v
        # in one matrix, RoPE on a quarter of each head (rotary_pct), a parallel block with a norm each
        "vocab_size": 50_432, "hidden_size": 6_144, "intermediate_size": 24_576, "num_hidden_layers": 44,
        "num_attention_heads": 64, "max_position_embeddings": 2_048, "tie_word_embeddings": False,
        "use_parallel_residual": True, "attention_bias": True,
    },
    "stablelm": {  # StableLmConfig (StableLM 2): LayerNorms with biases, RoPE on a quarter of each head (its class's
        # partial_rotary_factor 0.25), q, k and v biased by use_qkv_bias, a parallel block by use_parallel_residual
        "vocab_size": 50_304, "hidden_size": 2_560, "intermediate_size": 6_912, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "use_qkv_bias": False, "qk_layernorm": False, "use_parallel_residual": False,
    },
    "arcee": {  # ArceeConfig (AFM-4.5B): Llama's block with a ReLU² MLP of two matrices
        "vocab_size": 32_000, "hidden_size": 2_560, "intermediate_size": 18_432, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
    },
    "apertus": {  # ApertusConfig (Apertus-8B): Llama's block with QK-norm and a non-gated MLP through xIELU
        "vocab_size": 131_072, "hidden_size": 4_096, "intermediate_size": 14_336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 65_536,
        "tie_word_embeddings": False, "attention_bias": False,
    },
    "apertus1p5_text": {  # Apertus1p5TextConfig (Apertus 1.5's text model): Apertus' block, a wider vocabulary; its
        # head pruned to output_vocab_size rows is refused as a part not built
        "vocab_size": 266_752, "hidden_size": 4_096, "intermediate_size": 14_336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 65_536,
        "tie_word_embeddings": False, "attention_bias": False, "output_vocab_size": None,
    },
    "jais2": {  # Jais2Config: LayerNorms (with biases), biases on every matrix, a ReLU² MLP of two matrices, RoPE
        "vocab_size": 150_272, "hidden_size": 3_328, "intermediate_size": 26_624, "num_hidden_layers": 32,
        "num_attention_heads": 26, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 8_192,
        "tie_word_embeddings": False, "attention_bias": True, "mlp_bias": True,
    },
    "granitemoe": {  # GraniteMoeConfig: Granite's scales, Mixtral's experts (of width intermediate_size) in every block
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "num_local_experts": 8, "num_experts_per_tok": 2,
    },
    "granitemoeshared": {  # GraniteMoeSharedConfig: Granite MoE with a shared expert beside the routed ones (0: none)
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "num_local_experts": 8, "num_experts_per_tok": 2,
        "shared_intermediate_size": 0,
    },
    "granitemoehybrid": {  # GraniteMoeHybridConfig (Granite 4.0-H): Mamba 2 or attention per block (layer_types: every
        # block Mamba 2 by default), a shared SwiGLU in every block (the MLP where there are no experts), no RoPE
        # unless position_embedding_type is "rope"
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "num_local_experts": 8, "num_experts_per_tok": 2,
        "shared_intermediate_size": 1_024, "position_embedding_type": None, "layer_types": None, "mamba_n_heads": 128,
        "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_head": "auto", "mamba_d_conv": 4, "mamba_expand": 2,
        "mamba_chunk_size": 256, "mamba_conv_bias": True, "mamba_proj_bias": False,
    },
    "jamba": {  # JambaConfig (AI21's Jamba, ai21labs/Jamba-v0.1): Mamba (the first one) or attention without RoPE per
        # block (attention in block i where i % attn_layer_period == attn_layer_offset), a mixture of SwiGLU experts
        # in block i where i % expert_layer_period == expert_layer_offset, the dense SwiGLU elsewhere (`_jamba`)
        "vocab_size": 65_536, "tie_word_embeddings": False, "hidden_size": 4_096, "intermediate_size": 14_336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 262_144,
        "num_experts_per_tok": 2, "num_experts": 16, "expert_layer_period": 2, "expert_layer_offset": 1,
        "attn_layer_period": 8, "attn_layer_offset": 4, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2,
        "mamba_dt_rank": "auto", "mamba_conv_bias": True, "mamba_proj_bias": False,
    },
    "falcon_h1": {  # FalconH1Config (TII's Falcon-H1): attention and Mamba 2 side by side in every block, both reading
        # one norm of x (`model.parts.hybrid`), then a SwiGLU MLP; Mamba 2 without its gated norm by default (`_falcon_h1`)
        "vocab_size": 128_000, "tie_word_embeddings": False, "hidden_size": 4_096, "intermediate_size": 14_336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8_192,
        "mamba_d_ssm": 1_024, "mamba_n_heads": 128, "mamba_d_head": "auto", "mamba_n_groups": 1, "mamba_d_state": 256,
        "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256, "mamba_conv_bias": True,
        "mamba_proj_bias": False, "mamba_norm_before_gate": True, "mamba_rms_norm": False, "projectors_bias": False,
        "attention_bias": False, "mlp_bias": False,
    },
    "nemotron_h": {  # NemotronHConfig (Nemotron-H, Nemotron 3): layers of one operation each, x + op(norm(x)): Mamba
        # 2, attention without RoPE, a ReLU² MLP or a mixture of ReLU² experts (layers_block_type; by default
        # linear_attention, moe, full_attention, mlp), read in pairs (`_nemotron_h`)
        "vocab_size": 131_072, "hidden_size": 4_096, "layers_block_type": None, "tie_word_embeddings": False,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 4_096,
        "attention_bias": False, "sliding_window": None, "intermediate_size": 21_504, "mlp_hidden_act": "relu2",
        "mlp_bias": False, "ssm_state_size": 128, "mamba_num_heads": 128, "mamba_head_dim": 64,
        "mamba_hidden_act": "silu", "n_groups": 8, "conv_kernel": 4, "chunk_size": 128, "use_conv_bias": True,
        "use_bias": False, "n_routed_experts": 8, "n_shared_experts": 1, "moe_intermediate_size": 7_688,
        "moe_shared_expert_intermediate_size": 7_688, "moe_latent_size": None, "num_experts_per_tok": 2,
    },  # num_nextn_predict_layers (0): its multi-token-prediction layers, which transformers never builds (a note)
    "mellum": {  # MellumConfig: Qwen3-MoE's block, windows and dense blocks by per-block lists (all full, all MoE)
        "vocab_size": 98_304, "hidden_size": 2_304, "intermediate_size": 7_168, "num_hidden_layers": 28,
        "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "attention_bias": False, "sliding_window": 1_024, "moe_intermediate_size": 896,
        "num_experts_per_tok": 8, "num_experts": 64, "layer_types": None, "mlp_layer_types": None,
    },
    "flex_olmo": {  # FlexOlmoConfig: OLMo 2's post-norm block with OLMoE's experts (of width intermediate_size) in every block
        "vocab_size": 100_352, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "attention_bias": False, "num_experts_per_tok": 5, "num_experts": 7,
    },
    "hyperclovax": {  # HyperCLOVAXConfig: Granite's scales (logits multiplied) and a norm on each sublayer's output
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "use_post_norm": True,
    },
    "helium": {  # HeliumConfig: attention_bias on q, k and v only; W_o is (d, d)
        "vocab_size": 48_000, "hidden_size": 2_560, "intermediate_size": 7_040, "num_hidden_layers": 24,
        "num_attention_heads": 20, "num_key_value_heads": 20, "head_dim": 128, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
    },
    "ernie4_5": {  # Ernie4_5Config: use_bias on every matrix of the blocks
        "vocab_size": 103_424, "hidden_size": 1_024, "intermediate_size": 3_072, "num_hidden_layers": 18,
        "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 131_072,
        "tie_word_embeddings": True, "use_bias": False,
    },
    "ernie4_5_moe": {  # Ernie4_5_MoeConfig (ERNIE-4.5-21B-A3B): experts from the second block on, two shared experts,
        # the router's correction bias a parameter; moe_layer_end_index -1: the last block (its __post_init__)
        "vocab_size": 103_424, "hidden_size": 2_560, "intermediate_size": 12_288, "num_hidden_layers": 28,
        "num_attention_heads": 20, "num_key_value_heads": 4, "max_position_embeddings": 131_072,
        "tie_word_embeddings": True, "use_bias": False, "moe_intermediate_size": 1_536, "moe_k": 6,
        "moe_num_experts": 64, "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_end_index": -1,
        "moe_layer_interval": 1,
    },
    "seed_oss": {  # SeedOssConfig: attention_bias on q, k and v, attention_out_bias on W_o
        "vocab_size": 155_136, "hidden_size": 4_096, "intermediate_size": 27_648, "num_hidden_layers": 64,
        "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 524_288,
        "tie_word_embeddings": False, "attention_bias": True, "attention_out_bias": False, "mlp_bias": False,
    },
    "cwm": {  # CwmConfig: three windowed blocks to one full (blocks 0, 4, 8, ... full)
        "vocab_size": 128_256, "hidden_size": 6_144, "intermediate_size": 21_504, "num_hidden_layers": 64,
        "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "mlp_bias": False, "sliding_window": 8_192, "layer_types": None,
    },
    "olmo2": {  # Olmo2Config: post-norm wiring, QK-norm over all heads' width
        "vocab_size": 50_304, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False,
    },
    "exaone4": {  # Exaone4Config (EXAONE 4.0): post-norms, QK-norm per head, three windowed blocks with RoPE to one
        # full block without (NoPE)
        "vocab_size": 102_400, "hidden_size": 4_096, "intermediate_size": 16_384, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "sliding_window": 4_096, "sliding_window_pattern": 4, "layer_types": None,
    },
    "olmo3": {  # Olmo3Config: OLMo 2's block, three windowed blocks to one full (blocks 3, 7, 11, ... full)
        "vocab_size": 50_304, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "sliding_window": 4_096, "layer_types": None,
    },
    "glm": {  # GlmConfig (GLM-4): partial RoPE on half of each head, attention_bias on q, k and v only
        "vocab_size": 151_552, "hidden_size": 4_096, "intermediate_size": 13_696, "num_hidden_layers": 40,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "attention_bias": True,
    },
    "glm4": {  # Glm4Config (GLM-4-0414): GLM's block with norms on attention's and the MLP's outputs too
        "vocab_size": 151_552, "hidden_size": 4_096, "intermediate_size": 13_696, "num_hidden_layers": 40,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "attention_bias": True,
    },
    "glm4_moe": {  # Glm4MoeConfig (GLM-4.5-Air): DeepSeek-V3's experts beside grouped-query attention, partial RoPE
        "vocab_size": 151_552, "hidden_size": 4_096, "intermediate_size": 10_944, "num_hidden_layers": 46,
        "num_attention_heads": 96, "num_key_value_heads": 8, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "attention_bias": False, "moe_intermediate_size": 1_408, "num_experts_per_tok": 8,
        "n_shared_experts": 1, "n_routed_experts": 128, "first_k_dense_replace": 1, "use_qk_norm": False,
    },
    "aria_text": {  # AriaTextConfig (Aria's text model): Llama's block with experts and an ungated shared SwiGLU
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 4_096, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "moe_num_experts": 8, "moe_topk": 2,
        "moe_num_shared_experts": 2,
    },
    "dots1": {  # Dots1Config (dots.llm1): Qwen3's attention (QK-norm per head) with DeepSeek-V3's experts; the experts'
        # counts and k have no default (null: refused)
        "vocab_size": 152_064, "hidden_size": 4_608, "intermediate_size": 10_944, "moe_intermediate_size": 1_408,
        "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 32, "n_shared_experts": None,
        "n_routed_experts": None, "num_experts_per_tok": None, "first_k_dense_replace": 0,
        "max_position_embeddings": 2_048, "tie_word_embeddings": False, "attention_bias": False,
        "sliding_window": 4_096, "max_window_layers": 62, "layer_types": None,
    },
    "glm4_moe_lite": {  # Glm4MoeLiteConfig (GLM-4 MoE Lite): DeepSeek-V3's modules, blocks sparse by mlp_layer_types
        "vocab_size": 154_880, "hidden_size": 2_048, "intermediate_size": 10_240, "num_hidden_layers": 47,
        "num_attention_heads": 20, "num_key_value_heads": 20, "max_position_embeddings": 202_752,
        "tie_word_embeddings": False, "attention_bias": False, "kv_lora_rank": 512, "q_lora_rank": 768,
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "v_head_dim": 256, "moe_intermediate_size": 1_536,
        "n_routed_experts": 64, "n_shared_experts": 1, "num_experts_per_tok": 4, "mlp_layer_types": None,
    },
    "deepseek_v32": {  # DeepseekV32Config (DeepSeek-V3.2): GLM-4 MoE Lite's blocks with a lightning indexer in each
        "vocab_size": 129_280, "hidden_size": 7_168, "intermediate_size": 18_432, "num_hidden_layers": 61,
        "num_attention_heads": 128, "num_key_value_heads": 128, "max_position_embeddings": 163_840,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "kv_lora_rank": 512,
        "q_lora_rank": 1_536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
        "moe_intermediate_size": 2_048, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
        "first_k_dense_replace": 3, "mlp_layer_types": None, "index_n_heads": 64, "index_head_dim": 128,
        "index_topk": 2_048, "layer_types": None,  # its head_dim, a field, is set to d_R (`_latent` says so)
    },
    "glm_moe_dsa": {  # GlmMoeDsaConfig (GLM-5): DeepSeek-V3.2's, its indexer's RoPE pairs interleaved
        "vocab_size": 154_880, "hidden_size": 6_144, "intermediate_size": 12_288, "num_hidden_layers": 78,
        "num_attention_heads": 64, "num_key_value_heads": 64, "max_position_embeddings": 202_752,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "kv_lora_rank": 512,
        "q_lora_rank": 2_048, "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "v_head_dim": 256,
        "moe_intermediate_size": 2_048, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
        "first_k_dense_replace": 3, "mlp_layer_types": None, "index_n_heads": 32, "index_head_dim": 128,
        "index_topk": 2_048, "layer_types": None, "indexer_types": None,
    },
    "minicpm3": {  # MiniCPM3Config (MiniCPM3-4B): DeepSeek-V2's latent attention in Llama's block, every MLP dense
        "vocab_size": 73_448, "hidden_size": 2_560, "intermediate_size": 6_400, "num_hidden_layers": 62,
        "num_attention_heads": 40, "num_key_value_heads": 40, "max_position_embeddings": 32_768,
        "tie_word_embeddings": True, "attention_bias": False, "mlp_bias": False, "kv_lora_rank": 256,
        "q_lora_rank": 768, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": None,
    },
    "hy_v3": {  # HYV3Config (Hunyuan 3): QK-norm per head, sigmoid-routed experts and a shared SwiGLU, the first block dense
        "vocab_size": 120_832, "hidden_size": 4_096, "intermediate_size": 13_312, "num_hidden_layers": 80,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "num_experts": 192,
        "num_experts_per_tok": 8, "num_shared_experts": 1, "moe_intermediate_size": 1_536, "mlp_layer_types": None,
    },
    "solar_open": {  # SolarOpenConfig (Solar Open 100B): GLM-4.5's experts in every block beside Llama's attention
        "vocab_size": 196_608, "hidden_size": 4_096, "num_hidden_layers": 48, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131_072, "tie_word_embeddings": False,
        "attention_bias": False, "moe_intermediate_size": 1_280, "num_experts_per_tok": 8, "n_shared_experts": 1,
        "n_routed_experts": 128,
    },
    "phimoe": {  # PhimoeConfig (Phi-3.5-MoE): Mixtral's experts in every block, LayerNorms with biases, top-2 always
        "vocab_size": 32_064, "hidden_size": 4_096, "intermediate_size": 6_400, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "sliding_window": None, "attention_bias": False, "lm_head_bias": False,
        "num_experts_per_tok": 2, "num_local_experts": 16,
    },
    "minimax_m2": {  # MiniMaxM2Config: every block a mixture of experts, QK-norm over all heads, partial RoPE (rotary_dim)
        "vocab_size": 200_064, "hidden_size": 3_072, "intermediate_size": 1_536, "num_hidden_layers": 62,
        "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 196_608,
        "tie_word_embeddings": False, "num_experts_per_tok": 8, "num_local_experts": 256,
    },
    "starcoder2": {  # Starcoder2Config: LayerNorms and biases everywhere, a GELU MLP (c_fc, c_proj), RoPE, GQA
        "vocab_size": 49_152, "hidden_size": 3_072, "intermediate_size": 12_288, "num_hidden_layers": 30,
        "num_attention_heads": 24, "num_key_value_heads": 2, "max_position_embeddings": 4_096,
        "tie_word_embeddings": True, "sliding_window": None, "use_bias": True,
    },
    "gpt_bigcode": {  # GPTBigCodeConfig: GPT-2's block with one K/V head (multi_query)
        "vocab_size": 50_257, "n_positions": 1_024, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": None,
        "tie_word_embeddings": True, "multi_query": True,
    },
    "olmo": {  # OlmoConfig (OLMo 1): Llama's block with LayerNorms of neither a gain nor a bias
        "vocab_size": 50_304, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False,
    },
    "olmoe": {  # OlmoeConfig: every block 64 experts, 8 per token, QK-norm over all heads' width
        "vocab_size": 50_304, "hidden_size": 2_048, "intermediate_size": 2_048, "num_hidden_layers": 16,
        "num_attention_heads": 16, "num_key_value_heads": None, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "attention_bias": False, "num_experts_per_tok": 8, "num_experts": 64,
    },
    "ministral": {  # MinistralConfig (Ministral 8B): Mistral's block, windows by layer_types; head_dim has no default
        "vocab_size": 32_000, "hidden_size": 4_096, "intermediate_size": 14_336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "sliding_window": 4_096, "layer_types": None,
    },
    "gpt_oss": {  # GptOssConfig: every other block windowed, attention sinks, experts with biases, a clamped SwiGLU
        "vocab_size": 201_088, "hidden_size": 2_880, "intermediate_size": 2_880, "num_hidden_layers": 36,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "attention_bias": True, "sliding_window": 128, "layer_types": None,
        "num_experts_per_tok": 4, "num_local_experts": 128, "swiglu_limit": 7.0, "swiglu_alpha": 1.702,
    },
    "deepseek_v2": {  # DeepseekV2Config: latent attention, routed and shared experts (no MTP, a softmax router)
        "vocab_size": 102_400, "hidden_size": 4_096, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "kv_lora_rank": 512,
        "q_lora_rank": 1_536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
        "moe_intermediate_size": 1_407, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": None,
        "first_k_dense_replace": 0,
    },
    "sarvam_mla": {  # SarvamMLAConfig (Sarvam-105B): DeepSeek-V3's module, one dense block, routing over all experts
        "vocab_size": 262_144, "hidden_size": 4_096, "intermediate_size": 16_384, "num_hidden_layers": 32,
        "num_attention_heads": 64, "num_key_value_heads": None, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "attention_bias": False, "kv_lora_rank": 512, "q_lora_rank": None,
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "moe_intermediate_size": 2_048,
        "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1,
    },
    "sarvam_moe": {  # SarvamMoEConfig (Sarvam-30B): GLM-4.5's module, RoPE on all of each head, QK-norm
        "vocab_size": 262_144, "hidden_size": 4_096, "intermediate_size": 8_192, "num_hidden_layers": 19,
        "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 64, "max_position_embeddings": 131_072,
        "tie_word_embeddings": False, "attention_bias": False, "moe_intermediate_size": 1_024, "num_experts_per_tok": 6,
        "n_shared_experts": 1, "n_routed_experts": 128, "first_k_dense_replace": 1, "use_qk_norm": True,
    },
    "youtu": {  # YoutuConfig (Youtu-LLM 2B): DeepSeek-V3's latent attention in Llama's block, every MLP dense (SwiGLU)
        "vocab_size": 128_256, "hidden_size": 2_048, "intermediate_size": 6_144, "num_hidden_layers": 32,
        "num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 131_072,
        "tie_word_embeddings": True, "attention_bias": False, "kv_lora_rank": 512, "q_lora_rank": 1_536,
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
    },
    "qwen3_5_text": {  # Qwen3_5TextConfig: Qwen3-Next's blocks with dense MLPs
        "vocab_size": 248_320, "hidden_size": 4_096, "intermediate_size": 12_288, "num_hidden_layers": 32,
        "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 32_768,
        "tie_word_embeddings": False, "attention_bias": False, "layer_types": None, "linear_num_key_heads": 16,
        "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4,
    },
    "qwen3_5_moe_text": {  # Qwen3_5MoeTextConfig: Qwen3-Next's blocks, every MLP a mixture of experts
        "vocab_size": 248_320, "hidden_size": 2_048, "num_hidden_layers": 40, "num_attention_heads": 16,
        "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32_768, "tie_word_embeddings": False,
        "attention_bias": False, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
        "num_experts_per_tok": 8, "num_experts": 256, "layer_types": None, "linear_num_key_heads": 16,
        "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4,
    },
    "qwen3_next": {  # Qwen3NextConfig: QK-norm per head, an output gate, partial RoPE, Qwen2-MoE's gated shared expert;
        # its blocks by layer_types (full_attention_interval: every n-th full, the others Gated DeltaNet)
        "vocab_size": 151_936, "hidden_size": 2_048, "intermediate_size": 5_632, "num_hidden_layers": 48,
        "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32_768,
        "tie_word_embeddings": False, "attention_bias": False, "decoder_sparse_step": 1, "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512, "num_experts_per_tok": 10, "num_experts": 512, "mlp_only_layers": None,
        "layer_types": None, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
        "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
    },
    "nanochat": {  # NanoChatConfig (nanochat d12): RMSNorms without a gain, one more on the token embeddings, QK-norm
        # without a gain after RoPE, a ReLU² MLP, the logits soft-capped (final_logit_softcapping)
        "vocab_size": 50_304, "hidden_size": 768, "intermediate_size": 8_192, "num_hidden_layers": 12,
        "num_attention_heads": 6, "num_key_value_heads": None, "max_position_embeddings": 2_048,
        "tie_word_embeddings": False, "attention_bias": False, "final_logit_softcapping": 15.0,
    },
    "olmo_hybrid": {  # OlmoHybridConfig: OLMo 3's attention blocks (post-norm, QK-norm over all heads) beside
        # pre-norm Gated DeltaNet blocks (every fourth block attention by its default); null sizes take its rules
        "vocab_size": 100_352, "hidden_size": 3_840, "intermediate_size": 11_008, "num_hidden_layers": 32,
        "num_attention_heads": 30, "num_key_value_heads": None, "max_position_embeddings": 65_536,
        "tie_word_embeddings": False, "attention_bias": False, "layer_types": None, "linear_num_key_heads": None,
        "linear_num_value_heads": None, "linear_key_head_dim": None, "linear_value_head_dim": None,
        "linear_conv_kernel_dim": 4,
    },
    "kimi_linear": {  # KimiLinearConfig: Kimi delta attention blocks beside NoPE latent attention (every fourth from
        # block 4 by its default), the first block dense (first_k_dense_replace, a keyword of its class), then shared
        # and routed experts; its file's other names of keys (`KIMI_NAMES`) and linear_attn_config read as it reads them
        "vocab_size": 163_840, "hidden_size": 2_304, "intermediate_size": 9_216, "moe_intermediate_size": 1_024,
        "num_hidden_layers": 27, "num_attention_heads": 32, "num_key_value_heads": 32, "n_shared_experts": 1,
        "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
        "num_experts_per_tok": 8, "max_position_embeddings": 1_048_576, "tie_word_embeddings": False,
        "attention_bias": False, "num_local_experts": 256, "mlp_layer_types": None, "layer_types": None,
        "linear_head_dim": 128, "linear_num_heads": 32, "linear_conv_kernel_dim": 4,
    },
    "deepseek_v3": {  # DeepseekV3Config: latent attention, the first blocks dense, then shared and routed experts
        "vocab_size": 129_280, "hidden_size": 7_168, "intermediate_size": 18_432, "num_hidden_layers": 61,
        "num_attention_heads": 128, "num_key_value_heads": 128, "max_position_embeddings": 4_096,
        "tie_word_embeddings": False, "attention_bias": False, "kv_lora_rank": 512, "q_lora_rank": 1_536,
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "moe_intermediate_size": 2_048,
        "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
    },
}
# The router's settings of each mixture of experts and their defaults in its config class: they change no shape and
# no count (read, checked and named in the reading's notes). norm_topk_prob renormalises the k weights to sum to 1,
# which Mixtral always does and this explorer's module does (values only).
ROUTER: dict[str, dict[str, object]] = {
    "llama4_text": {"router_jitter_noise": 0.0, "router_aux_loss_coef": 0.001, "output_router_logits": False},
    "mixtral": {"router_jitter_noise": 0.0, "router_aux_loss_coef": 0.001, "output_router_logits": False},
    "qwen2_moe": {"norm_topk_prob": False, "router_aux_loss_coef": 0.001, "output_router_logits": False},
    "qwen3_moe": {"norm_topk_prob": False, "router_aux_loss_coef": 0.001, "output_router_logits": False},
    "qwen3_next": {"norm_topk_prob": True, "router_aux_loss_coef": 0.001, "output_router_logits": False},
    "qwen3_5_text": {},
    "qwen3_5_moe_text": {"router_aux_loss_coef": 0.001, "output_router_logits": False},
    "gpt_oss": {"router_aux_loss_coef": 0.001, "output_router_logits": False},
    "deepseek_v2": {"norm_topk_prob": False, "routed_scaling_factor": 1.0, "topk_method": "greedy", "n_group": None,
                    "topk_group": None, "output_router_logits": False},
    "deepseek_v3": {"norm_topk_prob": True, "routed_scaling_factor": 2.5, "n_group": 8, "topk_group": 4,
                    "output_router_logits": False},
    "glm4_moe": {"norm_topk_prob": True, "routed_scaling_factor": 1.0, "n_group": 1, "topk_group": 1,
                 "output_router_logits": False},
    "dots1": {"norm_topk_prob": False, "routed_scaling_factor": 1.0, "n_group": 1, "topk_group": 1,
              "output_router_logits": False},
    "hy_v3": {"router_scaling_factor": 2.826, "output_router_logits": False},
    "glm4_moe_lite": {"norm_topk_prob": True, "routed_scaling_factor": 1.8, "n_group": 1, "topk_group": 1,
                      "output_router_logits": False},
    "deepseek_v32": {"norm_topk_prob": True, "routed_scaling_factor": 2.5, "n_group": 8, "topk_group": 4,
                     "output_router_logits": False},
    "kimi_linear": {"norm_topk_prob": True, "routed_scaling_factor": 2.446, "n_group": 1, "topk_group": 1,
                    "output_router_logits": False},
    "glm_moe_dsa": {"norm_topk_prob": True, "routed_scaling_factor": 2.5, "n_group": 1, "topk_group": 1,
                    "output_router_logits": False},
    "solar_open": {"norm_topk_prob": True, "routed_scaling_factor": 1.0, "n_group": 1, "topk_group": 1,
                   "output_router_logits": False},
    **dict.fromkeys(("sarvam_mla", "sarvam_moe"), {"norm_topk_prob": True, "routed_scaling_factor": 2.5, "n_group": 1,
                                                   "topk_group": 1, "output_router_logits": False}),
    "minimax_m2": {"router_jitter_noise": 0.0, "router_aux_loss_coef": 0.001, "output_router_logits": False},
    "phimoe": {"router_jitter_noise": 0.01, "input_jitter_noise": 0.0, "router_aux_loss_coef": 0.001,
               "output_router_logits": False},
    "jamba": {"router_aux_loss_coef": 0.001, "output_router_logits": False},
    "nemotron_h": {"norm_topk_prob": True, "routed_scaling_factor": 1.0, "n_group": 1, "topk_group": 1,
                   "output_router_logits": False},
    "olmoe": {"norm_topk_prob": False, "router_aux_loss_coef": 0.01, "output_router_logits": False},
    "ernie4_5_moe": {"moe_norm_min": 1e-12, "router_aux_loss_coef": 0.001, "output_router_logits": False},
    "mellum": {"norm_topk_prob": True, "router_aux_loss_coef": 0.001, "output_router_logits": False},
    "flex_olmo": {"norm_topk_prob": False, "router_aux_loss_coef": 0.01, "output_router_logits": False},
    **dict.fromkeys(("granitemoe", "granitemoeshared", "granitemoehybrid"),
                    {"router_aux_loss_coef": 0.001, "output_router_logits": False}),
}
# Keys a type's module or transformers' cache reads although its config class has no such field (None: absent).
# The cache reads `sliding_window` and `layer_types` for every type (`_blocks`); Qwen2's attention reads a
# `head_dim` (`getattr(config, "head_dim", d / h)`).
EXTRAS: dict[str, tuple[str, ...]] = {
    "gpt2": ("sliding_window", "layer_types"),
    **dict.fromkeys(("gptj", "codegen"), ("sliding_window", "layer_types")),
    "falcon": ("sliding_window", "layer_types"),
    "llama": ("sliding_window", "layer_types"),
    "mistral": ("layer_types",),
    "ministral3": ("layer_types",),
    "qwen2": ("head_dim",),
    "qwen3": (),
    "mixtral": ("layer_types",),
    "phimoe": ("head_dim", "layer_types"),  # PhimoeAttention's getattr(config, "head_dim", d // h)
    "qwen2_moe": ("head_dim",),
    "qwen3_moe": ("head_dim", "layer_types"),
    "gemma": ("sliding_window", "layer_types"),
    "phi3": ("head_dim", "layer_types"),  # Phi3Attention's getattr(config, "head_dim", d / h)
    "cohere": ("head_dim", "sliding_window", "layer_types"),  # CohereAttention's getattr(config, "head_dim", d / h)
    "gemma2": (),
    "vaultgemma": (),  # its class deletes Gemma 2's use_bidirectional_attention: its attention is always causal
    "gemma3_text": ("sliding_window_pattern",),  # Gemma3TextConfig's keyword: layer_types' default, every n-th full
    # Gemma4TextConfig's keywords (the full blocks' head width and K/V heads, where per_layer_config is not in the file)
    # and the per-block overrides its __post_init__ makes of them (a file written by transformers 5 holds these)
    "gemma4_text": ("global_head_dim", "num_global_key_value_heads", "per_layer_config"),
    "gpt_oss": (),
    "deepseek_v2": ("sliding_window", "layer_types"),  # its head_dim, a field, is set to d_R (`_latent` says so)
    "deepseek_v3": ("sliding_window", "layer_types", "head_dim"),  # head_dim: DeepseekV3Config's d_R, no width here
    "kimi_linear": ("sliding_window", "head_dim", "first_k_dense_replace"),  # head_dim: KimiLinearConfig's d_R;
    # first_k_dense_replace: a keyword its __post_init__ reads (default 1), no attribute
    "youtu": ("sliding_window", "layer_types", "head_dim"),  # head_dim: YoutuConfig sets it to d_R, as DeepSeek-V3's
    **dict.fromkeys(("internlm3", "exaone", "iquestcoder", "helium", "ernie4_5", "seed_oss"),
                    ("sliding_window", "layer_types")),
    "cohere2": ("head_dim", "sliding_window_pattern"),  # its class's keyword: layer_types' default, every n-th full
    "exaone4": ("head_dim",),  # Exaone4Attention's getattr(config, "head_dim", d / h)
    **dict.fromkeys(("arcee", "jais2", "nemotron"), ("sliding_window", "layer_types")),
    **dict.fromkeys(("apertus", "apertus1p5_text"), ("head_dim", "sliding_window", "layer_types")),  # their
    # attention's getattr(config, "head_dim", d / h)
    "phi": ("head_dim", "sliding_window", "layer_types"),  # PhiAttention's getattr(config, "head_dim", d // h)
    **dict.fromkeys(("stablelm", "gpt_neox"), ("head_dim", "sliding_window", "layer_types")),  # head_dim: their rotary
    # embedding's getattr (d / h), which their attention does not read
    "llama4_text": (),
    "smollm3": ("head_dim",),  # SmolLM3Attention's getattr(config, "head_dim", d / h)
    "granite": ("head_dim", "sliding_window", "layer_types"),  # GraniteAttention's getattr(config, "head_dim", d / h)
    **dict.fromkeys(("granitemoe", "granitemoeshared"), ("head_dim", "sliding_window", "layer_types")),  # as Granite's
    "nemotron_h": (),
    "jamba": (),
    "falcon_h1": ("head_dim",),  # FalconH1Attention's getattr(config, "head_dim", d // h)
    "granitemoehybrid": ("head_dim", "sliding_window"),  # GraniteMoeHybridAttention's getattr(config, "head_dim", d / h)
    "cwm": (),
    "olmo2": ("head_dim", "sliding_window", "layer_types"),  # Olmo2Attention's getattr(config, "head_dim", d / h)
    "olmo3": ("head_dim",),
    "glm": ("sliding_window", "layer_types"),
    "glm4": ("sliding_window", "layer_types"),
    "sarvam_mla": ("sliding_window", "layer_types", "head_dim"),  # head_dim: its class's legacy key, ignored
    "sarvam_moe": ("sliding_window", "layer_types"),
    "glm4_moe": ("head_dim", "sliding_window", "layer_types"),  # Glm4MoeAttention's getattr(config, "head_dim", d / h)
    "minimax_m2": ("sliding_window", "layer_types", "rotary_dim"),  # rotary_dim: its class's other partial RoPE key
    "solar_open": ("sliding_window", "layer_types"),
    "aria_text": ("sliding_window", "layer_types"),
    "ernie4_5_moe": ("head_dim", "sliding_window", "layer_types"),  # its attention's getattr(config, "head_dim", d // h)
    "dots1": ("head_dim",),  # Dots1Attention's getattr(config, "head_dim", d / h)
    "hy_v3": ("sliding_window", "layer_types"),
    "glm4_moe_lite": ("sliding_window", "layer_types"),  # head_dim: its class's other name of qk_rope_head_dim (ALIASES)
    **dict.fromkeys(("deepseek_v32", "glm_moe_dsa"), ()),  # layer_types: indexed_attention (`_blocks`)
    "minicpm3": ("sliding_window", "layer_types"),  # head_dim: a field its class sets to qk_rope_head_dim (`_latent`)
    "starcoder2": ("head_dim", "layer_types"),  # Starcoder2Attention's getattr(config, "head_dim", None) or d / h
    "gpt_bigcode": ("sliding_window", "layer_types"),
    "olmoe": ("head_dim", "sliding_window", "layer_types"),
    "olmo": ("head_dim", "sliding_window", "layer_types"),  # OlmoAttention's getattr(config, "head_dim", d / h)
    "olmo_hybrid": ("head_dim", "sliding_window"),  # OlmoHybridAttention's getattr(config, "head_dim", d / h)
    "nanochat": ("head_dim", "sliding_window", "layer_types"),  # NanoChatAttention's getattr(config, "head_dim", d / h)
    "ministral": (),
    "mellum": (),
    "flex_olmo": ("head_dim", "sliding_window", "layer_types"),  # FlexOlmoAttention's getattr(config, "head_dim", d / h)
    "hyperclovax": ("sliding_window", "layer_types"),
    "qwen3_next": ("full_attention_interval",),  # its class's keyword: layer_types' default, every n-th full
    **dict.fromkeys(("qwen3_5_text", "qwen3_5_moe_text"), ("full_attention_interval",)),
}
FALCON_NULL = ("d_ssm", "n_heads", "d_head", "n_groups", "d_state", "d_conv", "expand", "chunk_size", "conv_bias",
               "proj_bias", "norm_before_gate", "rms_norm")  # FalconH1Config's mamba_* that may be null
MAMBA_NULL = ("n_heads", "n_groups", "d_state", "d_head", "d_conv", "expand", "chunk_size")  # GraniteMoeHybridConfig
# lets them be null, and its module cannot run so
# The keys a type lets be null (its class's annotation allows None; an extra the cache reads is absent when
# null); null then takes the class's rule (h_kv = h, d_head = d / h, d_ff = 4d, no window). Elsewhere null is
# refused, as the class refuses it (qwen2's head_dim: its module, reading None, would fail).
NULLABLE: dict[str, tuple[str, ...]] = {
    "gpt2": ("n_inner", "sliding_window", "layer_types"),
    **dict.fromkeys(("gptj", "codegen"), ("n_inner", "sliding_window", "layer_types")),
    "falcon": ("num_kv_heads", "bias", "multi_query", "new_decoder_architecture", "parallel_attn",
               "num_ln_in_parallel_attn", "alibi", "ffn_hidden_size", "sliding_window", "layer_types"),
    "llama": ("num_key_value_heads", "head_dim", "sliding_window", "layer_types"),
    "mistral": ("head_dim", "sliding_window", "layer_types"),
    "ministral3": ("sliding_window", "layer_types"),
    "qwen2": ("num_key_value_heads", "sliding_window", "layer_types"),
    "qwen3": ("num_key_value_heads", "sliding_window", "layer_types"),
    "mixtral": ("head_dim", "sliding_window", "layer_types"),
    "phimoe": ("sliding_window", "layer_types"),
    "qwen2_moe": ("num_key_value_heads", "sliding_window", "mlp_only_layers", "layer_types"),
    "qwen3_moe": ("sliding_window", "mlp_only_layers", "layer_types"),
    "gemma": ("use_bidirectional_attention", "sliding_window", "layer_types"),
    "phi3": ("num_key_value_heads", "sliding_window", "layer_types"),
    "cohere": ("num_key_value_heads", "use_qk_norm", "sliding_window", "layer_types"),
    "gemma2": ("sliding_window", "layer_types", "final_logit_softcapping", "attn_logit_softcapping",
               "use_bidirectional_attention"),
    "gemma3_text": ("sliding_window", "layer_types", "final_logit_softcapping", "attn_logit_softcapping",
                    "use_bidirectional_attention", "sliding_window_pattern"),
    "gemma4_text": ("layer_types", "final_logit_softcapping", "num_experts",
                    "top_k_experts", "moe_intermediate_size", "num_global_key_value_heads", "per_layer_config"),
    "vaultgemma": ("sliding_window", "layer_types", "final_logit_softcapping", "attn_logit_softcapping"),
    "gpt_oss": ("sliding_window", "layer_types"),
    "deepseek_v2": ("num_key_value_heads", "q_lora_rank", "num_experts_per_tok", "n_group", "topk_group", "sliding_window",
                    "layer_types"),  # num_experts_per_tok null: refused by `_check_groups`, as the router cannot run
    "deepseek_v3": ("num_key_value_heads", "q_lora_rank", "v_head_dim", "num_experts_per_tok", "first_k_dense_replace",
                    "sliding_window", "layer_types", "head_dim"),  # q_lora_rank null: W_Q
    **dict.fromkeys(("internlm3", "exaone", "iquestcoder", "seed_oss"),
                    ("num_key_value_heads", "head_dim", "sliding_window", "layer_types")),
    "ernie4_5": ("num_key_value_heads", "head_dim", "use_bias", "sliding_window", "layer_types"),  # use_bias null: none
    "ernie4_5_moe": ("num_key_value_heads", "use_bias", "moe_k", "moe_num_experts", "moe_num_shared_experts",
                     "moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval", "sliding_window",
                     "layer_types"),  # use_bias null: none; the others' null: NULL_FAILS
    "granite": ("num_key_value_heads", "sliding_window", "layer_types"),
    **dict.fromkeys(("granitemoe", "granitemoeshared"), ("num_key_value_heads", "num_local_experts",
                                                         "num_experts_per_tok", "sliding_window", "layer_types")),
    "nemotron_h": ("layers_block_type", "sliding_window", "moe_latent_size"),
    "jamba": (),
    "falcon_h1": ("num_key_value_heads", "projectors_bias", *(f"mamba_{k}" for k in FALCON_NULL)),  # a flag's null: off, as its module
    # reads it; mamba_d_ssm's: mamba_expand·d
    "granitemoehybrid": ("num_key_value_heads", "num_local_experts", "num_experts_per_tok", "sliding_window",
                         "layer_types", "position_embedding_type", "head_dim", *(f"mamba_{k}" for k in MAMBA_NULL),
                         "mamba_conv_bias", "mamba_proj_bias"),  # a bias's null: none, as nn.Linear reads it
    "helium": ("sliding_window", "layer_types"),
    "smollm3": ("num_key_value_heads", "sliding_window", "no_rope_layers", "layer_types", "head_dim"),
    **dict.fromkeys(("arcee", "jais2", "nemotron"), ("num_key_value_heads", "head_dim", "sliding_window",
                                                     "layer_types")),
    "apertus": ("num_key_value_heads", "sliding_window", "layer_types"),  # head_dim null: its attention would fail
    "apertus1p5_text": ("num_key_value_heads", "output_vocab_size", "sliding_window", "layer_types"),
    **dict.fromkeys(("stablelm", "gpt_neox"), ("head_dim", "sliding_window", "layer_types")),
    "phi": ("num_key_value_heads", "sliding_window", "layer_types"),  # h_kv null: h (its __post_init__)
    "llama4_text": ("moe_layers", "no_rope_layers", "attention_chunk_size", "layer_types"),
    "cohere2": ("num_key_value_heads", "sliding_window", "layer_types", "head_dim"),
    "exaone4": ("sliding_window", "sliding_window_pattern", "layer_types", "head_dim"),  # a null pattern: `_blocks`
    "cwm": ("layer_types",),
    "olmo2": ("num_key_value_heads", "sliding_window", "layer_types"),
    "olmo3": ("num_key_value_heads", "sliding_window", "layer_types"),
    "glm": ("num_key_value_heads", "head_dim", "sliding_window", "layer_types"),  # the first two: `NULL_FAILS`
    "glm4": ("sliding_window", "layer_types"),
    "glm4_moe": ("sliding_window", "layer_types"),
    "sarvam_mla": ("num_key_value_heads", "q_lora_rank", "v_head_dim", "num_experts_per_tok", "first_k_dense_replace",
                   "sliding_window", "layer_types", "head_dim"),
    "youtu": ("q_lora_rank", "v_head_dim", "sliding_window", "layer_types", "head_dim"),  # v_head_dim null: refused
    "sarvam_moe": ("sliding_window", "layer_types"),
    "minimax_m2": ("sliding_window", "layer_types", "rotary_dim"),
    "solar_open": ("sliding_window", "layer_types"),
    "aria_text": ("num_key_value_heads", "head_dim", "sliding_window", "layer_types"),
    "glm4_moe_lite": ("q_lora_rank", "mlp_layer_types", "sliding_window", "layer_types"),
    "deepseek_v32": ("mlp_layer_types", "layer_types"),
    "glm_moe_dsa": ("mlp_layer_types", "layer_types", "indexer_types"),
    "minicpm3": ("num_key_value_heads", "q_lora_rank", "v_head_dim", "sliding_window", "layer_types"),  # v_head_dim
    # null: its class's hidden_size // num_attention_heads
    "hy_v3": ("num_experts", "num_experts_per_tok", "num_shared_experts", "mlp_layer_types", "sliding_window",
              "layer_types"),  # the experts' null: NULL_FAILS
    "dots1": ("num_key_value_heads", "n_shared_experts", "n_routed_experts", "num_experts_per_tok",
              "first_k_dense_replace", "sliding_window", "max_window_layers", "layer_types"),  # the experts': NULL_FAILS
    "starcoder2": ("sliding_window", "head_dim", "layer_types"),
    "gpt_bigcode": ("n_inner", "sliding_window", "layer_types"),
    "olmoe": ("num_key_value_heads", "sliding_window", "layer_types"),
    "olmo": ("num_key_value_heads", "sliding_window", "layer_types"),
    "nanochat": ("num_key_value_heads", "final_logit_softcapping", "sliding_window", "layer_types"),
    "olmo_hybrid": ("num_key_value_heads", "sliding_window", "layer_types", "linear_num_key_heads",
                    "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim"),
    "ministral": ("head_dim", "sliding_window", "layer_types"),  # head_dim null: `NULL_FAILS`
    "mellum": ("sliding_window", "layer_types", "mlp_layer_types"),
    "flex_olmo": ("num_key_value_heads", "sliding_window", "layer_types"),
    "hyperclovax": ("num_key_value_heads", "head_dim", "sliding_window", "layer_types"),  # head_dim null: d / h
    "qwen3_next": ("mlp_only_layers", "layer_types"),  # full_attention_interval null: its class's modulo fails
    "kimi_linear": ("num_key_value_heads", "q_lora_rank", "topk_group", "mlp_layer_types", "layer_types",
                    "num_experts_per_tok", "v_head_dim"),
    **dict.fromkeys(("qwen3_5_text", "qwen3_5_moe_text"), ("layer_types",)),
}
# Keys a type's class lets be null but leaves null, so that its module cannot run: refused (GLM's h_kv and d_head).
NULL_FAILS: dict[str, tuple[str, ...]] = {"hy_v3": ("num_experts", "num_experts_per_tok", "num_shared_experts"),
                                          "nemotron": ("num_key_value_heads",),
                                          "ernie4_5_moe": ("num_key_value_heads", "moe_k", "moe_num_experts",
                                                           "moe_num_shared_experts", "moe_layer_start_index",
                                                           "moe_layer_end_index", "moe_layer_interval"),
                                          "kimi_linear": ("num_experts_per_tok", "v_head_dim"),
                                          "dots1": ("n_shared_experts", "n_routed_experts", "num_experts_per_tok"),"glm": ("num_key_value_heads", "head_dim"), "ministral": ("head_dim",),
                                          **dict.fromkeys(("granitemoe", "granitemoeshared"),
                                                          ("num_local_experts", "num_experts_per_tok")),
                                          "granitemoehybrid": ("num_local_experts", "num_experts_per_tok",
                                                               *(f"mamba_{k}" for k in MAMBA_NULL)),
                                          "falcon_h1": tuple(f"mamba_{k}" for k in ("n_heads", "d_head", "n_groups",
                                                                                     "d_state", "d_conv", "chunk_size"))}
# GPT2Config's attribute_map: these names set GPT-2's own keys.
ALIASES: dict[str, dict[str, str]] = {
    **dict.fromkeys(("gpt2", "gptj", "codegen"), {"hidden_size": "n_embd", "max_position_embeddings": "n_positions",
                                                  "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"}),
    "mixtral": {"num_experts": "num_local_experts"},  # MixtralConfig's and Qwen3MoeConfig's attribute_map
    "phimoe": {},
    "qwen3_5_text": {}, "qwen3_5_moe_text": {},
    "gpt_bigcode": {"hidden_size": "n_embd", "max_position_embeddings": "n_positions", "num_attention_heads": "n_head",
                    "num_hidden_layers": "n_layer"},  # GPTBigCodeConfig's, as GPT-2's
    "qwen3_moe": {"num_local_experts": "num_experts"},
    "gpt_oss": {"num_experts": "num_local_experts"},  # GptOssConfig's attribute_map
    "deepseek_v2": {"num_experts": "n_routed_experts"},  # DeepseekV2Config's attribute_map
    "deepseek_v3": {"num_local_experts": "n_routed_experts"},
    **dict.fromkeys(("deepseek_v32", "glm_moe_dsa"), {"num_local_experts": "n_routed_experts",
                                                      "num_experts": "n_routed_experts"}),  # and its __post_init__'s
    "glm4_moe": {"num_local_experts": "n_routed_experts"},  # Glm4MoeConfig's attribute_map
    "solar_open": {"num_local_experts": "n_routed_experts"},  # SolarOpenConfig's
    "dots1": {"num_local_experts": "n_routed_experts"},  # Dots1Config's
    "hy_v3": {"num_local_experts": "num_experts"},  # HYV3Config's
    "ernie4_5_moe": {"num_experts": "moe_num_experts", "num_experts_per_tok": "moe_k"},  # Ernie4_5_MoeConfig's
    # Glm4MoeLiteConfig's attribute_map: head_dim is qk_rope_head_dim (a file's head_dim, set last, overwrites it)
    "glm4_moe_lite": {"num_local_experts": "n_routed_experts", "head_dim": "qk_rope_head_dim"},
    "sarvam_mla": {"num_local_experts": "n_routed_experts", "num_experts": "n_routed_experts",
                   "num_shared_experts": "n_shared_experts", "num_mtp_layers": "num_nextn_predict_layers"},
    "sarvam_moe": {"num_local_experts": "n_routed_experts", "num_experts": "n_routed_experts",
                   "num_shared_experts": "n_shared_experts", "num_mtp_layers": "num_nextn_predict_layers",
                   "use_qkv_bias": "attention_bias"},  # SarvamMoEConfig's attribute_map
    "minimax_m2": {"num_experts": "num_local_experts"},  # MiniMaxM2Config's
    "mellum": {"num_local_experts": "num_experts"},  # MellumConfig's attribute_map (num_experts its field)
    "flex_olmo": {"num_local_experts": "num_experts"},  # FlexOlmoConfig's
    "internlm3": {"qkv_bias": "attention_bias", "bias": "mlp_bias"},  # InternLM3Config's attribute_map
    "exaone": {"num_layers": "num_hidden_layers"},  # ExaoneConfig's (its activation_function: ACTIVATIONS)
    # NemotronHConfig's attribute_map, and the legacy keywords its __post_init__ takes in place of its fields
    "jamba": {"num_local_experts": "num_experts"},
    "nemotron_h": {"layer_types": "layers_block_type", "num_local_experts": "n_routed_experts",
                   "mamba_n_groups": "n_groups", "mamba_d_conv": "conv_kernel", "mamba_chunk_size": "chunk_size",
                   "mamba_conv_bias": "use_conv_bias"},
}
# The Config field (or symbol) each key sets; keys that set none are read by a rule below.
FIELD_OF: dict[str, str] = {
    "vocab_size": "V", "hidden_size": "d", "n_embd": "d", "num_hidden_layers": "L", "n_layer": "L",
    "num_attention_heads": "h", "n_head": "h", "max_position_embeddings": "T_max", "n_positions": "T_max",
    "intermediate_size": "d_ff", "n_inner": "d_ff", "num_key_value_heads": "h_kv", "head_dim": "d_head",
    "tie_word_embeddings": "tie", "num_local_experts": "E", "num_experts": "E", "num_experts_per_tok": "k",
    "moe_intermediate_size": "d_expert", "shared_expert_intermediate_size": "d_shared",
    "decoder_sparse_step": "moe_step", "mlp_only_layers": "dense_layers", "n_routed_experts": "E",
    "intermediate_size_mlp": "d_ff", "interleave_moe_layer_step": "moe_step", "attention_chunk_size": "W",
    "n_shared_experts": "E_shared", "first_k_dense_replace": "dense_first", "kv_lora_rank": "d_c", "q_lora_rank": "d_cq",
    "qk_rope_head_dim": "d_R", "qk_nope_head_dim": "d_nope", "v_head_dim": "d_v",
    "linear_num_key_heads": "h_lk", "linear_num_value_heads": "h_lv", "linear_key_head_dim": "d_lk",
    "linear_value_head_dim": "d_lv", "linear_conv_kernel_dim": "d_conv", "linear_num_heads": "h_kda",
    "linear_head_dim": "d_kda",
    "index_n_heads": "h_I", "index_head_dim": "d_I", "index_topk": "T_k",
    "mamba_n_heads": "h_ssm", "mamba_d_head": "d_ssm", "mamba_d_state": "d_state", "mamba_n_groups": "g_ssm",
    "mamba_chunk_size": "Q", "mamba_d_conv": "d_conv", "mamba_num_heads": "h_ssm", "mamba_head_dim": "d_ssm",
    "ssm_state_size": "d_state", "n_groups": "g_ssm", "chunk_size": "Q", "conv_kernel": "d_conv",
    "moe_shared_expert_intermediate_size": "d_shared", "moe_num_experts": "E", "moe_k": "k",
    "moe_layer_interval": "moe_step", "moe_layer_start_index": "dense_first",
    "num_kv_heads": "h_kv", "ffn_hidden_size": "d_ff",
}
# Each value's kind: a size (a whole number >= 1), a size or null (null: the class's rule), a flag, ...
SIZES = ("vocab_size", "hidden_size", "n_embd", "num_hidden_layers", "n_layer", "num_attention_heads", "n_head",
         "max_position_embeddings", "n_positions", "intermediate_size", "n_inner", "num_key_value_heads", "head_dim",
         "sliding_window", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size",
         "shared_expert_intermediate_size", "decoder_sparse_step", "query_pre_attn_scalar", "sliding_window_pattern",
         "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "n_routed_experts",
         "n_group", "topk_group", "rotary_dim", "no_rope_layer_interval", "intermediate_size_mlp",
         "interleave_moe_layer_step", "attention_chunk_size", "moe_num_experts", "moe_topk", "full_attention_interval",
         "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
         "linear_conv_kernel_dim", "linear_num_heads", "linear_head_dim", "index_n_heads", "index_head_dim", "index_topk", "mamba_n_heads", "mamba_n_groups",
         "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_chunk_size", "ssm_state_size", "mamba_num_heads",
         "mamba_head_dim", "n_groups", "conv_kernel", "chunk_size", "moe_shared_expert_intermediate_size",
         "moe_latent_size", "attn_layer_period", "expert_layer_period", "mamba_d_ssm", "vocab_size_per_layer_input",
         "global_head_dim", "num_global_key_value_heads", "top_k_experts", "moe_k", "moe_layer_interval",
         "num_kv_heads", "ffn_hidden_size", "num_ln_in_parallel_attn", "output_vocab_size")
SOFTCAPS = ("final_logit_softcapping", "attn_logit_softcapping")  # a number above 0, or null: no soft-cap
CLAMPS = ("swiglu_limit", "swiglu_alpha")  # gpt-oss's clamped SwiGLU: a number above 0
COUNTS = ("num_experts", "n_shared_experts", "first_k_dense_replace", "shared_intermediate_size",
          "num_nextn_predict_layers", "num_mtp_layers", "moe_num_shared_experts", "num_shared_experts",
          "index_topk_freq", "index_skip_topk_offset", "attn_layer_offset", "expert_layer_offset",
          "hidden_size_per_layer_input", "num_kv_shared_layers", "moe_layer_start_index")  # a whole number of at least 0 (Qwen's 0 experts: every block dense)
FLAGS = ("tie_word_embeddings", "add_cross_attention", "attention_bias", "mlp_bias", "use_sliding_window", "qkv_bias",
         "use_bias", "attention_out_bias", "multi_query",
         "use_qk_norm", "use_post_norm", "attn_temperature_tuning",
         "norm_topk_prob", "output_router_logits", "use_bidirectional_attention", "rope_interleave", "mamba_conv_bias",
         "mamba_proj_bias", "use_conv_bias", "mamba_rms_norm", "mamba_norm_before_gate", "projectors_bias",
         "attention_k_eq_v", "enable_moe_block", "use_double_wide_mlp", "lm_head_bias", "use_qkv_bias", "qk_layernorm",
         "use_parallel_residual", "new_decoder_architecture", "parallel_attn", "alibi", "bias")
NUMBERS = ("router_jitter_noise", "router_aux_loss_coef", "routed_scaling_factor", "router_scaling_factor",
           "moe_norm_min", "input_jitter_noise")  # a number of at least 0
GRANITE_SCALES = ("embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling")
MINICPM3_SCALES = ("scale_emb", "scale_depth", "dim_model_base")
VALUE_KEYS = {"minicpm3": MINICPM3_SCALES, "granite": GRANITE_SCALES, "granitemoe": GRANITE_SCALES, "granitemoeshared": GRANITE_SCALES,
              "granitemoehybrid": GRANITE_SCALES,
              "hyperclovax": GRANITE_SCALES}
VALUE_NULLABLE = {"hyperclovax": ("attention_multiplier",), "minicpm3": ("scale_depth", "dim_model_base")}  # null: its class's d_head^-0.5  # numbers that change values only (`VALUES_ONLY`)
WHAT: dict[str, str] = {  # what a key is, for messages
    "index_n_heads": "the sparse attention indexer's heads h_I", "index_head_dim": "each indexer head's width d_I",
    "index_topk": "the keys T_k each query attends to (the indexer's top-k)",
    "indexer_types": "each block's indexer, its own or an earlier block's top-k",
    "index_topk_freq": "GLM-5's period of blocks that run their own indexer",
    "index_skip_topk_offset": "GLM-5's first block whose indexer may be shared",
    "linear_num_key_heads": "a Gated DeltaNet block's q and k heads h_lk",
    "linear_num_value_heads": "a Gated DeltaNet block's value heads h_lv",
    "linear_key_head_dim": "each Gated DeltaNet q and k head's width d_lk",
    "linear_value_head_dim": "each Gated DeltaNet value head's width d_lv",
    "linear_conv_kernel_dim": "the Gated DeltaNet (or Kimi delta attention) convolution's taps d_conv",
    "linear_num_heads": "a Kimi delta attention block's heads h_kda", "linear_head_dim": "each Kimi delta attention "
    "head's width d_kda",
    "mamba_n_heads": "a Mamba 2 block's heads h_ssm", "mamba_d_head": "each Mamba 2 head's width d_ssm",
    "mamba_d_state": "a Mamba 2 state's columns d_state", "mamba_n_groups": "Mamba 2's groups of B and C g_ssm",
    "mamba_d_conv": "the Mamba 2 convolution's taps d_conv", "mamba_expand": "Mamba 2's width h_ssm·d_ssm over d",
    "mamba_chunk_size": "the tokens Q of a chunk of Mamba 2's scan", "mamba_conv_bias": "the Mamba 2 convolution's bias",
    "mamba_proj_bias": "the biases of Mamba 2's in_proj and out_proj",
    "mamba_d_ssm": "Mamba 2's width h_ssm·d_ssm (null: mamba_expand·d)",
    "mamba_rms_norm": "Mamba 2's norm of y and the gate SiLU(z) (false: y·SiLU(z) alone)",
    "mamba_norm_before_gate": "where Mamba 2's norm goes: before the gate SiLU(z) or after it",
    "projectors_bias": "the bias of Mamba 2's out_proj",
    **{k: f"Falcon-H1's muP multiplier {k}" for k in ("lm_head_multiplier", "embedding_multiplier", "key_multiplier",
                                                       "attention_out_multiplier", "attention_in_multiplier",
                                                       "ssm_in_multiplier", "ssm_out_multiplier")},
    "mlp_multipliers": "Falcon-H1's muP multipliers of the MLP's gate and down_proj",
    "ssm_multipliers": "Falcon-H1's muP multipliers of Mamba 2's z, x, B, C and dt",
    "mamba_num_heads": "a Mamba 2 layer's heads h_ssm", "mamba_head_dim": "each Mamba 2 head's width d_ssm",
    "ssm_state_size": "a Mamba 2 state's columns d_state", "n_groups": "Mamba 2's groups of B and C g_ssm",
    "conv_kernel": "the Mamba 2 convolution's taps d_conv", "chunk_size": "the tokens Q of a chunk of Mamba 2's scan",
    "use_conv_bias": "the Mamba 2 convolution's bias",
    "moe_shared_expert_intermediate_size": "the shared expert's width d_shared",
    "attn_layer_period": "once in how many layers an attention layer comes", "attn_layer_offset": "the first "
    "attention layer's index", "expert_layer_period": "once in how many layers a mixture of experts comes",
    "expert_layer_offset": "the first mixture of experts' index", "mamba_dt_rank": "the rank r_dt of Mamba's step "
    "(\"auto\": ⌈hidden_size/16⌉)",
    "moe_latent_size": "the experts' latent width (a projection d → latent before them, and back)",
    "layers_block_type": "each layer's operation: linear_attention (Mamba 2), full_attention, mlp or moe",
    "mlp_hidden_act": "the MLP's and the experts' activation", "mamba_hidden_act": "the Mamba 2 convolution's "
    "activation",
    "position_embedding_type": "the positions (\"rope\": RoPE; anything else, or null: none)",
    "vocab_size": "the vocabulary size V", "hidden_size": "the model width d", "n_embd": "the model width d",
    "num_hidden_layers": "the number of blocks L", "n_layer": "the number of blocks L",
    "num_attention_heads": "the query heads h", "n_head": "the query heads h",
    "max_position_embeddings": "the context T_max", "n_positions": "the rows T_max of the position table W_pe",
    "intermediate_size": "the MLP's width d_ff", "n_inner": "the MLP's width d_ff",
    "num_key_value_heads": "the heads h_kv of K and V", "head_dim": "the features per head d_head",
    "sliding_window": "the attention window in tokens",
    "tie_word_embeddings": "whether the head is tied to W_te", "add_cross_attention": "cross-attention layers",
    "attention_bias": "biases on q, k, v and W_o", "mlp_bias": "biases on the MLP's matrices",
    "use_sliding_window": "whether the window applies", "max_window_layers": "the blocks before windowed ones",
    "layer_types": "each block's attention", "rope_parameters": "RoPE's settings", "rope_scaling": "RoPE's scaling",
    "rope_theta": "RoPE's base θ", "partial_rotary_factor": "the share of each head RoPE rotates",
    "num_local_experts": "the routed experts E", "num_experts": "the routed experts E",
    "num_experts_per_tok": "the experts k per token", "moe_intermediate_size": "each expert's width d_expert",
    "shared_expert_intermediate_size": "the shared expert's width d_shared",
    "decoder_sparse_step": "every n-th block is MoE", "mlp_only_layers": "the blocks that keep a dense MLP",
    "qkv_bias": "biases on q, k and v", "norm_topk_prob": "whether the k weights are renormalised to sum to 1",
    "output_router_logits": "whether the router's logits are returned",
    "router_jitter_noise": "the noise on the router's input in training",
    "router_aux_loss_coef": "the load-balancing loss's weight",
    "query_pre_attn_scalar": "the scores' scale 1/√query_pre_attn_scalar",
    "final_logit_softcapping": "the logits' soft-cap c", "attn_logit_softcapping": "the scores' soft-cap c",
    "hidden_activation": "the MLP's activation", "use_bidirectional_attention": "whether attention is bidirectional",
    "sliding_window_pattern": "every n-th block full attention (the others windowed)",
    "swiglu_limit": "the experts' SwiGLU clamp", "swiglu_alpha": "the experts' SwiGLU sigmoid gain",
    "kv_lora_rank": "the latent width d_c of K and V", "q_lora_rank": "the queries' latent width d_cq",
    "qk_rope_head_dim": "the rotary width d_R", "qk_nope_head_dim": "each head's d_nope features without positions",
    "v_head_dim": "each head's value width d_v", "n_routed_experts": "the routed experts E",
    "n_shared_experts": "the shared experts E_shared", "first_k_dense_replace": "the dense blocks before the MoE ones",
    "num_nextn_predict_layers": "the multi-token-prediction layers", "n_group": "the groups of experts",
    "topk_group": "the groups each token's experts come from", "routed_scaling_factor": "the routed experts' scale",
    "rope_interleave": "whether RoPE's pairs are interleaved",
    "use_qk_norm": "a norm on each head's q and k", "num_mtp_layers": "the multi-token-prediction layers",
    "use_bias": "biases on every matrix of the blocks", "multi_query": "one K/V head for all query heads", "rotary_dim": "the features of each head RoPE rotates", "no_rope_layers": "each block's RoPE, 1 on and 0 off",
    "no_rope_layer_interval": "every how many blocks one goes without RoPE", "embedding_multiplier": "the token rows' scale",
    "residual_multiplier": "the residual branches' scale", "attention_multiplier": "the scores' scale",
    "logits_scaling": "the logits' divisor", "attention_out_bias": "a bias on W_o",
    "scale_emb": "the token rows' scale", "scale_depth": "the residual branches' scale times √L",
    "dim_model_base": "the width the hidden state is divided by hidden_size / dim_model_base for, before the head",
    "intermediate_size_mlp": "a dense block's MLP width", "moe_layers": "the blocks that are a mixture of experts",
    "interleave_moe_layer_step": "every how many blocks one is a mixture of experts",
    "attention_chunk_size": "the chunks' length W", "attn_temperature_tuning": "the NoPE blocks' query scale",
    "shared_intermediate_size": "the shared expert's width d_shared (0: none)",
    "mlp_layer_types": "each block's MLP, dense or sparse (a mixture of experts)",
    "use_post_norm": "a norm on attention's and on the MLP's output (Peri-LN)",
    "router_scaling_factor": "the routed experts' scale", "num_shared_experts": "the shared experts E_shared",
    "moe_num_experts": "the routed experts E", "moe_topk": "the experts k per token",
    "moe_num_shared_experts": "the shared experts E_shared (one SwiGLU of width d_ff · E_shared)",
    "full_attention_interval": "every n-th block full attention, the others Gated DeltaNet",
    "vocab_size_per_layer_input": "the rows of Gemma 4's per-layer input table",
    "hidden_size_per_layer_input": "each block's width of Gemma 4's per-layer input (0: none)",
    "global_head_dim": "the full-attention blocks' features per head",
    "num_global_key_value_heads": "the full-attention blocks' heads of K and V (where attention_k_eq_v)",
    "per_layer_config": "each block's own head_dim or num_key_value_heads, by block index",
    "attention_k_eq_v": "whether the full-attention blocks' keys serve as their values (no v_proj)",
    "num_kv_shared_layers": "the last blocks, which reuse an earlier block's K and V",
    "enable_moe_block": "a mixture of experts beside each block's MLP",
    "use_double_wide_mlp": "an MLP twice as wide in the blocks that share K and V",
    "top_k_experts": "the experts k per token",
    "moe_k": "the experts k per token", "moe_layer_interval": "every n-th block a mixture of experts",
    "moe_layer_start_index": "the first block that is a mixture of experts",
    "moe_layer_end_index": "the last block that is a mixture of experts, -1 for the last block",
    "moe_norm_min": "the least sum the k weights are divided by as they are renormalised",
    "input_jitter_noise": "the noise on the experts' input in training", "lm_head_bias": "a bias on the head",
    "use_qkv_bias": "biases on q, k and v", "qk_layernorm": "a LayerNorm on each head's q and k",
    "num_kv_heads": "Falcon's heads of K and V with new_decoder_architecture",
    "output_vocab_size": "the head's rows, a prefix of the vocabulary (null: all of it)",
    "ffn_hidden_size": "the MLP's hidden width", "num_ln_in_parallel_attn": "a parallel block's LayerNorms: 2, one "
    "each for attention and the MLP; else one", "new_decoder_architecture": "Falcon-40B's and 180B's layer: grouped "
    "K/V heads, a LayerNorm each", "parallel_attn": "attention and the MLP side by side on the same input",
    "alibi": "ALiBi in place of RoPE", "bias": "biases on every matrix",
    "use_parallel_residual": "a parallel block: attention and the MLP both on one norm of x",
    "bidirectional_mode": "whether attention is bidirectional: null, \"vision\" (image tokens) or \"all\"",
}
# Group-limited routing (DeepSeek-V3: pick topk_group of n_group groups of experts, then k within them): how experts
# are chosen, never how many or how wide. No type read here has it; in a file of one, the reading names it.
GROUPED_ROUTING = ("n_group", "topk_group", "topk_method")
ROUTER_MEANS = {  # each router setting, as a note names it: what it does, and that it changes no shape
    "norm_topk_prob": {True: "the k weights renormalised to sum to 1, as this module does",
                       False: "the k weights used as softmax gives them; this module renormalises them (values only)"},
    "router_jitter_noise": "noise on the router's input in training",
    "router_aux_loss_coef": "the load-balancing loss's weight",
    "output_router_logits": "the router's logits returned or not",
    "routed_scaling_factor": "the routed experts' output times this factor",
    "router_scaling_factor": "the routed experts' output times this factor",
    "moe_norm_min": "the least sum the k weights are divided by as they are renormalised to sum to 1",
    "input_jitter_noise": "noise on the experts' input in training",
    "n_group": "the experts in n_group groups",
    "topk_group": "each token's k experts drawn from its topk_group best groups",
    "topk_method": {"greedy": "the k best of all E experts", "group_limited_greedy": "the k best within the topk_group "
                    "groups of the best experts"},
}
# Keys of other models that shape a model (mixture of experts, latent attention, Gemma's norms, ...): in a file
# whose type has none of them, transformers ignores them, and so does the reading, saying so.
OTHER_SHAPE_KEYS = (
    "n_ctx", "num_experts", "num_local_experts", "n_routed_experts", "n_shared_experts", "moe_intermediate_size",
    "shared_expert_intermediate_size", "num_experts_per_tok", "decoder_sparse_step", "mlp_only_layers",
    "first_k_dense_replace", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
    "use_post_attention_norm", "use_pre_feedforward_layernorm", "cross_attention_layers", "query_pre_attn_scalar",
    "attn_logit_softcapping", "final_logit_softcapping",
)
SHAPE_KEYS = tuple(dict.fromkeys([*(k for t in DEFAULTS.values() for k in t), *(k for a in ALIASES.values() for k in a),
                                  *(k for t in EXTRAS.values() for k in t),
                                  "rope_parameters", "rope_scaling", "partial_rotary_factor", *OTHER_SHAPE_KEYS]))
# RoPE's settings, read whatever the type (`rope_parameters` is built from the old spelling): `_check_rope`.
READ_BY_EVERY_TYPE = ("rope_parameters", "rope_scaling", "partial_rotary_factor", "rope_theta")
# Keys read by a rule, not a shape of their own: left out of a file, no note (but a window that applies has one).
RULE_KEYS = ("sliding_window", "max_window_layers", "layer_types", "mlp_layer_types", "use_sliding_window", "add_cross_attention",
             "hidden_activation", "use_bidirectional_attention")
CONFIG_CLASSES = {"llama": "LlamaConfig", "gemma": "GemmaConfig", "internlm3": "InternLM3Config",
                  "exaone": "ExaoneConfig", "iquestcoder": "IQuestCoderConfig", "cwm": "CwmConfig",
                  "gemma2": "Gemma2Config", "gemma3_text": "Gemma3TextConfig", "vaultgemma": "VaultGemmaConfig",
                  "deepseek_v2": "DeepseekV2Config", "deepseek_v3": "DeepseekV3Config", "glm4_moe": "Glm4MoeConfig",
                  "hyperclovax": "HyperCLOVAXConfig", "sarvam_mla": "SarvamMLAConfig", "sarvam_moe": "SarvamMoEConfig",
                  "qwen3_5_text": "Qwen3_5TextConfig", "qwen3_5_moe_text": "Qwen3_5MoeTextConfig", "youtu": "YoutuConfig",
                  "solar_open": "SolarOpenConfig", "aria_text": "AriaTextConfig",
                  "dots1": "Dots1Config", "hy_v3": "HYV3Config",
                  "glm4_moe_lite": "Glm4MoeLiteConfig", "deepseek_v32": "DeepseekV32Config",
                  "kimi_linear": "KimiLinearConfig",
                  "glm_moe_dsa": "GlmMoeDsaConfig",
                  "minicpm3": "MiniCPM3Config", "gemma4_text": "Gemma4TextConfig",
                  "ernie4_5_moe": "Ernie4_5_MoeConfig", "phimoe": "PhimoeConfig",
                  "nemotron": "NemotronConfig", "stablelm": "StableLmConfig", "gpt_neox": "GPTNeoXConfig",
                  "phi": "PhiConfig"}  # messages
TOPK_METHODS = ("greedy", "group_limited_greedy")  # DeepseekV2TopkRouter's ways to choose the k experts
GEMMA_ACTIVATION = "gelu_pytorch_tanh"  # GELU's tanh approximation, this module's GeGLU
LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention", "indexed_attention")
# chunked: Llama 4's only; linear: Qwen3-Next's Gated DeltaNet (`PART_BLOCKS`); indexed: DeepSeek-V3.2's (`DSA_TYPES`)
LEGACY_LAYER_TYPES = {"mamba": "linear_attention", "attention": "full_attention"}  # transformers'
# _LEGACY_LAYER_TYPE_REMAP, which every config class applies to layer_types (Granite 4.0-H's files write them)
MLP_LAYER_TYPES = ("dense", "sparse")  # transformers' ALLOWED_MLP_LAYER_TYPES
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "ntk")  # θ's scaling rules: values only

_SHOW = reprlib.Repr()  # short and shallow, whatever the value holds
_SHOW.maxlevel, _SHOW.maxstring, _SHOW.maxother, _SHOW.maxlist, _SHOW.maxdict = 2, 40, 40, 4, 4


class HFConfigError(ValueError):
    """A config.json that cannot be read as a `Config`: the message names the key, the value and what is wrong."""


class PartNotBuilt(HFConfigError):
    """A config.json whose layers need a part this explorer does not build yet: the message names that part."""


def show(value: object) -> str:
    """A value of the file as a message quotes it: JSON's words, short, never deep (a 100,000-deep list is safe)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
    return _SHOW.repr(value)


def parse(data: str | bytes) -> Mapping:
    """The JSON object of a config.json's text or bytes (UTF-8; a byte-order mark is allowed).

    HFConfigError in one line for a file over MAX_BYTES, bytes that are not UTF-8, text that is not JSON or is
    nested too deeply to read, and JSON that is not an object."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise HFConfigError(f"config.json is over {MAX_BYTES:,} bytes, the most read: a model's config.json is a few "
                            f"kB; give the model's own config.json")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise HFConfigError(f"config.json is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start:,}): "
                                f"give the model's config.json as it was saved") from None
    try:
        doc = json.loads(data.removeprefix("\ufeff"))
    except json.JSONDecodeError as e:
        raise HFConfigError(f"config.json is not JSON ({e.msg} at line {e.lineno}, column {e.colno}): give the whole "
                            f"file") from None
    except RecursionError:
        raise HFConfigError("config.json nests arrays or objects too deeply to read (a model's config.json is a flat "
                            "object of numbers, words and short lists)") from None
    if not isinstance(doc, Mapping):
        raise HFConfigError(f"config.json must hold a JSON object of keys and values, got a JSON "
                            f"{_json_kind(doc)}")
    return doc


def _json_kind(value: object) -> str:
    return {list: "array", str: "string", bool: "true or false", type(None): "null"}.get(type(value), "number")


@dataclass(frozen=True)
class Reading:
    """A config.json as transformers reads it: the Config fields it gives (B and T excepted) and what it did.

    `keys` maps each field to the config.json key it came from (for messages); `defaults` lists the keys the
    file leaves out whose type's default was taken; `ignored` the shape keys the type does not have; the fields
    `window` and `full_layers` are the sliding window some blocks attend through and the blocks that do not."""

    model_type: str
    fields: dict[str, object]
    keys: dict[str, str]
    defaults: tuple[str, ...]
    ignored: tuple[str, ...]
    more: tuple[str, ...] = ()  # other notes: the router's settings, a mixture of experts' layout, the window

    @property
    def notes(self) -> tuple[str, ...]:
        """What the reading did, in words: the defaults taken and the keys ignored."""
        out = []
        if self.defaults:
            taken = ", ".join(f"{k} = {_default(self.model_type, k)}" for k in self.defaults)
            out.append(f"not in the file, so {self.model_type}'s defaults (transformers {TRANSFORMERS_VERSION}): "
                       f"{taken}")
        if self.ignored:
            out.append(f"ignored, as transformers ignores them ({self.model_type} has no such setting): "
                       f"{', '.join(self.ignored)}")
        return (*out, *self.more)


NULL_MEANS = {"num_key_value_heads": "h", "head_dim": "d / h", "n_inner": "4d",
              "layers_block_type": "linear_attention, moe, full_attention, mlp", "moe_latent_size": "none",
              "mlp_only_layers": "none", "no_rope_layers": "from no_rope_layer_interval"}  # a None default, as resolved


def _default(model_type: str, key: str) -> str:
    """A type's default as a note shows it: "8", "true", "null (h)"."""
    value = DEFAULTS[model_type][key]
    return f"null ({NULL_MEANS[key]})" if value is None and key in NULL_MEANS else show(value)


# Types transformers builds whose layers need a part not built here: what that part is, in the lesson's words. Every
# other type not read is refused by `read` with the list of those it reads.
_FIXED_STATE = "instead of a KV cache that grows with T, a fixed-size state"
_PARTIAL = "partial rotary (RoPE on part of each head's features, partial_rotary_factor below 1)"
NOT_BUILT: dict[str, str] = {
    "bailing_hybrid": f"its linear-attention layers (which keep, {_FIXED_STATE})",
    "mamba2": ("blocks of a Mamba 2 mixer alone (its layers have no attention block and no MLP; Mamba 2 is built here "
               "beside attention blocks, each block with an MLP)"),
    "zamba2": ("Zamba 2's shared transformer blocks (one attention and MLP block, its weights shared with LoRA "
               "adapters, applied between its Mamba 2 layers)"),
    **dict.fromkeys(("mamba", "falcon_mamba"),
                    "blocks of a Mamba mixer alone (its layers have no attention block and no MLP; Mamba is built here "
                    "beside attention blocks, each block with an MLP, as Jamba's)"),
    "zamba": ("Zamba's shared transformer block (one attention and MLP block, its weights shared, applied between its "
              "Mamba layers)"),
    "recurrent_gemma": f"its RG-LRU recurrent layers (which keep, {_FIXED_STATE})",
    "rwkv": f"its RWKV recurrent layers (which keep, {_FIXED_STATE})",
    "xlstm": f"its xLSTM recurrent layers (which keep, {_FIXED_STATE})",
    "persimmon": "a LayerNorm on each head's q and k",
    **dict.fromkeys(("gemma3n_text", "gemma3n"), "Gemma 3n's AltUp, LAuReL and per-layer embeddings"),
    "diffllama": "its differential attention (two softmax maps per head)",
    "bitnet": "its norms inside attention and the MLP (BitNet's sub-norms)",
}
# Types whose blocks mix with attention or a part of their own, by layer_types (`_hybrid_blocks`): that part's word
# there (Qwen3-Next's Gated DeltaNet blocks: linear_attention, `model.parts.delta`), and each class's default interval
# of full-attention blocks where its file lists none (full_attention_interval).
PART_BLOCKS: dict[str, str] = {"qwen3_next": "linear_attention", "granitemoehybrid": "linear_attention",
                               "kimi_linear": "linear_attention", "olmo_hybrid": "linear_attention"}
HYBRID_INTERVAL: dict[str, int] = {"qwen3_next": 4}  # none: every block its part's where layer_types lists none
BLOCK_PARTS: dict[str, str] = {"qwen3_next": "Gated DeltaNet", "olmo_hybrid": "Gated DeltaNet", "granitemoehybrid": "Mamba 2",
                               "kimi_linear": "Kimi delta attention"}  # which part that is


def read(doc: Mapping) -> Reading:
    """The Config fields of a parsed config.json (see the module docstring), a multimodal wrapper's text model
    (`WRAPPERS`) included; HFConfigError names what is wrong."""
    if not isinstance(doc, Mapping):
        raise HFConfigError(f"config.json must hold a JSON object of keys and values, got a JSON {_json_kind(doc)}")
    if isinstance(doc.get("model_type"), str) and doc["model_type"] in WRAPPERS:
        return _text_model(doc, WRAPPERS[doc["model_type"]])
    return _read(doc)


@dataclass(frozen=True)
class Wrapper:
    """A multimodal wrapper's config class, as it builds its text model: the type of `text_config` where the file
    names none, the head's tie (the wrapper's own tie_word_embeddings with this default; "either": the wrapper's or
    the text model's, as LlavaConfig ties; "text": the text model's own, as Llama 4's ties), and the modules it adds
    besides (left out here)."""

    text: str
    tie: bool | str
    left_out: str


WRAPPERS = {
    "gemma3": Wrapper("gemma3_text", True, "the SigLIP vision tower and the multimodal projector"),
    "gemma4": Wrapper("gemma4_text", True, "the vision and audio towers and their embedders"),
    "mistral3": Wrapper("mistral", True, "the Pixtral vision tower and the multimodal projector"),
    "llava": Wrapper("llama", "either", "the CLIP vision tower and the multimodal projector"),
    "llama4": Wrapper("llama4_text", "text", "the vision tower and the multimodal projector"),
    "qwen3_5": Wrapper("qwen3_5_text", False, "the vision tower and its merger"),
    "qwen3_5_moe": Wrapper("qwen3_5_moe_text", False, "the vision tower and its merger"),
}


def _text_model(doc: Mapping, wrapper: Wrapper) -> Reading:
    """The reading of a multimodal wrapper's text_config, with the head tied as the wrapper ties it, and a note that
    names the wrapper's other modules, which no figure counts."""
    outer = doc["model_type"]
    text = doc.get("text_config")
    if text is None:
        text = {}
    if not isinstance(text, Mapping):
        raise HFConfigError(f"config.json: text_config={show(text)}: a {outer} file's text_config must be an object of "
                            f"the text model's keys, or null")
    inner = {"model_type": wrapper.text, **text}
    own = doc.get("tie_word_embeddings")
    for where, value in (("", own), ("text_config.", inner.get("tie_word_embeddings"))):
        if value is not None and not isinstance(value, bool):
            raise HFConfigError(f"config.json: {where}tie_word_embeddings={show(value)}: tie_word_embeddings "
                                f"({WHAT['tie_word_embeddings']}) must be true or false")
    if wrapper.tie == "either":
        text_type = inner["model_type"] if isinstance(inner["model_type"], str) else None
        tie = bool(own) or bool(inner.get("tie_word_embeddings",
                                          DEFAULTS.get(text_type, {}).get("tie_word_embeddings")))
        why = f"{outer} ties it where its own tie_word_embeddings or text_config's is true"
    elif wrapper.tie == "text":
        text_type = inner["model_type"] if isinstance(inner["model_type"], str) else None
        tie = inner.get("tie_word_embeddings", DEFAULTS.get(text_type, {}).get("tie_word_embeddings"))
        why = f"text_config's own tie_word_embeddings, as {outer}'s language model ties it; the wrapper's is not read"
    else:
        tie = wrapper.tie if own is None else own
        why = (f"{outer}'s own tie_word_embeddings" + ("" if own is not None else f" (not in the file: {outer}'s "
               f"default)") + ", as transformers ties the head; text_config's is not read")
    try:
        reading = _read({**inner, "tie_word_embeddings": tie})
    except HFConfigError as e:
        raise type(e)(str(e).replace("config.json: ", f"config.json's text_config ({outer}): ", 1)) from None
    note = (f"the text model of a {outer} file: text_config, read as {reading.model_type}, its head "
            f"{'tied' if tie else 'apart'} ({why}); left out: {wrapper.left_out}, which no figure here counts")
    keys = {f: f"text_config.{k}" for f, k in reading.keys.items()}
    return dataclasses.replace(reading, keys=keys, more=(note, *reading.more))


def _read(doc: Mapping) -> Reading:
    """`read` of a decoder's own config.json."""
    model_type = doc.get("model_type")
    if isinstance(model_type, str) and model_type in NOT_BUILT:
        raise PartNotBuilt(f"config.json: model_type={show(model_type)} is not read here yet: it needs "
                            f"{NOT_BUILT[model_type]}, which this explorer does not build yet; give a model of one "
                            f"of the {len(MODEL_TYPES)} types it reads (gpt2, llama, mistral, qwen3, …)")
    if isinstance(model_type, str) and model_type in SAME_MODULE:
        return _same_module(doc, model_type)
    if model_type not in MODEL_TYPES:
        hint = "" if "model_type" in doc else " (the file has no model_type)"
        raise HFConfigError(f"config.json: model_type={show(model_type)} is not one of the {len(MODEL_TYPES)} types "
                            f"read here ({', '.join(MODEL_TYPES[:6])}, …: python -m model --help lists them){hint}")
    if model_type == "nemotron_h":
        return _nemotron_h(doc)
    if model_type == "jamba":
        return _jamba(doc)
    if model_type == "falcon_h1":
        return _falcon_h1(doc)
    table = DEFAULTS[model_type]
    doc = _kimi_keys(doc) if model_type == "kimi_linear" else doc
    doc, unread = _unread_pattern(doc, model_type)
    doc, overwritten = _overwritten(doc, model_type)
    values = _values(doc, model_type)
    _check_rope(doc)
    _check_activation(doc, model_type)
    for key in VALUE_KEYS.get(model_type, ()):
        if key in doc and not (doc[key] is None and key in VALUE_NULLABLE.get(model_type, ())):
            _number(key, doc[key], -1e6, 1e6)
    router = _router(doc, model_type)
    fields, keys = _fields(values, model_type)
    layout = _moe_layout(fields, keys) if model_type in MOE_TYPES else ()
    _refuse_unmodelled(doc, values, model_type, fields, keys)
    types, window = _blocks(values, model_type, fields["L"])
    windowing = _window(types, window, model_type, fields, keys, "sliding_window" in values["given"])
    windowing += _rotary(doc, model_type, fields, keys)
    windowing += _nope(values, model_type, fields, keys, types, window)
    windowing += VALUES_ONLY.get(model_type, ()) + unread + overwritten
    windowing += _latent(doc, model_type, fields) if model_type in MLA_TYPES else ()
    windowing += _sigmoid_router(doc, model_type, fields) if model_type in MTP_DEFAULT else ()
    if model_type == "hy_v3" and values["num_shared_experts"] == 0:
        windowing += (f"num_shared_experts = 0 gives its shared SwiGLU width moe_intermediate_size · 0 = 0, which its "
                      f"module's HYV3MLP replaces by intermediate_size = {values['intermediate_size']:,}: one shared "
                      f"expert of that width, as transformers builds it",)
    windowing += (MINIMAX_VALUES,) if model_type == "minimax_m2" else ()
    if model_type == "phimoe" and values["num_experts_per_tok"] != 2:
        windowing += (f"num_experts_per_tok = {values['num_experts_per_tok']:,} is not what PhiMoE's router "
                      f"(sparsemixer) runs: it always picks 2 experts per token, so k = 2, as transformers runs it",)
    windowing += _linear(doc, values, model_type, fields, keys, types)
    windowing += _mamba(doc, values, model_type, fields, keys, types)
    windowing += _kda(values, model_type, fields, keys, types)
    windowing += _sparse(doc, values, model_type, fields, keys)
    windowing += _gemma4(doc, values, fields, types) if model_type == "gemma4_text" else ()
    windowing += _falcon_cache(values, fields) if model_type == "falcon" else ()
    if model_type == "apertus1p5_text":
        _whole_head(values["output_vocab_size"], fields["V"])
    noted = [k for k in table if k not in RULE_KEYS] + (["sliding_window"] if fields.get("window") else [])
    defaults = tuple(k for k in table if k in noted and k not in values["given"])
    ignored = tuple(k for k in SHAPE_KEYS if k in doc and k not in table and k not in ALIASES.get(model_type, {})
                    and k not in EXTRAS[model_type] and k not in READ_BY_EVERY_TYPE and k not in ACTIVATIONS
                    and not (k == "head_dim" and model_type in MLA_TYPES))  # `_latent` names what its class sets
    return Reading(model_type, fields, keys, defaults, ignored, (*layout, *router, *windowing))


def _same_module(doc: Mapping, model_type: str) -> Reading:
    """The reading of a `SAME_MODULE` type: its keys checked and renamed as its class's attribute_map renames them,
    its class's defaults written in where the file has none, then read as the type whose module it runs."""
    base, aliases = SAME_MODULE[model_type], ALIASES[model_type]
    values = _values(doc, model_type)
    for alias, key in aliases.items():
        if alias in doc and key in doc and doc[alias] != doc[key]:
            raise HFConfigError(f"config.json: {alias}={show(doc[alias])} and {key}={show(doc[key])} set the same "
                                f"thing ({WHAT[key]}) to different values")
    renamed = {aliases.get(k, k): v for k, v in doc.items()}
    if isinstance(renamed.get("rope_scaling"), Mapping) and "deepseek_yarn" in (
            renamed["rope_scaling"].get("type"), renamed["rope_scaling"].get("rope_type")):  # its class's legacy name
        renamed["rope_scaling"] = {**renamed["rope_scaling"], "type": "yarn", "rope_type": "yarn"}
    pad = {"pad_token_id": PAD_DEFAULTS[model_type]} if model_type in PAD_DEFAULTS else {}
    written = {**ROUTER[model_type], **SAME_MODULE_SETS.get(model_type, {}), **pad,
               **{k: values[k] for k in DEFAULTS[model_type]}, **renamed, "model_type": base}
    reading = _read(written)
    defaults = tuple(k for k in DEFAULTS[model_type] if k not in values["given"] and k not in RULE_KEYS)
    note = (f"{model_type}: its module runs {SAME_BLOCKS[model_type]}, so it is read as {base} from {model_type}'s own "
            "defaults") if model_type in SAME_BLOCKS else \
        (f"{model_type}: transformers builds {base}'s module from it ({CONFIG_CLASSES[model_type]} subclasses "
         f"{CONFIG_CLASSES[base]}), so it is read as {base} from {model_type}'s own defaults")
    return dataclasses.replace(reading, model_type=model_type, defaults=defaults, more=(note, *reading.more))


LLAMA4_VALUES = ("values only, which change no count, shape or byte: RoPE's θ and its pairs (rotated as complex "
                 "numbers); the router's sigmoid over its top-k logits, which scales each expert's input (this "
                 "module's router takes a softmax over the same (B, T, E) logits and scales its outputs); the "
                 "temperature's attn_scale and floor_scale (0.1 and 8,192 here); the QK-norm's ε. transformers' "
                 "module runs every expert on every token, scaled by 0 where the router did not choose it: its "
                 "FlopCounterMode count adds the other E − k experts' matmuls, which no figure here counts")
GEMMA_VALUES = ("values only, which change no count, shape or byte: the token rows times √d, the scores times "
                "1/√query_pre_attn_scalar, Gemma's RMSNorm gain (1 + g) and RoPE's bases; the soft-caps are values too, "
                "but each is a tensor of the pass (the shapes table shows it)")
GEMMA4_VALUES = ("values only, which change no count, shape or byte: the token rows times √d, the scores unscaled "
                 "(q and k are RMS-normed per head, so the scale is 1: read as query_pre_attn_scalar = 1), Gemma's "
                 "RMSNorm gain, an RMSNorm without a gain on each head's v (no parameter, no matmul), each block's output "
                 "times its layer_scalar (a buffer), RoPE's bases, and the full blocks' proportional RoPE (its angles "
                 "cover all d_head, partial_rotary_factor of them turning, the rest 0: the same shapes and FLOPs)")
OSS_VALUES = ("values only, which change no count, shape or byte: the experts' clamp (gate ≤ swiglu_limit, up within "
              "±swiglu_limit) and gain, gate·σ(swiglu_alpha·gate)·(up + 1); their interleaved gate_up (W_gate and W_up "
              "apart here, the same parameters and FLOPs); the router's softmax over its top k (the renormalised top k "
              "of the softmax over E, as here); RoPE's θ and yarn scaling. The sinks are parameters (h per block) and "
              "make the softmax (B, h, T, T + 1), a tensor of the pass")
MINISTRAL3_VALUES = ("values only, which change no count, shape or byte: the queries times 1 + β·log(1 + "
                     "⌊position / original_max_position_embeddings⌋) after RoPE (rope_parameters' "
                     "llama_4_scaling_beta), and RoPE's yarn scaling")
GEMMA1_VALUES = ("values only, which change no count, shape or byte: the token rows times √d, Gemma's RMSNorm gain "
                 "(1 + g) and RoPE's base")
COHERE_VALUES = ("values only, which change no count, shape or byte: the logits times logit_scale, RoPE's pairs "
                 "interleaved, and RoPE's base")
PHI3_VALUES = ("values only, which change no count, shape or byte: q, k and v in one matrix (qkv_proj), as here, and "
               "gate and up in one (gate_up_proj; W_gate and W_up apart here, the same parameters and FLOPs); RoPE's "
               "θ and scaling (longrope's factors)")
GRANITE_VALUES = ("values only, which change no count, shape or byte: the token rows times embedding_multiplier, each "
                  "block's attention and MLP outputs times residual_multiplier before they join x, the scores times "
                  "attention_multiplier (in place of 1/√d_head), the logits divided by logits_scaling")
ROPE_VALUES = "values only, which change no count, shape or byte: RoPE's θ and scaling"
GPT2_VALUES = ("values only, which change no count, shape or byte: GELU's approximation (activation_function or "
               "hidden_act), the scores' scale (scale_attn_weights)")
VALUES_ONLY = {"starcoder2": (GPT2_VALUES + "; RoPE's θ",), "gpt_bigcode": (GPT2_VALUES,),
               "nanochat": (ROPE_VALUES + "; RoPE's direction (its rotate_half turns q and k the other way); the "
                            "RMSNorms' ε",),
               "falcon": ("values only, which change no count, shape or byte: GELU's approximation (activation), "
                          "RoPE's θ, the LayerNorms' ε",),
               **dict.fromkeys(("gptj", "codegen"), ("values only, which change no count, shape or byte: GELU's "
                                                    "approximation (activation_function), RoPE's interleaved pairs "
                                                    "(θ 10,000), the LayerNorms' ε",)),
               "olmoe": ("values only, which change no count, shape or byte: q, k and v clipped (clip_qkv), RoPE's θ",),
               "olmo": ("values only, which change no count, shape or byte: q, k and v clipped (clip_qkv), RoPE's θ "
                        "and scaling",),
               "granite": (GRANITE_VALUES,),
               "hyperclovax": ("values only, which change no count, shape or byte: the token rows times "
                               "embedding_multiplier, each block's attention and MLP outputs (after their norms, "
                               "use_post_norm) times residual_multiplier before they join x, the scores times "
                               "attention_multiplier (null: 1/√d_head), the logits times logits_scaling",),
               **dict.fromkeys(("granitemoe", "granitemoeshared"), (
                   GRANITE_VALUES + "; the router's softmax over its top k logits (the renormalised top k of the "
                                    "softmax over E, as here)",)),
               "granitemoehybrid": (
                   GRANITE_VALUES + "; the router's softmax over its top k logits (the renormalised top k of the "
                                    "softmax over E, as here); RoPE's θ where position_embedding_type is \"rope\"; "
                                    "Mamba 2's step limits (time_step_limit) and its gated norm's ε (rms_norm_eps)",),
               "glm4": (ROPE_VALUES + ", its pairs interleaved; gate and up in one matrix (gate_up_proj; W_gate and "
                                      "W_up apart here, the same parameters and FLOPs)",),
               "glm": (ROPE_VALUES + ", its pairs interleaved; gate and up in one matrix "
                                                               "(gate_up_proj; W_gate and W_up apart here, the same "
                                                               "parameters and FLOPs)",), "olmo2": (ROPE_VALUES,), "olmo3": (ROPE_VALUES + " (per kind of block)",), "cwm": (ROPE_VALUES + " (llama3's by default)",),
               "ernie4_5": (ROPE_VALUES + ", its pairs interleaved",),
               "stablelm": (ROPE_VALUES + "; the LayerNorms' ε (layer_norm_eps)",),
               "phi": (ROPE_VALUES + "; GELU's approximation (hidden_act); the LayerNorms' ε (layer_norm_eps)",),
               "gpt_neox": (ROPE_VALUES + " (rotary_emb_base); q, k and v in one matrix, query_key_value, its rows "
                            "head by head (W_q, W_k and W_v apart here: the same parameters and FLOPs); GELU's "
                            "approximation (hidden_act); the LayerNorms' ε (layer_norm_eps)",),
               "nemotron": (ROPE_VALUES + "; the LayerNorms' gain 1 + g (LayerNorm1P: g starting at 0) and their ε "
                            "(norm_eps)",),
               "phimoe": (ROPE_VALUES + " (Phi-3.5-MoE's longrope); the LayerNorms' ε (rms_norm_eps); its router, "
                          "sparsemixer, always picks 2 experts per token, whatever num_experts_per_tok says (its top "
                          "and the best of the rest, each weighed by a softmax over the scores near it; here the "
                          "renormalised top 2 of one softmax: the same shapes and FLOPs)",),
               "ernie4_5_moe": (ROPE_VALUES + ", its pairs interleaved; the router's logits and softmax in fp32, its "
                                "weight W_router and correction bias kept in fp32 (counted here at the weights' dtype, "
                                "as every parameter)",), "gemma": (GEMMA1_VALUES,), "gemma2": (GEMMA_VALUES,), "gemma3_text": (GEMMA_VALUES,),
               "gemma4_text": (GEMMA4_VALUES,),
               "phi3": (PHI3_VALUES,), "cohere": (COHERE_VALUES,), "cohere2": (COHERE_VALUES,),
               "llama4_text": (LLAMA4_VALUES,),
               "exaone4": (ROPE_VALUES,), "arcee": (ROPE_VALUES,),
               **dict.fromkeys(("apertus", "apertus1p5_text"),
                               (ROPE_VALUES + "; xIELU's β and ε (buffers, not parameters)",)), "jais2": (ROPE_VALUES + "; the LayerNorms' ε",),
               "vaultgemma": (GEMMA_VALUES,), "gpt_oss": (OSS_VALUES,),
               "ministral3": (MINISTRAL3_VALUES,),
               "olmo_hybrid": ("values only, which change no count, shape or byte: β doubled in the Gated DeltaNet "
                               "blocks (linear_allow_neg_eigval), their output norm's ε, their A and dt's initial "
                               "ranges, RoPE's θ",),
               "qwen3_next": ("values only, which change no count, shape or byte: the RMSNorms' gain 1 + g "
                              "(zero-centred, g starting at 0, as Gemma's); q_proj's rows, each head's query beside its "
                              "gate (W_q and W_g apart here, the same parameters and FLOPs); RoPE's θ and scaling",),
               "hy_v3": ("values only, which change no count, shape or byte: the router's sigmoid scores (this module's "
                         "router takes a softmax over the same (B, T, E) logits), their correction bias "
                         "e_score_correction_bias (a buffer of E per MoE block, not a parameter: not in N, as "
                         "transformers' count leaves it out), the k weights renormalised and times "
                         "router_scaling_factor, the fp32 sum of the experts' outputs (enable_moe_fp32_combine); RoPE's "
                         "θ. Its multi-token-prediction layer (a checkpoint's layer num_hidden_layers) is left out, as "
                         "transformers builds none; first_k_dense_replace is not read (mlp_layer_types lists the dense "
                         "blocks)",),
               "aria_text": (ROPE_VALUES + "; the router's softmax over its top k logits (the renormalised top k of the "
                                           "softmax over E, as here); the routed experts' SiLU whatever hidden_act",),
               "flex_olmo": (ROPE_VALUES + "; the k weights as the softmax gives them, unless norm_topk_prob",),
               "mellum": ("values only, which change no count, shape or byte: RoPE's θ per kind of block "
                          "(rope_parameters' full_attention and sliding_attention); the k weights as the softmax gives "
                          "them, unless norm_topk_prob. Its multi-token-prediction layer (num_mtp_layers) is left out, "
                          "as transformers builds none",)}  # each type's note of what changes values only
# The types whose module masks every block with the window when one is set (their mask ignores layer_types), and those
# whose module never windows attention (only transformers' cache reads their window).
WINDOW_EVERY_BLOCK = ("mistral", "ministral3", "mixtral", "phimoe", "qwen3_moe", "phi3", "starcoder2")
NO_WINDOWED_ATTENTION = ("gpt2", "gptj", "codegen", "falcon", "llama", *LLAMA_KIN, "arcee", "apertus", "apertus1p5_text", "olmo", "nanochat", "jais2", "granite", "hyperclovax", "granitemoe",
                         "granitemoeshared", "granitemoehybrid", "flex_olmo", "helium", "ernie4_5", "seed_oss", "olmo2", "glm", "glm4",
                         "glm4_moe", "solar_open", "aria_text", "hy_v3", "minimax_m2", "ernie4_5_moe", "nemotron", "stablelm", "gpt_neox", "phi",
                         "gpt_bigcode", "olmoe", "gemma",
                         "cohere",
                         "deepseek_v2", "deepseek_v3", "youtu", "glm4_moe_lite", "minicpm3", "deepseek_v32",
                         "glm_moe_dsa", "kimi_linear")


def _window(types: list[str], window: int | None, model_type: str, fields: dict, keys: dict[str, str],
            given: bool) -> tuple[str, ...]:
    """The window's fields (`window`, `full_layers`) set in `fields` from each block's attention (`_blocks`), and a
    note naming them; HFConfigError where transformers' mask and cache disagree (see the module docstring)."""
    sliding = [i for i, t in enumerate(types) if t == "sliding_attention"]
    if sliding and window is None:
        raise HFConfigError("config.json: layer_types lists sliding_attention blocks but no window applies "
                            "(sliding_window is null, or use_sliding_window false): transformers cannot build their "
                            "cache; give the window or list full_attention")
    if sliding and window == 1 and model_type == "llama4_text":
        raise HFConfigError("config.json: attention_chunk_size=1 lets each query see only itself, and transformers' "
                            "cache then keeps every token (it keeps the last W − 1 = 0 as all of them); give chunks of "
                            "at least 2, or null for full attention")
    if sliding and window == 1:
        raise HFConfigError("config.json: sliding_window=1 lets each query see only itself, and transformers' cache "
                            "then keeps every token (it keeps the last W − 1 = 0 as all of them); give a window of at "
                            "least 2, or null for full attention")
    if model_type in WINDOW_EVERY_BLOCK and window is not None and len(sliding) < len(types):
        raise HFConfigError(f"config.json: sliding_window={window:,} masks every block of {model_type}, but layer_types "
                            f"lists full_attention blocks, whose cache transformers keeps whole: drop layer_types, or "
                            f"write \"sliding_window\": null for full attention")
    if not sliding:
        return ()
    if model_type in NO_WINDOWED_ATTENTION:
        raise HFConfigError(f"config.json: sliding_window={window:,}: {model_type}'s attention never windows, but "
                            f"transformers' cache would keep only {window - 1:,} tokens of the blocks layer_types calls "
                            f"sliding; write \"sliding_window\": null (or list full_attention)")
    full = tuple(i for i, t in enumerate(types) if t == "full_attention")
    fields.update(window=window, full_layers=full)
    keys["window"] = "sliding_window"
    if model_type == "llama4_text":  # its chunks: a window's cache, each query seeing its own chunk of W
        fields["chunked"] = True
        keys["window"] = "attention_chunk_size"
        which = "every block" if not full else f"{len(sliding):,} of the {len(types):,} blocks (the others full " \
                                               f"attention, without RoPE)"
        return (f"chunked attention: chunks of W = {window:,} (attention_chunk_size) in {which}: each query sees the "
                f"keys of its own chunk, and a chunked block's KV cache keeps W − 1 = {window - 1:,} tokens after a "
                f"prefill, as transformers keeps a window's",)
    source = "sliding_window" if given else f"sliding_window (not in the file: {model_type}'s default)"
    which = "every block" if not full else f"{len(sliding):,} of the {len(types):,} blocks (the others full attention)"
    return (f"a sliding window W = {window:,} ({source}) on {which}: each query sees the last W keys, and a windowed "
            f"block's KV cache keeps W − 1 = {window - 1:,} tokens after a prefill",)


# The types whose config class writes "sliding_window": 0 where use_sliding_window is false (Qwen2MoeConfig's
# __post_init__; its module reads no window then): read as no window, as transformers reads the file it wrote.
ZERO_WHEN_UNUSED = ("qwen2_moe",)


def _values(doc: Mapping, model_type: str) -> dict:
    """Each shape key of the type: the file's value (checked) or the class default; "given" lists the file's keys."""
    table, aliases = DEFAULTS[model_type], ALIASES.get(model_type, {})
    out: dict = {"given": set()}
    for key, default in {**table, **dict.fromkeys(EXTRAS[model_type])}.items():
        names = [key, *(a for a, k in aliases.items() if k == key)]
        present = [n for n in names if n in doc]
        if len(present) > 1 and len({json.dumps(doc[n], default=str) for n in present}) > 1:
            raise HFConfigError(f"config.json: {present[0]}={show(doc[present[0]])} and {present[1]}="
                                f"{show(doc[present[1]])} set the same thing ({WHAT[key]}) to different values")
        if present and key == "sliding_window" and doc[present[0]] == 0 and model_type in ZERO_WHEN_UNUSED \
                and doc.get("use_sliding_window", table["use_sliding_window"]) is False:
            out["given"].add(key)
            out[key] = None  # what the class writes where no window applies
        elif present:
            out["given"].add(key)
            out[key] = _checked(present[0], doc[present[0]], key in NULLABLE[model_type],
                                KIND_OF.get(model_type, {}).get(key, key))
            if out[key] is None and key in NULL_FAILS.get(model_type, ()):
                raise HFConfigError(f"config.json: {present[0]}=null: {model_type}'s config class keeps it null and "
                                    f"its module cannot run so; give {WHAT[key]} as a whole number")
        else:
            out[key] = default
            if default is None and key in NULL_FAILS.get(model_type, ()):
                raise HFConfigError(f"config.json: {key} is not in the file, and {model_type}'s config class leaves it "
                                    f"null, which its module cannot run; give {WHAT[key]} as a whole number")
    return out


KIND_OF = {"granitemoehybrid": {"num_local_experts": "num_experts"},
           "gemma4_text": {"use_bidirectional_attention": "bidirectional_mode"}}  # a key of a type taking another's kind (0 experts:
# every block's MLP GraniteMoeHybrid's shared one alone)


def _checked(key: str, value: object, nullable: bool, kind: str | None = None) -> object:
    """`value` if it has the kind `key` takes (a whole number >= 1 for a size, ...; null where `nullable`), else
    HFConfigError; `kind`: the key whose kind it takes, where `key` is another name of it (InternLM3's qkv_bias)."""
    kind = kind or key
    null = " or null" if nullable else ""
    if value is None and nullable:
        return None
    whole = isinstance(value, int) and not isinstance(value, bool)
    if kind in SIZES:
        if not whole or value < 1:
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[kind]}) must be a whole number of at "
                                f"least 1{null}")
        return value
    if kind in COUNTS:
        if not whole or value < 0:
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[kind]}) must be a whole number of at "
                                f"least 0")
        return value
    if kind in SOFTCAPS or kind in CLAMPS:
        return _number(key, value, 0, 1e6, open_lo=True)
    if kind == "hidden_activation":
        if value != GEMMA_ACTIVATION:
            raise HFConfigError(f"config.json: hidden_activation={show(value)}: this module's GeGLU runs GELU's tanh "
                                f"approximation, \"{GEMMA_ACTIVATION}\"")
        return value
    if kind in FLAGS:
        if not isinstance(value, bool):
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[kind]}) must be true or false")
        return value
    if kind == "moe_layers":  # Llama 4's MoE blocks, by index
        if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in value):
            raise HFConfigError(f"config.json: moe_layers={show(value)}: moe_layers ({WHAT[kind]}) must be a list of "
                                f"block indices such as [1, 3]{null}")
        return value
    if kind == "mlp_only_layers":
        if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in value):
            raise HFConfigError(f"config.json: mlp_only_layers={show(value)}: mlp_only_layers ({WHAT[kind]}) must be a "
                                f"list of block indices such as [0, 1]{null}")
        return value
    if kind == "no_rope_layers":  # SmolLM3's: 1 where a block uses RoPE, 0 where it does not
        if not isinstance(value, list) or any(v not in (0, 1) or isinstance(v, float) for v in value):
            raise HFConfigError(f"config.json: no_rope_layers={show(value)}: no_rope_layers ({WHAT[kind]}) must be a "
                                f"list of 1 (RoPE) and 0 (none), one per block{null}")
        return value
    if kind == "max_window_layers":
        if not whole or value < 0:
            raise HFConfigError(f"config.json: max_window_layers={show(value)}: {WHAT[kind]} must be a whole number "
                                f"of at least 0")
        return value
    if kind == "mlp_layer_types":
        if not isinstance(value, list) or any(t not in MLP_LAYER_TYPES for t in value):
            raise HFConfigError(f"config.json: mlp_layer_types={show(value)}: mlp_layer_types ({WHAT[kind]}) must be a "
                                f"list of \"dense\" or \"sparse\", one per block{null}")
        return value
    if kind == "indexer_types":
        if not isinstance(value, list) or any(t not in ("full", "shared") for t in value):
            raise HFConfigError(f"config.json: indexer_types={show(value)}: indexer_types ({WHAT[kind]}) must be a "
                                f"list of \"full\" or \"shared\", one per block{null}")
        return value
    if kind in ("mamba_d_head", "mamba_dt_rank"):  # GraniteMoeHybridConfig's "auto": mamba_expand·d / mamba_n_heads;
        # JambaConfig's: ⌈d/16⌉
        if value != "auto" and (not whole or value < 1):
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[kind]}) must be a whole number of at "
                                f"least 1, or \"auto\"")
        return value
    if kind == "position_embedding_type":
        if not isinstance(value, str):
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[kind]}) must be a word such as "
                                f"\"rope\" or \"nope\"{null}")
        return value
    if kind == "layer_types":
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise HFConfigError(f"config.json: layer_types={show(value)}: layer_types ({WHAT[kind]}) must be a list "
                                f"of words such as \"full_attention\", one per block{null}")
        value = [LEGACY_LAYER_TYPES.get(t, t) for t in value]  # as every config class remaps them
        unknown = [t for t in value if t not in LAYER_TYPES]
        if unknown:
            raise HFConfigError(f"config.json: layer_types lists {show(unknown[0])}: each block's attention must be "
                                f"one of {', '.join(LAYER_TYPES)}")
        return value
    if kind == "layers_block_type":  # Nemotron-H's layers, legacy words remapped as its class remaps them
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[kind]}) must be a list of words, one "
                                f"per layer{null}")
        value = [LEGACY_LAYER_TYPES.get(t, t) for t in value]
        unknown = [t for t in value if t not in NEMOTRON_LAYERS]
        if unknown:
            raise HFConfigError(f"config.json: {key} lists {show(unknown[0])}: each layer must be one of "
                                f"{', '.join(NEMOTRON_LAYERS)}")
        if not value:
            raise HFConfigError(f"config.json: {key} is empty: list one operation per layer")
        return value
    if kind in ("mlp_hidden_act", "mamba_hidden_act"):  # the one activation this module runs there
        wanted = {"mlp_hidden_act": "relu2", "mamba_hidden_act": "silu"}[kind]
        if value != wanted:
            raise HFConfigError(f"config.json: {key}={show(value)}: {WHAT[kind]} here is \"{wanted}\" (Nemotron-H's), "
                                "the one this module runs")
        return value
    if kind == "bidirectional_mode":  # Gemma 4's: a word, not a flag (null: causal; its class's type allows it)
        if value not in ("vision", "all", None):
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[kind]}) must be \"vision\", \"all\" "
                                f"or null")
        return value
    if kind == "per_layer_config":
        return _per_layer_config(value)
    if kind == "moe_layer_end_index":  # ERNIE 4.5 MoE's: a block index, -1 the last (its __post_init__)
        if not whole:
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[kind]}) must be a whole number")
        return value
    raise AssertionError(f"no kind for {kind}")  # every key of DEFAULTS has one (tests check)


PER_LAYER_KEYS = ("head_dim", "num_key_value_heads")  # what Gemma 4's per_layer_config sets a block apart, here


def _per_layer_config(value: object) -> dict[int, dict[str, int]]:
    """Gemma 4's per_layer_config (block index, written "05" or 5, -> its own head_dim and num_key_value_heads) as
    {index: {key: value}}; HFConfigError for anything else (another key is refused by name: not read here)."""
    if not isinstance(value, Mapping):
        raise HFConfigError(f"config.json: per_layer_config={show(value)}: per_layer_config ({WHAT['per_layer_config']}) "
                            f"must be an object such as {{\"05\": {{\"head_dim\": 512}}}}, or null")
    out: dict[int, dict[str, int]] = {}
    for index, overrides in value.items():
        if not (isinstance(index, str) and index.isdigit()) or not isinstance(overrides, Mapping):
            raise HFConfigError(f"config.json: per_layer_config lists {show(index)}: {show(overrides)}; each entry must "
                                f"be a block index and an object of its own keys, such as \"05\": {{\"head_dim\": 512}}")
        other = [k for k in overrides if k not in PER_LAYER_KEYS]
        if other:
            raise HFConfigError(f"config.json: per_layer_config[{index}] sets {other[0]}, which is not read here per "
                                f"block (only {' and '.join(PER_LAYER_KEYS)}); drop it")
        out[int(index)] = {k: _checked(f"per_layer_config[{index}].{k}", v, False, k) for k, v in overrides.items()}
    return out


def _number(key: str, value: object, lo: float, hi: float, open_lo: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < lo or value > hi or (open_lo and value == lo):
        where = f"above {lo}" if open_lo else f"from {lo}"
        what = WHAT[key.rsplit(".", 1)[-1]]  # rope_parameters.rope_theta: what rope_theta is
        raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({what}) must be a number {where} to {hi}")
    return value


# The MLP's activation each type's module reads from hidden_act, as this module runs it: SiLU in SwiGLU, GELU's tanh
# approximation in Gemma's GeGLU ("gelu", the released files' word, GemmaConfig reads as it). gpt-oss's experts read
# none (their clamped SwiGLU is written out), GPT-2 reads activation_function, Gemma 2 and 3 hidden_activation.
GELUS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_accurate")  # GELU, exact or approximated: values
ACTIVATIONS = {"hidden_act": {"starcoder2": GELUS, "gpt_neox": GELUS, "phi": GELUS, **dict.fromkeys(("llama", "mistral", "ministral3", "qwen2", "qwen3", "mixtral", "qwen2_moe",
                                               "qwen3_moe", "phi3", "cohere", "deepseek_v2", "deepseek_v3", *LLAMA_KIN,
                                               "granite", "helium", "ernie4_5", "seed_oss", "cwm", "olmo", "olmo2", "olmo3", "olmo_hybrid",
                                               "glm", "glm4", "glm4_moe", "minimax_m2", "olmoe", "ministral", "smollm3",
                                               "cohere2", "exaone4", "youtu", "granitemoe", "granitemoeshared", "mellum",
                                               "flex_olmo", "hyperclovax", "llama4_text", "solar_open", "aria_text",
                                               "dots1", "hy_v3", "glm4_moe_lite", "minicpm3", "qwen3_next",
                                               "deepseek_v32", "glm_moe_dsa", "granitemoehybrid", "kimi_linear",
                                               "jamba", "falcon_h1", "ernie4_5_moe", "phimoe", "stablelm"),
                                             ("silu",)),
                              "gemma": (GEMMA_ACTIVATION, "gelu"), **dict.fromkeys(("arcee", "jais2", "nemotron", "nanochat"), ("relu2",)),
                              **dict.fromkeys(("apertus", "apertus1p5_text"), ("xielu",))},
               "activation_function": {"exaone": ("silu",), "gpt_bigcode": GELUS, "gptj": GELUS,
                                       "codegen": GELUS}, "activation": {"falcon": GELUS}}  # ExaoneConfig's name for hidden_act


def _check_activation(doc: Mapping, model_type: str) -> None:
    """HFConfigError where the file's hidden_act is not the activation this module runs for its type."""
    for key, by_type in ACTIVATIONS.items():
        allowed = by_type.get(model_type)
        if allowed is not None and key in doc and doc[key] not in allowed:
            raise HFConfigError(f"config.json: {key}={show(doc[key])}: {model_type}'s MLP here runs "
                                f"{' or '.join(repr(a) for a in allowed)} (the activation its module reads)")


def _check_rope(doc: Mapping) -> None:
    """RoPE's settings, in either spelling: θ a positive number, scaling an object, a partial_rotary_factor above 0 and
    at most 1 (`_rotary` reads it)."""
    settings: list[tuple[str, Mapping]] = [("", doc)]
    for key in ("rope_parameters", "rope_scaling"):
        value = doc.get(key)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[key]}) must be an object such as "
                                f'{{"rope_type": "default", "rope_theta": 10000.0}}, or null')
        nested = [v for k, v in value.items() if isinstance(v, Mapping) and str(k).endswith("_attention")]
        settings += [(f"{key}.", v) for v in (nested if nested and len(nested) == len(value) else [value])]  # one
        # object per kind of layer ({"full_attention": {…}, "sliding_attention": {…}}), or the settings themselves
    for prefix, where in settings:
        if "rope_theta" in where:
            _number(f"{prefix}rope_theta", where["rope_theta"], 0, 1e30, open_lo=True)
        known = (*ROPE_TYPES, *(("proportional",) if doc.get("model_type") == "gemma4_text" else ()), None)
        if prefix and "rope_type" in where and where["rope_type"] not in known:
            raise HFConfigError(f"config.json: {prefix}rope_type={show(where['rope_type'])} is not a RoPE scaling "
                                f"rule transformers knows ({', '.join(ROPE_TYPES)})")
        if "partial_rotary_factor" in where:
            _number(f"{prefix}partial_rotary_factor", where["partial_rotary_factor"], 0, 1, open_lo=True)


# The types whose rotary embedding reads partial_rotary_factor (RoPE on int(d_head · factor) features of each head, the
# rest passed through), with their class's default; every other type's ignores it and rotates all d_head.
PARTIAL_ROTARY: dict[str, float] = {"phi3": 1.0, "glm": 0.5, "glm4": 0.5, "glm4_moe": 0.5, "minimax_m2": 1.0, "nemotron": 0.5, "stablelm": 0.25,
                                    "gpt_neox": 0.25, "phi": 0.5,
                                    "qwen3_next": 0.25}


# The types whose attention splits d into h heads of d / h whatever head_dim says (only their rotary embedding reads it:
# a head_dim other than d / h is refused, as their rotation would not fit their heads)
HEAD_DIM_UNREAD = ("stablelm", "gpt_neox")
# The types whose attention slices int(d_head · factor) features of q and k but multiplies them by angles of the even
# width above it (StableLM's): an odd count broadcasts its keys wider than d_head (refused).
ODD_ROTARY_FAILS = ("stablelm", "phi")
# The types whose rotary embedding reads partial_rotary_factor but whose attention multiplies all of each head's q and k
# (all of d_R, latent attention's rotary part) by its angles: a factor that rotates less cannot run (refused).
WHOLE_HEAD_ROTARY = ("solar_open", "glm4_moe_lite", "deepseek_v32", "glm_moe_dsa")


# Every type that rotates all of each head (not `PARTIAL_ROTARY`'s): its default RoPE ignores partial_rotary_factor,
# but a scaled RoPE (yarn, linear, llama3, …: transformers' rope utilities) reads it, and the angles then cover fewer
# features than the attention rotates: a factor below 1 cannot run (refused; tests check Llama's and MiniCPM3's).


def _rope_type(doc: Mapping) -> str:
    """The RoPE rule a file names (rope_parameters' or rope_scaling's rope_type, or the old key type): "default" if none."""
    for key in ("rope_parameters", "rope_scaling"):
        if isinstance(doc.get(key), Mapping):
            kind = doc[key].get("rope_type", doc[key].get("type"))
            if kind is not None:
                return kind
    return "default"


def _whole_head_rotary(model_type: str, key: str, factor: float, fields: dict) -> None:
    """HFConfigError where partial_rotary_factor gives fewer angles than the features the type's attention rotates."""
    d_head = fields["rope_dim"] if "rope_dim" in fields else fields.get("head_dim") or fields["d"] // fields["h"]
    dim = int(d_head * factor)
    if dim + dim % 2 != d_head:
        width = "qk_rope_head_dim = " if "rope_dim" in fields else "d_head = "
        raise HFConfigError(f"config.json: {key}={show(factor)} gives RoPE {dim + dim % 2:,} of {width}{d_head:,} "
                            f"features, but {model_type}'s attention multiplies all {d_head:,} by its angles (it cannot "
                            f"run): write 1.0 or drop the key")


def _rotary(doc: Mapping, model_type: str, fields: dict, keys: dict[str, str]) -> tuple[str, ...]:
    """partial_rotary_factor as transformers reads it (rope_parameters' or rope_scaling's own, else the top-level key,
    else the type's default): `rotary_dim` d_rot = int(d_head · factor) where the type's module reads it, and a note;
    where it does not, a note that it is ignored. HFConfigError for a d_rot that is odd or 0."""
    given = [(f"{k}.partial_rotary_factor", doc[k]["partial_rotary_factor"]) for k in ("rope_parameters", "rope_scaling")
             if isinstance(doc.get(k), Mapping) and "partial_rotary_factor" in doc[k]]
    if model_type == "gpt_neox" and "rotary_pct" in doc:  # its class's own key, read before the top-level factor
        given.append(("rotary_pct", _number("rotary_pct", doc["rotary_pct"], 0, 1, open_lo=True)))
    given += [("partial_rotary_factor", doc["partial_rotary_factor"])] if "partial_rotary_factor" in doc else []
    if model_type == "minimax_m2" and doc.get("rotary_dim") is not None:  # its class: rotary_dim / head_dim
        d_head = fields.get("head_dim") or fields["d"] // fields["h"]
        given.append((f"rotary_dim / head_dim = {doc['rotary_dim']:,} / {d_head:,}",
                      _checked("rotary_dim", doc["rotary_dim"], True) / d_head))
    if model_type not in PARTIAL_ROTARY and given and _rope_type(doc) != "default":
        _whole_head_rotary(model_type, *given[0], fields)
        return ()
    if model_type in WHOLE_HEAD_ROTARY and given:
        _whole_head_rotary(model_type, *given[0], fields)
        return ()
    if model_type not in PARTIAL_ROTARY:
        ignored = [f"{key} = {show(v)}" for key, v in given if v != 1]
        return (f"ignored, as transformers' {model_type} module ignores it (RoPE rotates all d_head features): "
                f"{', '.join(ignored)}",) if ignored else ()
    key, factor = given[0] if given else (f"partial_rotary_factor (not in the file: {model_type}'s default)",
                                          PARTIAL_ROTARY[model_type])
    d_head = fields.get("head_dim") or fields["d"] // fields["h"]
    dim = int(d_head * factor)
    d_rot = dim + dim % 2  # an odd int(d_head · factor) gets a frequency for its last feature's pair: one more rotated
    if d_rot >= d_head:
        return ()
    if dim == 0:
        raise HFConfigError(f"config.json: {key}={show(factor)} rotates int(d_head · {factor:g}) = 0 of each head's "
                            f"d_head = {d_head:,} features, no position at all; give a factor of at least "
                            f"{2 / d_head:.3g}")
    if dim % 2 and model_type in ODD_ROTARY_FAILS:
        raise HFConfigError(f"config.json: {key}={show(factor)} rotates int(d_head · {factor:g}) = {dim:,} of each "
                            f"head's d_head = {d_head:,} features, an odd number: {model_type}'s attention rotates that "
                            f"many by angles of one more, which makes its keys wider than d_head; give a factor that "
                            f"rotates an even number")
    fields["rotary_dim"] = d_rot
    keys["rotary_dim"] = key.split(" ")[0]
    odd = f" (int(d_head · {factor:g}) = {dim:,}, odd: RoPE's frequencies cover one feature more)" if dim % 2 else ""
    return (f"partial RoPE: d_rot = {d_rot:,} of each head's d_head = {d_head:,} features rotated by position "
            f"({key} = {factor:g}){odd}, the other {d_head - d_rot:,} passed through",)


# The keywords a type's class reads only to make layer_types where the file has none (EXAONE 4's sliding_window_pattern,
# which its class documents with words such as "LLLG"; Qwen3-Next's full_attention_interval).
LAYER_TYPES_KEYWORDS = {"exaone4": "sliding_window_pattern", "qwen3_next": "full_attention_interval"}


def _unread_pattern(doc: Mapping, model_type: str) -> tuple[Mapping, tuple[str, ...]]:
    """A `LAYER_TYPES_KEYWORDS` keyword beside a layer_types that lists the blocks: the class does not read it, so such
    a file is read without it, and a note says so."""
    key = LAYER_TYPES_KEYWORDS.get(model_type)
    if key is None or doc.get("layer_types") is None or key not in doc:
        return doc, ()
    return ({k: v for k, v in doc.items() if k != key},
            (f"{key} = {show(doc[key])} is not read: layer_types lists each block's attention",))


def _overwritten(doc: Mapping, model_type: str) -> tuple[Mapping, tuple[str, ...]]:
    """GLM-4 MoE Lite's head_dim beside a qk_rope_head_dim it differs from: its class's attribute_map makes head_dim
    the other name of qk_rope_head_dim, and the file's head_dim, set after the class's own fields, overwrites it (as
    transformers builds it); the file read without qk_rope_head_dim, and a note says so."""
    if model_type != "glm4_moe_lite" or "head_dim" not in doc or "qk_rope_head_dim" not in doc \
            or json.dumps(doc["head_dim"], default=str) == json.dumps(doc["qk_rope_head_dim"], default=str):
        return doc, ()
    return ({k: v for k, v in doc.items() if k != "qk_rope_head_dim"},
            (f"qk_rope_head_dim = {show(doc['qk_rope_head_dim'])} is not read: head_dim = {show(doc['head_dim'])}, its "
             f"other name in Glm4MoeLiteConfig's attribute_map, is set after it and overwrites it, as transformers "
             f"builds the model",))


def _llama4_blocks(values: dict, L: int) -> tuple[list[str], int | None]:
    """Llama 4's blocks as its class lists them (chunked attention where a block has RoPE and attention_chunk_size is
    set, else full), written as a window's ("sliding_attention": a chunked block's cache is a window's, its chunks
    `Config.chunked`), and the chunk size."""
    chunk, types = values["attention_chunk_size"], values["layer_types"]
    if types is None:
        types = ["chunked_attention" if rope and chunk is not None else "full_attention"
                 for rope in _rope_blocks(values, L, empty=True)]
    if "sliding_attention" in types:
        raise HFConfigError("config.json: layer_types lists sliding_attention, which Llama 4's module does not mask (its "
                            "windowed blocks are chunked_attention); list chunked_attention or full_attention")
    if "chunked_attention" in types and chunk is None:
        raise HFConfigError("config.json: layer_types lists chunked_attention but attention_chunk_size is null: give the "
                            "chunks' length, or list full_attention")
    chunked = [t == "chunked_attention" for t in types]
    return ["sliding_attention" if c else t for c, t in zip(chunked, types)], chunk if any(chunked) else None


def _rope_blocks(values: dict, L: int, empty: bool = False) -> list[int]:
    """SmolLM3's and Llama 4's blocks, 1 where RoPE rotates q and k and 0 where not: no_rope_layers, or their class's
    default, 0 in every no_rope_layer_interval-th block (`empty`: an empty list takes the default too, as
    Llama4TextConfig's does). HFConfigError for a list its module cannot index by block."""
    rope = values["no_rope_layers"]
    if rope is None or (empty and not rope):
        return [int((i + 1) % values["no_rope_layer_interval"] != 0) for i in range(L)]
    if len(rope) != L:
        raise HFConfigError(f"config.json: no_rope_layers lists {len(rope):,} blocks, but num_hidden_layers = {L:,}: "
                            f"give one 1 (RoPE) or 0 (none) per block")
    return rope


# The types whose full-attention blocks go without RoPE where a window is set (Command A's and EXAONE 4's modules rotate
# q and k in the windowed blocks only; Cohere2Attention, where no window is set, in none).
NOPE_WHERE_FULL = ("cohere2", "exaone4")


def _nope(values: dict, model_type: str, fields: dict, keys: dict[str, str], types: list[str],
          window: int | None) -> tuple[str, ...]:
    """The blocks without RoPE (`nope_layers`) as the type's module leaves them out, and a note naming them."""
    if model_type in ("smollm3", "llama4_text"):
        rope = _rope_blocks(values, fields["L"], empty=model_type == "llama4_text")
        nope = tuple(i for i, r in enumerate(rope) if not r)
        source = "no_rope_layers" if values["no_rope_layers"] else \
            f"no_rope_layer_interval = {values['no_rope_layer_interval']:,}"
    elif model_type in NOPE_WHERE_FULL and (window is not None or model_type == "cohere2"):
        nope = tuple(i for i, t in enumerate(types) if t == "full_attention")
        source = "its full-attention blocks" if window is not None else "no window: no block rotates"
    else:
        return ()
    if not nope:
        return ()
    fields["nope_layers"] = nope
    if model_type == "llama4_text":
        fields["attn_temperature"] = values["attn_temperature_tuning"]
    keys["nope_layers"] = source.split(" ")[0] if model_type in ("smollm3", "llama4_text") else "layer_types"
    return (f"NoPE in {len(nope):,} of the {fields['L']:,} blocks (from {source}): their q and k are not rotated, so "
            f"they see no position but the causal mask's order",)


def _gptj_rotary(values: dict, fields: dict, model_type: str) -> int | None:
    """GPT-J's and CodeGen's rotary_dim d_rot (None where it is all of each head): HFConfigError where their attention
    cannot run it (an odd count, or more than d_head: its angles would not match the features), or where CodeGen's 4
    groups of q, k and v do not split h."""
    d_head, rot = fields["d"] // fields["h"], values["rotary_dim"]
    if model_type == "codegen" and fields["h"] % 4:
        raise HFConfigError(f"config.json: n_head={fields['h']:,}: CodeGen's fused q, k and v are laid out in 4 groups "
                            "of heads, so its attention needs a multiple of 4; give one")
    if rot % 2 or rot > d_head or rot < 2:
        raise HFConfigError(f"config.json: rotary_dim={show(rot)}: {model_type}'s attention rotates pairs of the first "
                            f"rotary_dim features of each head of d_head = {d_head:,}, so it must be even and from 2 "
                            f"to {d_head:,}; give one")
    return None if rot == d_head else rot


def _falcon(values: dict, fields: dict, keys: dict[str, str]) -> None:
    """Falcon's block as its decoder layer builds and runs it (null flags false): LayerNorms with biases, biases on
    every matrix or none (bias), GELU at ffn_hidden_size (4d where null), RoPE; its K/V heads (num_kv_heads with
    new_decoder_architecture, 1 with multi_query, else h) and its wiring (parallel_attn: a parallel block on one
    LayerNorm, or on one each with new_decoder_architecture and num_ln_in_parallel_attn 2, its default there; else
    the lesson's block). HFConfigError for what its layer cannot run, PartNotBuilt for ALiBi."""
    new, multi, parallel = (bool(values[k]) for k in ("new_decoder_architecture", "multi_query", "parallel_attn"))
    if values["alibi"]:
        raise PartNotBuilt("config.json: alibi=true: Falcon's ALiBi (a bias on the scores that grows with the "
                           "distance to each key, in place of RoPE), which this explorer does not build yet; write "
                           "false for RoPE")
    if fields["d"] % fields["h"]:
        raise HFConfigError(f"config.json: hidden_size={fields['d']:,} is not a multiple of num_attention_heads="
                            f"{fields['h']:,}: Falcon's heads are d / h wide, and its attention refuses the rest")
    lns = values["num_ln_in_parallel_attn"] if values["num_ln_in_parallel_attn"] is not None else 2 if new else 1
    if new and not parallel or lns == 2 and not new:
        raise HFConfigError(f"config.json: new_decoder_architecture={show(values['new_decoder_architecture'])} with "
                            f"parallel_attn={show(values['parallel_attn'])} and num_ln_in_parallel_attn="
                            f"{show(values['num_ln_in_parallel_attn'])}: Falcon's layer builds one set of LayerNorms "
                            "and runs another; its new architecture is a parallel block (set parallel_attn true), and "
                            "a LayerNorm each needs it (or num_ln_in_parallel_attn 1)")
    kv = values["num_kv_heads"]
    if not new and not multi and kv is not None and kv != fields["h"]:
        raise HFConfigError(f"config.json: num_kv_heads={kv:,} beside num_attention_heads={fields['h']:,}, without "
                            "new_decoder_architecture or multi_query: Falcon's attention then makes K and V for "
                            "every head; set new_decoder_architecture true for grouped K/V heads")
    fields.update(kv_heads=kv if new else 1 if multi else None, norm="layernorm", positions="rope", mlp="gelu",
                  bias="all" if values["bias"] else "none", norm_biased=not values["bias"],
                  parallel=parallel and lns != 2, parallel_norms=parallel and lns == 2)
    keys.update(kv_heads="new_decoder_architecture, num_kv_heads" if new else "multi_query",
                bias="bias", parallel="parallel_attn", parallel_norms="num_ln_in_parallel_attn")


def _whole_head(rows: int | None, V: int) -> None:
    """Apertus 1.5's head of `rows` (output_vocab_size) beside its V-row token table: HFConfigError for more rows than
    the vocabulary, as its class refuses them; PartNotBuilt for fewer (a pruned head); nothing for all of them."""
    if rows is None or rows == V:
        return
    if rows > V:
        raise HFConfigError(f"config.json: output_vocab_size={rows:,} is more than vocab_size = {V:,}, and Apertus "
                            "1.5's config class refuses that: the head's rows are a prefix of the vocabulary; give at "
                            "most vocab_size, or null")
    raise PartNotBuilt(f"config.json: output_vocab_size={rows:,}: Apertus 1.5's head pruned to the first "
                       f"output_vocab_size of the vocab_size = {V:,} tokens (a (d, output_vocab_size) head beside the "
                       "full table), which this explorer does not build yet; write null for a head of every token")


def _falcon_cache(values: dict, fields: dict) -> tuple[str, ...]:
    """A note where new_decoder_architecture groups Falcon's K/V heads: transformers' module caches K and V broadcast
    to every query head (its _split_heads), h / h_kv times the model's own cache, the one given here."""
    h, h_kv = fields["h"], fields["kv_heads"]
    if not values["new_decoder_architecture"] or h_kv in (None, h):
        return ()
    return (f"the KV cache here is the model's h_kv = {h_kv:,} heads of K and V, as serving engines keep it; "
            f"transformers' Falcon module broadcasts them to all h = {h:,} heads before caching, and holds "
            f"{h // h_kv:,} times as many bytes",)


def _fields(values: dict, model_type: str) -> tuple[dict[str, object], dict[str, str]]:
    """The Config fields (B and T excepted) and the key each came from."""
    if model_type in ("gpt2", "gpt_bigcode", "gptj", "codegen"):
        keys = {"V": "vocab_size", "T_max": "n_positions", "d": "n_embd", "L": "n_layer", "h": "n_head",
                "ff_dim": "n_inner", "tie": "tie_word_embeddings"}
        fields = {f: values[k] for f, k in keys.items()}
        if model_type == "gpt_bigcode":  # GPT-2's recipe, but for multi_query's one K/V head
            fields.update(kv_heads=1 if values["multi_query"] else None, bias="all", norm="layernorm", mlp="gelu",
                          positions="learned")
            keys["kv_heads"] = "multi_query"
        if model_type in ("gptj", "codegen"):
            fields.update(WIRED[model_type], rotary_dim=_gptj_rotary(values, fields, model_type))
            keys["rotary_dim"] = "rotary_dim"
        return fields, keys
    keys = {"V": "vocab_size", "T_max": "max_position_embeddings", "d": "hidden_size", "L": "num_hidden_layers",
            "h": "num_attention_heads", "ff_dim": "intermediate_size", "kv_heads": "num_key_value_heads",
            "head_dim": "head_dim", "tie": "tie_word_embeddings"}
    if model_type in MOE_TYPES:
        keys.update(MOE_KEYS[model_type])
    if model_type == "gpt_neox":  # every head its own K and V (its class has no num_key_value_heads)
        del keys["kv_heads"]
    if model_type == "falcon":  # its own names; d_head is d / h (a property of its class)
        keys.update(ff_dim="ffn_hidden_size", kv_heads="num_kv_heads")
        del keys["head_dim"]
    if model_type in MLA_TYPES:  # K and V of all h heads come from the latent; head_dim is DeepSeek's d_R
        del keys["kv_heads"], keys["head_dim"]
        keys.update(MLA_KEYS)
    fields = {f: values[k] for f, k in keys.items()}
    fields.update({"norm": "rmsnorm", "positions": "rope", "mlp": "swiglu", "bias": _bias(values, model_type),
                   "qk_norm": model_type in ("qwen3", "qwen3_moe") or bool(model_type == "glm4_moe" and values["use_qk_norm"]),
                   **WIRED.get(model_type, {})})
    if fields.get("head_dim") is None and "head_dim" in keys and fields["d"] % fields["h"]:
        fields["head_dim"] = fields["d"] // fields["h"]  # transformers' d // h (classes that refuse it: _refuse_…)
    if model_type == "hyperclovax":  # Peri-LN: a plain RMSNorm on each sublayer's output (post_norm1, post_norm2)
        fields["post_norms"] = values["use_post_norm"]
    if model_type == "granitemoehybrid":  # its shared SwiGLU: a dense block's MLP (no experts), or a shared expert
        keys["ff_dim"] = "shared_intermediate_size"
        fields["ff_dim"] = values["shared_intermediate_size"]
    if model_type in ("granitemoeshared", "granitemoehybrid"):  # one shared SwiGLU expert, no gate, where its width
        # is not 0
        if fields["shared_dim"]:
            fields["shared_experts"] = 1
        else:
            del fields["shared_dim"], keys["shared_dim"]
    if model_type in ("qwen2_moe", "qwen3_next"):  # one shared expert, gated, of width shared_expert_intermediate_size
        fields.update(shared_experts=1, shared_gate=True)
    if model_type == "gpt_oss":  # sinks, the router's and experts' biases, the clamped SwiGLU
        fields.update(sinks=True, expert_bias=True, swiglu_limit=values["swiglu_limit"],
                      swiglu_alpha=values["swiglu_alpha"])
        keys.update(swiglu_limit="swiglu_limit", swiglu_alpha="swiglu_alpha")
    if model_type == "gemma":  # GeGLU, tok · √d
        fields.update(mlp="geglu", embed_scale=True)
    if model_type == "falcon":
        _falcon(values, fields, keys)
    if model_type == "nanochat":  # its logits soft-capped: c·tanh(logits / c), null none
        fields["final_softcap"] = values["final_logit_softcapping"]
        keys["final_softcap"] = "final_logit_softcapping"
    if model_type in ("cohere", "cohere2"):  # x + Attn(ln_1 x) + MLP(ln_1 x), LayerNorms with a gain only
        fields.update(norm="layernorm", parallel=True)
    if model_type in GEMMA_TYPES:  # GeGLU, sandwich norms (not VaultGemma's), tok · √d, 1/√query_pre_attn_scalar, caps
        fields.update(mlp="geglu", qk_norm=model_type == "gemma3_text", post_norms=model_type != "vaultgemma",
                      embed_scale=True,
                      query_scale=values["query_pre_attn_scalar"], attn_softcap=values["attn_logit_softcapping"],
                      final_softcap=values["final_logit_softcapping"])
        keys.update(query_scale="query_pre_attn_scalar", attn_softcap="attn_logit_softcapping",
                    final_softcap="final_logit_softcapping")
    if model_type == "gemma4_text":  # Gemma 3's block (GeGLU, sandwich norms, QK-norm, tok · √d), the scores unscaled
        fields.update(mlp="geglu", qk_norm=True, post_norms=True, embed_scale=True, query_scale=1,
                      final_softcap=values["final_logit_softcapping"])
        keys["final_softcap"] = "final_logit_softcapping"
    if model_type == "llama4_text":  # Llama 4: its dense blocks' MLP of intermediate_size_mlp, its experts of
        # intermediate_size and one shared expert as wide (no gate); the MoE blocks moe_layers lists, or every
        # interleave_moe_layer_step-th; QK-norm without a gain in the RoPE blocks, a temperature in the NoPE blocks
        keys["ff_dim"] = "intermediate_size_mlp"
        fields.update(ff_dim=values["intermediate_size_mlp"], shared_experts=1, qk_l2=values["use_qk_norm"])
        if values["moe_layers"] is not None:
            moe = set(values["moe_layers"])
            fields.update(moe_step=1, dense_layers=tuple(i for i in range(fields["L"]) if i not in moe))
    if model_type == "mellum":  # the blocks mlp_layer_types lists "dense" (MellumConfig: every block sparse)
        fields["dense_layers"] = tuple(i for i, t in enumerate(values["mlp_layer_types"] or ()) if t == "dense")
    if model_type in ("hy_v3", "glm4_moe_lite", "kimi_linear", *DSA_TYPES):  # the first block (DeepSeek-V3.2's first
        # first_k_dense_replace) dense, the others sparse, unless mlp_layer_types lists them (their classes)
        first = min(values["first_k_dense_replace"], fields["L"]) if model_type in DSA_TYPES else 1
        if model_type == "kimi_linear" and values["first_k_dense_replace"] is not None:
            first = min(values["first_k_dense_replace"], fields["L"])
        types = values["mlp_layer_types"] or ["dense"] * first + ["sparse"] * (fields["L"] - first)
        fields["dense_layers"] = tuple(i for i, t in enumerate(types) if t == "dense")
    if model_type == "stablelm":  # attention and the MLP on one norm of x where parallel
        fields["parallel"] = values["use_parallel_residual"]
    if model_type == "gpt_neox":  # attention and the MLP on a norm each where parallel
        fields["parallel_norms"] = values["use_parallel_residual"]
    if model_type in HEAD_DIM_UNREAD:  # their attention splits d into h heads of d / h
        fields["head_dim"] = None
    if model_type in BIASED_LAYERNORMS:
        fields["norm_biased"] = fields["bias"] != "all"
    if model_type == "ernie4_5_moe":  # its router's correction bias; blocks past moe_layer_end_index dense
        end = values["moe_layer_end_index"]
        fields.update(score_bias=True, dense_layers=tuple(range(max(end + 1, 0) if end != -1 else fields["L"],
                                                                 fields["L"])))
        keys.update(score_bias="moe_num_experts", dense_layers="moe_layer_end_index")
    if model_type == "minicpm3" and fields["value_dim"] is None:  # MiniCPM3Config's hidden_size // num_attention_heads
        fields["value_dim"] = fields["d"] // fields["h"]
    if model_type == "hy_v3":
        if values["num_shared_experts"] == 0:  # HYV3MLP's `intermediate_size or config.intermediate_size`: width 0
            fields.update(shared_experts=1, shared_dim=values["intermediate_size"])  # falls back to d_ff
            keys["shared_dim"] = "intermediate_size"
    if "dense_layers" in fields:
        fields["dense_layers"] = tuple(fields["dense_layers"] or ())
    return fields, keys


BIASED_LAYERNORMS = ("phimoe", "nemotron", "stablelm", "gpt_neox")  # their LayerNorms keep their biases whatever their
# matrices' (`norm_biased` where those have none)
DSA_TYPES = ("deepseek_v32", "glm_moe_dsa")  # latent attention with DeepSeek sparse attention's indexer (`_sparse`)
MLA_TYPES = ("deepseek_v2", "deepseek_v3", "youtu", "glm4_moe_lite", "minicpm3", "kimi_linear", *DSA_TYPES)  # multi-head
# latent attention
# (Youtu's and MiniCPM3's with dense MLPs only)
# The parts a type's module always has, as Config's fields (OLMo 2 and 3: post-norm wiring, QK-norm over all heads)
WIRED: dict[str, dict[str, object]] = {**dict.fromkeys(("olmo2", "olmo3", "flex_olmo"),
                                                      {"post_norm": True, "qk_norm_wide": True}),
                                       "exaone4": {"post_norm": True, "qk_norm": True},
                                       "arcee": {"mlp": "relu2"},
                                       **dict.fromkeys(("apertus", "apertus1p5_text"), {"mlp": "xielu", "qk_norm": True}),
                                       "olmo": {"norm": "layernorm", "norm_plain": True},
                                       "nanochat": {"norm_plain": True, "embed_norm": True, "qk_l2": True, "mlp": "relu2"},
                                       "olmo_hybrid": {"post_norm": True, "qk_norm_wide": True},
                                       **dict.fromkeys(("gptj", "codegen"), {
                                           "norm": "layernorm", "norm_biased": True, "bias": "mlp", "mlp": "gelu",
                                           "positions": "rope", "parallel": True, "head_bias": True}), "jais2": {"mlp": "relu2", "norm": "layernorm"},
                                       "nemotron": {"mlp": "relu2", "norm": "layernorm"},
                                       "phi": {"norm": "layernorm", "mlp": "gelu", "parallel": True, "head_bias": True},
                                       "stablelm": {"norm": "layernorm"}, "gpt_neox": {"norm": "layernorm", "mlp": "gelu"},
                                       **dict.fromkeys(("minimax_m2", "olmoe"), {"qk_norm_wide": True}),
                                       "starcoder2": {"norm": "layernorm", "mlp": "gelu"}, "mellum": {"qk_norm": True}, "dots1": {"qk_norm": True}, "hy_v3": {"qk_norm": True},
                                       "glm4": {"post_norms": True},  # GLM-4's norms on each output: plain RMSNorms
                                       "phimoe": {"norm": "layernorm", "top_k": 2},  # k: its router's 2, always
                                       "qwen3_next": {"qk_norm": True, "attn_gate": True}}
MTP_LAYERS = 1  # DeepseekV3Config's num_nextn_predict_layers (its num_mtp_layers): a module transformers never builds
MLA_MTP = {"deepseek_v3": MTP_LAYERS, "glm4_moe_lite": 0}  # the latent types that read it (GLM-4 MoE Lite: no field,
# but its checkpoints' MTP layer, num_hidden_layers, is one transformers skips loading)
MLA_KEYS = {"latent_dim": "kv_lora_rank", "q_latent_dim": "q_lora_rank", "rope_dim": "qk_rope_head_dim",
            "nope_dim": "qk_nope_head_dim", "value_dim": "v_head_dim"}


# Each mixture of experts' Config fields and the keys they come from (Mixtral's experts are its intermediate_size
# wide, and it has no dense block; Qwen's dense blocks keep intermediate_size).
MOE_KEYS: dict[str, dict[str, str]] = {
    "llama4_text": {"experts": "num_local_experts", "top_k": "num_experts_per_tok", "expert_dim": "intermediate_size",
                    "moe_step": "interleave_moe_layer_step", "dense_layers": "moe_layers"},
    "mixtral": {"experts": "num_local_experts", "top_k": "num_experts_per_tok", "expert_dim": "intermediate_size"},
    "phimoe": {"experts": "num_local_experts", "expert_dim": "intermediate_size"},  # k: 2 always (its sparsemixer)
    "qwen2_moe": {"experts": "num_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
                  "shared_dim": "shared_expert_intermediate_size", "moe_step": "decoder_sparse_step",
                  "dense_layers": "mlp_only_layers"},
    "qwen3_moe": {"experts": "num_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
                  "moe_step": "decoder_sparse_step", "dense_layers": "mlp_only_layers"},
    "qwen3_next": {"experts": "num_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
                   "shared_dim": "shared_expert_intermediate_size", "moe_step": "decoder_sparse_step",
                   "dense_layers": "mlp_only_layers"},
    "gpt_oss": {"experts": "num_local_experts", "top_k": "num_experts_per_tok", "expert_dim": "intermediate_size"},
    "deepseek_v2": {"experts": "n_routed_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
                    "shared_experts": "n_shared_experts", "dense_first": "first_k_dense_replace"},
    "deepseek_v3": {"experts": "n_routed_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
                    "shared_experts": "n_shared_experts", "dense_first": "first_k_dense_replace"},
    "glm4_moe": {"experts": "n_routed_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
                 "shared_experts": "n_shared_experts", "dense_first": "first_k_dense_replace"},
    "solar_open": {"experts": "n_routed_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
                   "shared_experts": "n_shared_experts", "ff_dim": "moe_intermediate_size"},  # no dense block, no d_ff
    "hy_v3": {"experts": "num_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
              "shared_experts": "num_shared_experts", "dense_layers": "mlp_layer_types"},
    "kimi_linear": {"experts": "num_local_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
                    "shared_experts": "n_shared_experts", "dense_layers": "mlp_layer_types"},
    **dict.fromkeys(("glm4_moe_lite", *DSA_TYPES), {"experts": "n_routed_experts", "top_k": "num_experts_per_tok",
                                                   "expert_dim": "moe_intermediate_size",
                                                   "shared_experts": "n_shared_experts",
                                                   "dense_layers": "mlp_layer_types"}),
    "dots1": {"experts": "n_routed_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
              "shared_experts": "n_shared_experts", "dense_first": "first_k_dense_replace"},
    "ernie4_5_moe": {"experts": "moe_num_experts", "top_k": "moe_k", "expert_dim": "moe_intermediate_size",
                     "shared_experts": "moe_num_shared_experts", "moe_step": "moe_layer_interval",
                     "dense_first": "moe_layer_start_index"},  # its shared SwiGLU: moe_intermediate_size · that many
    "aria_text": {"experts": "moe_num_experts", "top_k": "moe_topk", "expert_dim": "intermediate_size",
                  "shared_experts": "moe_num_shared_experts"},  # its shared SwiGLU: intermediate_size · that many
    "minimax_m2": {"experts": "num_local_experts", "top_k": "num_experts_per_tok", "expert_dim": "intermediate_size"},
    "olmoe": {"experts": "num_experts", "top_k": "num_experts_per_tok", "expert_dim": "intermediate_size"},
    "granitemoe": {"experts": "num_local_experts", "top_k": "num_experts_per_tok", "expert_dim": "intermediate_size"},
    "flex_olmo": {"experts": "num_experts", "top_k": "num_experts_per_tok", "expert_dim": "intermediate_size"},
    "mellum": {"experts": "num_experts", "top_k": "num_experts_per_tok", "expert_dim": "moe_intermediate_size",
               "dense_layers": "mlp_layer_types"},
    **dict.fromkeys(("granitemoeshared", "granitemoehybrid"),
                    {"experts": "num_local_experts", "top_k": "num_experts_per_tok", "expert_dim": "intermediate_size",
                     "shared_dim": "shared_intermediate_size"}),
}
MOE_FIELDS = ("experts", "top_k", "expert_dim", "shared_experts", "shared_dim", "shared_gate", "score_bias",
              "moe_step", "dense_first", "dense_layers")


def _moe_layout(fields: dict, keys: dict[str, str]) -> tuple[str, ...]:
    """A mixture of experts' blocks as transformers builds them, with notes: block i is MoE unless it is in
    mlp_only_layers, if (i + 1) is a multiple of decoder_sparse_step and there are experts. Indices beyond the blocks
    match none (ignored); with no MoE block (0 experts, or a step or list that leaves none) the model is dense."""
    L, notes = fields["L"], []
    listed = fields.get("dense_layers", ())
    outside = [i for i in listed if not 0 <= i < L]
    if outside:
        notes.append(f"{keys['dense_layers']} lists {', '.join(map(str, outside))}, beyond the {L:,} blocks: ignored, "
                     f"as transformers ignores them")
        fields["dense_layers"] = tuple(i for i in listed if 0 <= i < L)
    step, dense, first = fields.get("moe_step", 1), set(fields.get("dense_layers", ())), fields.get("dense_first", 0)
    if first is None:
        raise HFConfigError(f"config.json: {keys['dense_first']}=null: transformers compares each block's index with "
                            f"it; give a whole number (0: every block a mixture of experts)")
    moe = [fields["experts"] and i >= first and (i + 1) % step == 0 and i not in dense for i in range(L)]
    if all(moe) and keys["expert_dim"] != keys["ff_dim"]:
        notes.append(f"{keys['ff_dim']} = {fields['ff_dim']:,} (a dense block's MLP) changes nothing here: every block "
                     f"is a mixture of experts")
    if any(moe):
        return tuple(notes)
    why = f"{keys['experts']} = 0" if not fields["experts"] else \
        f"{keys['dense_first']} = {first:,} keeps every block dense" if first >= L else \
        f"{keys['dense_layers']} lists every block dense" if "moe_step" not in keys else \
        f"{keys['moe_step']} = {step:,} and {keys['dense_layers']} leave no block a mixture of experts"
    notes.append(f"{why}: every block is dense, its MLP of width {keys['ff_dim']} = {fields['ff_dim']:,}")
    for name in MOE_FIELDS:
        fields.pop(name, None)
    return tuple(notes)


def _router(doc: Mapping, model_type: str) -> tuple[str, ...]:
    """The router's settings of a mixture of experts (`ROUTER`), checked, as a note: they change no shape."""
    if model_type not in ROUTER:
        return ()
    read = []
    for key, default in ROUTER[model_type].items():
        value = doc.get(key, default)
        if key in SIZES:
            _checked(key, value, key in NULLABLE[model_type])
        if key == "topk_method" and value not in TOPK_METHODS:
            raise HFConfigError(f"config.json: topk_method={show(value)} is not one of {', '.join(TOPK_METHODS)} "
                                f"(how {model_type}'s router chooses each token's k experts)")
        if key in FLAGS and not isinstance(value, bool):
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[key]}) must be true or false")
        if key in NUMBERS:
            _number(key, value, 0, 1e6)
        means = ROUTER_MEANS[key]
        means = means[value] if isinstance(means, dict) else means
        read.append(f"{key} = {show(value)}{'' if key in doc else ' (the default)'} ({means})")
    notes = [f"the router's settings, which change no shape or count: {'; '.join(read)}"]
    grouping = [k for k in GROUPED_ROUTING if k in doc and k not in ROUTER[model_type]]
    if grouping and "n_group" in ROUTER[model_type]:
        notes.append(f"ignored, as transformers ignores them ({model_type} has no such setting): {', '.join(grouping)}")
    elif grouping:
        notes.append(f"ignored, as transformers ignores them ({model_type} routes over all E experts): "
                     f"{', '.join(grouping)}, the routing's grouping (DeepSeek's experts in groups), which changes no "
                     f"shape or count either")
    return tuple(notes)


# The biases each type's module builds: the flags that set them, each putting biases on "qkv" (q, k and v), "o" (W_o)
# or "mlp" (the MLP's matrices), and those a type always has (Qwen2's q, k and v). A type absent builds none (Mistral,
# Mixtral, Phi-3, DeepSeek's latent attention: `_refuse_unmodelled`).
ATTN, ALL = ("qkv", "o"), ("qkv", "o", "mlp")
BIAS_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    **dict.fromkeys(("llama", "internlm3", "exaone", "iquestcoder", "granite", "smollm3", "arcee", "jais2",
                     "hyperclovax", "aria_text", "falcon_h1"),
                    {"attention_bias": ATTN, "mlp_bias": ("mlp",)}),
    **dict.fromkeys(("qwen3", "qwen3_moe", "dots1", "hy_v3", "gemma", *GEMMA_TYPES, "gemma4_text", "cohere", "cohere2", "gpt_oss",
                     "olmo", "olmo2", "olmo3", "olmo_hybrid", "llama4_text", "qwen3_next", "apertus", "nanochat",
                     "apertus1p5_text"),
                    {"attention_bias": ATTN}),
    "qwen2_moe": {"qkv_bias": ("qkv",)},
    "helium": {"attention_bias": ("qkv",), "mlp_bias": ("mlp",)},
    **dict.fromkeys(("glm", "glm4", "glm4_moe", "solar_open"), {"attention_bias": ("qkv",)}),
    "seed_oss": {"attention_bias": ("qkv",), "attention_out_bias": ("o",), "mlp_bias": ("mlp",)},
    "ernie4_5": {"use_bias": ALL},
    "starcoder2": {"use_bias": ALL},
    "olmoe": {"attention_bias": ATTN},
    "phimoe": {"attention_bias": ATTN},
    "mellum": {"attention_bias": ATTN},
    "flex_olmo": {"attention_bias": ATTN},
    **dict.fromkeys(("granitemoe", "granitemoeshared", "granitemoehybrid"), {"attention_bias": ATTN}),
    "cwm": {"mlp_bias": ("mlp",)},
    "nemotron": {"attention_bias": ATTN, "mlp_bias": ("mlp",)},
    "stablelm": {"use_qkv_bias": ("qkv",)},
    "gpt_neox": {"attention_bias": ATTN},
}
ALWAYS_BIASED = {"qwen2": ("qkv",), "gpt_neox": ("mlp",), "phi": ALL}
BIAS_CHOICE = {(): "none", ("qkv",): "qkv", ATTN: "attn", ("mlp",): "mlp", ALL: "all"}  # Config's `bias`


def _bias(values: dict, model_type: str) -> str:
    """Config's `bias` from the type's flags (`BIAS_KEYS`); HFConfigError for a set of biases this module does not
    build (Seed-OSS's W_o alone, q, k and v with the MLP but not W_o)."""
    flags = BIAS_KEYS.get(model_type, {})
    on = {*ALWAYS_BIASED.get(model_type, ()), *(part for key, parts in flags.items() if values[key] for part in parts)}
    where = tuple(part for part in ALL if part in on)
    if where not in BIAS_CHOICE:
        given = ", ".join(f"{k}={show(values[k])}" for k in flags)
        raise HFConfigError(f"config.json: {given} put biases on {' and '.join(BIAS_WORDS[p] for p in where)}; this "
                            f"module puts them on q, k and v, on those and W_o, on the MLP's matrices, or on all of "
                            f"them")
    return BIAS_CHOICE[where]


BIAS_WORDS = {"qkv": "q, k and v", "o": "W_o", "mlp": "the MLP's matrices"}


# The words of layer_types that one type's module alone builds: that type, what another's module does not do with them,
# and whose they are.
OWN_LAYER_TYPES = {"chunked_attention": ("llama4_text", "mask", "Llama 4's chunked attention is llama4_text's"),
                   "indexed_attention": ("deepseek_v32", "build", "DeepSeek sparse attention is deepseek_v32's and "
                                                                  "glm_moe_dsa's"),
                   "linear_attention": ("qwen3_next", "build", "Qwen3-Next's Gated DeltaNet blocks are qwen3_next's, "
                                        "Granite 4.0-H's Mamba 2 blocks granitemoehybrid's")}


def _hybrid_blocks(values: dict, model_type: str, L: int) -> list[str]:
    """The blocks of a `PART_BLOCKS` type as its class lists them: layer_types, or every full_attention_interval-th
    block full attention and the others its part's (Qwen3-Next: linear_attention, Gated DeltaNet). HFConfigError for
    a block its module does not build (a sliding one: Qwen3-Next's mask has none), and, in one line naming the part
    (`NOT_BUILT`), for any block of that part. The part's builder reads its blocks here."""
    word, types, interval = PART_BLOCKS[model_type], values["layer_types"], values.get("full_attention_interval")
    source = "layer_types lists"
    if types is None and model_type == "kimi_linear":  # KimiLinearConfig's default: full attention in blocks 4, 8, …
        types = ["full_attention" if i and i % 4 == 0 else word for i in range(L)]
        source = "layer_types (not in the file: kimi_linear's default, full attention in every fourth block from 4) makes"
    elif types is None and model_type == "olmo_hybrid":  # OlmoHybridConfig's default: blocks 3, 7, 11, … attention,
        types = ["full_attention" if i % 4 == 3 else word for i in range(L)]  # the last where none of them is
        if "full_attention" not in types:
            types[-1] = "full_attention"
        source = ("layer_types (not in the file: olmo_hybrid's default, full attention in every fourth block from 3, or "
                  "the last where none is) makes")
    elif types is None and model_type not in HYBRID_INTERVAL:  # its class's default: every block its part's
        types = [word] * L
        source = f"layer_types (not in the file: {model_type}'s default) makes every block"
    elif types is None:
        every = HYBRID_INTERVAL[model_type] if interval is None else interval
        types = ["full_attention" if (i + 1) % every == 0 else word for i in range(L)]
        default = f" (not in the file: {model_type}'s default)" if interval is None else ""
        source = f"full_attention_interval = {every:,}{default} makes"
    other = [t for t in types if t not in ("full_attention", word)]
    if other:
        raise HFConfigError(f"config.json: layer_types lists {other[0]}, which {model_type}'s module does not build "
                            f"(its blocks are full_attention or {word}); list those")
    if model_type == "olmo_hybrid" and len(set(types)) == 1:  # OlmoHybridConfig's validate_architecture
        raise HFConfigError(f"config.json: layer_types makes every block {types[0]}, and OLMo Hybrid's config class "
                            f"refuses that: it needs at least one {word} block and one full_attention block")
    values["hybrid_source"] = source
    return types


# The keys of Gated DeltaNet's sizes and the Config fields they set (`model.parts.delta`: h_lk, h_lv, d_lk, d_lv, d_conv)
LINEAR_KEYS = {"linear_num_key_heads": "linear_k_heads", "linear_num_value_heads": "linear_v_heads",
               "linear_key_head_dim": "linear_k_dim", "linear_value_head_dim": "linear_v_dim",
               "linear_conv_kernel_dim": "conv_width"}


def _linear(doc: Mapping, values: dict, model_type: str, fields: dict, keys: dict[str, str],
            types: list[str]) -> tuple[str, ...]:
    """The Gated DeltaNet blocks (`linear_layers`: layer_types' linear_attention) and their sizes, and a note naming
    them; where no block is one, a note naming the sizes the file gives, which size nothing then."""
    if BLOCK_PARTS.get(model_type) != "Gated DeltaNet":
        return ()
    linear = tuple(i for i, t in enumerate(types) if t == PART_BLOCKS[model_type])
    if not linear:
        given = [k for k in LINEAR_KEYS if k in doc]
        return (f"not read, as no block is {PART_BLOCKS[model_type]}: {', '.join(given)} (they size only those "
                f"blocks)",) if given else ()
    notes = _olmo_hybrid_sizes(values, fields) if model_type == "olmo_hybrid" else ()
    fields["linear_layers"] = linear
    keys["linear_layers"] = "layer_types"
    for key, name in LINEAR_KEYS.items():
        fields[name], keys[name] = values[key], key
    if values["linear_num_value_heads"] % values["linear_num_key_heads"]:
        raise HFConfigError(f"config.json: linear_num_value_heads={values['linear_num_value_heads']:,} is not a "
                            f"multiple of linear_num_key_heads={values['linear_num_key_heads']:,}: each q/k head of a "
                            "Gated DeltaNet block serves linear_num_value_heads / linear_num_key_heads value heads")
    return (f"Gated DeltaNet in {len(linear):,} of the {fields['L']:,} blocks ({values['hybrid_source']} them "
            f"linear_attention): a fixed state of h_lv = {values['linear_num_value_heads']:,} heads of "
            f"{values['linear_key_head_dim']:,} × {values['linear_value_head_dim']:,} per block in attention's place, "
            "no KV cache", *notes)


def _olmo_hybrid_sizes(values: dict, fields: dict) -> tuple[str, ...]:
    """OlmoHybridConfig's rules for its null Gated DeltaNet sizes, written into `values`: h_lk and h_lv = h, d_lk =
    ⌊0.75·d / h_lk⌋, d_lv = 2·d_lk; a note naming those it set."""
    rules = {"linear_num_key_heads": (lambda: fields["h"], "h"), "linear_num_value_heads": (lambda: fields["h"], "h"),
             "linear_key_head_dim": (lambda: int(0.75 * fields["d"] / values["linear_num_key_heads"]),
                                     "⌊0.75·d / h_lk⌋"),
             "linear_value_head_dim": (lambda: 2 * values["linear_key_head_dim"], "2·d_lk")}
    set_ = []
    for key, (rule, words) in rules.items():  # in order: d_lk reads h_lk, d_lv reads d_lk
        if values[key] is None:
            values[key] = rule()
            set_.append(f"{key} = {words} = {values[key]:,}")
    return (f"null in the file, so OlmoHybridConfig's rules: {', '.join(set_)}",) if set_ else ()


# KimiLinearConfig's attribute_map, the names its files write (model_max_length, num_experts, …) -> its attributes
KIMI_NAMES = {"model_max_length": "max_position_embeddings", "moe_renormalize": "norm_topk_prob",
              "num_expert_group": "n_group", "num_experts": "num_local_experts",
              "num_experts_per_token": "num_experts_per_tok", "num_shared_experts": "n_shared_experts"}
KIMI_LINEAR = {"head_dim": "linear_head_dim", "num_heads": "linear_num_heads",
               "short_conv_kernel_size": "linear_conv_kernel_dim"}  # linear_attn_config's keys, which win over these


def _kimi_keys(doc: Mapping) -> dict:
    """A kimi_linear file as KimiLinearConfig reads it: its attribute_map's names as its attributes' (`KIMI_NAMES`),
    and a checkpoint's linear_attn_config: its sizes over the top-level keys (`KIMI_LINEAR`), and its 1-indexed
    full_attn_layers and kda_layers as layer_types where the file has none. HFConfigError for two names of one thing
    at different values, or a block neither list names."""
    out = dict(doc)
    for name, attribute in KIMI_NAMES.items():
        if name in out and attribute in out and out[name] != out[attribute]:
            raise HFConfigError(f"config.json: {name}={show(out[name])} and {attribute}={show(out[attribute])} set the "
                                f"same thing ({WHAT.get(attribute, attribute)}) to different values")
        if name in out:
            out[attribute] = out.pop(name)
    sub = out.pop("linear_attn_config", None)
    if sub is None:
        return out
    if not isinstance(sub, Mapping):
        raise HFConfigError(f"config.json: linear_attn_config={show(sub)} must be an object (Kimi Linear's sizes and "
                            "lists of its blocks)")
    out.update({key: sub[name] for name, key in KIMI_LINEAR.items() if name in sub})
    if out.get("layer_types") is None and "full_attn_layers" in sub and "kda_layers" in sub:
        L = _checked("num_hidden_layers", out.get("num_hidden_layers", DEFAULTS["kimi_linear"]["num_hidden_layers"]),
                     False)
        types: list = [None] * L
        for key, word in (("full_attn_layers", "full_attention"), ("kda_layers", "linear_attention")):
            listed = sub[key]
            if not isinstance(listed, list) or any(isinstance(i, bool) or not isinstance(i, int) or not 1 <= i <= L
                                                   for i in listed):
                raise HFConfigError(f"config.json: linear_attn_config.{key}={show(listed)} must list blocks 1 … {L:,} "
                                    "(1-indexed, as KimiLinearConfig reads them)")
            for i in listed:
                types[i - 1] = word
        if None in types:
            raise HFConfigError(f"config.json: linear_attn_config lists block {types.index(None) + 1:,} (1-indexed) in "
                                "neither full_attn_layers nor kda_layers, so transformers' module cannot run it; list "
                                "every block in one of them")
        out["layer_types"] = types
    return out


def _kda(values: dict, model_type: str, fields: dict, keys: dict[str, str], types: list[str]) -> tuple[str, ...]:
    """Kimi Linear's Kimi delta attention blocks (`kda_layers`: layer_types' linear_attention) and their sizes, its
    latent attention blocks without RoPE (KimiLinearAttention rotates nothing: NoPE), and notes; HFConfigError in one
    line for a file whose blocks are all of one kind, which is not modelled."""
    if BLOCK_PARTS.get(model_type) != "Kimi delta attention":
        return ()
    word = PART_BLOCKS[model_type]
    kda = tuple(i for i, t in enumerate(types) if t == word)
    attention = tuple(i for i, t in enumerate(types) if t != word)
    if not kda or not attention:
        which = "full_attention" if not kda else word
        raise HFConfigError(f"config.json: every block is {which} ({values['hybrid_source']} them so): Kimi Linear's "
                            "latent attention without RoPE beside its Kimi delta attention blocks is modelled, not a "
                            "model of one kind of block alone; list both in layer_types")
    untied = ("the head apart from the token table: tie_word_embeddings = true, but KimiLinearForCausalLM ties no "
              "weight (its _tied_weights_keys is empty), so transformers builds both",) if fields["tie"] else ()
    fields.update(tie=False, kda_layers=kda, nope_layers=attention, kda_heads=values["linear_num_heads"],
                  kda_head_dim=values["linear_head_dim"], conv_width=values["linear_conv_kernel_dim"])
    keys.update(kda_layers="layer_types", nope_layers="layer_types", kda_heads="linear_num_heads",
                kda_head_dim="linear_head_dim", conv_width="linear_conv_kernel_dim")
    return (f"Kimi delta attention in {len(kda):,} of the {fields['L']:,} blocks ({values['hybrid_source']} them "
            f"linear_attention): a fixed state of h_kda = {values['linear_num_heads']:,} heads of "
            f"{values['linear_head_dim']:,} × {values['linear_head_dim']:,} per block, each row decaying at its own "
            "rate, in attention's place, no KV cache",
            f"no RoPE: KimiLinearAttention rotates nothing, so the {len(attention):,} latent attention blocks see no "
            "position but the causal mask's order (NoPE); their d_R features of q and k (qk_rope_head_dim) and the "
            "cached key k_rope stay as they are", *untied)


INDEX_KEYS = {"index_n_heads": "index_heads", "index_head_dim": "index_dim", "index_topk": "index_topk"}


def _indexer_types(doc: Mapping, L: int) -> list[str]:
    """GLM-5's indexer per block as GlmMoeDsaConfig lists it: indexer_types, else index_topk_pattern ("F"/"S" or a
    list), else "full" where max(i − index_skip_topk_offset + 1, 0) is a multiple of index_topk_freq."""
    if doc.get("indexer_types") is not None:
        return list(doc["indexer_types"])
    pattern = doc.get("index_topk_pattern")
    if pattern is not None:
        return [{"F": "full", "S": "shared"}.get(c, c) for c in pattern] if isinstance(pattern, str) else list(pattern)
    freq = max(_checked("index_topk_freq", doc.get("index_topk_freq", 1), False), 1)
    offset = _checked("index_skip_topk_offset", doc.get("index_skip_topk_offset", 2), False)
    return ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(L)]


def _sparse(doc: Mapping, values: dict, model_type: str, fields: dict, keys: dict[str, str]) -> tuple[str, ...]:
    """DeepSeek sparse attention's indexer in every block (`model.parts.sparse`: h_I, d_I, T_k), and a note; one line
    refusing GLM-5's shared indexer layers (they reuse an earlier layer's top-k and hold no indexer), which no part
    builds yet."""
    if model_type not in DSA_TYPES:
        return ()
    for key, name in INDEX_KEYS.items():
        fields[name], keys[name] = values[key], key
    if values["index_head_dim"] < values["qk_rope_head_dim"]:
        raise HFConfigError(f"config.json: index_head_dim={values['index_head_dim']:,} is below qk_rope_head_dim="
                            f"{values['qk_rope_head_dim']:,}: the indexer rotates the first qk_rope_head_dim of its "
                            "features; give index_head_dim of at least qk_rope_head_dim")
    if model_type == "glm_moe_dsa":
        kinds = _indexer_types(doc, fields["L"])
        if len(kinds) < fields["L"] or any(k not in ("full", "shared") for k in kinds):
            raise HFConfigError(f"config.json: the indexer of each block (indexer_types, or index_topk_pattern) must be "
                                f"\"full\" or \"shared\" (\"F\" or \"S\"), one for each of the {fields['L']:,} blocks")
        shared = [i for i, k in enumerate(kinds[:fields["L"]]) if k == "shared"]
        if shared:
            raise PartNotBuilt(f"config.json: blocks {', '.join(map(str, shared[:6]))}{', …' if len(shared) > 6 else ''} "
                                "reuse an earlier block's top-k keys (GLM-5's shared indexer layers, indexer_types "
                                "\"shared\"), which this explorer does not build yet: give every block \"full\"")
    interleaved = "interleaved, as GLM-5's" if model_type == "glm_moe_dsa" else "as rotate-half, as DeepSeek-V3.2's"
    return (f"DeepSeek sparse attention in every block: an indexer of h_I = {values['index_n_heads']:,} heads of d_I = "
            f"{values['index_head_dim']:,} picks each query's top T_k = {values['index_topk']:,} keys; its key, d_I per "
            f"token, is cached beside the latent; its RoPE pairs {interleaved} (a layout: the same FLOPs and bytes)",)


# The keys of Mamba 2's sizes and the Config fields they set (`model.parts.mamba`: h_ssm, d_ssm, d_state, g_ssm, Q,
# d_conv); mamba_d_head "auto" is mamba_expand·d / h_ssm, as GraniteMoeHybridConfig sets it
MAMBA_KEYS = {"mamba_n_heads": "ssm_heads", "mamba_d_head": "ssm_head_dim", "mamba_d_state": "ssm_state",
              "mamba_n_groups": "ssm_groups", "mamba_chunk_size": "ssm_chunk", "mamba_d_conv": "conv_width"}
MAMBA_BIASES = {(True, False): "conv", (False, False): "none", (False, True): "proj", (True, True): "all"}


def _mamba(doc: Mapping, values: dict, model_type: str, fields: dict, keys: dict[str, str],
           types: list[str]) -> tuple[str, ...]:
    """The Mamba 2 blocks (`mamba_layers`: layer_types' linear_attention, or mamba) and their sizes, the attention
    blocks without RoPE unless position_embedding_type is "rope" (GraniteMoeHybridModel makes no angles then), and
    notes; HFConfigError where the heads do not split mamba_expand·d as the class requires."""
    if BLOCK_PARTS.get(model_type) != "Mamba 2":
        return ()
    notes = []
    attention = [i for i, t in enumerate(types) if t != PART_BLOCKS[model_type]]
    rope = values["position_embedding_type"] == "rope"
    if not rope and attention:
        fields["nope_layers"], keys["nope_layers"] = tuple(attention), "position_embedding_type"
        notes.append(f"no RoPE: position_embedding_type = {show(values['position_embedding_type'])} (only \"rope\" "
                     f"rotates q and k), so the {len(attention):,} attention blocks see no position but the causal "
                     "mask's order (NoPE)")
    mamba = tuple(i for i, t in enumerate(types) if t == PART_BLOCKS[model_type])
    if not mamba:
        return tuple(notes)
    inner, heads = values["mamba_expand"] * fields["d"], values["mamba_n_heads"]
    head = values["mamba_d_head"]
    if inner % heads:
        raise HFConfigError(f"config.json: mamba_n_heads={heads:,} does not divide mamba_expand · hidden_size = "
                            f"{inner:,}: GraniteMoeHybridConfig requires it; give a divisor")
    if head == "auto":
        head = inner // heads
    elif head * heads != inner:
        raise HFConfigError(f"config.json: mamba_d_head={head:,} · mamba_n_heads={heads:,} = {head * heads:,} is not "
                            f"mamba_expand · hidden_size = {inner:,}: GraniteMoeHybridConfig requires them equal")
    if heads % values["mamba_n_groups"]:
        raise HFConfigError(f"config.json: mamba_n_groups={values['mamba_n_groups']:,} does not divide mamba_n_heads="
                            f"{heads:,}: each group's B and C serve mamba_n_heads / mamba_n_groups heads")
    fields["mamba_layers"], keys["mamba_layers"] = mamba, "layer_types"
    for key, name in MAMBA_KEYS.items():
        fields[name], keys[name] = (head if key == "mamba_d_head" else values[key]), key
    fields["ssm_bias"] = MAMBA_BIASES[(bool(values["mamba_conv_bias"]), bool(values["mamba_proj_bias"]))]
    keys["ssm_bias"] = "mamba_conv_bias"
    notes.append(f"Mamba 2 in {len(mamba):,} of the {fields['L']:,} blocks ({values['hybrid_source']} them "
                 f"linear_attention): a fixed state of h_ssm = {heads:,} heads of {head:,} × "
                 f"{values['mamba_d_state']:,} per block in attention's place, no KV cache")
    return tuple(notes)


# Nemotron-H's layers (NemotronHConfig): each one operation, x + op(norm(x)); the letters of its legacy
# hybrid_override_pattern; its class's default list where a file gives none
NEMOTRON_LAYERS = ("linear_attention", "full_attention", "mlp", "moe")
NEMOTRON_LETTERS = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}
NEMOTRON_DEFAULT = ("linear_attention", "moe", "full_attention", "mlp")
NEMOTRON_MIXERS = ("linear_attention", "full_attention")  # a pair's first layer; its second is "mlp" or "moe"
NEMOTRON_VALUES = ("values only, which change no count, shape or byte: the RMSNorms' ε (layer_norm_epsilon, also the "
                   "gated norm's) and their fp32 gain; the router's sigmoid scores (this module's router takes a "
                   "softmax over the same (B, T, E) logits) with their correction bias e_score_correction_bias (a "
                   "buffer of E per MoE layer, not a parameter: not in N, as transformers' count leaves it out), its "
                   "groups (n_group, topk_group), the k weights renormalised and times routed_scaling_factor; Mamba "
                   "2's step limits (time_step_min, time_step_limit); residual_in_fp32")


def _pattern(types: list[str]) -> str:
    """A list of Nemotron-H's layers as its hybrid_override_pattern writes it, cut short: "ME*-"."""
    letters = "".join({t: c for c, t in NEMOTRON_LETTERS.items()}[t] for t in types)
    return letters if len(letters) <= 24 else letters[:24] + "…"


def _nemotron_keys(doc: Mapping) -> tuple[dict, tuple[str, ...]]:
    """A nemotron_h file as NemotronHConfig reads its layers: hybrid_override_pattern's letters as layers_block_type
    where the file lists none, and notes for what it does not read (the pattern beside a list; num_hidden_layers, which
    the list's length replaces). HFConfigError for a letter the class does not know."""
    out, notes = dict(doc), []
    pattern = out.pop("hybrid_override_pattern", None)
    listed = out.get("layers_block_type", out.get("layer_types"))
    if pattern is not None and listed is None:
        if not isinstance(pattern, str) or not pattern or any(c not in NEMOTRON_LETTERS for c in pattern):
            raise HFConfigError(f"config.json: hybrid_override_pattern={show(pattern)} must be a word of the letters M "
                                "(Mamba 2), * (attention), - (MLP) and E (mixture of experts), one per layer")
        out["layers_block_type"] = listed = [NEMOTRON_LETTERS[c] for c in pattern]
    elif pattern is not None:
        notes.append(f"hybrid_override_pattern = {show(pattern)} is not read: the file lists the layers "
                     "(layers_block_type), as NemotronHConfig reads them")
    count = out.pop("num_hidden_layers", None)
    length = len(listed) if isinstance(listed, list) else len(NEMOTRON_DEFAULT)
    if count is not None and count != length:
        notes.append(f"num_hidden_layers = {show(count)} is not read: NemotronHConfig counts the {length:,} layers "
                     "that layers_block_type lists")
    return out, tuple(notes)


def _nemotron_pairs(types: list[str]) -> list[tuple[str, str]]:
    """Nemotron-H's layers as blocks: each Mamba 2 or attention layer with the MLP or mixture-of-experts layer after it
    (x + mixer(norm(x)), then x + MLP(norm(x)): the lesson's block, one norm a layer). HFConfigError in one line for a
    layer that pairs with none, which is not modelled yet."""
    pairs = []
    for i in range(0, len(types), 2):
        mixer, after = types[i], types[i + 1] if i + 1 < len(types) else None
        if mixer not in NEMOTRON_MIXERS or after not in ("mlp", "moe"):
            lone, what = (i, mixer) if mixer not in NEMOTRON_MIXERS else (i, f"{mixer}, followed by "
                                                                          f"{after or 'no layer'}")
            raise HFConfigError(f"config.json: layer {lone:,} of {_pattern(types)} is {what}: Nemotron-H's layers are "
                                "read here in pairs, a Mamba 2 or attention layer (M, *) and the MLP or mixture-of-"
                                "experts layer (-, E) after it (the lesson's block); a layer alone is not modelled yet")
        pairs.append((mixer, after))
    return pairs


def _nemotron_h(doc: Mapping) -> Reading:
    """A nemotron_h file as transformers builds it: its layers in pairs (`_nemotron_pairs`), each a block of Mamba 2
    (`mamba_layers`) or attention without RoPE (`nope_layers`: NemotronHAttention rotates nothing) and a ReLU² MLP
    (intermediate_size) or a mixture of ReLU² experts with one shared ReLU² MLP (moe_shared_expert_intermediate_size),
    with notes; HFConfigError for what is not modelled (the experts' latent projection, MLP biases)."""
    model_type, table = "nemotron_h", DEFAULTS["nemotron_h"]
    doc, notes = _nemotron_keys(doc)
    values = _values(doc, model_type)
    router = _router(doc, model_type)
    types = values["layers_block_type"] or list(NEMOTRON_DEFAULT)
    pairs = _nemotron_pairs(types)
    for key, why in (("moe_latent_size", "projects each token to that width before the experts and back after them"),
                     ("mlp_bias", "biases the MLP's, the shared expert's and the latent projections' matrices")):
        if values[key]:
            raise HFConfigError(f"config.json: {key}={show(values[key])} {why}, which is not modelled: write "
                                f"{'null' if key == 'moe_latent_size' else 'false'}")
    keys = {"V": "vocab_size", "T_max": "max_position_embeddings", "d": "hidden_size", "L": "layers_block_type",
            "h": "num_attention_heads", "kv_heads": "num_key_value_heads", "head_dim": "head_dim",
            "tie": "tie_word_embeddings"}
    fields = {f: values[k] for f, k in keys.items() if f != "L"}
    fields.update(L=len(pairs), norm="rmsnorm", positions="rope", mlp="relu2", bias="none", tie=False)
    blocks = {kind: tuple(i for i, pair in enumerate(pairs) if kind in pair) for kind in NEMOTRON_LAYERS}
    if blocks["mlp"]:
        fields["ff_dim"], keys["ff_dim"] = values["intermediate_size"], "intermediate_size"
    more = [f"its {len(types):,} layers ({_pattern(types)}) read as {len(pairs):,} blocks: each Mamba 2 or attention "
            "layer with the MLP or mixture-of-experts layer after it, x + mixer(norm(x)), then x + MLP(norm(x)), each "
            "layer's own RMSNorm before it (the lesson's block, ln_1 and ln_2): the same parameters, FLOPs and cache"]
    if blocks["full_attention"]:
        fields["nope_layers"], keys["nope_layers"] = blocks["full_attention"], "layers_block_type"
        more.append(f"no RoPE: NemotronHAttention rotates nothing, so the {len(blocks['full_attention']):,} attention "
                    "blocks see no position but the causal mask's order (NoPE); nor are their q, k, v or W_o biased, "
                    "whatever attention_bias says")
    if blocks["linear_attention"]:
        heads, groups = values["mamba_num_heads"], values["n_groups"]
        if heads % groups:
            raise HFConfigError(f"config.json: n_groups={groups:,} does not divide mamba_num_heads={heads:,}: each "
                                "group's B and C serve mamba_num_heads / n_groups heads")
        fields.update(mamba_layers=blocks["linear_attention"], ssm_heads=heads, ssm_head_dim=values["mamba_head_dim"],
                      ssm_state=values["ssm_state_size"], ssm_groups=groups, ssm_chunk=values["chunk_size"],
                      conv_width=values["conv_kernel"],
                      ssm_bias=MAMBA_BIASES[(values["use_conv_bias"], values["use_bias"])])
        keys.update(mamba_layers="layers_block_type", ssm_heads="mamba_num_heads", ssm_head_dim="mamba_head_dim",
                    ssm_state="ssm_state_size", ssm_groups="n_groups", ssm_chunk="chunk_size",
                    conv_width="conv_kernel", ssm_bias="use_conv_bias")
        size = f"{values['mamba_head_dim']:,} × {values['ssm_state_size']:,}"
        more.append(f"Mamba 2 in {len(blocks['linear_attention']):,} of the {len(pairs):,} blocks: a fixed state of "
                    f"h_ssm = {heads:,} heads of {size} per block in attention's place, no KV cache (in_proj and "
                    "out_proj with biases where use_bias says)")
        if doc.get("mamba_proj_bias"):
            more.append("mamba_proj_bias = true is not read: NemotronHMamba2Mixer biases in_proj and out_proj by "
                        "use_bias")
    if blocks["moe"]:
        E, groups = values["n_routed_experts"], doc.get("n_group", ROUTER[model_type]["n_group"])
        if E % groups or E // groups < 2:
            raise HFConfigError(f"config.json: n_routed_experts={E:,} in n_group={groups:,} groups: "
                                "NemotronHTopkRouter sums the best 2 scores of each group, so its module cannot run; "
                                "give n_group dividing n_routed_experts into groups of at least 2")
        fields.update(experts=values["n_routed_experts"], top_k=values["num_experts_per_tok"],
                      expert_dim=values["moe_intermediate_size"], shared_experts=1,
                      shared_dim=values["moe_shared_expert_intermediate_size"], moe_step=1,
                      dense_layers=blocks["mlp"])
        keys.update(experts="n_routed_experts", top_k="num_experts_per_tok", expert_dim="moe_intermediate_size",
                    shared_experts="n_shared_experts", shared_dim="moe_shared_expert_intermediate_size",
                    dense_layers="layers_block_type")
        if values["n_shared_experts"] != 1:
            more.append(f"n_shared_experts = {values['n_shared_experts']:,} is not read: NemotronHMoE builds one "
                        "shared ReLU² MLP of width moe_shared_expert_intermediate_size whatever it says")
    if values["tie_word_embeddings"]:
        more.append("the head apart from the token table: tie_word_embeddings = true, but NemotronHForCausalLM ties no "
                    "weight (its _tied_weights_keys is empty), so transformers builds both")
    mtp = _checked("num_nextn_predict_layers", doc.get("num_nextn_predict_layers", 0), False)
    if mtp:
        more.append(f"its {mtp:,} multi-token-prediction layers "
                    "(num_nextn_predict_layers) are left out, as transformers builds none")
    if values["sliding_window"] is not None:
        more.append(f"sliding_window = {values['sliding_window']:,} is not read: NemotronHAttention attends over every "
                    "key and its cache keeps them all")
    more.append(NEMOTRON_VALUES)
    defaults = tuple(k for k in table if k not in values["given"] and k not in RULE_KEYS)
    ignored = tuple(k for k in SHAPE_KEYS if k in doc and k not in table and k not in ALIASES[model_type]
                    and k not in READ_BY_EVERY_TYPE and k not in ROUTER[model_type] and k != "mamba_proj_bias")
    return Reading(model_type, fields, keys, defaults, ignored, (*notes, *router, *more))


JAMBA_VALUES = ("values only, which change no count, shape or byte: the RMSNorms' ε (rms_norm_eps; the dt, B and C "
                "norms here keep 1e-6, its default), the router's k weights left unnormalised (this module renormalises "
                "them), the embedding's padding row (pad_token_id)")


def _jamba(doc: Mapping) -> Reading:
    """A jamba file as transformers builds it: block i attention without RoPE where i % attn_layer_period ==
    attn_layer_offset (JambaAttention rotates nothing: `nope_layers`), else Mamba (`model.parts.mamba1`:
    mamba1_layers, d_inner = mamba_expand·d, mamba_d_state, mamba_dt_rank, mamba_d_conv); a mixture of num_experts
    SwiGLU experts of width intermediate_size where i % expert_layer_period == expert_layer_offset and num_experts > 1
    (JambaConfig's layers_num_experts), the dense SwiGLU of that width elsewhere; with notes. HFConfigError names
    what is not modelled."""
    model_type, table = "jamba", DEFAULTS["jamba"]
    _check_activation(doc, model_type)
    values = _values(doc, model_type)
    router = _router(doc, model_type)
    L, d = values["num_hidden_layers"], values["hidden_size"]
    rank = -(-d // 16) if values["mamba_dt_rank"] == "auto" else values["mamba_dt_rank"]
    for kind in ("attn", "expert"):
        offset, period = values[f"{kind}_layer_offset"], values[f"{kind}_layer_period"]
        if offset >= period:
            raise HFConfigError(f"config.json: {kind}_layer_offset={offset:,} is not below {kind}_layer_period="
                                f"{period:,}, which JambaConfig requires; give an offset from 0 to {period - 1:,}")
    attention = tuple(i for i in range(L) if i % values["attn_layer_period"] == values["attn_layer_offset"])
    mamba = tuple(i for i in range(L) if i not in attention)
    E = values["num_experts"]
    experts = tuple(i for i in range(L) if E > 1 and i % values["expert_layer_period"] == values["expert_layer_offset"])
    if not attention:
        raise HFConfigError(f"config.json: attn_layer_offset={values['attn_layer_offset']:,} with attn_layer_period="
                            f"{values['attn_layer_period']:,} over {L:,} layers gives no attention layer: a model of "
                            "Mamba layers alone is not modelled; give an offset below the layers")
    if 0 < len(set(attention) & set(experts)) < len(attention):
        raise HFConfigError(f"config.json: the attention layers {', '.join(map(str, attention))} (attn_layer_period, "
                            "attn_layer_offset) fall on both dense and expert layers (expert_layer_period, "
                            "expert_layer_offset): this explorer counts attention blocks without RoPE of one kind of MLP; "
                            "give periods and offsets that put every attention layer on one kind")
    keys = {"V": "vocab_size", "T_max": "max_position_embeddings", "d": "hidden_size", "L": "num_hidden_layers",
            "h": "num_attention_heads", "kv_heads": "num_key_value_heads", "tie": "tie_word_embeddings"}
    fields = {f: values[k] for f, k in keys.items()}
    _check_pad(doc, model_type, fields["V"])
    fields.update(norm="rmsnorm", positions="rope", mlp="swiglu", bias="none", nope_layers=attention)
    keys["nope_layers"] = "attn_layer_period"
    more = [f"no RoPE: JambaAttention rotates nothing, so the {len(attention):,} attention blocks see no position but "
            "the causal mask's order (NoPE)"]
    if len(experts) < L:
        fields["ff_dim"], keys["ff_dim"] = values["intermediate_size"], "intermediate_size"
    if mamba:
        inner = values["mamba_expand"] * d
        fields.update(mamba1_layers=mamba, mamba1_inner=inner, mamba1_state=values["mamba_d_state"],
                      mamba1_dt_rank=rank, conv_width=values["mamba_d_conv"],
                      mamba1_bias=MAMBA_BIASES[(values["mamba_conv_bias"], values["mamba_proj_bias"])])
        keys.update(mamba1_layers="attn_layer_period", mamba1_inner="mamba_expand", mamba1_state="mamba_d_state",
                    mamba1_dt_rank="mamba_dt_rank", conv_width="mamba_d_conv", mamba1_bias="mamba_conv_bias")
        more.append(f"Mamba in {len(mamba):,} of the {L:,} blocks (all but i % attn_layer_period = attn_layer_offset): "
                    f"a fixed state of d_inner = {inner:,} channels of {values['mamba_d_state']:,} per block in "
                    f"attention's place, no KV cache; its step's rank r_dt = {rank:,}")
    if experts:
        fields.update(experts=E, top_k=values["num_experts_per_tok"], expert_dim=values["intermediate_size"],
                      moe_step=1, dense_layers=tuple(i for i in range(L) if i not in experts))
        keys.update(experts="num_experts", top_k="num_experts_per_tok", expert_dim="intermediate_size",
                    dense_layers="expert_layer_period")
        more.append(f"a mixture of {E:,} SwiGLU experts of width intermediate_size in {len(experts):,} of the {L:,} "
                    "blocks (i % expert_layer_period = expert_layer_offset), k = "
                    f"{values['num_experts_per_tok']:,} per token; the dense SwiGLU in the others")
    more.append(JAMBA_VALUES)
    defaults = tuple(k for k in table if k not in values["given"] and k not in RULE_KEYS)
    ignored = tuple(k for k in SHAPE_KEYS if k in doc and k not in table and k not in ALIASES[model_type]
                    and k not in READ_BY_EVERY_TYPE and k not in ROUTER[model_type])
    return Reading(model_type, fields, keys, defaults, ignored, (*router, *more))


FALCON_SCALES = ("lm_head_multiplier", "embedding_multiplier", "key_multiplier", "attention_out_multiplier",
                 "attention_in_multiplier", "ssm_in_multiplier", "ssm_out_multiplier")  # FalconH1Config's muP numbers
FALCON_LISTS = {"mlp_multipliers": 2, "ssm_multipliers": 5}  # its lists of them, and their lengths
FALCON_VALUES = ("values only, which change no count, shape or byte: the muP multipliers (the token rows times "
                 "embedding_multiplier, each mixer's copy of ln_1(x) times attention_in_multiplier or "
                 "ssm_in_multiplier and its output times attention_out_multiplier or ssm_out_multiplier, k times "
                 "key_multiplier, Mamba 2's z, x, B, C and dt times ssm_multipliers, the MLP's gate and output times "
                 "mlp_multipliers, the logits times lm_head_multiplier): elementwise products, no FLOPs in torch's "
                 "count; this module makes each mixer's copy of ln_1(x) as transformers does, and scales by 1; "
                 "Mamba 2's step limits (time_step_limit) and RoPE's θ")


def _falcon_h1(doc: Mapping) -> Reading:
    """A falcon_h1 file as transformers builds it (FalconH1DecoderLayer): in every block attention (h heads of
    head_dim, else d // h; biases where attention_bias says) and Mamba 2 (`model.parts.mamba`: h_ssm = mamba_n_heads
    heads of d_ssm = mamba_d_head, "auto": mamba_d_ssm / h_ssm, mamba_d_ssm null: mamba_expand·d) both read one RMSNorm
    of x and add to it together (`ssm_parallel`), then an RMSNorm and a SwiGLU MLP; Mamba 2's output y·SiLU(z) where
    mamba_rms_norm is false, else RMS-normed with a gain before the gate (mamba_norm_before_gate) or after it. Its
    in_proj's bias is mamba_proj_bias, its out_proj's projectors_bias. HFConfigError names what is not modelled."""
    model_type, table = "falcon_h1", DEFAULTS["falcon_h1"]
    _check_activation(doc, model_type)
    _check_rope(doc)
    values = _values(doc, model_type)
    for key in FALCON_SCALES:
        if key in doc and doc[key] is not None:
            _number(key, doc[key], -1e6, 1e6)
    for key, n in FALCON_LISTS.items():
        value = doc.get(key)
        if value is not None and (not isinstance(value, list) or len(value) != n or any(
                isinstance(v, bool) or not isinstance(v, (int, float)) for v in value)):
            raise HFConfigError(f"config.json: {key}={show(value)}: {key} ({WHAT[key]}) must be a list of {n} numbers, "
                                "or null")
    L, d, h = values["num_hidden_layers"], values["hidden_size"], values["num_attention_heads"]
    inner = values["mamba_d_ssm"]
    if inner is None:
        if values["mamba_expand"] is None:
            raise HFConfigError("config.json: mamba_d_ssm and mamba_expand are both null: FalconH1Config needs one of "
                                "them for Mamba 2's width; give mamba_d_ssm")
        inner = values["mamba_expand"] * d
    heads, head, groups = values["mamba_n_heads"], values["mamba_d_head"], values["mamba_n_groups"]
    if inner % heads:
        raise HFConfigError(f"config.json: mamba_n_heads={heads:,} does not divide Mamba 2's width {inner:,} "
                            "(mamba_d_ssm, or mamba_expand · hidden_size): FalconH1Config requires it; give a divisor")
    if head == "auto":
        head = inner // heads
    elif head * heads != inner:
        raise HFConfigError(f"config.json: mamba_d_head={head:,} · mamba_n_heads={heads:,} = {head * heads:,} is not "
                            f"Mamba 2's width {inner:,} (mamba_d_ssm, or mamba_expand · hidden_size): FalconH1Config "
                            "requires them equal")
    if heads % groups:
        raise HFConfigError(f"config.json: mamba_n_groups={groups:,} does not divide mamba_n_heads={heads:,}: each "
                            "group's B and C serve mamba_n_heads / mamba_n_groups heads")
    if bool(values["mamba_proj_bias"]) != bool(values["projectors_bias"]):
        raise HFConfigError(f"config.json: mamba_proj_bias={show(values['mamba_proj_bias'])} and projectors_bias="
                            f"{show(values['projectors_bias'])}: a bias on one of Mamba 2's in_proj and out_proj "
                            "without the other is not modelled; set both alike")
    head_dim = doc.get("head_dim")
    if head_dim is not None:
        _checked("head_dim", head_dim, False)
    keys = {"V": "vocab_size", "T_max": "max_position_embeddings", "d": "hidden_size", "L": "num_hidden_layers",
            "h": "num_attention_heads", "kv_heads": "num_key_value_heads", "tie": "tie_word_embeddings",
            "ff_dim": "intermediate_size"}
    fields = {f: values[k] for f, k in keys.items()}
    if fields["kv_heads"] is None:
        fields["kv_heads"] = h
    if h % fields["kv_heads"]:
        raise HFConfigError(f"config.json: num_key_value_heads={fields['kv_heads']:,} does not divide "
                            f"num_attention_heads={h:,}: each K/V head serves a whole group of query heads")
    if head_dim is not None or d % h:
        fields["head_dim"], keys["head_dim"] = (d // h if head_dim is None else head_dim), "head_dim"
    _check_pad(doc, model_type, fields["V"])
    fields.update(norm="rmsnorm", positions="rope", mlp="swiglu", bias=_bias(values, model_type),
                  mamba_layers=tuple(range(L)), ssm_parallel=True, ssm_heads=heads, ssm_head_dim=head,
                  ssm_state=values["mamba_d_state"], ssm_groups=groups, ssm_chunk=values["mamba_chunk_size"],
                  conv_width=values["mamba_d_conv"],
                  ssm_bias=MAMBA_BIASES[(bool(values["mamba_conv_bias"]), bool(values["mamba_proj_bias"]))],
                  ssm_norm=("none" if not values["mamba_rms_norm"] else
                            "norm_gate" if values["mamba_norm_before_gate"] else "gated"))
    keys.update(mamba_layers="num_hidden_layers", ssm_parallel="model_type", ssm_heads="mamba_n_heads",
                ssm_head_dim="mamba_d_head", ssm_state="mamba_d_state", ssm_groups="mamba_n_groups",
                ssm_chunk="mamba_chunk_size", conv_width="mamba_d_conv", ssm_bias="mamba_conv_bias",
                ssm_norm="mamba_rms_norm", bias="attention_bias")
    norm = {"none": "y·SiLU(z), no norm (mamba_rms_norm false)",
            "norm_gate": "RMS-normed with a gain, then times SiLU(z) (mamba_rms_norm, mamba_norm_before_gate)",
            "gated": "y·SiLU(z), then RMS-normed with a gain (mamba_rms_norm, mamba_norm_before_gate false)"}
    more = [f"attention and Mamba 2 side by side in all {L:,} blocks, both reading one RMSNorm of x and adding to it "
            f"together (a parallel hybrid block): every block keeps K and V of all T tokens and a fixed state of h_ssm "
            f"= {heads:,} heads of {head:,} × {values['mamba_d_state']:,}; Mamba 2's output "
            f"{norm[fields['ssm_norm']]}", FALCON_VALUES]
    defaults = tuple(k for k in table if k not in values["given"] and k not in RULE_KEYS)
    ignored = tuple(k for k in SHAPE_KEYS if k in doc and k not in table and k not in EXTRAS[model_type]
                    and k not in READ_BY_EVERY_TYPE and k not in ALIASES.get(model_type, {}))
    return Reading(model_type, fields, keys, defaults, ignored, tuple(more))


def _blocks(values: dict, model_type: str, L: int) -> tuple[list[str], int | None]:
    """Each block's attention as transformers' cache keeps it, and the window of the sliding ones.

    The cache (`transformers.cache_utils.get_layer_types_and_kwargs`) reads `layer_types` and `sliding_window`
    for every model type, fields of its config class or not: a block listed "sliding_attention", or every block
    when there is no list and a window is set, keeps a window's K and V. Qwen2, Qwen3 and their mixtures of experts
    drop the window unless `use_sliding_window`; Qwen2 and Qwen3 list the blocks from `max_window_layers` on as
    sliding, Qwen2-MoE every other block below it."""
    if model_type in PART_BLOCKS:
        return _hybrid_blocks(values, model_type, L), None
    if model_type in DSA_TYPES:  # DeepseekV32Config: every block indexed_attention (its cache's DynamicIndexedLayer)
        other = sorted({t for t in (values["layer_types"] or ()) if t != "indexed_attention"})
        if other:
            raise HFConfigError(f"config.json: layer_types lists {', '.join(map(show, other))}: {model_type}'s every "
                                "block is indexed_attention (latent attention over the keys its indexer picks); list "
                                "indexed_attention only")
        return ["full_attention"] * L, None
    for word, (owner, verb, whose) in OWN_LAYER_TYPES.items():
        if word in (values["layer_types"] or ()) and model_type != owner:
            raise HFConfigError(f"config.json: layer_types lists {word}, which {model_type}'s module does not {verb} "
                                f"({whose}); list full_attention or sliding_attention")
    if model_type == "llama4_text":
        return _llama4_blocks(values, L)
    window, types = values["sliding_window"], values["layer_types"]
    if model_type in ("qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "smollm3"):
        window = window if values["use_sliding_window"] else None
        if types is None and model_type == "smollm3":  # SmolLM3Config: the NoPE blocks windowed, where a window is
            types = ["sliding_attention" if window is not None and not rope else "full_attention"
                     for rope in _rope_blocks(values, L)]
        if types is None and model_type in ("qwen2", "qwen3"):
            types = ["sliding_attention" if window is not None and i >= values["max_window_layers"] else
                     "full_attention" for i in range(L)]
        if types is None and model_type == "qwen2_moe":  # Qwen2MoeConfig: every other block, below max_window_layers
            types = ["sliding_attention" if window is not None and i % 2 == 0 and i < values["max_window_layers"] else
                     "full_attention" for i in range(L)]
    if types is None and model_type == "dots1":  # Dots1Config: the blocks from max_window_layers on, where a window is
        if window is not None and values["max_window_layers"] is None:
            raise HFConfigError("config.json: max_window_layers=null with a sliding_window: Dots1Config compares each "
                                "block's index with it to list the windowed blocks; give a whole number, or layer_types")
        types = ["sliding_attention" if window is not None and i >= values["max_window_layers"] else "full_attention"
                 for i in range(L)]
    if types is None and model_type == "mellum":  # MellumConfig: every block full attention, whatever the window
        types = ["full_attention"] * L
    if types is None and model_type == "cwm":  # CwmConfig: blocks 0, 4, 8, ... full, the others windowed
        types = ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(L)]
    if types is None and model_type == "olmo3":  # Olmo3Config: blocks 3, 7, 11, ... full, the others windowed
        types = ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention" for i in range(L)]
    if types is None and model_type == "exaone4" and (window is None or values["sliding_window_pattern"] is None):
        why = "sliding_window is null" if window is None else "sliding_window_pattern is null"
        raise HFConfigError(f"config.json: {why} and layer_types is not in the file: Exaone4Config then cannot list "
                            f"the blocks (its pattern of windowed blocks is 0 or none); give sliding_window and "
                            f"sliding_window_pattern, or layer_types")
    if types is None and model_type in (*GEMMA_TYPES, "gemma4_text", "gpt_oss", "cohere2", "exaone4"):  # Gemma 2,
        # gpt-oss: every other block windowed; Gemma 3 and 4, Command A, EXAONE 4: all but every n-th
        every = 2 if model_type in ("gemma2", "vaultgemma", "gpt_oss") else values.get("sliding_window_pattern") or \
            {"gemma3_text": 6, "gemma4_text": 6}.get(model_type, 4)
        types = ["sliding_attention" if (i + 1) % every else "full_attention" for i in range(L)]
    if model_type == "gemma4_text" and types:  # Gemma4TextConfig forces its last block full (`_gemma4` says so)
        types = [*types[:-1], "full_attention"]
    if types is None:
        types = ["sliding_attention" if window is not None else "full_attention"] * L
    return types, window


# What Gemma 4 has that no part here builds yet: each a refusal in one line, naming the piece and the file's fix.
GEMMA4_NOT_BUILT = "which this explorer does not build yet"


def _gemma4_widths(values: dict, types: list[str]) -> dict[int, tuple[int, int]]:
    """Each full-attention block's (head_dim, num_key_value_heads) as Gemma4TextConfig sets them: per_layer_config's
    where the file has it, else global_head_dim (default 512) and, where attention_k_eq_v, num_global_key_value_heads."""
    d_head, h_kv = values["head_dim"], values["num_key_value_heads"]
    given = values["per_layer_config"]
    if given is not None:
        return {i: (o.get("head_dim", d_head), o.get("num_key_value_heads", h_kv)) for i, o in given.items()}
    width = 512 if values["global_head_dim"] is None else values["global_head_dim"]
    heads = values["num_global_key_value_heads"] if values["attention_k_eq_v"] else None
    return {i: (width, h_kv if heads is None else heads) for i, t in enumerate(types) if t == "full_attention"}


def _gemma4(doc: Mapping, values: dict, fields: dict, types: list[str]) -> tuple[str, ...]:
    """Gemma 4's text model where it is Gemma 3's block with unscaled scores (`_fields`), and the notes that say so;
    HFConfigError in one line for each part of Gemma 4 not built here (per-layer input embeddings, the full blocks'
    own head width, keys as values, KV sharing, the mixture of experts beside the MLP, bidirectional attention)."""
    d_head, h_kv = values["head_dim"], values["num_key_value_heads"]
    if values["hidden_size_per_layer_input"]:
        raise PartNotBuilt(f"config.json: hidden_size_per_layer_input={values['hidden_size_per_layer_input']:,}: Gemma "
                            f"4's per-layer input embeddings (a vocab_size_per_layer_input × L·"
                            f"{values['hidden_size_per_layer_input']:,} table, its projection from d and each block's "
                            f"gate, projection and norm), {GEMMA4_NOT_BUILT}; a file with 0 (none) reads")
    apart = {i: w for i, w in _gemma4_widths(values, types).items() if w != (d_head, h_kv) and i < fields["L"]}
    if apart:
        i, (width, heads) = min(apart.items())
        raise PartNotBuilt(f"config.json: block {i}'s head_dim = {width:,} and num_key_value_heads = {heads:,} beside "
                            f"head_dim = {d_head:,} and num_key_value_heads = {h_kv:,} (global_head_dim, "
                            f"num_global_key_value_heads or per_layer_config): Gemma 4's full-attention blocks of their "
                            f"own head width, {GEMMA4_NOT_BUILT}; give them head_dim's and num_key_value_heads' values")
    refused = (("attention_k_eq_v", "keys as values in its full-attention blocks (no v_proj there)", "false",
                values["attention_k_eq_v"] and "full_attention" in types),
               ("num_kv_shared_layers", "KV sharing (its last blocks reuse an earlier block's K and V and keep no cache)",
                "0", values["num_kv_shared_layers"]),
               ("enable_moe_block", "mixture of experts beside each block's MLP", "false", values["enable_moe_block"]),
               ("use_bidirectional_attention", "bidirectional attention", "null",
                values["use_bidirectional_attention"] == "all"))
    for key, what, fix, on in refused:
        if on:
            raise PartNotBuilt(f"config.json: {key}={show(values[key])}: Gemma 4's {what}, {GEMMA4_NOT_BUILT}; "
                                f"write {fix}")
    notes = []
    layer_types = values["layer_types"]
    if layer_types and layer_types[-1] != "full_attention":
        notes.append("layer_types' last block read as full_attention, as Gemma4TextConfig forces it")
    if values["use_double_wide_mlp"]:
        notes.append("use_double_wide_mlp = true widens the MLP of the KV-sharing blocks only, and there are none "
                     "(num_kv_shared_layers = 0): no block changes")
    if values["use_bidirectional_attention"] == "vision":
        notes.append("use_bidirectional_attention = \"vision\" lets image tokens see each other; text alone attends "
                     "causally, as here")
    return tuple(notes)


DEEPSEEK_VALUES = {  # what each DeepSeek type has that changes no count, shape or byte
    "deepseek_v2": ("values only, which change no count, shape or byte: the router's choice of k (topk_method: greedy, "
                    "or group-limited over n_group groups) and routed_scaling_factor; the k weights as the softmax "
                    "gives them, unless norm_topk_prob; RoPE's interleaved pairs; the scores' scale 1/√(d_nope + d_R)"),
    "deepseek_v3": ("values only, which change no count, shape or byte: the router's sigmoid scores (this module's "
                    "router takes a softmax over the same (B, T, E) logits), their correction bias "
                    "e_score_correction_bias (a buffer of E per MoE block, not a parameter: not in N, as transformers' "
                    "count leaves it out), the group-limited choice (n_group, topk_group) and routed_scaling_factor; "
                    "RoPE's interleaved pairs; the scores' scale 1/√(d_nope + d_R), times yarn's mscale² where "
                    "rope_scaling sets mscale_all_dim"),
    "kimi_linear": ("values only, which change no count, shape or byte: the router's sigmoid scores (this module's "
                    "router takes a softmax over the same (B, T, E) logits), their correction bias "
                    "e_score_correction_bias (a buffer of E per MoE block, not a parameter: not in N, as transformers' "
                    "count leaves it out), the group-limited choice (n_group, topk_group) and routed_scaling_factor; "
                    "the scores' scale 1/√(d_nope + d_R); the norms' ε (rms_norm_eps); the decays' initial A_log and "
                    "dt_bias; no RoPE anywhere, so rope_theta and rope scaling change nothing"),
    "youtu": ("values only, which change no count, shape or byte: RoPE's interleaved pairs (rope_interleave); the "
              "scores' scale 1/√(d_nope + d_R), times yarn's mscale² where rope_parameters sets mscale_all_dim"),
    "minicpm3": ("values only, which change no count, shape or byte: the token rows times scale_emb (a buffer, not "
                 "a parameter), each block's attention and MLP outputs times scale_depth / √L before they join x "
                 "(null scale_depth: √L, so times 1), the hidden state divided by hidden_size / dim_model_base before "
                 "the head (null: hidden_size, so by 1); RoPE's θ and scaling (its pairs as rotate-half); the scores' "
                 "scale 1/√(d_nope + d_R), times yarn's mscale² where rope_parameters sets mscale_all_dim"),
    "glm4_moe_lite": ("values only, which change no count, shape or byte: the router's sigmoid scores (this module's "
                      "router takes a softmax over the same (B, T, E) logits), their correction bias "
                      "e_score_correction_bias (a buffer of E per MoE block, not a parameter: not in N, as "
                      "transformers' count leaves it out), the group-limited choice (n_group, topk_group) and "
                      "routed_scaling_factor; RoPE's θ and its interleaved pairs (rope_interleave); the scores' scale "
                      "1/√(d_nope + d_R), times yarn's mscale² where rope_parameters sets mscale_all_dim"),
    **dict.fromkeys(("deepseek_v32", "glm_moe_dsa"), (
        "values only, which change no count, shape or byte: the router's sigmoid scores (this module's router takes a "
        "softmax over the same (B, T, E) logits), their correction bias e_score_correction_bias (a buffer of E per MoE "
        "block, not a parameter: not in N, as transformers' count leaves it out), the group-limited choice (n_group, "
        "topk_group) and routed_scaling_factor; RoPE's θ and its interleaved pairs; the scores' scale "
        "1/√(d_nope + d_R), times yarn's mscale² where rope_parameters sets mscale_all_dim; the indexer's scale "
        "1/√d_I and its heads' weights' 1/√h_I")),
}


def _latent(doc: Mapping, model_type: str, fields: dict) -> tuple[str, ...]:
    """DeepSeek's notes: latent attention run eager, DeepSeek-V3's multi-token-prediction module left out
    (transformers does not build it), head_dim as the config class sets it, and the values that change nothing here;
    HFConfigError for routing transformers' router cannot run."""
    notes = ["eager attention: latent attention's q and k are d_nope + d_R wide and its v d_v, which the fused CPU "
             "kernel here cannot take (one head width); the scores (B, h, T, T) are tensors of the pass"]
    mtp = _checked("num_nextn_predict_layers", doc.get("num_nextn_predict_layers", MLA_MTP[model_type]), False) \
        if model_type in MLA_MTP else 0
    if mtp:
        notes.append(f"without the multi-token-prediction module (num_nextn_predict_layers = {mtp:,}), which "
                     f"transformers does not build: N counts the {fields['L']:,} blocks, the tables and the head")
    if model_type == "glm4_moe_lite" and "head_dim" in doc:
        notes.append(f"head_dim = {show(doc['head_dim'])} read as qk_rope_head_dim (d_R): Glm4MoeLiteConfig's "
                     f"attribute_map makes it that key's other name, and the file's head_dim is set last")
    elif "head_dim" in doc:
        notes.append(f"head_dim = {show(doc['head_dim'])} is ignored: {CONFIG_CLASSES[model_type]} sets head_dim to "
                     f"qk_rope_head_dim (d_R = {fields['rope_dim']:,})")
    if fields.get("experts"):
        _check_groups(doc, model_type, fields["experts"], fields["top_k"])
    return (*notes, DEEPSEEK_VALUES[model_type])


GLM_MOE_VALUES = ("values only, which change no count, shape or byte: the router's sigmoid scores (this module's router "
                  "takes a softmax over the same (B, T, E) logits), their correction bias e_score_correction_bias (a "
                  "buffer of E per MoE block, not a parameter: not in N, as transformers' count leaves it out), the "
                  "group-limited choice (n_group, topk_group) and routed_scaling_factor; RoPE's θ")


MINIMAX_VALUES = ("values only, which change no count, shape or byte: the router's sigmoid scores (this module's router "
                  "takes a softmax over the same (B, T, E) logits), their correction bias e_score_correction_bias (a "
                  "buffer of E per block, not a parameter: not in N, as transformers' count leaves it out); RoPE's θ. "
                  "Its multi-token-prediction modules are left out, as transformers builds none")


MTP_DEFAULT = {"glm4_moe": 1, "solar_open": 0, "dots1": 0}  # GLM-4.5's sigmoid router: the MTP layers its class sets (none built)


def _sigmoid_router(doc: Mapping, model_type: str, fields: dict) -> tuple[str, ...]:
    """GLM-4.5's notes: its multi-token-prediction layer left out (transformers does not build it) and the values
    its sigmoid router changes; HFConfigError for groups transformers' router cannot choose k experts from."""
    notes = []
    key = next((k for k in ("num_nextn_predict_layers", "num_mtp_layers") if k in doc), "num_mtp_layers")  # aliases
    mtp = _checked(key, doc.get(key, MTP_DEFAULT[model_type]), False)  # Glm4MoeConfig's default: 1
    if mtp:
        notes.append(f"without the multi-token-prediction layer ({key} = {mtp:,}), which transformers does not "
                     f"build: N counts the {fields['L']:,} blocks, the token table and the head")
    if fields.get("experts"):
        _check_groups(doc, model_type, fields["experts"], fields["top_k"])
    return (*notes, GLM_MOE_VALUES)


def _check_groups(doc: Mapping, model_type: str, E: int, k: int | None) -> None:
    """HFConfigError where a DeepSeek router cannot choose k experts: DeepSeek-V2's k left null, or a group-limited
    choice (DeepSeek-V3's always, V2's where topk_method says so) whose groups cannot give k."""
    if k is None:
        raise HFConfigError(f"config.json: num_experts_per_tok is null (the default of {CONFIG_CLASSES[model_type]}): "
                            f"the router picks that many experts per token; give a whole number such as 6")
    defaults = ROUTER[model_type]
    if doc.get("topk_method", defaults.get("topk_method")) == "greedy" and model_type == "deepseek_v2":
        return
    groups, best = doc.get("n_group", defaults["n_group"]), doc.get("topk_group", defaults["topk_group"])
    if groups is None or best is None:
        raise HFConfigError("config.json: topk_method=\"group_limited_greedy\" needs n_group and topk_group (the "
                            "groups of experts, and how many of them each token's experts come from): give both")
    two = model_type in ("deepseek_v3", "glm4_moe", "solar_open", "dots1", "glm4_moe_lite", "kimi_linear", *DSA_TYPES)  # their routers score each group by its best two experts
    if E % groups or E // groups < (2 if two else 1):
        raise HFConfigError(f"config.json: n_group={groups:,} must divide n_routed_experts={E:,} into groups of at "
                            f"least {2 if two else 1} experts (transformers' router scores each group by its best "
                            f"{'two' if two else 'one'})")
    if best > groups or k > best * (E // groups):
        raise HFConfigError(f"config.json: topk_group={best:,} of n_group={groups:,} groups of {E // groups:,} "
                            f"experts cannot give num_experts_per_tok={k:,}: topk_group must be at most n_group and "
                            f"k at most topk_group·n_routed_experts/n_group")


# The token the embedding keeps at zero (its padding_idx), where a type's class sets one: a row of the table.
PAD_DEFAULTS = {"olmoe": 1, "flex_olmo": 100_277, "sarvam_moe": 0, "smollm3": 128_004, "cohere2": 0, "ministral3": 11,
                "phi3": 32_000, "cohere": 0, "gemma": 0, "gemma2": 0, "gemma3_text": 0, "gemma4_text": 0, "vaultgemma": 0,
                "internlm3": 2, "exaone": 0, "helium": 3, "apertus": 3, "apertus1p5_text": 3, "ernie4_5": 0, "ernie4_5_moe": 0, "seed_oss": 1, "nanochat": 1, "olmo": 1, "olmo2": 1, "olmo_hybrid": 100_277, "olmo3": 1,
                "glm": 151_329, "glm4": 151_329, "aria_text": 2, "kimi_linear": 163_839,
                "nemotron_h": 0, "jamba": 0, "falcon_h1": 0}  # NemotronHConfig's pad_token_id, which its embedding does not read (no padding_idx)


def _check_pad(doc: Mapping, model_type: str, V: int) -> None:
    """HFConfigError where the padding row (pad_token_id, else the type's default) is no row of the V of the token
    table: transformers' embedding refuses it."""
    pad = doc.get("pad_token_id", PAD_DEFAULTS.get(model_type))
    if isinstance(pad, int) and not isinstance(pad, bool) and not -V <= pad < V:
        source = "" if "pad_token_id" in doc else f" (not in the file: {model_type}'s default)"
        raise HFConfigError(f"config.json: pad_token_id={pad:,}{source} is no row of the {V:,} of the token table, "
                            "which transformers' embedding refuses: give a vocab_size above it")


def _refuse_unmodelled(doc: Mapping, values: dict, model_type: str, fields: dict, keys: dict[str, str]) -> None:
    """HFConfigError for a value, given or the type's default, that changes what is built but is not modelled."""
    if model_type == "minicpm3" and values["mlp_bias"]:
        raise HFConfigError("config.json: mlp_bias=true puts biases on MiniCPM3's MLP matrices beside its latent "
                            "attention, which this module does not build; write false")
    if model_type == "minicpm3" and doc.get("dim_model_base") is not None and (
            isinstance(doc["dim_model_base"], bool) or not isinstance(doc["dim_model_base"], int)
            or doc["dim_model_base"] < 1):
        raise HFConfigError(f"config.json: dim_model_base={show(doc['dim_model_base'])}: MiniCPM3Config takes a whole "
                            f"number (the hidden state is divided by hidden_size / dim_model_base before the head); "
                            f"give one of at least 1, or null")
    if model_type == "hy_v3" and values["mlp_bias"]:
        raise HFConfigError("config.json: mlp_bias=true puts biases on Hunyuan 3's dense and shared MLPs but not on its "
                            "routed experts, which this module does not build; write false")
    if model_type == "stablelm" and values["qk_layernorm"]:
        raise PartNotBuilt("config.json: qk_layernorm=true: StableLM's LayerNorm on each head's q and k (one of d_head "
                           "with a bias per head), which this explorer does not build yet; a file with false reads")
    if model_type == "phi" and values["qk_layernorm"]:
        raise PartNotBuilt("config.json: qk_layernorm=true: Phi's LayerNorm of d_head, with a bias, on q's and on k's "
                           "heads, which this explorer does not build yet; a file with false reads")
    if model_type in HEAD_DIM_UNREAD and doc.get("head_dim") not in (None, fields["d"] // fields["h"]):
        raise HFConfigError(f"config.json: head_dim={show(doc['head_dim'])}: {model_type}'s attention splits "
                            f"hidden_size into heads of d / h = {fields['d'] // fields['h']:,} (only its rotary "
                            f"embedding reads head_dim); drop head_dim")
    if model_type == "phimoe" and values["lm_head_bias"]:
        raise HFConfigError("config.json: lm_head_bias=true puts a bias on PhiMoE's head, which this module does not "
                            "build; write false")
    if model_type == "phimoe" and fields.get("experts", 2) < 2:
        raise HFConfigError(f"config.json: num_local_experts={fields['experts']:,}: PhiMoE's router (sparsemixer) "
                            f"always picks 2 experts per token; give at least 2")
    if model_type == "ernie4_5_moe" and values["use_bias"]:
        raise HFConfigError("config.json: use_bias=true puts biases on ERNIE 4.5 MoE's head and shared experts but "
                            "not on its routed experts, which this module does not build; write false")
    if model_type == "aria_text" and values["mlp_bias"]:
        raise HFConfigError("config.json: mlp_bias=true puts biases on Aria's shared experts but not on its routed "
                            "experts, which this module does not build; write false")
    if model_type == "deepseek_v2" and values["mlp_bias"]:
        raise HFConfigError("config.json: mlp_bias=true puts biases on DeepSeek-V2's dense and shared MLPs but not on "
                            "its routed experts, which this module does not build; write false")
    if model_type in MLA_TYPES and values["attention_bias"]:
        raise HFConfigError("config.json: attention_bias=true puts biases on latent attention's W_DQ, W_DKV and W_o, "
                            "which this module does not build; write false")
    if model_type in MLA_TYPES and values["num_key_value_heads"] not in (None, fields["h"]):
        raise HFConfigError(f"config.json: num_key_value_heads={show(values['num_key_value_heads'])} with latent "
                            f"attention: K and V of all num_attention_heads={fields['h']:,} heads come from the latent, "
                            f"so it must equal num_attention_heads (or be null)")
    if model_type == "gpt2" and values["add_cross_attention"]:
        raise HFConfigError("config.json: add_cross_attention=true adds cross-attention layers, which this decoder "
                            "does not build")
    if model_type in ("llama", *LLAMA_KIN, "cwm", *GEMMA_TYPES, "deepseek_v2", "hyperclovax", "aria_text", "minicpm3",
                      "gpt_neox") \
            and fields["d"] % fields["h"]:  # the config's validate_architecture
        raise HFConfigError(f"config.json: hidden_size={fields['d']:,} is not a multiple of num_attention_heads="
                            f"{fields['h']:,}, which transformers' {CONFIG_CLASSES[model_type]} requires (even with "
                            f"head_dim set)")
    if model_type == "internlm3" and values["attention_bias"] != values["mlp_bias"]:
        raise HFConfigError(f"config.json: qkv_bias={show(values['attention_bias'])} and bias="
                            f"{show(values['mlp_bias'])}: InternLM3Config requires both the same (Llama's module puts "
                            f"one bias setting on q, k, v and W_o and the other on the MLP); write both true or both false")
    if model_type == "iquestcoder" and (doc.get("use_sliding_window") or doc.get("clip_qkv") is not None):
        key = "use_sliding_window" if doc.get("use_sliding_window") else "clip_qkv"
        raise HFConfigError(f"config.json: {key}={show(doc[key])}: IQuestCoderConfig refuses it (its module has no "
                            f"window and no clipping of q, k and v); drop the key")
    if model_type == "starcoder2" and not values["use_bias"]:
        raise HFConfigError("config.json: use_bias=false leaves StarCoder2's LayerNorms their biases but takes the "
                            "matrices', a mix this module does not build; write true")
    if model_type == "olmoe" and fields.get("head_dim") not in (None, fields["d"] // fields["h"]):
        raise HFConfigError(f"config.json: head_dim={fields['head_dim']:,}: OLMoE's QK-norm is hidden_size = "
                            f"{fields['d']:,} wide, so its q must be too (h · d_head = hidden_size); drop head_dim")
    if model_type == "helium" and fields["h"] * fields["head_dim"] != fields["d"]:
        raise HFConfigError(f"config.json: num_attention_heads × head_dim = {fields['h']:,} × {fields['head_dim']:,} "
                            f"is not hidden_size = {fields['d']:,}, which Helium's W_o (d, d) needs: its attention "
                            f"cannot run; give head_dim = hidden_size / num_attention_heads")
    if model_type == "jais2" and not (values["attention_bias"] and values["mlp_bias"]):
        raise HFConfigError(f"config.json: attention_bias={show(values['attention_bias'])}, mlp_bias="
                            f"{show(values['mlp_bias'])}: Jais 2's LayerNorms keep their biases while some matrices "
                            f"lose theirs, a mix this module does not build; write both true")
    if model_type == "cohere" and values["use_qk_norm"]:
        raise HFConfigError("config.json: use_qk_norm=true puts a LayerNorm with a gain per head (h × d_head and "
                            "h_kv × d_head) on q and k, which this module does not build; write false")
    if values.get("use_bidirectional_attention") and model_type != "gemma4_text":  # Gemma 4's words: `_gemma4`
        raise HFConfigError("config.json: use_bidirectional_attention=true makes attention bidirectional (an "
                            "encoder's); this decoder's attention is causal")
    _check_pad(doc, model_type, fields["V"])
    for key in ("layer_types", "mlp_layer_types"):
        types = values.get(key)
        if types is not None and len(types) != fields["L"]:
            raise HFConfigError(f"config.json: {key} lists {len(types):,} blocks, {keys['L']} is "
                                f"{fields['L']:,}: give one entry per block")
    if model_type == "mellum":
        _mellum_rope(doc, values["layer_types"] or ["full_attention"] * fields["L"], fields["head_dim"])
        key = next((k for k in ("num_mtp_layers", "num_nextn_predict_layers") if doc.get(k) is not None), None)
        if key and _checked(key, doc[key], False) > 1:
            raise HFConfigError(f"config.json: {key}={show(doc[key])}: MellumConfig refuses more than one "
                                f"multi-token-prediction layer (which transformers does not build); write 0 or 1")


def _mellum_rope(doc: Mapping, types: list[str], d_head: int) -> None:
    """HFConfigError where Mellum's module cannot run its rope_parameters: one object per kind of block layer_types
    lists (MellumConfig reads no other spelling), each rotating all of d_head (its RoPE multiplies q and k whole by
    int(d_head · partial_rotary_factor) angles' cosines, rounded up to a pair)."""
    settings = doc.get("rope_parameters")
    if settings is None:
        return
    for kind in sorted(set(types)):
        own = settings.get(kind) if isinstance(settings, Mapping) else None
        if not isinstance(own, Mapping):
            raise HFConfigError(f"config.json: rope_parameters={show(settings)}: MellumConfig reads one object of RoPE's "
                                f"settings per kind of block, and layer_types lists {kind} blocks; write "
                                f"rope_parameters as {{\"{kind}\": {{\"rope_theta\": …}}, …}}")
        factor = own.get("partial_rotary_factor", 1.0)
        dim = int(d_head * factor)
        if dim + dim % 2 != d_head:
            raise HFConfigError(f"config.json: rope_parameters.{kind}.partial_rotary_factor={show(factor)} rotates "
                                f"{dim:,} of each head's d_head = {d_head:,} features, but Mellum's module multiplies "
                                f"all of q and k by the angles (it cannot run): write 1.0")
