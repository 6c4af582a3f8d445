"""From N to a training run: published reference points, memory rules, true formulas, validation, the CLI table."""
from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from model import BOUNDS, PRESETS, Config, budget, trace
from pagetools import run_cli
from model.formula import matches
from model import GPT
from model.peak import step_peaks
from model.training import (FITS, GPUS, REFERENCES, TrainSetup, activation_bytes, largest_micro_batch, plan,
                            saved_parts, state_bytes, step_phases, training_memory)

SMALL = PRESETS["gpt2-small"]
GPT3 = PRESETS["gpt3-175b"]
TINY = Config(B=2, T=8, d=16, h=2, L=3, V=11, T_max=8)


def line(p, key):
    return next(x for x in p.lines if x.key == key)


# --- published reference points ------------------------------------------------------------------------------------
def test_gpt3_175b_on_300_billion_tokens_is_3_14e23_flops():
    p = plan(GPT3, TrainSetup(D=300 * 10**9))
    assert p.N == 174_604_259_328
    assert p.C_6ND == pytest.approx(3.14e23, rel=0.01)
    assert REFERENCES[0].value == pytest.approx(3.14e23, rel=0.001)


def test_chinchilla_70b_at_20_tokens_per_parameter_is_1_4_trillion_tokens():
    assert line(plan(SMALL), "compute/D").value == 20 * 124_439_808
    chinchilla = REFERENCES[1]
    assert chinchilla.value == 6 * 70 * 10**9 * 1_400 * 10**9
    assert matches(chinchilla.formula, {}, chinchilla.value)


def test_the_2024_refit_puts_chinchillas_compute_near_70_billion_parameters():
    # Besiroglu et al.'s refit is consistent with Chinchilla's own choice; Hoffmann's printed constants are not
    cfg = Config(B=1, T=2048, d=8192, h=64, L=80, V=32_000, T_max=2048)
    p = plan(cfg, TrainSetup(D=1_400 * 10**9, fit="besiroglu"))
    N_opt = line(p, "chinchilla/N_opt").value
    assert 60e9 < N_opt < 85e9
    assert N_opt * line(p, "chinchilla/D_opt").value == pytest.approx(p.C_6ND / 6, rel=1e-9)


def test_hoffmann_loss_at_a_known_point():
    p = plan(SMALL, TrainSetup(D=10**12))
    f = FITS["hoffmann"]
    assert line(p, "chinchilla/loss").value == pytest.approx(1.69 + 406.4 / p.N**0.34 + 410.7 / 1e12**0.28)
    assert f.a + f.b == 1


# --- compute, time and cost -----------------------------------------------------------------------------------------
def test_measured_compute_is_three_forward_passes():
    p = plan(SMALL, TrainSetup(D=10**9))
    assert p.C_measured == 3 * budget(SMALL).flops_fwd_measured_per_token * 10**9
    assert p.C_6ND == 6 * p.N * 10**9


def test_time_and_cost_follow_the_peak_mfu_and_price():
    p = plan(SMALL, TrainSetup(D=10**10, gpu="a100-80gb", mfu=0.5, gpus=4, price=2.0))
    hours = 6 * p.N * 1e10 / (0.5 * 312e12 * 3600)
    assert p.gpu_hours == pytest.approx(hours, rel=1e-12)
    assert p.wall_days == pytest.approx(hours / 4 / 24, rel=1e-12)
    assert p.cost == pytest.approx(2 * hours, rel=1e-12)
    custom = plan(SMALL, TrainSetup(D=10**10, gpu="custom", peak_tflops=156, memory_gib=24, mfu=0.5, gpus=4))
    assert custom.gpu_hours == pytest.approx(2 * hours, rel=1e-12)
    assert custom.memory.capacity == 24 * 2**30


