"""A learner's QA pass (brief qa-pages): labels that must be true of the model they stand beside, each checked
against the model's own figures (the trace's rows, the serving figures, the changes' values)."""

from __future__ import annotations

import re
from dataclasses import replace

from app.words import SHAPES_NOTES
from model import trace
from model.changes import changes
from model.config import MODERN, PRESETS, Config
from model.inference import serving
from model.infer_report import CHART_B

WINDOWED = Config(B=2, T=11, d=16, h=4, L=4, V=10, **MODERN, kv_heads=2, window=4)  # every block windowed, fused


def test_the_fused_intro_names_every_row_that_grows_with_t_squared():
    """Fused attention's intro says which rows grow with T²: a windowed model's pass has one, the band."""
    note = re.sub(r"<[^>]+>", "", SHAPES_NOTES["fused"])
    for cfg in (WINDOWED, replace(WINDOWED, window=None)):
        tr, bigger = trace(cfg), trace(replace(cfg, T=2 * cfg.T))
        quadratic = [r.name for r, r2 in zip(tr.rows, bigger.rows) if r2.numel == 4 * r.numel > 1]
        assert quadratic == (["window_mask"] if cfg.window else [])
        assert all(name in note for name in quadratic)


def test_no_knee_names_what_a_sequence_really_moves():
    """DeepSeek-V3 at its preset: a sequence's latent cache alone reads faster than its token's FLOPs take; the
    K and V recomputed per head (the step's activations) are what keep every B memory-bound."""
    cfg = PRESETS["deepseek-v3"]
    r = serving(cfg).result
    line = {x.key: x for x in r.lines}
    P, BW = 989e12, 3.35e12
    flops, cache = line["infer/decode_flops"].value / cfg.B, line["infer/decode_cache_read"].value / cfg.B
    acts = line["infer/decode_activations"].value / cfg.B
    assert line["infer/knee_B"].value == 0  # no knee
    assert cache / BW < flops / P < (cache + acts) / BW  # the cache alone would not stop a knee
    assert "activations" in CHART_B["no_knee"] and "activations" in line["infer/knee_B"].label


def test_a_windowed_prefill_writes_the_windows_cache_and_says_so():
    cfg = PRESETS["mistral-7b-v0.1"]
    line = {x.key: x for x in serving(cfg).result.lines}
    assert line["infer/kv_cache"].value == cfg.B * cfg.L * 4_095 * 2 * 8 * 128 * 2  # W − 1 tokens, not T = 8,192
    assert "T_W = min(T, W − 1) = 4,095" in line["infer/prefill_bytes"].label


def test_the_changes_cards_cache_per_token_of_a_window_is_past_the_window():
    """Below the window (T = 3 < W = 4) one more token still grows every block's cache; the card's 0 and −L·… are
    its figures past the window, and its labels say so; the GPT-2 twin's stays plain (full attention)."""
    c = changes(replace(WINDOWED, T=3), "fp32")
    lines = {x.key: x for g in c.groups for x in g.lines}
    assert lines["changes/this/kv_cache"].value == 0
    for key in ("window", "total", "this"):
        assert lines[f"changes/{key}/kv_cache"].label.endswith("KV cache per token of context past the window")
    assert lines["changes/twin/kv_cache"].label == "GPT-2 twin: KV cache per token"


def test_the_order_note_names_every_step_gemma_and_gpt_oss_take():
    """Gemma 3 27B's chain runs a GeGLU step and a Gemma's extras step; gpt-oss's an extras step of its own."""
    from model.changes import ORDER_NOTE, SHORT
    gemma = changes(PRESETS["gemma-3-27b"], "fp32")
    assert [g.key for g in gemma.steps][-3:] == ["attention", "gemma", "window"]
    assert gemma.cfg.mlp == "geglu" and "GeGLU" in ORDER_NOTE and SHORT["gemma"] in ORDER_NOTE
    assert SHORT["oss"] in ORDER_NOTE


NAMED = {"A mixture of experts": "moe", "A sliding window": "window", "Latent attention": "latent"}


def test_what_the_note_says_comes_last_is_the_last_change():
    """DeepSeek-V3 (MoE, then latent attention) and gpt-oss-20b (MoE, its extras, then a window): one change is
    last, and it is the one the note says."""
    for name in ("deepseek-v3", "gpt-oss-20b", "mixtral-8x7b", "mistral-7b-v0.1"):
        c = changes(PRESETS[name], "fp32")
        last = [NAMED[s] for s in NAMED if f"{s} comes last" in c.note]
        assert set(last) <= {c.steps[-1].key}, (name, last)  # Mixtral's MoE is last, said or not


def test_an_all_windowed_models_cache_per_token_names_no_full_blocks():
    """Mistral 7B v0.1 windows all 32 blocks: past the window nothing grows, and no full-attention block is named."""
    from model.memory import kv_cache_lines
    for cfg, full in ((PRESETS["mistral-7b-v0.1"], 0), (PRESETS["gemma-3-27b"], 10)):
        line = {x.key: x for x in kv_cache_lines(cfg, "bf16")}["memory/kv_cache_per_token"]
        assert cfg.L - cfg.L_W == full and line.value == full * 2 * cfg.h_kv * cfg.d_head * 2
        assert ("full-attention blocks" in line.label) == (full > 0)


