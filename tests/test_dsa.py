"""DeepSeek sparse attention (issue 41; `model.parts.sparse`): DeepSeek-V3.2's and GLM-5's lightning indexer beside
latent attention, against transformers 5.24. Random small deepseek_v32 and glm_moe_dsa files, T below and above T_k:
N on the meta device, the bytes of the real cache after a prefill (the latent, the rotary key and the indexer's keys,
DynamicIndexedLayer's), forward FLOPs equal to FlopCounterMode on the eager CPU forward with eager experts; the class
defaults and the preset to the parameter; the indexer's output equal to transformers' with the weights copied; saved
bytes against autograd; a decode step over the three caches; the refusals in one line."""
from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
import torch
from transformers import CONFIG_MAPPING, AutoModelForCausalLM

from model import GPT, budget, trace
from model.config import ALL_PRESETS, HFConfigError, from_hf, read_hf
from model.inference import infer
from model.memory import kv_cache_lines
from model.passes import saved_bytes_of
from pagetools import run_cli
from test_moe import _module  # eager experts on the CPU, batched matmuls on the meta device
from test_window import reference

DSA_TYPES = ("deepseek_v32", "glm_moe_dsa")
# transformers' modules of the class defaults (DeepseekV32Config: DeepSeek-V3.2-Exp's shape; GlmMoeDsaConfig: GLM-5's)
DEFAULT_N = {"deepseek_v32": 671_877_929_216, "glm_moe_dsa": 743_911_199_232}


