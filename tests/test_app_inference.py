"""The inference card's settings in the URL (app.cards.infer.settings) and its view, not served: tiny configurations."""
from __future__ import annotations

from dataclasses import replace

import pytest

from app.cards.infer.settings import INFER_KEYS, infer_items, settle_infer
from app.page import Explorer
from app.query import parse_query, to_query
from model.inference import InferSetup, serving
from model.infer_report import chart_data
from model.train_report import human

TINY = "?recipe=modern&d=64&h=4&h_kv=2&L=2&V=500&T=16&T_max=64&B=2"


@pytest.mark.parametrize("setup", [
    InferSetup(),
    InferSetup(gpu="h200", weights="int4", kv_dtype="fp8", group=64, efficiency=0.6),
    InferSetup(gpu="custom", peak_tflops=123.5, memory_gib=24, bandwidth_tbs=1.008, weights="int8", kv_dtype="int8"),
])
def test_every_setting_round_trips_through_the_url(setup):
    q = parse_query(to_query(parse_query(TINY).config, infer=setup))
    assert (q.infer, q.notices) == (setup, ())
    assert [k for k, _ in infer_items(setup)] == [k for k in INFER_KEYS if k in dict(infer_items(setup))]


@pytest.mark.parametrize("asked, notice", [
    ({"weights": "int3"}, 'weights="int3" is not one of bf16, fp16, fp8, int8, int4; using bf16'),
    ({"group": "1.5"}, 'group="1.5" is not a whole number from 1 to 4,096; using group=128'),
    ({"efficiency": "60"}, "efficiency=60 is out of range: efficiency must be from 0.01 to 1 (write 0.4 for 40 %); "
                           "using efficiency=0.5"),
    ({"infer_bandwidth": "2"}, "infer_peak, infer_memory, infer_bandwidth describe a custom GPU; ignored with "
                               "infer_gpu=h100-sxm (add infer_gpu=custom)"),
])
def test_a_bad_value_is_one_notice_and_the_default(asked, notice):
    assert settle_infer(asked) == (InferSetup(), [notice])


def test_a_custom_gpu_starts_from_the_default_gpus_figures():
    setup, notes = settle_infer({"infer_gpu": "custom", "infer_bandwidth": "2"})
    assert (setup.peak_tflops, setup.memory_gib, setup.bandwidth_tbs, notes) == (989, 80, 2.0, [])


def test_the_card_shows_the_models_figures_and_its_widgets_write_the_state():
    e = Explorer(query=TINY + "&weights=int8&efficiency=0.7")
    v = e.inference
    s = serving(e.state.config, e.state.infer)
    assert e.state.infer == InferSetup(weights="int8", efficiency=0.7)
    for x in s.result.lines:
        assert f'<tr data-key="{x.key}">' in v._lines.object and human(x).replace("'", "&#x27;") in v._lines.object
    assert v.sources["by_B"].data == chart_data(s)["by_B"]
    v._kv.value = "fp8"
    assert e.state.infer == InferSetup(weights="int8", kv_dtype="fp8", efficiency=0.7)
    assert e.query().endswith("&weights=int8&kv_dtype=fp8&efficiency=0.7")
    assert v.sources["by_B"].data == chart_data(serving(e.state.config, e.state.infer))["by_B"]
    e.state.apply(replace(e.state.config, B=4))  # the page's B is decode's B
    assert v.sources["here_B"].data["B"] == [4]


def test_a_mixture_of_experts_shows_its_experts_lines_and_the_panel_can_be_left_out():
    e = Explorer(query="?d=64&h=4&L=2&V=500&T=16&T_max=64&moe=1&E=4&k=2&dense_first=1")
    v, s = e.inference, serving(e.state.config, e.state.infer)
    assert not v._refused.visible and v._figures.visible and e.state.config.block_kinds == ("dense", "moe")
    for key in ("infer/expert_bytes", "infer/experts_touched", "infer/decode_weights_read"):
        assert f'<tr data-key="{key}">' in v._lines.object and human(s.result.line(key)) in v._lines.object
    assert Explorer(query=TINY + "&panels=shapes,training").inference is None
