"""Nemotron-H (nemotron_h) against transformers 5.24's NemotronHForCausalLM: its layers of one operation each, x +
op(norm(x)) (Mamba 2, attention without RoPE, a ReLU² MLP, a mixture of ReLU² experts), read in pairs as the lesson's
blocks (a mixer layer and the MLP layer after it, `model.hf._nemotron_pairs`). On random small files: N on the meta
device, the bytes of its real cache after a prefill (K and V of the attention layers, the conv and SSM states of the
Mamba 2 layers), the forward FLOPs of its eager CPU pass (eager attention, eager experts); saved bytes of the meta pass
equal autograd's on real CPU tensors; the class defaults' N; files it cannot pair refused in one line.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace

import pytest
import torch
from transformers import NemotronHConfig

from model import GPT, budget, trace
from model.config import from_hf, read_hf
from model.passes import saved_bytes_of
from test_moe import _module as moe_module  # eager experts on the CPU, batched matmuls on the meta device
from test_window import measured, reference

MIXERS = {"M": "linear_attention", "*": "full_attention"}
MLPS = {"-": "mlp", "E": "moe"}


def written(**fields: object) -> dict:
    """The config.json NemotronHConfig writes for `fields` (every key it has but time_step_limit, whose infinity its
    JSON writes as an object its class does not read back)."""
    doc = json.loads(NemotronHConfig(**fields).to_json_string())
    return {**{k: v for k, v in doc.items() if k != "time_step_limit"}, "model_type": "nemotron_h"}


def pattern(rng: random.Random) -> str:
    """2 to 4 pairs of a mixer (M: Mamba 2, *: attention) and an MLP (-: dense, E: experts); one Mamba 2 pair and one
    attention pair at least, the Mamba 2 pairs' MLPs of one kind and the attention pairs' of one kind (the NoPE blocks'
    rule)."""
    mlp = {"M": rng.choice("-E"), "*": rng.choice("-E")}
    pairs = [rng.choice("M*") for _ in range(rng.randrange(2, 5))]
    first, second = rng.sample(range(len(pairs)), 2)
    pairs[first], pairs[second] = "M", "*"
    return "".join(m + mlp[m] for m in pairs)


def nemotron_doc(rng: random.Random) -> dict:
    """A tiny Nemotron-H: heads, widths, the tie and the biases drawn; its layers as layers_block_type or as the legacy
    hybrid_override_pattern; Mamba 2's sizes; E ≥ 2 experts, k, their width and the shared MLP's."""
    h_kv = rng.choice([1, 2])
    g = rng.randrange(1, 3)
    E = rng.randrange(2, 6)
    letters = pattern(rng)
    fields = dict(vocab_size=rng.randrange(8, 60), hidden_size=rng.randrange(4, 24), num_attention_heads=h_kv *
                  rng.choice([1, 2]), num_key_value_heads=h_kv, head_dim=2 * rng.randrange(1, 5),
                  max_position_embeddings=256, tie_word_embeddings=rng.random() < 0.3,
                  intermediate_size=rng.randrange(2, 30), mamba_num_heads=g * rng.randrange(1, 4),
                  mamba_head_dim=rng.randrange(1, 6), ssm_state_size=rng.randrange(1, 9), n_groups=g,
                  conv_kernel=rng.randrange(2, 5), chunk_size=rng.choice([4, 8, 16]),
                  use_conv_bias=rng.random() < 0.7, use_bias=rng.random() < 0.3, n_routed_experts=E,
                  num_experts_per_tok=rng.randrange(1, E + 1), moe_intermediate_size=rng.randrange(2, 20),
                  moe_shared_expert_intermediate_size=rng.randrange(2, 20))
    if rng.random() < 0.5:
        fields["hybrid_override_pattern"] = letters
    else:
        fields["layers_block_type"] = [{**MIXERS, **MLPS}[c] for c in letters]
    return written(**fields)


@pytest.mark.parametrize("seed", range(8))
def test_random_files_match_transformers_parameters_cache_and_flops(seed):
    """N, the whole cache after a prefill (K and V, conv and SSM states, fp32) and the forward FLOPs (T across the
    chunks of Q) equal transformers'."""
    rng = random.Random(f"nemotron_h-{seed}")
    doc = nemotron_doc(rng)
    B, T = rng.randrange(1, 3), rng.choice([1, 5, 16, 21, 40])
    cfg = from_hf(doc, B=B, T=T)
    letters = NemotronHConfig(**{k: v for k, v in doc.items() if k != "model_type"}).hybrid_override_pattern
    assert cfg.L == len(letters) // 2 and cfg.L_ssm == letters[::2].count("M") >= 1 and not cfg.tie
    assert cfg.nope_layers == tuple(i for i, c in enumerate(letters[::2]) if c == "*")
    N, kv, flops = measured(cfg)
    ref_N, ref_kv, ref_flops = reference(doc, B, T, build=moe_module)
    assert (N, kv) == (ref_N, ref_kv), doc
    assert flops == pytest.approx(ref_flops, rel=1e-12), doc


