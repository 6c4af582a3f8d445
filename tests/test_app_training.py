"""The training card without a browser: URL keys both ways, hostile values, widgets -> state, the page's figures
equal the model's, and no recomputation when nothing it shows depends on the change."""
from __future__ import annotations

import html

import panel as pn
import pytest

from app import Explorer
from app.query import parse_query, to_query
from app.cards.train.settings import TRAIN_KEYS, settle_train, train_items
from app.cards.train.view import TrainingView
from app.cards.train.markup import chart_html, headline_html, lines_html, memory_bars
from model import PRESETS, units
from model.train_report import human
from model.training import TrainSetup, plan

GPT3_RUN = "?preset=gpt3-175b&B=1&gpu=h100-sxm&gpus=1024&zero=3&recompute=full&D=300e9"


@pytest.fixture(autouse=True)
def _fresh_panel_state():
    yield
    pn.state.reset()


def test_the_link_sets_the_run_and_the_page_writes_it_back():
    q = parse_query(GPT3_RUN)
    assert q.notices == () and q.train == TrainSetup(D=300 * 10**9, gpus=1024, zero=3, recompute="full")
    e = Explorer(query=GPT3_RUN)
    assert e.state.train == q.train
    assert e.query().endswith("&tie=1&D=300000000000&gpus=1024&zero=3&recompute=full")
    assert parse_query(e.query()).train == q.train


def test_every_setting_round_trips_through_the_url():
    setup = TrainSetup(D=12_345, gpu="custom", peak_tflops=123.5, memory_gib=24, mfu=0.55, gpus=3, price=0.99,
                       optimizer="adam-fp32", zero=2, recompute="full", fit="besiroglu")
    items = train_items(setup)
    assert [k for k, _ in items] == list(TRAIN_KEYS)
    assert parse_query(to_query(PRESETS["gpt2-small"], None, setup)).train == setup
    assert train_items(TrainSetup()) == []  # defaults stay out of the link


@pytest.mark.parametrize("query, notice", [
    ("?mfu=40", "mfu=40 is out of range: mfu must be from 0.001 to 1 (write 0.4 for 40 %); using mfu=0.4"),
    ("?gpus=0", "gpus=0 is out of range: gpus must be from 1 to 1,048,576; using gpus=8"),
    ("?gpus=2.5", 'gpus="2.5" is not a whole number from 1 to 1,048,576; using gpus=8'),
    ("?D=lots", "D=\"lots\" is not a whole number from 1 to 1,000,000,000,000,000 (write 300e9, 3e11, "
                "300,000,000,000 or 300 billion); using Chinchilla's D = 20·N"),
    ("?D=3009%20tokens", 'D="3009 tokens" is not a whole number'),
    ("?price=inf", 'price="inf" is not a number from 0 to 1,000; using price=2.5'),
    ("?gpu=tpu%3Cscript%3E", 'gpu="tpu<script>" is not one of a100-40gb, a100-80gb, h100-sxm, h200, b200, custom'),
    ("?zero=3&gpus=1", "ZeRO 3 shards over the n GPUs, and n = 1: each part is divided by 1, so it saves nothing"),
    ("?gpu=h200&gpu_peak=5", "gpu_peak and gpu_memory describe a custom GPU; ignored with gpu=h200 (add gpu=custom)"),
    ("?optimizer=sgd", 'optimizer="sgd" is not one of adam-mixed, adam-fp32; using adam-mixed'),
    ("?recompute=half", 'recompute="half" is not one of none, full; using none'),
    ("?D=" + "9" * 60, "is not a whole number"),
])
def test_hostile_training_values_give_notices_and_a_valid_run(query, notice):
    q = parse_query(query)
    assert any(notice in n for n in q.notices), q.notices
    assert isinstance(q.train, TrainSetup)
    plan(PRESETS["gpt2-small"], q.train)  # and the run it shows can be computed


def test_a_custom_gpu_without_figures_starts_from_the_default_gpu():
    setup, notes = settle_train({"gpu": "custom"})
    assert notes == [] and (setup.peak_tflops, setup.memory_gib) == (989, 80)


