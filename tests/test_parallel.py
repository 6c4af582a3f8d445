"""A parallel block (`model.parts.parallel`) against transformers: Falcon's parallel block with its weights copied
gives the same logits; random tiny Cohere and Falcon files have transformers' parameters, real cache bytes after a
prefill and eager forward FLOPs; Command R's preset is CohereForCausalLM's count; saved bytes equal autograd's; the
command line and the reports name it."""
from __future__ import annotations

import json
import logging
import random
from dataclasses import replace

import pytest
import torch
from transformers import AutoModelForCausalLM, CohereConfig, FalconConfig

from model import GPT, PRESETS, budget, trace
from model.config import TABLE_PRESETS, Config, from_hf
from model.memory import kv_cache_lines
from model.passes import saved_bytes_of
from model.report import recipe_text
from pagetools import run_cli
from test_window import reference

logging.getLogger("transformers").setLevel(logging.ERROR)
CLASSES = {"cohere": CohereConfig, "falcon": FalconConfig}


def build(doc: dict, device: str) -> torch.nn.Module:
    """transformers' eager module of `doc` on `device`."""
    config = CLASSES[doc["model_type"]](**{k: v for k, v in doc.items() if k != "model_type"})
    with torch.device(device):
        return AutoModelForCausalLM.from_config(config, attn_implementation="eager")


def cohere_doc(rng: random.Random) -> tuple[dict, Config]:
    """A tiny Cohere file (one LayerNorm without bias per block, parallel; SwiGLU; no biases) and our Config of it."""
    h_kv = rng.choice([1, 2])
    h, L, d_head = h_kv * rng.choice([1, 2]), rng.randrange(1, 4), 2 * rng.randrange(1, 4)
    doc = {"model_type": "cohere", "vocab_size": rng.randrange(8, 50), "hidden_size": h * d_head,
           "intermediate_size": rng.randrange(4, 30), "num_hidden_layers": L, "num_attention_heads": h,
           "num_key_value_heads": h_kv, "max_position_embeddings": 64, "tie_word_embeddings": True}
    cfg = Config(B=1, T=1, d=h * d_head, h=h, L=L, V=doc["vocab_size"], T_max=64, norm="layernorm", positions="rope",
                 mlp="swiglu", ff_dim=doc["intermediate_size"], kv_heads=h_kv, bias="none", attention="eager",
                 parallel=True)
    return doc, cfg


def falcon_doc(rng: random.Random) -> tuple[dict, Config]:
    """A tiny Falcon file (parallel_attn, one LayerNorm, biases everywhere, GELU at 4d, one K/V head) and our Config."""
    h, L, d_head = rng.choice([1, 2, 4]), rng.randrange(1, 4), 2 * rng.randrange(1, 4)
    doc = {"model_type": "falcon", "vocab_size": rng.randrange(8, 50), "hidden_size": h * d_head,
           "num_hidden_layers": L, "num_attention_heads": h, "multi_query": True, "parallel_attn": True,
           "new_decoder_architecture": False, "bias": True, "alibi": False, "activation": "gelu_pytorch_tanh",
           "max_position_embeddings": 64}
    cfg = Config(B=1, T=1, d=h * d_head, h=h, L=L, V=doc["vocab_size"], T_max=64, positions="rope", kv_heads=1,
                 attention="eager", parallel=True)
    return doc, cfg


SWEEP = [(kind, i) for kind in ("cohere", "falcon") for i in range(4)]


@pytest.mark.parametrize("kind, seed", SWEEP, ids=[f"{k}-{i}" for k, i in SWEEP])
def test_random_files_match_transformers_parameters_cache_and_flops(kind, seed):
    rng = random.Random(f"parallel-{kind}-{seed}")
    doc, cfg = (cohere_doc if kind == "cohere" else falcon_doc)(rng)
    B, T = rng.randrange(1, 4), rng.randrange(1, 12)
    cfg = replace(cfg, B=B, T=T)
    b = budget(cfg)
    expected = reference(doc, B, T, build=build)
    assert (b.params_exact, kv_cache_lines(cfg, "fp32")[0].value, b.flops_fwd_measured_per_token * B * T) == expected
    if kind == "cohere":  # the reader gives the same model from the file (transformers runs it fused by default)
        assert from_hf(doc, B=B, T=T) == replace(cfg, attention="fused")


FALCON = {"model_type": "falcon", "vocab_size": 40, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
          "multi_query": True, "parallel_attn": True, "new_decoder_architecture": False, "bias": True, "alibi": False,
          "activation": "gelu_pytorch_tanh", "max_position_embeddings": 64, "layer_norm_epsilon": 1e-5}