# --- memory ---------------------------------------------------------------------------------------------------------
def test_mixed_precision_adam_is_16_bytes_per_parameter_fp32_adam_16_too_but_split_4_4_8():
    mixed = dict((k, v) for k, v, _ in state_bytes(1000, TrainSetup()))
    fp32 = dict((k, v) for k, v, _ in state_bytes(1000, TrainSetup(optimizer="adam-fp32")))
    assert mixed == {"weights": 2000, "grads": 2000, "optimizer": 12000}
    assert fp32 == {"weights": 4000, "grads": 4000, "optimizer": 8000}


@pytest.mark.parametrize("n", [2, 8, 1024])
def test_zero_shards_states_then_gradients_then_weights_over_n_gpus(n):
    m = {z: plan(SMALL, TrainSetup(gpus=n, zero=z)).memory for z in range(4)}
    N = m[0].weights // 2
    assert m[1].optimizer == pytest.approx(12 * N / n) and m[1].grads == m[0].grads == 2 * N
    assert m[2].grads == pytest.approx(2 * N / n) and m[2].weights == 2 * N
    assert (m[3].weights, m[3].grads, m[3].optimizer) == pytest.approx((2 * N / n, 2 * N / n, 12 * N / n))
    assert len({x.activations for x in m.values()}) == 1  # ZeRO does not shard activations


def test_zero_on_one_gpu_divides_by_one_and_saves_nothing():
    """ZeRO runs on one GPU (DeepSpeed's does): each sharded part is ÷ n with n = 1, the figures ZeRO 0's."""
    for z in (1, 2, 3):
        one, none = plan(SMALL, TrainSetup(gpus=1, zero=z)), plan(SMALL, TrainSetup(gpus=1, zero=0))
        assert one.memory.peak == none.memory.peak and one.setup.zero == z
        optimizer = next(x for x in one.lines if x.key == "memory/optimizer")
        assert "÷ n (ZeRO)" in optimizer.label and optimizer.formula == "12·N/n"


def test_gpt2_small_kv_cache_at_B_1_T_1024_fp16_is_36_MiB():
    p = plan(replace(SMALL, B=1), TrainSetup(dtype="fp16"))
    assert p.kv_cache_bytes == 36 * 2**20
    assert line(p, "serve/kv_per_token").value == 2 * 12 * 768 * 2 == 36_864
    assert p.serve_weights_bytes == 2 * p.N


@pytest.mark.parametrize("cfg", [TINY, replace(TINY, B=1), replace(TINY, tie=False, B=5), replace(TINY, B=4000), Config(B=3, T=1, d=8, h=4, L=2, V=5, T_max=4),
                                 replace(SMALL, B=3, T=100)])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_saved_parts_add_up_to_the_measured_trace(cfg, dtype):
    rest, block = saved_parts(cfg, dtype)
    assert rest > 0 and block > 0
    assert rest + cfg.L * block == trace(cfg, dtype).saved_bytes  # the formula's parts equal the measured pass


def test_full_recomputation_keeps_each_blocks_input_the_rest_and_one_block():
    rest, block = saved_parts(SMALL, "bf16")
    none, _ = activation_bytes(SMALL, TrainSetup())
    full, _ = activation_bytes(SMALL, TrainSetup(recompute="full"))
    assert none == rest + 12 * block
    assert full == 12 * 8 * 1024 * 768 * 2 + rest + block < none


@pytest.mark.parametrize("cfg, setup", [
    (SMALL, TrainSetup()),
    (SMALL, TrainSetup(gpu="a100-40gb", optimizer="adam-fp32")),
    (GPT3, TrainSetup(gpus=1024, zero=3, recompute="full")),
    (GPT3, TrainSetup(gpus=64, zero=3, recompute="full", gpu="b200")),
])
def test_the_largest_micro_batch_fits_and_one_more_does_not(cfg, setup):
    B = largest_micro_batch(cfg, setup)
    cap = setup.device.memory_gib * 2**30

    def direct(B):  # the peak at exactly this B, not extrapolated from B = 2 and 3
        return training_memory(replace(cfg, B=B), setup)

    assert 1 <= B < BOUNDS["B"][1]
    assert direct(B) <= cap < direct(B + 1)
    assert plan(replace(cfg, B=B), setup).memory.fits and not plan(replace(cfg, B=B + 1), setup).memory.fits