def test_widgets_write_the_state_and_rejected_combinations_explain_themselves():
    e = Explorer(query=GPT3_RUN)
    v = e.training
    v._gpus.value = "64"
    assert e.state.train.gpus == 64 and e.state.train.zero == 3
    v._gpus.value = "1"  # ZeRO on one GPU: kept, and the card says it saves nothing there (the choice stays shown)
    assert e.state.train.zero == 3 and v._zero.value == 3 and "n = 1: each part is divided by 1" in v._notices.object
    v._rule.value = True
    assert e.state.train.D is None and v._D.disabled
    assert v._D.value == f"{20 * e.state.budget.params_exact:,}"  # with separators: 3,492,085,186,560
    v._rule.value = False
    assert e.state.train.D == 20 * e.state.budget.params_exact  # the rule's D, now chosen
    for text in ("1e12", "1,000,000,000,000", "1 trillion", "1000 billion"):
        v._D.value = "5"
        v._D.value = text
        assert e.state.train.D == 10**12 and v._D.value == "1,000,000,000,000", text
    v._D.value = "300e9 tokens"  # not a number: a notice, and the box shows the D in use again
    assert e.state.train.D == 10**12 and v._D.value == "1,000,000,000,000"
    assert html.escape('D="300e9 tokens" is not a whole number') in v._notices.object
    assert "n = 1" not in v._notices.object  # ZeRO's note belonged to the change of n
    v._gpu.value = "custom"
    assert v._peak.visible and e.state.train.gpu == "custom" and e.state.train.peak_tflops == 989
    v._peak.value = "500"
    assert e.state.train.peak_tflops == 500.0 and v._notices.object == ""
    assert "gpu=custom&gpu_peak=500&gpu_memory=80" in e.query()
    v._mfu.value = "0.55"
    assert e.state.train.mfu == 0.55 and v._mfu.value == "0.55"


def test_the_page_shows_the_models_figures():
    e = Explorer(query=GPT3_RUN)
    p = plan(e.state.config, e.state.train)
    text = e.training._headline.object + e.training._lines.object
    for x in p.lines:
        assert html.escape(x.label) in text and html.escape(human(x)) in text, x
        assert html.escape(x.formula) in text
    training, serving = memory_bars(p)  # serving the whole of GPT-3 is the widest bar: 334 GiB, 100 %
    top = p.serve_weights_bytes + p.kv_cache_bytes
    assert top > p.memory.peak and top > p.memory.capacity == 80 * 2**30
    assert [(x["key"], x["text"], x["width"]) for x in serving["parts"]] == [
        ("weights", units.nbytes(p.serve_weights_bytes), f"{100 * p.serve_weights_bytes / top:.4f}"),
        ("kv", units.nbytes(p.kv_cache_bytes), f"{100 * p.kv_cache_bytes / top:.4f}")]
    widths = {x["key"]: float(x["width"]) for x in training["parts"]}
    assert widths == pytest.approx({"weights": 100 * p.memory.weights / top, "grads": 100 * p.memory.grads / top,
                                    "optimizer": 100 * p.memory.optimizer / top,
                                    "activations": 100 * p.memory.activations / top,
                                    "transient": 100 * (p.memory.peak - p.memory.total) / top}, abs=1e-4)
    assert p.memory.peak > p.memory.total and training["total"] == units.nbytes(p.memory.peak)
    assert training["capacity"] == serving["capacity"] == f"{100 * 80 * 2**30 / top:.4f}"
    assert f"<b>{units.nbytes(p.memory.peak)}</b> at the step's peak" in e.training._headline.object
    assert e.training._chart.object == chart_html(p)
    assert headline_html(p) == e.training._headline.object and lines_html(p) == e.training._lines.object


def test_config_changes_update_the_card_in_place_and_other_changes_do_not_recompute(monkeypatch):
    e = Explorer()
    v = e.training
    chart = v._chart
    calls = []
    import app.state

    real = app.state.plan
    monkeypatch.setattr(app.state, "plan", lambda *a: calls.append(a) or real(*a))
    e.state.dtype = "bf16"
    e.state.expanded = True
    e.state.text = "other words"
    assert calls == []
    e.state.set_field("L", 24)
    assert len(calls) == 1 and v._chart is chart
    assert chart_html(real(e.state.config, e.state.train)) == chart.object
    assert "24" in v._lines.object


def test_the_training_panel_can_be_left_out():
    e = Explorer(query="?panels=shapes,budget")
    assert e.training is None
    e.__panel__()
    assert TrainingView(state=e.state).state is e.state
