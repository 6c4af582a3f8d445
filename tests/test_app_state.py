"""ExplorerState: set parameters as the widgets do, assert what the views are handed."""
import dataclasses

import panel as pn
import pytest

import model
from app.state import ExplorerState
from model.rules import CUSTOM, preset_labels, preset_of as preset_name
from model import PRESETS, Config
from model.config import GPT2_RECIPE_PRESETS


@pytest.fixture(autouse=True)
def _fresh_panel_state():
    yield
    pn.state.reset()


def test_defaults_are_gpt2_small_at_B8_T1024():
    s = ExplorerState()
    assert s.config == Config(B=8, T=1024, d=768, h=12, L=12, V=50257, T_max=1024, tie=True)
    assert s.preset == "gpt2-small" and s.notices == [] and s.dtype == "fp32" and not s.expanded


def test_params_carry_model_bounds_and_docs():
    s = ExplorerState()
    assert s.param.d.bounds == (1, 32_768) and s.param.T.bounds == (1, 16_777_216)
    assert s.param.h.doc == "attention heads (they divide d, unless d_head is set apart)"


def test_d_change_snaps_h_and_says_so():
    s = ExplorerState()
    s.d = 770
    assert (s.h, s.config.h, s.config.d_head) == (11, 11, 70)
    assert s.notices == ["h snapped 12 → 11: 770 is not divisible by 12"]
    assert s.preset == CUSTOM


def test_h_returns_to_what_was_asked_when_d_allows_again():
    s = ExplorerState()
    s.d = 769  # prime: only 1 and 769 divide it
    assert s.h == 1 and s.notices == ["h snapped 12 → 1: 769 is not divisible by 12"]
    s.d = 768
    assert s.h == 12 and s.notices == [] and s.preset == "gpt2-small"


def test_choosing_h_directly_makes_it_the_new_request():
    s = ExplorerState()
    s.h = 16
    assert s.config.h == 16 and s.notices == []
    s.d = 770  # snaps from 16, the last h chosen
    assert s.h == 14 and s.notices == ["h snapped 16 → 14: 770 is not divisible by 16"]


def test_T_is_clamped_when_T_max_drops_and_restored_when_it_rises():
    s = ExplorerState()
    s.T_max = 512
    assert (s.T, s.config.T) == (512, 512)
    assert s.notices[0].startswith("T clamped 1,024 → 512") and "cannot extrapolate" in s.notices[0]
    s.T_max = 2048
    assert s.T == 1024 and s.notices == []


def test_asking_T_above_T_max_clamps():
    s = ExplorerState()
    assert s.set_field("T", 4096)
    assert s.T == 1024 and s.notices[0].startswith("T clamped 4,096 → 1,024")


def test_out_of_bounds_input_is_rejected_with_a_notice_and_the_state_kept():
    s = ExplorerState()
    assert not s.set_field("d", 10**9)
    assert s.config.d == 768
    assert s.notices == ["d=1,000,000,000 is out of range: d must be from 1 to 32,768; kept d=768"]
    assert not s.set_field("B", 0) and s.B == 8
    assert not s.set_field("L", True) and s.L == 12  # a bool is not a block count
    assert s.set_field("L", 24) and s.notices == []  # the next good change clears the notice


def test_preset_sets_the_model_and_keeps_B():
    s = ExplorerState()
    s.B = 2
    s.preset = "gpt3-175b"
    assert s.config == dataclasses.replace(PRESETS["gpt3-175b"], B=2)
    s.preset = "gpt2-xl"
    assert (s.d, s.h, s.L, s.T, s.T_max, s.B) == (1600, 25, 48, 1024, 1024, 2)


def test_preset_follows_the_fields():
    s = ExplorerState()
    s.T_max = 2048
    assert s.preset == "gpt3-125m"  # same d, h, L, V as GPT-2 small, T_max 2,048
    s.L = 13
    assert s.preset == CUSTOM


def test_apply_shows_exactly_a_config():
    s = ExplorerState()
    cfg = Config(B=1, T=7, d=770, h=11, L=3, V=1000, T_max=64, tie=False)
    s.apply(cfg)
    assert s.config == cfg and s.notices == []
    s.d = 768  # h asked is now 11, the applied value
    assert s.h == 12 and s.notices == ["h snapped 11 → 12: 768 is not divisible by 11"]


def test_derived_values_come_from_the_model():
    s = ExplorerState()
    assert s.budget.params_exact == 124_439_808
    assert s.trace.cfg == s.config and s.trace.dtype == "fp32"
    assert s.bar_scale == max(r.nbytes for r in model.trace(dataclasses.replace(s.config, T=s.config.T_max)).rows)
    s.dtype = "bf16"
    assert s.trace.dtype == "bf16"
    assert s.tokens.ids[:3] == (464, 3602, 16354)  # "The", " Trans", "former"


def test_one_config_event_per_change():
    s = ExplorerState()
    seen = []
    s.param.watch(lambda e: seen.append(e.new), ["config"])
    s.d = 770  # d and the snapped h arrive as one new config
    assert [c.h for c in seen] == [11]


def test_preset_names_and_labels():
    assert preset_name(PRESETS["gpt3-13b"]) == "gpt3-13b"
    labels = preset_labels()
    assert labels["GPT-2 small · L 12, d 768"] == "gpt2-small"
    assert labels["GPT-3 175B · L 96, d 12,288"] == "gpt3-175b"
    assert set(labels.values()) == set(GPT2_RECIPE_PRESETS) | {CUSTOM}


@pytest.mark.parametrize("cfg, dtype", [
    (Config(B=8, T=100, d=768, h=12, L=12, V=50257, T_max=1024), "fp32"),
    (Config(B=2, T=3, d=64, h=4, L=2, V=10, T_max=300), "bf16"),  # a small V: the scores, not the logits, are largest
    (Config(B=1, T=1, d=8, h=2, L=1, V=2, T_max=1), "fp16"),  # T = T_max = 1: int64 token ids are the largest
])
def test_bar_scale_from_one_trace_equals_a_second_pass_at_T_max(cfg, dtype):
    from app.state import bar_scale
    second = model.trace(dataclasses.replace(cfg, T=cfg.T_max), dtype)
    assert bar_scale(model.trace(cfg, dtype)) == max(r.nbytes for r in second.rows)


def test_on_inputs_calls_a_view_only_when_its_inputs_change():
    s = ExplorerState()
    calls = {"d_L": 0, "T": 0, "text": 0}
    s.on_inputs(lambda: calls.__setitem__("d_L", calls["d_L"] + 1), ["d", "L"])
    s.on_inputs(lambda: calls.__setitem__("T", calls["T"] + 1), ["T", "dtype"])
    s.on_inputs(lambda: calls.__setitem__("text", calls["text"] + 1), ["text"])
    s.T = 100
    assert calls == {"d_L": 0, "T": 1, "text": 0}
    s.L = 3
    s.dtype = "bf16"
    assert calls == {"d_L": 1, "T": 2, "text": 0}
    s.preset = "gpt2-medium"  # d, L and T_max (T follows it) change in one update: one call each
    assert calls == {"d_L": 2, "T": 3, "text": 0}
    s.text = "hello"
    assert calls == {"d_L": 2, "T": 3, "text": 1}
    with pytest.raises(ValueError, match="unknown inputs"):
        s.on_inputs(lambda: None, ["colour"])