def test_the_closed_form_is_the_search_over_the_direct_peak():
    """largest_micro_batch's closed form (each candidate linear in B from B = 2) equals a bisection over the peak
    computed at each B, on presets, T, GPU memory, ZeRO, optimizer and recomputation drawn at random."""
    rng = random.Random(24)
    answers = []
    for name in ("gpt2-small", "gpt2-medium", "gpt2-xl", "gpt3-13b", "llama3-8b"):
        p = PRESETS[name]
        for _ in range(8):
            cfg = replace(p, B=rng.randint(1, 64), T=rng.randint(1, min(p.T_max, 4096)))
            gpus = rng.choice([1, 3, 8, 64])
            setup = TrainSetup(gpu="custom", peak_tflops=989, memory_gib=rng.choice([1, 8, 24, 80, 192, 2000, 0.7]),
                               gpus=gpus, zero=rng.randint(0, 3) if gpus > 1 else 0,
                               optimizer=rng.choice(["adam-mixed", "adam-fp32"]), recompute=rng.choice(["none", "full"]))
            cap = round(setup.device.memory_gib * 2**30)
            fits = lambda B: training_memory(replace(cfg, B=B), setup) <= cap  # noqa: E731
            lo, hi = 0, BOUNDS["B"][1]  # the last B that fits, by bisection (the peak grows with B)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
            assert largest_micro_batch(cfg, setup) == lo, (name, cfg.B, cfg.T, setup)
            answers.append(lo)
    assert len(answers) == 40 and len({B for B in answers if 1 < B < BOUNDS["B"][1]}) >= 5, answers  # not only ends


def test_gpt3_175b_on_one_gpu_without_zero_does_not_fit():
    m = plan(GPT3, TrainSetup(gpus=1)).memory
    assert not m.fits and m.max_B == 0 and m.weights == 2 * 174_604_259_328


# --- the step's peak --------------------------------------------------------------------------------------------------
def meta_step(cfg: Config, dtype: str) -> dict[str, int]:
    """Per-phase peaks of a whole step of the full-depth module on the meta device (Adam's states made first)."""
    import torch

    with torch.device("meta"):
        model = GPT(cfg).to({"fp32": torch.float32, "bf16": torch.bfloat16}[dtype])
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    opt = torch.optim.Adam(model.parameters(), foreach=False)
    opt.step()
    return step_peaks(model, torch.zeros(cfg.B, cfg.T, dtype=torch.long, device="meta"), opt)


def _phases(cfg: Config, setup: TrainSetup) -> dict[str, int]:
    return {x.name: x.value for x in step_phases(cfg, setup)}


MODERN = Config(B=3, T=7, d=24, h=6, L=2, V=37, T_max=16, norm="rmsnorm", positions="rope", mlp="swiglu", kv_heads=2,
                bias="none")  # Llama's recipe: RMSNorm, RoPE, SwiGLU, grouped-query attention, no biases


@pytest.mark.parametrize("cfg", [TINY, replace(TINY, B=1, tie=False), replace(TINY, T=2), Config(B=3, T=1, d=8, h=4, L=2, V=5, T_max=4),
                                 Config(B=2, T=6, d=6, h=1, L=2, V=40, T_max=9, tie=False), MODERN,
                                 replace(MODERN, kv_heads=1, B=1, tie=False),
                                 replace(MODERN, kv_heads=6, qk_norm=True, head_dim=8, bias="qkv", ff_dim=50),
                                 replace(TINY, attention="fused"), replace(MODERN, attention="fused"),
                                 replace(MODERN, kv_heads=1, B=1, T=2, attention="fused", tie=False)])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_each_phases_peak_equals_a_full_depth_step_on_the_meta_device(cfg, dtype):
    # model.peak runs block 0 and adds (L − 1)·S_block; a whole L-block step, tracked the same way, agrees to the byte
    setup = TrainSetup(optimizer="adam-fp32" if dtype == "fp32" else "adam-mixed", gpus=1)
    for L in (1, 2, 5):
        c = replace(cfg, L=L)
        predicted, measured = _phases(c, setup), meta_step(c, dtype)
        assert max(predicted["forward"], predicted["loss"]) == measured["forward"]
        assert predicted.get("backward") == measured.get("backward")
        if dtype == "fp32":  # the plan's update is fp32 Adam whatever the activations' dtype
            assert predicted["optimizer"] == measured["optimizer"]