def test_falcons_logits_equal_transformers():
    """Weights copied: the same logits through the parallel block, and different ones wired as the lesson's block."""
    torch.manual_seed(0)
    ref = build(FALCON, "cpu").eval()
    cfg = Config(B=2, T=10, d=32, h=4, L=2, V=40, T_max=64, positions="rope", kv_heads=1, attention="eager",
                 parallel=True)
    ours = GPT(cfg).eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.3)
        ours.wte.weight.copy_(ref.transformer.word_embeddings.weight)
        ours.ln_f.load_state_dict(ref.transformer.ln_f.state_dict())
        for block, layer in zip(ours.blocks, ref.transformer.h):
            a, m = layer.self_attention, layer.mlp
            block.ln_1.load_state_dict(layer.input_layernorm.state_dict())
            block.attn.qkv.load_state_dict(a.query_key_value.state_dict())  # q's h heads, then k, then v
            block.attn.proj.load_state_dict(a.dense.state_dict())
            block.mlp.fc.load_state_dict(m.dense_h_to_4h.state_dict())
            block.mlp.proj.load_state_dict(m.dense_4h_to_h.state_dict())
        idx = torch.randint(0, 40, (2, 10))
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-5, rtol=1e-5)
        assert "ln_2" not in dict(ours.named_modules())  # one norm per block
        sequential = GPT(replace(cfg, parallel=False))
        sequential.load_state_dict(ours.state_dict(), strict=False)  # its ln_2 left at gain 1, bias 0
        assert not torch.allclose(sequential(idx)[0], expected, atol=1e-2)


def test_command_r_is_cohere_for_causal_lms_count():
    """Command R (c4ai-command-r-v01's config.json: d 8,192, 64 heads, 40 blocks, d_ff 22,528, V 256,000, tied):
    transformers' module on the meta device, and the one norm a block less than the lesson's wiring."""
    cfg = TABLE_PRESETS["command-r"]
    doc = {"model_type": "cohere", "vocab_size": 256_000, "hidden_size": 8_192, "intermediate_size": 22_528,
           "num_hidden_layers": 40, "num_attention_heads": 64, "num_key_value_heads": 64,
           "max_position_embeddings": 8_192, "tie_word_embeddings": True, "logit_scale": 0.0625}
    n = sum(p.numel() for p in build(doc, "meta").parameters())
    assert budget(cfg).params_exact == n == 34_980_831_232
    assert budget(replace(cfg, parallel=False)).params_exact == n + 40 * 8_192  # a second LayerNorm gain per block


LIKE_FALCON = Config(B=2, T=7, d=16, h=4, L=2, V=11, positions="rope", kv_heads=1, parallel=True, attention="eager")


@pytest.mark.parametrize("cfg", [LIKE_FALCON, replace(LIKE_FALCON, attention="fused", norm="rmsnorm", bias="none")],
                         ids=["eager", "fused-rmsnorm"])
def test_saved_bytes_equal_autograd_on_cpu(cfg):
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes


def test_the_trace_the_reports_and_the_cli_name_it(tmp_path, capsys):
    rows = {r.local: r for r in trace(LIKE_FALCON).rows}
    assert "ln_2" not in rows and "both read it" in rows["ln_1"].label and "ln_1(x)" in rows["resid_2"].label
    assert "parallel attention and MLP (one norm per block)" in recipe_text(LIKE_FALCON)
    status, out, err = run_cli(["--preset", "command-r", "--json"], capsys)
    doc = json.loads(out)
    assert status == 0 and doc["budget"]["params_exact"] == 34_980_831_232 and doc["config"]["parallel"] is True
    status, out, err = run_cli(["--preset", "llama3-8b", "--parallel", "--json"], capsys)
    llama = PRESETS["llama3-8b"]  # its 32 blocks' second RMSNorm gain (d = 4,096) gone
    assert status == 0 and json.loads(out)["budget"]["params_exact"] == budget(llama).params_exact - 32 * 4_096


