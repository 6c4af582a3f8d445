"""The modern recipe on the no-server page: its controls, rules, lines, shapes and "what each change buys" card,
each JavaScript twin run in Chromium on the same inputs as the Python it mirrors, and --hf-config.

The page carries the modern recipe for the models `app.export.spec.covered` lists (every modern preset and the
exported model with h_kv = h, a group, or 1); the random configurations here keep those models' structures.
"""
from __future__ import annotations

import argparse
import html
import random
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from app.cards.budget.markup import shown
from app.cards.recipe.markup import OTHER_DTYPE, UNCOVERED, changes_groups, changes_html
from app.export.cli import add_arguments
from app.export.keys import budget_key, changes_key
from app.export.spec import ALL_FIELDS, covered
from model.families import menu_label, preset_labels
from model import PRESETS, Config, budget, trace
from model.families import PAGE_PRESETS  # the pages' presets: the dense ones (mixtures of experts: the CLI's)
from model import units
from model.changes import changes
from model.cli import config_from_args
from model.rules import preset_of, settle
from model.train_report import human
from model.training import plan
from test_export import (box, cfg_js, export, exported_page, js, random_setups, setup_js, shown_js, text_of, typed,
                         value_of)

LLAMA = PRESETS["llama3-8b"]
HF = Path(__file__).parent / "hf"


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "llama.html"
    done = export(out, "--preset", "llama3-8b", "--T", "512")
    assert done.returncode == 0 and f"wrote {out}" in done.stdout, done.stderr
    return out


@pytest.fixture(scope="module")
def page(chromium, page_file: Path):
    yield from exported_page(chromium, page_file)


def full_js(c: Config) -> dict:
    return cfg_js(c)


def _set(page, name: str, value) -> None:
    prop = "active" if name in ("tie", "qk_norm") else "value"
    value = typed(value) if name.endswith("_input") or name.startswith("opt_") and prop == "value" else value
    page.evaluate("([n, p, v]) => { Bokeh.documents[0].get_model_by_name(n)[p] = v; }", [name, prop, value])
    page.wait_for_timeout(200)


def line_value(page, card: str, key: str) -> str:
    """The value cell of the line `key` in a card's markup."""
    text = text_of(page, card)
    row = text.split(f'data-key="{key}"', 1)[1]
    return html.unescape(row.split('<td class="v">', 1)[1].split("<", 1)[0])


def random_covered(n: int, seed: int) -> list[Config]:
    """Configurations with the structures of the covered models (B ≥ 2, T ≥ 3) at random sizes."""
    rng = random.Random(seed)
    bases = covered(replace(LLAMA, T=512))
    out = []
    for i in range(n):
        b = bases[i % len(bases)]
        d_head = 2 * rng.randint(2, 40)
        T_max = rng.randint(3, 4096)
        fields = dict(B=rng.randint(2, 64), T=rng.randint(3, T_max), L=rng.randint(1, 80), V=rng.randint(2, 200_000),
                      T_max=T_max, ff_dim=rng.randint(1, 9000) if b.ff_dim else None)
        if b.head_dim is not None:  # set apart: the heads' width is not d
            fields.update(d=b.h * rng.randint(1, 100), head_dim=d_head)
        else:
            fields.update(d=b.h * d_head)
        out.append(replace(b, **fields))
    return out


CONFIGS = random_covered(24, seed=15)


# --- the acceptance figures ---------------------------------------------------------------------------------------
@pytest.mark.browser
def test_llama3_8b_shows_its_published_count(page) -> None:
    assert "N = 8,030,261,248" in text_of(page, "head")
    assert value_of(page, "recipe") == "modern" and box(page, "opt_kv_heads") == 8
    assert preset_labels()[value_of(page, "preset")] == "llama3-8b"