def check_a_real_step_on_cpu_tensors(cfg: Config) -> None:
    """The plan's activation peak over a one-GPU fp32-Adam step equals the most a real CPU step holds at once
    (`step_peaks`), after one step so that gradients and Adam's states exist, as in the plan."""
    import torch

    torch.manual_seed(0)
    model = GPT(cfg)
    opt = torch.optim.Adam(model.parameters(), foreach=False)
    idx = torch.randint(0, cfg.V, (cfg.B, cfg.T))
    model(idx)[1].backward()
    opt.step()
    measured = step_peaks(model, idx, opt)
    p = plan(cfg, TrainSetup(optimizer="adam-fp32", gpus=1))
    assert p.memory.peak - p.memory.weights - p.memory.grads - p.memory.optimizer == max(measured.values())


@pytest.mark.parametrize("cfg", [TINY, MODERN, replace(TINY, attention="fused"), replace(MODERN, attention="fused")],
                         ids=lambda c: f"{c.norm}-{c.attention}")
def test_the_peak_equals_a_real_step_on_cpu_tensors(cfg):
    check_a_real_step_on_cpu_tensors(cfg)


def test_full_recomputation_adds_each_other_blocks_input_to_the_scaled_moments():
    none, full = _phases(SMALL, TrainSetup()), _phases(SMALL, TrainSetup(recompute="full"))
    rest, block = saved_parts(SMALL, "bf16")
    other = 11 * (block - 8 * 1024 * 768 * 2)  # the other 11 blocks keep their input instead of S_block
    assert none["backward"] - full["backward"] == other and none["optimizer"] == full["optimizer"]


def test_the_peak_is_where_the_logits_are_at_gpt2_small_and_names_its_phase():
    m = plan(SMALL).memory
    assert m.peak_phase == "loss" and m.peak == m.weights + m.grads + m.optimizer + m.phases["loss"]
    assert m.peak > m.total + 8 * 1024 * 50_257 * 2  # at least the bf16 logits (B, T, V) beyond the sum of the parts



def test_probe_steps_that_disagree_are_measured_again_and_logged(monkeypatch, caplog):
    """model.peak: probe steps whose moments differ (a storage freed at another moment by something outside the
    step, such as another thread's global module hooks) are measured again, each time logged with where they
    differ; they raise only after ATTEMPTS disagreements. The candidates are those of agreeing steps; another thread
    collecting garbage all the while (Panel's gc.collect() as a page closes) changes none."""
    import gc
    import logging
    import threading

    from model import peak
    from model.memory import probes, structure

    s = structure(Config(B=2, d=64, h=4, L=2, V=500, T=16, T_max=64), "fp32")
    expected = peak._maximal(probes(s), s.dtype, peak._pass)
    calls = []

    def flaky(cfg, dtype):  # the second probe of the first attempt frees its first allocation at once
        live = peak._pass(cfg, dtype)
        calls.append(cfg)
        if len(calls) == 2:
            live.moments = [replace(m, alive=m.alive - {0}) for m in live.moments]
        return live

    with caplog.at_level(logging.WARNING, logger="model.peak"):
        assert peak._maximal(probes(s), s.dtype, flaky) == expected
    assert len(calls) == 2 * len(probes(s))
    assert "allocated differently (attempt 1 of 3" in caplog.text and "moment 0 (forward" in caplog.text

    def always(cfg, dtype):
        live = peak._pass(cfg, dtype)
        live.moments = live.moments[:len(calls)]
        calls.append(cfg)
        return live

    calls.clear()
    with pytest.raises(RuntimeError, match=r"allocated differently 3 times \(probe 1 has \d+ moments, probe 2 \d+\)"):
        peak._maximal(probes(s), s.dtype, always)

    stop = threading.Event()

    def collect() -> None:  # another thread collecting garbage all the while changes nothing
        while not stop.wait(0.001):
            gc.collect()

    collector = threading.Thread(target=collect)
    collector.start()
    try:
        assert peak._maximal(probes(s), s.dtype, peak._pass) == expected
    finally:
        stop.set()
        collector.join()
    assert gc.isenabled()