def test_gpt_neox_logits_equal_transformers_and_its_norm_each_is_the_lesson_blocks_count():
    """GPT-NeoX's parallel block with a norm each (`model.parts.parallel_norms`), weights copied from GPTNeoXForCausalLM
    (its query_key_value's rows head by head, [q, k, v] of each, reordered to q's heads, then k's, then v's): the same
    logits, RoPE on a quarter of each head; wired as the lesson's block, other logits; two norms a block, so the same N
    as the lesson's block."""
    from transformers import GPTNeoXConfig

    h, d_head, L = 4, 8, 2
    config = GPTNeoXConfig(vocab_size=40, hidden_size=h * d_head, num_hidden_layers=L, num_attention_heads=h,
                           intermediate_size=48, max_position_embeddings=64, hidden_act="gelu_new",
                           use_parallel_residual=True, attention_bias=True)
    torch.manual_seed(0)
    ref = AutoModelForCausalLM.from_config(config, attn_implementation="eager").eval()
    cfg = from_hf({"model_type": "gpt_neox", **config.to_dict()}, B=2, T=10)
    assert (cfg.parallel_norms, cfg.rotary_dim, cfg.bias, cfg.mlp) == (True, 2, "all", "gelu")
    ours = GPT(cfg).eval()
    order = torch.tensor([i * 3 * d_head + part * d_head + j for part in range(3) for i in range(h) for j in range(d_head)])
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.3)
        ours.wte.weight.copy_(ref.gpt_neox.embed_in.weight)
        ours.head.weight.copy_(ref.lm_head.weight)
        ours.ln_f.load_state_dict(ref.gpt_neox.final_layer_norm.state_dict())
        for block, layer in zip(ours.blocks, ref.gpt_neox.layers):
            a, m = layer.attention, layer.mlp
            block.ln_1.load_state_dict(layer.input_layernorm.state_dict())
            block.ln_2.load_state_dict(layer.post_attention_layernorm.state_dict())
            block.attn.qkv.weight.copy_(a.query_key_value.weight[order])
            block.attn.qkv.bias.copy_(a.query_key_value.bias[order])
            block.attn.proj.load_state_dict(a.dense.state_dict())
            block.mlp.fc.load_state_dict(m.dense_h_to_4h.state_dict())
            block.mlp.proj.load_state_dict(m.dense_4h_to_h.state_dict())
        idx = torch.randint(0, 40, (2, 10))
        expected = ref(input_ids=idx).logits
        torch.testing.assert_close(ours(idx)[0], expected, atol=1e-4, rtol=1e-4)
        sequential = GPT(replace(cfg, parallel_norms=False))
        sequential.load_state_dict(ours.state_dict())  # the same parameters, wired as the lesson's block
        assert not torch.allclose(sequential(idx)[0], expected, atol=1e-2)
    assert budget(cfg).params_exact == sum(p.numel() for p in ref.parameters())
    rows = {r.local: r for r in trace(cfg).rows}
    assert "not of x + attention" in rows["ln_2"].label and "ln_2(x)" in rows["resid_2"].label
    assert "parallel attention and MLP (a norm each)" in recipe_text(cfg)
    torch.manual_seed(0)
    assert saved_bytes_of(GPT(cfg), torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg).saved_bytes
    with pytest.raises(ValueError, match="parallel_norms and parallel each wire the block their own way"):
        replace(cfg, parallel=True)


def test_phi_logits_equal_transformers_with_the_heads_bias():
    """Phi (phi): one LayerNorm read by attention and the MLP, RoPE on half of each head, biases everywhere and a
    bias (V) on the head (`model.parts.head`'s head_bias), weights copied from PhiForCausalLM: the same logits; the
    head's bias is V parameters in N, tied or not, and a non-matmul step of −2V in the FLOPs."""
    from transformers import PhiConfig

    config = PhiConfig(vocab_size=40, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
                       max_position_embeddings=64)
    torch.manual_seed(0)
    ref = AutoModelForCausalLM.from_config(config, attn_implementation="eager").eval()
    cfg = from_hf({"model_type": "phi", **config.to_dict()}, B=2, T=10)
    assert (cfg.parallel, cfg.head_bias, cfg.rotary_dim, cfg.bias) == (True, True, 4, "all")
    ours = GPT(cfg).eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.normal_(0, 0.3)
        ours.wte.weight.copy_(ref.model.embed_tokens.weight)
        ours.ln_f.load_state_dict(ref.model.final_layernorm.state_dict())
        ours.head.load_state_dict(ref.lm_head.state_dict())
        for block, layer in zip(ours.blocks, ref.model.layers):
            a, m = layer.self_attn, layer.mlp
            block.ln_1.load_state_dict(layer.input_layernorm.state_dict())
            block.attn.qkv.weight.copy_(torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]))
            block.attn.qkv.bias.copy_(torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias]))
            block.attn.proj.load_state_dict(a.dense.state_dict())
            block.mlp.fc.load_state_dict(m.fc1.state_dict())
            block.mlp.proj.load_state_dict(m.fc2.state_dict())
        idx = torch.randint(0, 40, (2, 10))
        torch.testing.assert_close(ours(idx)[0], ref(input_ids=idx).logits, atol=1e-4, rtol=1e-4)
    assert budget(cfg).params_exact == sum(p.numel() for p in ref.parameters())
    for tie in (True, False):
        with_bias, without = budget(replace(cfg, tie=tie)), budget(replace(cfg, tie=tie, head_bias=False))
        assert with_bias.params_exact - without.params_exact == cfg.V
        assert with_bias.flops_fwd_measured_per_token == without.flops_fwd_measured_per_token  # an add, no matmul
    lines = {x.key: x for x in budget(cfg).lines}
    assert lines["params/head"].label == "head: a separate (d, V) matrix and its bias (V)"
    assert "a bias on the logits" in recipe_text(cfg)
