"""model.gpt: the real module. Published parameter counts on the meta device; a real forward pass on CPU."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from model import GPT, PRESETS, Config

PUBLISHED = {"gpt2-small": 124_439_808, "gpt2-medium": 354_823_168, "gpt2-large": 774_030_080,
             "gpt2-xl": 1_557_611_200}
SMALL = Config(B=2, T=12, d=32, h=4, L=2, V=101, T_max=16)


def meta_gpt(cfg: Config) -> GPT:
    with torch.device("meta"):
        return GPT(cfg)


@pytest.fixture(scope="module")
def small() -> GPT:
    torch.manual_seed(0)
    return GPT(SMALL).eval()


def ids(cfg: Config, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, cfg.V, (cfg.B, cfg.T), generator=torch.Generator().manual_seed(seed))


# --- structure and parameter counts ----------------------------------------------------------------------

@pytest.mark.parametrize("name", PUBLISHED)
def test_published_gpt2_counts_full_depth_on_meta(name):
    model = meta_gpt(PRESETS[name])
    assert len(model.blocks) == PRESETS[name].L
    assert model.num_params() == PUBLISHED[name]


def test_meta_model_has_no_storage():
    model = meta_gpt(PRESETS["gpt3-175b"])
    assert model.wte.weight.device.type == "meta"
    assert model.num_params() == 174_604_259_328


def test_untied_adds_exactly_V_times_d():
    for cfg in (PRESETS["gpt2-small"], SMALL, Config(B=1, T=1, d=8, h=8, L=1, V=3, T_max=1)):
        untied = replace(cfg, tie=False)
        assert meta_gpt(untied).num_params() - meta_gpt(cfg).num_params() == cfg.V * cfg.d


def test_num_params_counts_every_tensor_once():
    for cfg in (SMALL, replace(SMALL, tie=False)):
        model = meta_gpt(cfg)
        unique = {id(p): p.numel() for m in model.modules() for p in m.parameters(recurse=False)}
        assert model.num_params() == sum(unique.values())


def test_layer_shapes():
    model = meta_gpt(SMALL)
    d, V = SMALL.d, SMALL.V
    assert model.wte.weight.shape == (V, d) and model.wpe.weight.shape == (SMALL.T_max, d)
    blk = model.blocks[0]
    assert blk.attn.qkv.weight.shape == (3 * d, d) and blk.attn.qkv.bias.shape == (3 * d,)
    assert blk.attn.proj.weight.shape == (d, d) and blk.attn.proj.bias.shape == (d,)
    assert blk.mlp.fc.weight.shape == (4 * d, d) and blk.mlp.proj.weight.shape == (d, 4 * d)
    assert blk.mlp.gelu.approximate == "tanh"
    assert model.head.weight.shape == (V, d) and model.head.bias is None
    assert model.ln_f.weight.shape == (d,)


def test_depth_builds_only_the_first_blocks():
    with torch.device("meta"):
        assert len(GPT(SMALL, depth=1).blocks) == 1
    assert len(meta_gpt(SMALL).blocks) == SMALL.L


# --- head tying -------------------------------------------------------------------------------------------

def test_tied_head_shares_storage_with_wte(small):
    assert small.head.weight is small.wte.weight
    assert small.head.weight.data_ptr() == small.wte.weight.data_ptr()


def test_untied_head_has_its_own_storage():
    torch.manual_seed(0)
    model = GPT(replace(SMALL, tie=False))
    assert model.head.weight.data_ptr() != model.wte.weight.data_ptr()
    assert not torch.equal(model.head.weight, model.wte.weight)


def test_init_is_gpt2s():
    torch.manual_seed(0)
    model = GPT(Config(B=1, T=4, d=256, h=4, L=1, V=1000, T_max=64))
    assert abs(model.wte.weight.std().item() - 0.02) < 0.001
    assert abs(model.blocks[0].mlp.fc.weight.std().item() - 0.02) < 0.001
    assert torch.count_nonzero(model.blocks[0].attn.qkv.bias) == 0
    assert torch.all(model.ln_f.weight == 1)


# --- a real forward pass ----------------------------------------------------------------------------------

def test_logits_shape_and_initial_loss_near_ln_V(small):
    with torch.no_grad():
        logits, loss = small(ids(SMALL))
    assert logits.shape == (SMALL.B, SMALL.T, SMALL.V) and logits.dtype == torch.float32
    assert loss.shape == ()
    assert abs(loss.item() - math.log(SMALL.V)) < 0.5


def test_loss_is_cross_entropy_of_next_token(small):
    idx = ids(SMALL)
    with torch.no_grad():
        logits, loss = small(idx)
    logp = torch.log_softmax(logits[:, :-1], dim=-1)  # position t predicts token t + 1
    manual = -logp.gather(-1, idx[:, 1:, None]).mean()
    assert torch.allclose(loss, manual, atol=1e-6)
    shifted_wrong = F.cross_entropy(logits.reshape(-1, SMALL.V), idx.reshape(-1))
    assert not torch.allclose(loss, shifted_wrong)  # the shift matters


def test_no_loss_when_T_is_1(small):
    logits, loss = small(torch.tensor([[5], [7]]))
    assert logits.shape == (2, 1, SMALL.V) and loss is None


def test_causal_future_tokens_do_not_change_earlier_logits(small):
    idx = ids(SMALL)
    changed = idx.clone()
    changed[:, 7] = (changed[:, 7] + 1) % SMALL.V
    with torch.no_grad():
        a, _ = small(idx)
        b, _ = small(changed)
    assert torch.equal(a[:, :7], b[:, :7])
    assert not torch.allclose(a[:, 7:], b[:, 7:])  # and later ones do change


def test_position_matters(small):
    idx = torch.full((1, 6), 3)
    with torch.no_grad():
        logits, _ = small(idx)
    assert not torch.allclose(logits[0, 0], logits[0, 5])  # same token, different positions


def test_attention_is_masked_and_rows_sum_to_one(small):
    seen = {}
    hooks = [getattr(small.blocks[0].attn, n).register_forward_hook(lambda m, i, o, n=n: seen.__setitem__(n, o))
             for n in ("scores", "masked", "attn")]
    try:
        with torch.no_grad():
            small(ids(SMALL))
    finally:
        for hk in hooks:
            hk.remove()
    T = SMALL.T
    above = torch.ones(T, T, dtype=torch.bool).triu(1)
    assert seen["attn"].shape == (SMALL.B, SMALL.h, T, T)
    assert torch.all(seen["masked"][..., above] == float("-inf"))
    assert torch.equal(seen["masked"][..., ~above], seen["scores"][..., ~above])
    assert torch.all(seen["attn"][..., above] == 0)
    assert torch.allclose(seen["attn"].sum(-1), torch.ones(SMALL.B, SMALL.h, T))


def test_backward_reaches_every_parameter():
    torch.manual_seed(0)
    model = GPT(SMALL)
    _, loss = model(ids(SMALL))
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    assert model.blocks[0].attn.qkv.weight.grad.abs().sum() > 0
    assert torch.count_nonzero(model.wpe.weight.grad[SMALL.T:]) == 0  # positions >= T are unused
    assert torch.count_nonzero(model.wpe.weight.grad[:SMALL.T]) > 0


def test_a_few_steps_lower_the_loss():
    torch.manual_seed(0)
    model = GPT(SMALL)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    idx = ids(SMALL)
    first = None
    for _ in range(10):
        _, loss = model(idx)
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < first - 0.5


def test_forward_rejects_T_beyond_T_max(small):
    with pytest.raises(ValueError, match="T=17 exceeds T_max=16"):
        small(torch.zeros(1, 17, dtype=torch.long))