def test_a_flop_count_on_another_thread_leaves_a_probe_step_as_it_is():
    """The cause of CI's 'probe steps … allocated differently' on a served page: torch's FlopCounterMode registers
    global module hooks (its ModuleTracker) that put gradient hooks on every thread's tensors while it counts, so a
    serving card counting on the event loop changed when the worker's probe step freed its storages. Serving counts
    with `model.passes.Flops`, a dispatch mode only (per thread): a step measured while another thread counts with
    it is the step measured alone. (Shown with torch's: the same step, other moments.)"""
    import threading
    from pathlib import Path

    from torch.utils.flop_counter import FlopCounterMode

    from model import inference, peak
    from model.passes import Flops

    cfg = Config(B=2, d=64, h=4, L=2, V=500, T=16, T_max=64)

    def moments_beside(mode) -> list:
        entered, done = threading.Event(), threading.Event()

        def count() -> None:
            with mode:
                entered.set()
                done.wait(60)

        thread = threading.Thread(target=count)
        thread.start()
        entered.wait(60)
        try:
            return [(m.op, m.alive) for m in peak._pass(cfg, "fp32").moments]
        finally:
            done.set()
            thread.join()

    alone = [(m.op, m.alive) for m in peak._pass(cfg, "fp32").moments]
    assert moments_beside(Flops()) == alone
    assert moments_beside(FlopCounterMode(display=False)) != alone
    root = Path(inference.__file__).parents[1]  # nothing served counts with torch's
    assert not [f for d in ("model", "app") for f in (root / d).rglob("*.py") if "FlopCounterMode(" in f.read_text()]

# --- every formula is true ------------------------------------------------------------------------------------------
# Model shapes (d_head, h, T_max, T, V, tie): a pool, so the traces are shared; B, L and the setup vary freely.
SHAPES = [(1, 1, 1, 1, 1, True), (2, 3, 7, 7, 11, False), (8, 2, 64, 33, 50_257, True), (64, 12, 1024, 1024, 50_257, True),
          (64, 12, 1024, 5, 11, False), (8, 12, 64, 64, 1, True), (1, 2, 7, 2, 50_257, False), (128, 96, 2048, 2048, 50_257, True)]


def _random_setup(rng: random.Random) -> tuple[Config, TrainSetup]:
    d_head, h, T_max, T, V, tie = rng.choice(SHAPES)
    cfg = Config(B=rng.choice([1, 2, 3, 17, 4096]), T=T, d=d_head * h, h=h, L=rng.choice([1, 2, 5, 96, 1024]), V=V,
                 T_max=T_max, tie=tie)
    gpus = rng.choice([1, 3, 8, 1024, 1_048_576])
    custom = rng.random() < 0.2
    setup = TrainSetup(
        D=rng.choice([None, 1, 12_345, 10**15]), gpu="custom" if custom else rng.choice(list(GPUS)),
        peak_tflops=rng.uniform(0.001, 5000) if custom else None, memory_gib=rng.choice([0.001, 24, 1e5]) if custom else None,
        mfu=rng.choice([0.001, 0.4, rng.random() * 0.999 + 0.001, 1.0]), gpus=gpus, price=rng.choice([0.0, 2.5, 1000.0]),
        optimizer=rng.choice(["adam-mixed", "adam-fp32"]), zero=0 if gpus == 1 else rng.randint(0, 3),
        recompute=rng.choice(["none", "full"]), dtype=rng.choice([None, "fp32", "bf16", "fp16"]),
        fit=rng.choice(list(FITS)))
    return cfg, setup