def random_doc(rng: random.Random, model_type: str) -> dict:
    """A tiny deepseek_v32 or glm_moe_dsa file: latent attention with its queries' latent, an indexer of random heads,
    width (at least d_R) and top-k, dense first blocks, shared experts and groups."""
    groups = rng.choice([1, 2])
    E = groups * rng.randrange(2, 4)
    topk_group = rng.randrange(1, groups + 1)
    h, L, d_R = rng.randrange(1, 4), rng.randrange(1, 4), 2 * rng.randrange(1, 4)
    return {"model_type": model_type, "vocab_size": rng.randrange(8, 60), "num_hidden_layers": L,
            "num_attention_heads": h, "num_key_value_heads": h, "hidden_size": rng.randrange(4, 24),
            "intermediate_size": rng.randrange(2, 20), "moe_intermediate_size": rng.randrange(2, 12),
            "kv_lora_rank": rng.randrange(2, 12), "q_lora_rank": rng.randrange(2, 12), "qk_rope_head_dim": d_R,
            "qk_nope_head_dim": rng.randrange(1, 6), "v_head_dim": rng.randrange(1, 8), "n_routed_experts": E,
            "n_group": groups, "topk_group": topk_group,
            "num_experts_per_tok": rng.randrange(1, topk_group * E // groups + 1),
            "n_shared_experts": rng.randrange(0, 3), "first_k_dense_replace": rng.randrange(0, L + 1),
            "max_position_embeddings": 64, "tie_word_embeddings": rng.random() < 0.3,
            "index_n_heads": rng.randrange(1, 5), "index_head_dim": d_R + rng.randrange(0, 6),
            "index_topk": rng.randrange(1, 12)}


@pytest.mark.parametrize("model_type, seed", [(t, seed) for t in DSA_TYPES for seed in range(5)])
def test_random_sparse_attention_files_match_transformers_parameters_cache_and_flops(model_type, seed):
    rng = random.Random(f"{model_type}-{seed}")
    doc = random_doc(rng, model_type)
    B, T = rng.randrange(1, 4), rng.randrange(1, 14)
    cfg = from_hf(doc, B=B, T=T)
    assert (cfg.h_I, cfg.d_I, cfg.T_k) == (doc["index_n_heads"], doc["index_head_dim"], doc["index_topk"])
    b = budget(cfg)
    kv = kv_cache_lines(cfg, "fp32")[0].value
    assert kv == 4 * cfg.L * B * T * (cfg.d_c + cfg.d_R + cfg.d_I)  # the latent, the rotary key, the indexer's key
    assert (b.params_exact, kv, b.flops_fwd_measured_per_token * B * T) == reference(doc, B, T, build=_module), doc


def test_the_sweep_reaches_past_the_top_k():
    """Some random files pick fewer keys than the prefill has (T > T_k): the masks differ, the FLOPs of the torch
    path do not."""
    seen = []
    for model_type in DSA_TYPES:
        for seed in range(5):
            rng = random.Random(f"{model_type}-{seed}")
            doc = random_doc(rng, model_type)
            B, T = rng.randrange(1, 4), rng.randrange(1, 14)
            seen.append(T > doc["index_topk"])
    assert any(seen) and not all(seen)


def defaults(model_type: str) -> dict:
    config = CONFIG_MAPPING[model_type]()
    return {**json.loads(config.to_json_string()), "model_type": model_type}


@pytest.mark.parametrize("model_type", DSA_TYPES)
def test_the_class_defaults_to_the_parameter(model_type):
    doc = defaults(model_type)
    with torch.device("meta"):
        module = AutoModelForCausalLM.from_config(CONFIG_MAPPING[model_type]())
    reading = read_hf(doc)
    assert budget(reading.config).params_exact == sum(p.numel() for p in module.parameters()) == DEFAULT_N[model_type]
    assert any("DeepSeek sparse attention in every block" in n for n in reading.notes)


def test_the_deepseek_v32_preset_is_its_class_defaults():
    """DeepSeek-V3.2's preset: DeepseekV32Config's defaults (DeepSeek-V3.2-Exp's shape) at the preset's B and T; the
    cache per token at bf16 is (d_c + d_R + d_I)·2·L = 85,888 bytes, DeepSeek-V3's 70,272 and the indexer's keys."""
    preset = ALL_PRESETS["deepseek-v3.2"]
    assert read_hf(defaults("deepseek_v32"), B=preset.B, T=preset.T).config == preset
    assert budget(preset).params_exact == DEFAULT_N["deepseek_v32"]
    lines = {x.key: x.value for x in kv_cache_lines(preset, "bf16")}
    assert lines["memory/kv_cache_per_token"] == (512 + 64 + 128) * 2 * 61 == 85_888
    assert budget(replace(preset, index_heads=None, index_dim=None, index_topk=None)).params_exact == 671_026_404_352


def test_the_indexer_picks_what_transformers_picks():
    """One block's indexer, its weights copied from transformers' DeepseekV32Indexer: for T below and above T_k, each
    query sees the keys transformers' top-k picks among the causal ones (the same index scores, the same choice)."""
    doc = {**random_doc(random.Random("copy"), "deepseek_v32"), "num_hidden_layers": 1, "first_k_dense_replace": 1,
           "index_topk": 3, "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 2,
           "qk_rope_head_dim": 4, "index_head_dim": 6, "q_lora_rank": 5}
    torch.manual_seed(0)
    theirs = _module(doc, "cpu").float().eval()
    ref = theirs.model.layers[0].self_attn.indexer
    for T in (1, 2, 3, 9):
        cfg = from_hf(doc, B=2, T=T)
        ours = GPT(cfg).eval()
        indexer = ours.blocks[0].attn.indexer
        with torch.no_grad():
            for mine, their in {"wq": "wq_b", "wk": "wk", "k_norm": "k_norm", "weights": "weights_proj"}.items():
                for name, p in getattr(indexer, mine).named_parameters():
                    p.copy_(torch.randn_like(p))
                    getattr(getattr(ref, their), name).copy_(p)
        x, q_latent = torch.randn(2, T, cfg.d), torch.randn(2, T, cfg.d_cq)
        positions = torch.arange(T)[None]
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)  # True: a later key
        mask = torch.zeros(T, T).masked_fill(causal, float("-inf"))[None].expand(2, T, T)
        with torch.no_grad():
            picked = ref(x, q_latent, theirs.model.rotary_emb(x, positions), mask, positions).long()
            hidden = indexer(x, q_latent, ours.rope(T, x.device, x.dtype, 0), causal)[:, 0]
        seen = torch.zeros(2, T, T, dtype=torch.bool).scatter(-1, picked, True) & ~causal
        assert torch.equal(~hidden, seen), T
        assert int(seen.sum(-1).max()) == min(T, 3)


SMALL = replace(ALL_PRESETS["deepseek-v3.2"], B=2, T=7, d=24, h=2, L=3, V=31, T_max=64, ff_dim=16, experts=4, top_k=2,
                expert_dim=6, dense_layers=(0,), latent_dim=6, q_latent_dim=5, rope_dim=4, nope_dim=3, value_dim=5,
                index_heads=3, index_dim=6, index_topk=4)


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_saved_bytes_with_an_indexer_equal_autograd_on_cpu(dtype):
    """The indexer runs without gradients: what it adds to the saved bytes is the (B, 1, T, T) mask of the keys each
    query may not see, which the masking keeps."""
    torch.manual_seed(0)
    model = GPT(SMALL).to({"fp32": torch.float32, "bf16": torch.bfloat16}[dtype])
    assert saved_bytes_of(model, torch.randint(0, SMALL.V, (SMALL.B, SMALL.T))) == trace(SMALL, dtype).saved_bytes