@pytest.mark.browser
def test_flipping_gqa_back_multiplies_the_kv_cache_by_h_over_h_kv(page) -> None:
    key = "memory/kv_cache_per_token"
    gqa = js(page, "memoryLines", [[full_js(replace(LLAMA, T=512)), "fp32"]])[0]
    assert line_value(page, "shapes", key) == "256 KiB"
    _set(page, "opt_kv_heads", 32)
    assert line_value(page, "shapes", key) == "1 MiB" and box(page, "opt_kv_heads") == 32
    mha = js(page, "memoryLines", [[full_js(replace(LLAMA, T=512, kv_heads=None)), "fp32"]])[0]
    per_token = lambda lines: int(next(x for x in lines if x["key"] == key)["value"])  # noqa: E731
    assert per_token(mha) == per_token(gqa) * 32 // 8 == 1_048_576
    assert 'data-key="changes/h_kv/' not in text_of(page, "changes")  # h_kv = h: no K/V change against the twin
    _set(page, "opt_kv_heads", 6)
    assert box(page, "opt_kv_heads") == 4 and "h_kv snapped 6 → 4: h = 32 is not divisible by 6" in \
        html.unescape(text_of(page, "status"))
    _set(page, "opt_kv_heads", 8)
    assert 'data-key="changes/h_kv/kv_cache"' in text_of(page, "changes")


@pytest.mark.browser
def test_the_changes_card_shows_the_cli_lines(page) -> None:
    cfg = replace(LLAMA, T=512)
    want = changes_html(changes_groups(changes(cfg, "fp32")), "fp32")
    assert text_of(page, "changes") == want
    assert "−33,554,432" in html.unescape(want)  # RoPE removes T_max·d


# --- JavaScript twins, side by side with Python -------------------------------------------------------------------
@pytest.mark.browser
def test_settle_and_presets_agree_with_the_rules(page) -> None:
    rng = random.Random(4)
    asked = []
    for _ in range(200):
        base = rng.choice(list(PAGE_PRESETS.values()))
        positions = rng.choice(["learned", "rope"])
        d = rng.choice([64, 768, 770, 1000, 4096, rng.randint(2, 8192)])
        asked.append({**full_js(base), "B": rng.randint(1, 64), "T": rng.randint(1, 20_000), "d": d,
                      "h": rng.randint(1, 64), "positions": positions, "kv_heads": rng.choice([None, rng.randint(1, 64)]),
                      "head_dim": rng.choice([None, None, 2 * rng.randint(1, 128)]),
                      "ff_dim": rng.choice([None, rng.randint(1, 30_000)]),
                      "mlp": rng.choice(["gelu", "swiglu"]), "bias": rng.choice(["all", "none", "qkv"]),
                      "qk_norm": rng.random() < 0.5, "norm": rng.choice(["layernorm", "rmsnorm"])})
    got = page.evaluate("(xs) => xs.map((a) => { try { return window.__ts.rules.settle(a); } "
                        "catch (e) { return {error: e.message}; } })", asked)
    for a, out in zip(asked, got):
        try:
            want, notes = settle(a)
        except ValueError as e:  # Config refuses (an odd d with RoPE): the page says so and keeps what it shows
            assert out == {"error": str(e)}, a
            continue
        assert (Config(**out[0]), out[1]) == (want, notes), a
    cfgs = [settle(a)[0] for a in asked[:40] if _settles(a)] + list(PAGE_PRESETS.values())
    assert js(page, "rules.preset_of", [[full_js(c)] for c in cfgs]) == [preset_of(c) for c in cfgs]
    from model.families import recipe_of
    assert js(page, "families.recipe_of", [[full_js(c)] for c in cfgs]) == [recipe_of(c) for c in cfgs]
    assert js(page, "keys.budget_key", [[full_js(c)] for c in cfgs]) == [budget_key(c) for c in cfgs]
    assert js(page, "keys.changes_key", [[full_js(c), "bf16"] for c in cfgs]) == [changes_key(c, "bf16") for c in cfgs]


def _settles(a: dict) -> bool:
    try:
        settle(a)
    except ValueError:
        return False
    return True