def test_every_formula_evaluates_to_its_value_at_250_random_setups():
    rng = random.Random(8)
    checked = 0
    for _ in range(250):
        cfg, setup = _random_setup(rng)
        p = plan(cfg, setup)
        assert p.memory.peak >= p.memory.total, (cfg, setup)  # everything saved is alive when the loss is computed
        assert p.memory.fits == (p.memory.peak <= p.memory.capacity)
        for x in p.lines:
            if x.formula:
                assert matches(x.formula, p.symbols, x.value), (x, cfg, setup)
                checked += 1
    assert checked > 250 * 30
    for x in REFERENCES:
        assert matches(x.formula, {}, x.value)


def test_modern_recipe_formulas_are_true_and_the_kv_cache_counts_kv_heads():
    rng = random.Random(14)
    shapes = [MODERN, replace(MODERN, kv_heads=1, tie=False), replace(MODERN, qk_norm=True, head_dim=8, bias="qkv")]
    for _ in range(40):
        _, setup = _random_setup(rng)
        cfg = replace(rng.choice(shapes), B=rng.choice([1, 2, 17, 4096]), L=rng.choice([1, 3, 80]))
        p = plan(cfg, setup)
        assert p.memory.peak >= p.memory.total, (cfg, setup)
        for x in p.lines:
            if x.formula:
                assert matches(x.formula, p.symbols, x.value), (x, cfg, setup)
    p = plan(PRESETS["llama3-8b"], TrainSetup())
    assert line(p, "serve/kv_per_token").value == 2 * 32 * 8 * 128 * 2 == 131_072  # h_kv = 8 of h = 32 heads, bf16


# --- validation -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    (dict(mfu=40), "mfu=40 is out of range: mfu must be from 0.001 to 1 (write 0.4 for 40 %)"),
    (dict(mfu=0), "mfu=0 is out of range"),
    (dict(mfu=float("nan")), "mfu must be a number"),
    (dict(D=1.5), "D must be a whole number"),
    (dict(D=0), "D=0 is out of range"),
    (dict(gpus=0), "gpus=0 is out of range"),
    (dict(gpus=True), "gpus must be a whole number"),
    (dict(price=-1), "price=-1 is out of range"),
    (dict(gpu="h100"), "gpu='h100' is not one of a100-40gb, a100-80gb, h100-sxm, h200, b200, custom"),
    (dict(gpu="custom"), "a custom GPU needs its peak and its memory: give peak_tflops and memory_gib"),
    (dict(peak_tflops=500), "peak_tflops and memory_gib describe a custom GPU"),
    (dict(optimizer="sgd"), "optimizer='sgd' is not one of adam-mixed, adam-fp32"),
    (dict(zero=4), "zero=4 is not a ZeRO stage: choose 0 (none), 1 (optimizer states), 2 (+ gradients) or 3"),
    (dict(recompute="some"), "recompute='some' is not one of none, full"),
    (dict(dtype="int8"), "dtype='int8' is not one of fp32, bf16, fp16"),
    (dict(fit="kaplan"), "fit='kaplan' is not one of hoffmann, besiroglu"),
])
def test_invalid_setups_raise_naming_the_problem_and_the_fix(kwargs, message):
    with pytest.raises(ValueError) as e:
        TrainSetup(**kwargs)
    assert message in str(e.value)


def test_plan_rejects_what_is_not_a_config_or_a_setup():
    with pytest.raises(TypeError, match="plan needs a model.Config"):
        plan({"d": 768})
    with pytest.raises(TypeError, match="TrainSetup"):
        plan(SMALL, {"gpus": 8})