def test_a_decode_step_over_the_three_caches_gives_the_full_forwards_last_logits():
    """Real CPU tensors: the latents, rotary keys and indexer keys of a pass over T + 1 tokens, cut to the first T,
    are the cache; one decode step of the last token gives the full pass's last logits (its indexer picking among the
    T + 1 keys, T + 1 > T_k)."""
    cfg = replace(SMALL, experts=None, top_k=None, expert_dim=None, shared_experts=0, dense_layers=())
    torch.manual_seed(0)
    model = GPT(cfg).eval()
    idx = torch.randint(0, cfg.V, (cfg.B, cfg.T + 1))
    kept: dict[tuple[int, str], torch.Tensor] = {}
    for i, block in enumerate(model.blocks):
        for name, module in (("kv_a_norm", block.attn.kv_a_norm), ("k_rot", block.attn.k_rot),
                             ("index", block.attn.indexer.k)):
            module.register_forward_hook(lambda _m, _i, out, key=(i, name): kept.__setitem__(key, out))
    with torch.no_grad():
        full, _ = model(idx)
        past = [(kept[i, "kv_a_norm"][:, None, :cfg.T], kept[i, "k_rot"][:, :, :cfg.T], kept[i, "index"][:, :cfg.T])
                for i in range(cfg.L)]
        step = model.decode(idx[:, cfg.T:], past)
    torch.testing.assert_close(step[:, 0], full[:, -1], rtol=1e-5, atol=1e-5)


def test_inference_reads_the_indexer_keys_and_a_sparse_kernel_line_says_what_it_skips():
    r = infer(SMALL)
    lines = {x.key: x for x in r.lines}
    per_token = kv_cache_lines(SMALL, "fp32")[1].value // 2  # at 16 bits
    assert lines["infer/kv_cache"].value == SMALL.B * SMALL.T * per_token
    assert "indexer key" in lines["infer/decode_cache_write"].label
    b = {x.key: x for x in budget(SMALL).lines}
    assert b["flops/sparse_attention"].value == 2 * SMALL.L * min(SMALL.T, 4) * SMALL.h * (3 + 4 + 5)
    assert b["flops/sparse_indexer"].value == 2 * SMALL.L * SMALL.T * 3 * (6 + 1)


@pytest.mark.parametrize("change, message", [
    ({"indexer_types": ["full", "shared", "full"], "num_hidden_layers": 3}, "blocks 1 reuse an earlier block's top-k"),
    ({"index_topk_freq": 2, "num_hidden_layers": 4}, "reuse an earlier block's top-k keys"),
    ({"index_head_dim": 2, "qk_rope_head_dim": 4}, "index_head_dim=2 is below qk_rope_head_dim=4"),
    ({"layer_types": ["full_attention"]}, "every block is indexed_attention"),
    ({"index_topk": 0}, "index_topk=0"),
])
def test_a_file_no_part_builds_is_one_line(change, message):
    doc = {**random_doc(random.Random("refuse"), "glm_moe_dsa"), "num_hidden_layers": 1, **change}
    with pytest.raises(HFConfigError, match=message):
        read_hf(doc)


def test_indexed_attention_in_another_family_is_refused_by_name():
    doc = {"model_type": "llama", "num_hidden_layers": 2, "layer_types": ["indexed_attention"] * 2}
    with pytest.raises(HFConfigError, match="DeepSeek sparse attention is deepseek_v32's"):
        read_hf(doc)


def test_the_command_line_prints_the_preset_with_its_indexer(capsys):
    code, out, err = run_cli(["--preset", "deepseek-v3.2", "--table", "kv", "--dtype", "bf16"], capsys)
    assert code == 0 and not err and "Traceback" not in out
    assert "85,888" in out and "indexer" in out


def test_the_fields_refuse_an_indexer_without_a_query_latent():
    with pytest.raises(ValueError, match="reads the queries' latent"):
        replace(SMALL, q_latent_dim=None)
    with pytest.raises(ValueError, match="needs T_k"):
        replace(SMALL, index_topk=None)
