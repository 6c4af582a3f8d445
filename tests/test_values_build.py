"""Building a values pass's model (model.values.build): GPT-2's initialisation, drawn in parallel from independent
streams whose numbers do not depend on the thread count; the random stream is pinned here on purpose."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from model import Config
from model import values as mv
from model.gpt import GPT, init_weights

TINY = Config(B=1, T=32, d=64, h=4, L=2, V=50_257, T_max=64)  # W_te: 3.2 million numbers, 4 streams
TEXT = "The cat sat on the mat because it was warm, and the dog watched it from the door all afternoon."


def weights(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_the_numbers_do_not_depend_on_the_thread_count():
    one, three = weights(mv.build(TINY, 5, threads=1)), weights(mv.build(TINY, 5, threads=3))
    assert one.keys() == three.keys() and all(torch.equal(one[k], three[k]) for k in one)


def test_every_stream_its_own():
    model = mv.build(TINY, 0)
    assert model.head.weight is model.wte.weight  # tied after to_empty
    flat = model.wte.weight.detach().view(-1)
    chunks = flat[: 3 * mv.DRAW_CHUNK].view(3, mv.DRAW_CHUNK)
    assert not torch.equal(chunks[0], chunks[1]) and not torch.equal(chunks[1], chunks[2])
    assert abs(torch.corrcoef(chunks).fill_diagonal_(0)).max() < 0.01  # independent streams, not shifted copies
    assert flat.std().item() == pytest.approx(0.02, rel=0.01) and abs(flat.mean().item()) < 1e-4


def kind(p: torch.Tensor) -> str:
    return "zeros" if not p.any() else "ones" if torch.all(p == 1) else f"N(0, {p.std().item():.2f})"


def test_the_same_rule_as_the_model_on_the_cpu():
    """Which tensors get N(0, σ), zeros and ones is `model.gpt.init_weights`'s; only the streams differ."""
    with torch.random.fork_rng(devices=[]):
        plain = GPT(TINY)
        plain.apply(init_weights)
    expected = {name: kind(p) for name, p in plain.named_parameters()}
    assert {name: kind(p) for name, p in mv.build(TINY, 0).named_parameters()} == expected
    assert set(expected.values()) == {"zeros", "ones", "N(0, 0.02)"}


def test_a_draw_with_its_own_generator_and_other_calls_pass_through():
    t = torch.empty(10)
    with mv.ParallelNormal(0):
        nn.init.normal_(t, 0.0, 1.0, generator=torch.Generator().manual_seed(3))
        ones = torch.ones(3) * 2
    assert torch.equal(t, torch.empty(10).normal_(0.0, 1.0, generator=torch.Generator().manual_seed(3)))
    assert ones.tolist() == [2.0, 2.0, 2.0]


def test_the_random_stream_is_pinned():
    """Changing how the weights are drawn changes every number of a pass: do it on purpose and update these."""
    model = mv.build(TINY, 0)
    assert model.wte.weight.detach()[0, :3].tolist() == pytest.approx([0.036239270, -0.004522116, -0.016485075],
                                                                       rel=1e-6)
    second_stream = model.wte.weight.detach().view(-1)[mv.DRAW_CHUNK:mv.DRAW_CHUNK + 2]
    assert second_stream.tolist() == pytest.approx([-0.020550568, 0.024895942], rel=1e-6)
    mv._run.cache_clear()
    assert mv.values(TINY, TEXT, seed=0).loss == pytest.approx(10.875080, abs=1e-5)