# --- the command line -----------------------------------------------------------------------------------------------
CASES = {
    "train-gpt2-small.txt": ["--table", "train"],
    "train-gpt2-small.md": ["--table", "train", "--markdown"],
    "train-gpt2-small.csv": ["--table", "train", "--csv"],
    "train-gpt3-175b-h100x1024.txt": ["--preset", "gpt3-175b", "--table", "train", "--gpu", "h100-sxm", "--gpus",
                                      "1024", "--zero", "3", "--recompute", "full", "--B", "1", "--D", "300e9"],
    "train-tiny-custom.json": ["--B", "2", "--T", "5", "--d", "12", "--h", "3", "--L", "2", "--V", "11", "--T-max", "8",
                               "--table", "train", "--json", "--gpu-peak", "100", "--gpu-memory", "0.01", "--mfu",
                               "0.5", "--gpus", "2", "--zero", "1", "--optimizer", "adam-fp32", "--D", "1,000"],
}


run = run_cli  # tests/pagetools.py


@pytest.mark.parametrize("name", CASES)
def test_train_table_golden(name, capsys, golden):
    code, out, err = run(CASES[name], capsys)
    assert (code, err) == (0, "")
    golden(name, out)


def test_train_json_holds_the_headline_numbers(capsys):
    _, out, _ = run(["--preset", "gpt3-175b", "--table", "train", "--json", "--D", "300e9", "--gpus", "1024",
                     "--zero", "3"], capsys)
    t = json.loads(out)["train"]
    p = plan(GPT3, TrainSetup(D=300 * 10**9, gpus=1024, zero=3))
    for key in ("D", "C_6ND", "C_measured", "gpu_hours", "wall_days", "kv_cache_bytes"):
        assert t[key] == getattr(p, key)
    assert set(t["memory"]) >= {"weights", "grads", "optimizer", "activations", "total", "peak", "peak_phase", "phases"}
    assert t["memory"]["total"] == p.memory.total and t["setup"]["dtype"] == "bf16"
    assert t["memory"]["peak"] == p.memory.peak > p.memory.total
    assert t["memory"]["phase_ops"] == {x.name: x.op for x in step_phases(p.cfg, p.setup)}  # torch's ops: data only
    assert set(t["memory"]["phases"]) == {"forward", "loss", "backward", "optimizer"}




def test_the_step_phases_are_named_in_the_lessons_words_never_by_torch_op():
    """Every moment that can be a phase's peak, in every recipe and size class, has lesson words (model.peak.MOMENTS);
    the labels name what the step is doing, the op stays in the JSON (phase_ops)."""
    import re

    from model.memory import structure
    from model.peak import MOMENTS, candidates, measured_candidates

    seen = set()
    for p in (p for p in PRESETS.values() if p.window is None):  # windowed presets: tests/test_window.py
        for B, T, dtype in ((1, 1, "fp32"), (2, 2, "bf16"), (8, 16, "fp32")):
            two = replace(p, B=B, T=min(T, p.T_max), L=2, dense_first=min(p.dense_first, 1),
                          dense_layers=(0,) if p.dense_layers else (), nope_layers=(1,) if p.nope_layers else (),
                          linear_layers=(0,) if p.linear_layers else (),
                          mamba1_layers=(0,) if p.mamba1_layers else (),
                          kda_layers=(0,) if p.kda_layers else ())  # SmolLM3's: one block of each kind;
            # DeepSeek-V3's first block dense, its second MoE; Qwen3-Next's (Jamba's, Kimi Linear's) first Gated DeltaNet
            # (Mamba, Kimi delta attention), its second attention
            found = measured_candidates(two, dtype) if two.stateful else candidates(structure(two, dtype))
            seen |= {(c.phase, c.op, c.moment) for c in found}
    ops = {op for _, op, _ in seen if "_" in op or op in ("clone", "div", "mm", "bmm", "addmm", "triu")}
    assert {"nll_loss_forward", "_log_softmax_backward_data", "clone", "div"} <= ops  # torch's names, not the lesson's
    for phase, op, moment in seen:
        assert moment in MOMENTS.values() and not set(re.findall(r"[\w.]+", moment)) & ops, (phase, op, moment)
    assert len({m for _, _, m in seen}) >= 8
    for setup in (TrainSetup(), TrainSetup(recompute="full", optimizer="adam-fp32")):
        labels = [x.label for x in plan(SMALL, setup).lines if x.key.startswith("memory/peak_")]
        assert len(labels) == 4 and all(": " in x and "during" not in x for x in labels), labels
        assert any("the logits (B, T, V) and their log-softmax" in x for x in labels)