def test_the_class_defaults_are_read_exactly():
    """NemotronHConfig's defaults (its layers linear_attention, moe, full_attention, mlp: two blocks here) give
    transformers' N on the meta device, 1,968,355,712 (the class's 4-layer stand-in, not Nemotron 3 Nano's 52 layers
    of width 2,688: no preset)."""
    doc = written()
    cfg = from_hf(doc)
    assert (cfg.L, cfg.mamba_layers, cfg.nope_layers, cfg.mlp_kinds) == (2, (0,), (1,), ("moe", "dense"))
    assert budget(cfg).params_exact == sum(p.numel() for p in moe_module(doc, "meta").parameters()) == 1_968_355_712


def test_the_cli_prints_transformers_cache_bytes(tmp_path):
    """python -m model --hf-config on a Nemotron-H file: memory/kv_cache at fp32 is the bytes of transformers' cache
    after a prefill of the same B and T."""
    doc = nemotron_doc(random.Random("nemotron_h-cli"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    run = subprocess.run([sys.executable, "-m", "model", "--hf-config", str(path), "--B", "2", "--T", "21", "--json"],
                         capture_output=True, text=True, check=True)
    kv = {x["key"]: x["value"] for x in json.loads(run.stdout)["kv"]}
    assert kv["memory/kv_cache"] == reference(doc, 2, 21, build=moe_module)[1]


@pytest.mark.parametrize("attention", ["eager", "fused"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_saved_bytes_equal_autograd_on_real_cpu_tensors(attention, dtype):
    """What a pass keeps for backward (Mamba 2's chunked scan, the ReLU² experts, NoPE attention): the meta pass's
    bytes are autograd's on real CPU tensors."""
    doc = written(vocab_size=40, hidden_size=12, num_attention_heads=2, num_key_value_heads=1, head_dim=4,
                  intermediate_size=10, mamba_num_heads=2, mamba_head_dim=3, ssm_state_size=4, n_groups=1,
                  conv_kernel=3, chunk_size=4, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=6,
                  moe_shared_expert_intermediate_size=5, hybrid_override_pattern="ME*-*-")
    cfg = replace(from_hf(doc, B=2, T=9), attention=attention)
    torch.manual_seed(0)
    m = GPT(cfg).to({"fp32": torch.float32, "bf16": torch.bfloat16}[dtype])
    assert saved_bytes_of(m, torch.randint(0, cfg.V, (cfg.B, cfg.T))) == trace(cfg, dtype).saved_bytes


@pytest.mark.parametrize("change, message", [
    ({"hybrid_override_pattern": "M*E-"}, "layer 0 of M\\*E- is linear_attention, followed by full_attention"),
    ({"hybrid_override_pattern": "EM*-"}, "layer 0 of EM\\*- is moe: Nemotron-H's layers are read here in pairs"),
    ({"hybrid_override_pattern": "ME*"}, "followed by no layer"),
    ({"hybrid_override_pattern": "MX"}, "hybrid_override_pattern='MX' must be a word of the letters"),
    ({"hybrid_override_pattern": "M-ME*-"}, "Mamba 2 blocks with dense MLPs and with a mixture of experts"),
    ({"hybrid_override_pattern": "MEME"}, "a model of Mamba 2 blocks alone"),
    ({"hybrid_override_pattern": "ME*-*E"}, "nope_layers=\\[1, 2\\] lists dense and MoE blocks alike"),
    ({"moe_latent_size": 4}, "moe_latent_size=4 projects each token"),
    ({"mlp_bias": True}, "mlp_bias=true biases the MLP's"),
    ({"mlp_hidden_act": "silu"}, "mlp_hidden_act='silu'"),
    ({"n_routed_experts": 3, "n_group": 3}, "n_routed_experts=3 in n_group=3 groups"),
    ({"chunk_size": 0}, "chunk_size=0"),
])
def test_bad_files_are_refused_in_one_line(change, message):
    base = written(hidden_size=16, num_attention_heads=2, num_key_value_heads=1, mamba_num_heads=4, n_groups=2)
    doc = {**{k: v for k, v in base.items() if k != "layers_block_type"}, **change}
    if "hybrid_override_pattern" not in change:
        doc["layers_block_type"] = base["layers_block_type"]
    with pytest.raises(ValueError, match=message) as e:
        read_hf(doc)
    assert "\n" not in str(e.value)


def test_the_notes_say_what_the_reading_did():
    """The pairs, NoPE, the untied head, the pattern beside a list and the unread num_hidden_layers, each in a note."""
    doc = {**written(tie_word_embeddings=True), "hybrid_override_pattern": "ME*-", "num_hidden_layers": 52}
    notes = "\n".join(read_hf(doc).notes)
    for words in ("its 4 layers (ME*-) read as 2 blocks", "no RoPE: NemotronHAttention rotates nothing",
                  "tie_word_embeddings = true, but NemotronHForCausalLM ties no weight",
                  "hybrid_override_pattern = 'ME*-' is not read", "num_hidden_layers = 52 is not read"):
        assert words in notes