@pytest.mark.browser
def test_budget_and_memory_lines_agree_with_the_model(page) -> None:
    got = shown_js(page, "budgetLines", [[full_js(c)] for c in CONFIGS])
    for c, lines in zip(CONFIGS, got):
        assert [{k: x[k] for k in ("key", "label", "formula", "value", "short")} for x in lines] == \
            [shown(x) for x in budget(c).lines], c
    cases = [(c, dt) for c, dt in zip(CONFIGS, ["fp32", "bf16", "fp16"] * 8)]
    got = shown_js(page, "memoryLines", [[full_js(c), dt] for c, dt in cases])
    for (c, dt), lines in zip(cases, got):
        assert [{k: x[k] for k in ("key", "label", "formula", "value", "short")} for x in lines] == \
            [shown(x) for x in trace(c, dt).lines], (c, dt)


@pytest.mark.browser
def test_table_rows_are_the_modern_trace(page) -> None:
    cases = CONFIGS[:10]
    got = js(page, "shapeRows", [[full_js(c), "fp32", False] for c in cases])
    for c, table in zip(cases, got):
        rows = trace(c, "fp32").rows
        tensors = [r for r in table["rows"] if r["kind"] == "tensor"]
        assert [(t["label"], t["symbolic"], t["shape"], t["elements"], t["memory"]) for t in tensors] == \
            [(r.label, r.symbolic, units.shape(r.shape), units.thousands(r.numel),
              "view" if r.view else units.nbytes(r.nbytes)) for r in rows], c


@pytest.mark.browser
def test_changes_lines_and_markup_agree_with_the_model(page) -> None:
    cases = [(c, dt) for c, dt in zip(CONFIGS[:8], ["fp32"] * 8)]
    got = js(page, "changesGroups", [[full_js(c), dt] for c, dt in cases])
    for (c, dt), out in zip(cases, got):
        want = changes_groups(changes(c, dt))
        assert out["groups"] == want, c
        assert js(page, "changes_card.changes_html", [[out["groups"], dt]]) == [changes_html(want, dt)]


@pytest.mark.browser
def test_training_lines_agree_with_the_model(page) -> None:
    pairs = list(zip(CONFIGS[:12], random_setups(12, seed=6)))
    got = page.evaluate("(xs) => xs.map(([c, s]) => window.__ts.trainPlan(c, s).lines.map((x) => "
                        "[x.key, x.label, x.formula, x.human]))", [[full_js(c), setup_js(s)] for c, s in pairs])
    for (c, s), lines in zip(pairs, got):
        assert lines == [[x.key, x.label, x.formula, human(x)] for x in plan(c, s).lines], (c, s)


@pytest.mark.browser
def test_a_preset_from_another_family_keeps_B(page) -> None:
    names = {v: k for k, v in preset_labels().items()}
    options = value_of(page, "preset", "options")
    assert list(options) == ["GPT-2", "GPT-3", "Llama 3", "Llama 4", "Mistral", "Qwen", "Gemma", "gpt-oss", "DeepSeek", "GLM", "MiniMax",
                             "Phi", "SmolLM", "Kimi", "Jamba", "Your own"]
    _set(page, "preset", menu_label("deepseek-v3"))  # latent attention: its figures on the page written for it, named
    assert "python -m app export lesson.html --preset deepseek-v3 --B" in html.unescape(text_of(page, "head"))
    assert "python -m app export lesson.html --preset deepseek-v3 --B" in html.unescape(text_of(page, "shapes"))
    _set(page, "B_input", 3)
    _set(page, "preset", names["qwen2.5-0.5b"])
    assert box(page, "B_input") == 3 and "N = 494,032,768" in text_of(page, "head")
    assert value_of(page, "bias") == "qkv" and value_of(page, "recipe") == "custom"
    _set(page, "preset", names["gpt2-small"])
    assert "N = 124,439,808" in text_of(page, "head") and value_of(page, "recipe") == "gpt2"
    assert "GPT-2's recipe" in html.unescape(text_of(page, "changes"))
    _set(page, "recipe", "modern")
    assert value_of(page, "norm") == "rmsnorm" and box(page, "opt_kv_heads") == 3
    # GPT-2 small in the modern recipe is no model this page carries: every card names the command that exports it
    assert "python -m app export lesson.html --B 3 --T 1024 --d 768 --h 12" in html.unescape(text_of(page, "head"))
    words = UNCOVERED["modern"].format(what="this model", command="")  # the notice's words, from Python
    assert words in html.unescape(text_of(page, "head")) and words in html.unescape(text_of(page, "changes"))
    _set(page, "preset", names["llama3-8b"])
    _set(page, "T_input", 512)
    _set(page, "B_input", 8)
    assert "N = 8,030,261,248" in text_of(page, "head")