def test_dtype_follows_the_optimizer_unless_given(capsys):
    _, out, _ = run(["--table", "train", "--json", "--optimizer", "adam-fp32"], capsys)
    assert json.loads(out)["train"]["setup"]["dtype"] == "fp32"
    _, out, _ = run(["--table", "train", "--json", "--dtype", "fp16"], capsys)
    assert json.loads(out)["train"]["setup"]["dtype"] == "fp16"


@pytest.mark.parametrize("argv, message", [
    (["--table", "train", "--mfu", "40"], "mfu=40 is out of range: mfu must be from 0.001 to 1 (write 0.4 for 40 %)"),
    (["--table", "train", "--zero", "5"], "argument --zero: invalid choice: 5"),
    (["--table", "train", "--gpu", "custom"], "give --gpu-peak and --gpu-memory"),
    (["--table", "train", "--gpu-peak", "100"], "give --gpu-peak and --gpu-memory"),
    (["--table", "train", "--gpu", "h200", "--gpu-memory", "100"], "--gpu-peak and --gpu-memory describe a custom GPU"),
    (["--table", "train", "--D", "1.5"], "D must be a whole number of tokens"),
    (["--table", "train", "--D", "lots"], "invalid token count 'lots' (not a number): write 300e9, 3e11, "
                                          "300,000,000,000 or 300 billion"),
    (["--table", "train", "--D", "300 bilion"], "invalid token count '300 bilion'"),
    (["--table", "train", "--gpu", "tpu"], "argument --gpu: invalid choice: 'tpu'"),
    (["--gpus", "8"], "--gpus describe a training run: add --table train (or --json for the whole report)"),
    (["--table", "budget", "--json", "--zero", "3"], "--zero describe a training run: add --table train"),
    (["--json", "--mfu", "2"], "mfu=2 is out of range"),
])
def test_bad_train_options_give_one_line_and_status_2(argv, message, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("seed", range(4))
def test_the_pairs_a_storage_may_sum_are_cramers_whole_solutions(seed):
    """`model.peak`'s search for a storage's bytes as a sum of two monomials tests a block of pairs at once in int64:
    the pairs it keeps, in order, are those whose Cramer's rule at the first two probes gives whole coefficients of
    at least 1 that also hold at the third, one by one (determinants of both signs and 0, the pairs of one list and
    of two)."""
    from model.peak import _coefficients, _solvable
    rng = random.Random(seed)
    monomials = [((str(i),), [rng.choice((1, 2, 3, 4, 6, 12, 24, 48)) * rng.randrange(1, 9) for _ in range(3)])
                 for i in range(60)]
    a, b = monomials[:25], monomials[25:]
    i0, j0 = rng.randrange(2, len(a)), rng.randrange(2, len(b))  # (not 1, the bytes themselves below)
    nbytes = [3 * x + 5 * y for x, y in zip(a[i0][1], b[j0][1])]  # a sum of two there is
    a[1] = b[1] = (("n",), nbytes)  # the bytes themselves: in a pair, a coefficient of 0 beside 1
    for left, right, same in ((a, a, True), (a, b, False), (b, a, False)):
        pairs = [(i, j) for i in range(len(left)) for j in range(len(right)) if (i < j or not same)]
        want = [(i, j) for i, j in pairs if _coefficients(left[i][1], right[j][1], nbytes) is not None]
        assert _solvable(left, right, nbytes, same) == want
    assert (i0, j0) in _solvable(a, b, nbytes, same=False)
    big = 2 ** 31  # bytes whose products would pass int64's room: the pairs one by one, the same ones
    scaled = [[(f, [big * x for x in v]) for f, v in ms] for ms in (a, b)]
    assert _solvable(*scaled, [big * n for n in nbytes], same=False) == _solvable(a, b, nbytes, same=False)