def test_the_training_headline_says_past_the_window_where_a_window_caps_the_cache():
    """Mistral 7B v0.1 (every block windowed) holds 0 bytes more per token only past the window: below it (T = 1,024
    < W) every token still adds its K and V, so the headline's KV words say "past the window"; a full-attention
    model's do not."""
    from app.cards.train.markup import headline_html
    from model.training import TrainSetup, plan

    for name, past in (("mistral-7b-v0.1", True), ("llama3-8b", False)):
        cfg = replace(PRESETS[name], T=1_024)
        kv = {x.key: x.value for x in trace(cfg, "bf16").lines}["memory/kv_cache_per_token"]
        assert (kv == 0) == past  # the figure the headline shows is the one past the window
        text = headline_html(plan(cfg, TrainSetup()))
        assert ("of KV cache per token of context past the window)" in text) == past
        assert "of KV cache per token of context" in text


def test_the_scores_label_names_gemmas_query_scale_where_it_replaces_d_head():
    """Gemma 3 27B scales its scores by 1/√168 (query_pre_attn_scalar), not 1/√d_head = 1/√128: the scores' and the
    fused kernel's labels say √query_scale; Gemma 3 1B's (256 = its d_head, so none) say √d_head. The pass structure
    carries it, so the exported page's probe rows say the same."""
    from model.memory import probes, structure

    for name, word in (("gemma-3-27b", "√query_scale"), ("gemma-3-1b", "√d_head")):
        for attention in ("eager", "fused"):
            cfg = replace(PRESETS[name], B=1, T=16, attention=attention)
            labels = {r.name.removeprefix("blocks.0."): r.label for r in trace(cfg).rows}
            row = "attn.scores" if attention == "eager" else "attn.attn_v"
            assert f"q kᵀ / {word}" in labels[row]
            s = structure(cfg, "fp32")
            for probe in probes(s):
                assert structure(probe, "fp32") == s
                assert {r.name.removeprefix("blocks.0."): r.label for r in trace(probe).rows}[row] == labels[row]


def test_the_training_headline_counts_a_mixture_of_experts_at_n_active():
    """Mixtral's run is D = 20·N_active and C = 6·N_active·D (model.training's lines say so): the headline's words
    say "per active parameter" and 6·N_active·D, a dense model's "per parameter" and 6·N·D, with a given D too."""
    from app.cards.train.markup import headline_html
    from model.training import CHINCHILLA_TOKENS_PER_PARAM, TrainSetup, plan

    for name, n, per in (("mixtral-8x7b", "N_active", "per active parameter"), ("gpt2-small", "N", "per parameter")):
        rule = headline_html(plan(PRESETS[name], TrainSetup()))
        assert f"Chinchilla's rule, {CHINCHILLA_TOKENS_PER_PARAM} {per})" in rule and f"C = 6·{n}·D = " in rule
        given = headline_html(plan(PRESETS[name], TrainSetup(D=10**12)))
        assert re.search(rf"\([\d.,]+ {per}\) · C = 6·{n}·D", given)


def test_the_values_cards_scale_heading_names_the_width_the_model_divides_by():
    """The √d_head comparison's heading: d_head; with latent attention d_head = d_nope + d_R (q and k's width, 192 on
    DeepSeek-V3, not d / h); on Gemma 3 27B the √168 it divides by instead. The CLI and the live card say the same."""
    from app.cards.tensors.view import scaling_html
    from model import values as mv
    from model.values_report import scale_words, text
    from test_mla import MLA

    words = {name: scale_words(PRESETS[name]) for name in ("gpt2-small", "deepseek-v3", "gemma-3-27b", "gemma-3-1b")}
    assert words == {"gpt2-small": "d_head = 64", "deepseek-v3": "d_head = d_nope + d_R = 192",
                     "gemma-3-27b": "d_head = 128; this model divides by √query_scale = √168 instead",
                     "gemma-3-1b": "d_head = 256"}
    v = mv.values(MLA, list(range(5)))
    said = f"({scale_words(MLA)}, T = 5"
    assert said.startswith("(d_head = d_nope + d_R = ")
    assert said in scaling_html(v) and said in " ".join(text(v).split())


def test_the_training_cards_note_counts_a_mixture_of_experts_at_n_active():
    """The note under the chart says MFU is tokens/s × 6N ÷ peak and time follows C = 6·N·D; on a mixture of experts,
    whose lines count 6·N_active·D, it says N_active, and it follows the model when the page changes it."""
    from app.state import ExplorerState
    from app.cards.train.view import TrainingView

    view = TrainingView(state=ExplorerState())
    assert "× 6N ÷" in view._note.object and "C = 6·N·D)" in view._note.object
    view.state.apply(PRESETS["mixtral-8x7b"])
    assert "× 6N_active ÷" in view._note.object and "C = 6·N_active·D)" in view._note.object