# --- a config.json --------------------------------------------------------------------------------------------------
def test_hf_config_writes_the_page_for_that_model(tmp_path: Path) -> None:
    out = tmp_path / "qwen.html"
    done = export(out, "--hf-config", str(HF / "qwen2.5-0.5b.json"), "--T", "256")
    assert done.returncode == 0, done.stderr
    doc = html.unescape(out.read_text(encoding="utf-8")).replace('\\"', '"')
    assert '"initial": {"B": 8, "T": 256, "d": 896, "h": 14, "L": 24, "V": 151936, "T_max": 32768, "tie": true, ' \
           '"norm": "rmsnorm", "norm_biased": false, "norm_plain": false, "embed_norm": false, "positions": "rope", "rotary_dim": null, "nope_layers": [], "mlp": "swiglu", ' \
           '"ff_dim": 4864, "kv_heads": 2' in doc
    assert budget(replace(PRESETS["qwen2.5-0.5b"], T=256)).params_exact == 494_032_768


@pytest.mark.parametrize("doc, said", [
    ({"model_type": "nanochat", "num_hidden_layers": 2}, "logits soft-capped at 15; norms without a gain or a bias "
                                                         "(no parameters); a norm on the token embeddings"),
    ({"model_type": "olmo", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4},
     "norms without a gain or a bias (no parameters)"),
], ids=["nanochat", "olmo"])
def test_a_config_json_page_says_its_extras_as_the_live_page(doc, said, chromium, tmp_path: Path) -> None:
    """The controls' line of the parts the file has and no control sets (model.families.extras_line), on the page
    written for it; gone where the rules drop them (bias = all gives OLMo's LayerNorms their gains back)."""
    import json

    from model.config import from_hf
    from model.families import extras_line

    path, out = tmp_path / "config.json", tmp_path / "page.html"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = export(out, "--hf-config", str(path), "--T", "64")
    assert done.returncode == 0, done.stderr
    line = extras_line(from_hf(doc))
    assert line.startswith(said)
    for page in exported_page(chromium, out):
        assert html.unescape(text_of(page, "status")).count(line) == 1
        if doc["model_type"] == "olmo":
            _set(page, "bias", "all")
            assert line not in html.unescape(text_of(page, "status"))


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not JSON"),
    ('{"model_type": "gemma3n_text", "hidden_size": 8}', "gemma3n_text"),
])
def test_a_bad_config_json_is_one_line(content: str, message: str, tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text(content, encoding="utf-8")
    done = export(tmp_path / "x.html", "--hf-config", str(bad))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x.html").exists()


# --- issue 22: one number grammar, the rule line, notices of their change, on the no-server page --------------------
GRAMMAR = ["300e9", "3e11", "3E11", "300,000,000,000", "300_000_000_000", "300 billion", "300 Billion", "1.4 trillion",
           "70 million", "4 thousand", " 4096 ", "\t5\t", "5\n", "+5", "-5", "0", "1.5", ".5", "5.", "1e-3", "1000e-3",
           "1,000.5", "1,00", "1__0", "1_0", "e9", "", "inf", "nan", "0x10", "١٢", "²", "1e999", "1e1000", "3009 tokens",
           "300 ſillion", "4 \u212athousand", "4 thousand\n", "1 000", "12.500e1", "9" * 30, "1,234,567,890,123,456,789"]


@pytest.mark.browser
def test_the_page_reads_numbers_with_the_grammar_of_model_numbers(page) -> None:
    from model import numbers

    got = page.evaluate("(xs) => xs.map((t) => { const d = window.__ts.numbers.decimal(t), w = window.__ts.numbers.whole(t); "
                        "return [d && [String(d[0]), d[1]], w === null ? null : String(w), window.__ts.numbers.real(t)]; })",
                        GRAMMAR)
    for text, (d, w, r) in zip(GRAMMAR, got):
        want = numbers.decimal(text)
        assert (d, w) == (want and [str(want[0]), want[1]], None if numbers.whole(text) is None else str(numbers.whole(text))), text
        real = numbers.real(text)
        assert (r is None and real is None) or float(r) == real, text
    fields = [["T", t, 1024] for t in GRAMMAR] + [["d", "770", 768], ["V", "1e999", 50257], ["B", "", 8]]
    from model.rules import read_field
    assert js(page, "rules.read_field", fields) == [list(read_field(*f)) for f in fields]


@pytest.mark.browser
def test_the_rule_line_and_field_names_agree_with_the_model(page) -> None:
    from app.words import field_names, status_rules

    cfgs = [*PAGE_PRESETS.values(), *CONFIGS, replace(LLAMA, head_dim=64), replace(PRESETS["gpt2-small"], positions="rope")]
    assert js(page, "words.status_rules", [[full_js(c)] for c in cfgs]) == [status_rules(c) for c in cfgs]
    assert js(page, "words.field_names", [[full_js(c)] for c in cfgs]) == [field_names(c) for c in cfgs]


@pytest.mark.browser
def test_notices_of_a_change_agree_with_the_model(page) -> None:
    """settle_notes with the configuration shown before and the fields changed, then news against the notes before."""
    from model.rules import news, settle_notes

    rng = random.Random(22)
    keys = ["T", "T_max", "d", "h", "kv_heads", "head_dim", "positions"]
    cases = []
    for _ in range(150):
        base = rng.choice(list(PAGE_PRESETS.values()))
        asked = {**full_js(base), "T": rng.choice([base.T, 5000, 40_000]), "d": rng.choice([base.d, 770, 1040]),
                 "h": rng.choice([base.h, 12, 7]), "kv_heads": rng.choice([None, 5, base.kv_heads]),
                 "T_max": rng.choice([base.T_max, 1024, 2048])}
        try:
            shown = settle_notes(asked)[0]
        except ValueError:
            continue
        later = {**asked, rng.choice(keys[:4]): rng.choice([768, 1024, 2048, 12])}
        changed = rng.sample(keys, rng.randint(0, 2))
        cases.append((asked, later, full_js(shown), changed))
    got = page.evaluate("(xs) => xs.map(([a, l, s, c]) => { try { const [, before] = window.__ts.rules.settle_notes(a); "
                        "const [cfg, notes] = window.__ts.rules.settle_notes(l, s, c); "
                        "return [notes.map((n) => n.text), window.__ts.rules.news(notes, before, c)]; } "
                        "catch (e) { return {error: e.message}; } })", [list(c) for c in cases])
    for (asked, later, shown, changed), out in zip(cases, got):
        try:
            notes = settle_notes(later, Config(**shown), changed)[1]
        except ValueError as e:
            assert out == {"error": str(e)}, later
            continue
        assert out == [[n.text for n in notes], news(notes, settle_notes(asked)[1], changed)], (later, changed)
    assert sum(1 for out in got if isinstance(out, list) and out[0] != out[1]) >= 10  # some notes were not news


@pytest.mark.browser
def test_the_exported_page_says_the_rules_of_its_recipe_and_drops_old_notices(page) -> None:
    from app.words import field_names

    names = {v: k for k, v in preset_labels().items()}
    _set(page, "preset", names["qwen3-0.6b"])
    status = html.unescape(text_of(page, "status"))
    assert "d_head = 128, set apart from d / h: h need not divide d" in status and "h divides d" not in status
    assert "T may pass T_max = 40,960" in status and "T ≤ T_max" not in status
    assert f'<div class="muted name">{field_names(PRESETS["qwen3-0.6b"])["h"]}</div>' in text_of(page, "h_label")
    assert "(divide d)" not in text_of(page, "h_label")
    assert "trained context" in text_of(page, "T_max_label")
    _set(page, "preset", names["gpt2-small"])
    _set(page, "T_input", "5,000")
    assert "T clamped 5,000 → 1,024" in html.unescape(text_of(page, "status"))
    _set(page, "d_input", "1e3")
    assert box(page, "d_input") == 1000 and "T clamped" not in html.unescape(text_of(page, "status"))
    _set(page, "d_input", "four")
    assert 'd="four" is not a whole number' in html.unescape(text_of(page, "status")) and box(page, "d_input") == 1000
    _set(page, "d_input", "768")
    _set(page, "T_input", "1,024")
    _set(page, "preset", names["llama3-8b"])
    _set(page, "T_input", "512")


@pytest.mark.browser
@pytest.mark.parametrize("size", [(1400, 900), (390, 844)])
def test_the_exported_pages_lesson_notation_is_never_cut(chromium, page_file, size) -> None:
    context = chromium.new_context(viewport={"width": size[0], "height": size[1]}, is_mobile=size[0] < 400,
                                   device_scale_factor=3 if size[0] < 400 else 1)
    p = context.new_page()
    p.goto(page_file.as_uri())
    p.wait_for_function("() => window.__ts !== undefined", timeout=60_000)
    cut = p.evaluate("""() => { const out = []; const walk = (root) => { for (const el of root.querySelectorAll(
      'table.shapes td.n b, table.shapes td.n i, table.shapes td.n u, table.shapes td.s, table.shapes td.c, ' +
      'table.shapes tr.g td'))
      if (el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1) out.push(el.textContent);
      for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot); }; walk(document); return out; }""")
    titles = p.evaluate("""() => { const out = []; const walk = (root) => { for (const el of root.querySelectorAll(
      'table.shapes tr.t')) out.push(el.title); for (const el of root.querySelectorAll('*')) if (el.shadowRoot)
      walk(el.shadowRoot); }; walk(document); return out; }""")
    width = p.evaluate("() => [window.innerWidth, document.documentElement.scrollWidth]")
    context.close()
    assert cut == [] and titles and all(" · lesson shape (" in t for t in titles)
    assert width[0] == size[0] and width[1] <= size[0]


@pytest.mark.browser
def test_another_models_changes_at_the_other_dtype_name_the_dtype_and_its_command(page) -> None:
    """The page (llama3-8b, written at fp32) carries every other model's changes at fp32 only: at bf16 their card
    says so, with the export command at bf16; its own model's card shows at both dtypes."""
    qwen = {f: getattr(PRESETS["qwen3-0.6b"], f) for f in ALL_FIELDS}  # every field the page holds
    at_fp32, at_bf16 = js(page, "changesGroups", [[qwen, "fp32"], [qwen, "bf16"]])
    assert at_fp32["groups"] == changes_groups(changes(PRESETS["qwen3-0.6b"], "fp32"))
    command = f"{js(page, 'changes_card.export_command', [[qwen]])[0]} --dtype bf16"
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(command.split()[4:])  # after "python -m app export": the command writes this model
    assert config_from_args(args) == PRESETS["qwen3-0.6b"] and args.dtype == "bf16"
    assert at_bf16 == {"notice": OTHER_DTYPE.format(page_dtype="fp32", dtype="bf16", command=command)}
    own = js(page, "changesGroups", [[full_js(replace(LLAMA, T=512)), "bf16"]])[0]
    assert own["groups"] == changes_groups(changes(replace(LLAMA, T=512), "bf16"))
