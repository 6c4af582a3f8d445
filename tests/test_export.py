"""The no-server page: `python -m app export OUT.html [options]` (app/export.py, app/export.js).

Python side: the page's budget formulas equal `model.budget`, its row lists equal `model.trace`, the file is
self-contained and small, bad command lines exit 2 with one clear line. Browser side: the exported page,
opened from file://, shows for ≥ 20 configurations exactly the shapes and numbers of model.trace / model.budget.
"""
from __future__ import annotations

import dataclasses
import html
import json
import random
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from app import export
from model import units as fmt
from model import BOUNDS, DTYPES, PRESETS, Config, budget, divisors, snap_heads, trace

MAX_BYTES = 2_000_000


# ---- configurations --------------------------------------------------------------------------------------
def _random_configs(n: int, seed: int) -> list[tuple[Config, str]]:
    """Varied configs (tiny to GPT-3 widths, T = 1, untied heads, prime d) with a dtype each."""
    rng = random.Random(seed)
    widths = [1, 2, 7, 48, 64, 96, 128, 257, 320, 384, 512, 770, 1000, 1024, 1152, 1536, 2048, 4096, 12288]
    out = []
    for _ in range(n):
        d = rng.choice(widths)
        h = rng.choice(divisors(d)[:12])
        T_max = rng.choice([1, 2, 16, 128, 1000, 1024, 2048, 4096])
        T = rng.choice([1, T_max, rng.randint(1, T_max)])
        cfg = Config(B=rng.choice([1, 2, 3, 8, 32, 64]), T=T, d=d, h=h, L=rng.choice([1, 2, 6, 12, 24, 96]),
                     V=rng.choice([1, 2, 256, 1000, 50257, 131072]), T_max=T_max, tie=rng.random() < 0.6)
        out.append((cfg, rng.choice(list(DTYPES))))
    return out


FORMULA_CONFIGS = [*PRESETS.values(), *(c for c, _ in _random_configs(60, seed=1)),
                   Config(B=1, T=1, d=1, h=1, L=1, V=1, T_max=1, tie=False),
                   Config(B=4096, T=32768, d=32768, h=32768, L=1024, V=262144, T_max=32768, tie=False)]
SWEEP = [(PRESETS["gpt2-small"], "fp32"), (dataclasses.replace(PRESETS["gpt3-175b"], T=1), "bf16"),
         # (B, T, d) rows of exactly 2.125 MiB: a rounding tie, which Python formats to even ("2.12 MiB")
         (Config(B=1, T=544, d=1024, h=16, L=2, V=1000, T_max=1024, tie=False), "fp32"),
         *_random_configs(22, seed=4)]


# ---- the formulas and rows the page embeds --------------------------------------------------------------
@pytest.mark.parametrize("cfg", FORMULA_CONFIGS, ids=lambda c: f"B{c.B}-T{c.T}-d{c.d}-h{c.h}-L{c.L}-V{c.V}-{c.tie}")
def test_formulas_equal_model_budget(cfg: Config) -> None:
    """Every JS formula's Python twin equals model.budget, measured FLOPs included: L(24d² + 4Td) + 2Vd."""
    ours, real = export.evaluate_formulas(cfg), budget(cfg).as_dict()
    for name, value in ours.items():
        if name in real:
            assert value == pytest.approx(real[name], rel=1e-15, abs=0), name
    assert ours["flops_fwd_measured_per_token"] == cfg.L * (24 * cfg.d**2 + 4 * cfg.T * cfg.d) + 2 * cfg.V * cfg.d
    assert ours["params_attn"] + ours["params_mlp"] == cfg.L * (real["params_attn_block"] + real["params_mlp_block"])


def test_formulas_js_is_generated_from_the_same_text() -> None:
    js = export.formulas_js()
    assert "const flops_fwd_measured_per_token = (((s.L * ((((24n * s.d) * s.d) + (((4n * s.T) * s.d)))" not in js
    assert "const params_emb = ((s.V + s.T_max) * s.d);" in js
    assert "const T_attn_equals_dense = (6n * s.d);" in js
    assert len(re.findall(r"^  const ", js, flags=re.M)) == len(export.FORMULAS)
    for bad in ("d / h", "d ** 2", "f(d)", "d - 1.5", "x"):
        with pytest.raises(ValueError, match="outside the formula grammar"):
            export._compile(bad, {"d", "h"}, str, str, lambda *a: a)


@pytest.mark.parametrize("cfg", FORMULA_CONFIGS[:40], ids=lambda c: f"T{c.T}-{c.tie}-d{c.d}")
def test_row_variants_are_the_trace(cfg: Config) -> None:
    """The row list the page picks (structure_key) is exactly the trace's rows, for any config."""
    variants, int_bytes = export.row_variants()
    rows = variants[export.structure_key(cfg)]
    traced = trace(cfg).rows
    assert [(r["name"], r["label"], r["symbolic"], r["block"]) for r in rows] == \
           [(r.name, r.label, r.symbolic, r.block is not None) for r in traced]
    for r, t in zip(rows, traced):
        assert t.nbytes == t.numel * (DTYPES["fp32"] if r["float"] else int_bytes)


# ---- the exported file ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page, exported through the real command line."""
    out = tmp_path_factory.mktemp("export") / "lesson.html"
    done = subprocess.run([sys.executable, "-m", "app", "export", str(out), "--preset", "gpt2-small"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout
    return out


class _Resources(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.json_blocks: list[str] = []
        self._in_json = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("src", "href", "data", "poster"):
            if a.get(key):
                self.refs.append(f"<{tag} {key}={a[key]}>")
        self._in_json = tag == "script" and a.get("type") == "application/json"

    def handle_data(self, data: str) -> None:
        if self._in_json:
            self.json_blocks.append(data)
            self._in_json = False


def _parse(path: Path) -> _Resources:
    parser = _Resources()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _strings(node: object):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


def _embedded_spec_and_code(path: Path) -> tuple[dict, str]:
    (doc_json,) = _parse(path).json_blocks  # Bokeh HTML-escapes the document JSON inside its <script>
    strings = list(_strings(json.loads(html.unescape(doc_json))))
    specs = [json.loads(s) for s in strings if s.startswith("{") and '"variants"' in s]
    codes = [s for s in strings if "return main(cb_obj);" in s]
    assert len(specs) == 1 and len(codes) == 1
    return specs[0], codes[0]


def test_file_is_small_and_self_contained(page_file: Path) -> None:
    text = page_file.read_text(encoding="utf-8")
    assert len(text.encode()) < MAX_BYTES
    assert _parse(page_file).refs == []  # no <script src>, <link href>, <img src>: everything inline
    assert not re.search(r"@import|url\(\s*['\"]?https?:", text)
    assert "Bokeh.embed.embed_items" in text and text.count("<script") >= 3  # BokehJS itself is inlined
    assert '<meta name="viewport"' in text
    (doc_json,) = _parse(page_file).json_blocks
    assert "defs" not in next(iter(json.loads(html.unescape(doc_json)).values()))  # no other library's models


def test_reference_scan_sees_tags_not_script_text() -> None:
    page = '<script src="x.js"></script><script>const s = "<img src=y.png>";</script><link href="s.css">'
    assert export.external_references(page) == ["<script src='x.js'>", "<link href='s.css'>"]


def test_embedded_data_comes_from_the_model(page_file: Path) -> None:
    spec, code = _embedded_spec_and_code(page_file)
    assert export.formulas_js() in code
    assert spec["bounds"] == {f: list(BOUNDS[f]) for f in export.FIELDS}
    assert spec["dtypes"] == DTYPES and spec["int_bytes"] == 8
    assert spec["presets"] == {n: dataclasses.asdict(c) for n, c in PRESETS.items()}
    assert spec["initial"] == {**dataclasses.asdict(PRESETS["gpt2-small"]), "dtype": "fp32"}
    rows = {r["name"]: r for r in spec["variants"]["T>1,tied"]}
    assert [r["name"] for r in spec["variants"]["T>1,tied"]] == [r.name for r in trace(PRESETS["gpt2-small"]).rows]
    assert rows["blocks.0.attn.scores"] == {"name": "blocks.0.attn.scores", "local": "attn.scores",
                                            "label": "scores = q kᵀ / √d_head", "symbolic": "(B, h, T, T)",
                                            "block": True, "float": True}
    assert rows["idx"]["float"] is False and rows["idx"]["block"] is False
    assert rows["head"]["label"] == "logits (head tied to W_te)"
    assert {r["name"]: r["label"] for r in spec["variants"]["T>1,untied"]}["head"] == "logits (separate head)"
    assert "loss" not in {r["name"] for r in spec["variants"]["T=1,tied"]}


# ---- the command line -----------------------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["--d", "770"], "d=770 is not divisible by h=12; each head gets d/h features, so h must divide d (nearest divisors of 770: 11, 14)"),
    (["--T", "2048"], "T=2,048 exceeds T_max=1,024"),
    (["--preset", "gpt3-175b", "--T", "2048", "--T-max", "1024"], "T=2,048 exceeds T_max=1,024"),
    (["--B", "0"], "B=0 is out of range"),
    (["--L", "1000000"], "L=1,000,000 is out of range"),
    (["--d", "1000000000"], "d=1,000,000,000 is out of range"),
    (["--d", "abc"], "argument --d: invalid int value: 'abc'"),
    (["--V", "1.5"], "argument --V: invalid int value: '1.5'"),
    (["--preset", "gpt5"], "argument --preset: invalid choice: 'gpt5'"),
    (["--dtype", "int4"], "argument --dtype: invalid choice: 'int4'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "lesson.html"
    with pytest.raises(SystemExit) as exc:
        export.main([str(out), *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("python -m app export: error: ") and message in err
    assert "Traceback" not in err and not out.exists()


def test_bad_output_paths(tmp_path: Path, capsys) -> None:
    cases = [(tmp_path, f"{tmp_path} is a directory"),
             (tmp_path / "missing" / "lesson.html", f"directory {tmp_path / 'missing'} does not exist"),
             (Path("/proc/transformer-shapes-lesson.html"), "cannot write /proc/transformer-shapes-lesson.html"),
             ("", "the output path is empty"), ("  ", "the output path is empty")]
    for path, message in cases:
        with pytest.raises(SystemExit) as exc:
            export.main([str(path)])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and err.count("\n") == 1 and message in err, err
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


def test_cli_subcommand_rejects_bad_input(tmp_path: Path) -> None:
    """The real entry point: one line on stderr, status 2, no file."""
    out = tmp_path / "lesson.html"
    done = subprocess.run([sys.executable, "-m", "app", "export", str(out), "--d", "770"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()] and "nearest divisors of 770: 11, 14" in done.stderr
    assert not out.exists()


def test_options_reach_the_page(tmp_path: Path) -> None:
    out = tmp_path / "l.html"
    assert export.main([str(out), "--preset", "gpt3-13b", "--T", "256", "--untied", "--dtype", "bf16",
                        "--title", "Lesson <3>"]) == 0
    spec, _ = _embedded_spec_and_code(out)
    assert spec["initial"] == {**dataclasses.asdict(dataclasses.replace(PRESETS["gpt3-13b"], T=256, tie=False)),
                               "dtype": "bf16"}
    text = out.read_text(encoding="utf-8")
    assert "<title>Lesson &lt;3&gt;</title>" in text and "Lesson <3>" not in text


# ---- the page in a browser ------------------------------------------------------------------------------
SET_CONFIG = """([c, dtype]) => {
  const doc = Bokeh.documents[0], m = (name) => doc.get_model_by_name(name);
  for (const f of ["T_max", "T", "d", "h", "B", "L", "V"]) m(f).value = c[f];
  m("tie").active = c.tie;
  m("dtype").value = dtype;
}"""

READ_PAGE = """() => {
  const m = (name) => Bokeh.documents[0].get_model_by_name(name);
  const src = m("params_source").data, col = (k) => Array.from(src instanceof Map ? src.get(k) : src[k]);
  const values = {};
  for (const f of ["B", "T", "d", "h", "L", "V", "T_max"]) values[f] = [m(f).value, m(f + "_input").value];
  return {values, tie: m("tie").active, preset: m("preset").value,
          chart: {part: col("part"), value: col("value"), text: col("text"), exact: col("exact")}};
}"""


def _key(cfg: Config, dtype: str) -> str:
    return ",".join(f"{f}={getattr(cfg, f)}" for f in export.FIELDS) + f",tie={str(cfg.tie).lower()},dtype={dtype}"


@pytest.fixture
def page(chromium, page_file: Path):
    """The exported page from file://, failing the test on any console error or network request."""
    p = chromium.new_page(viewport={"width": 1280, "height": 800})
    problems: list[str] = []
    p.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type in ("error", "warning") else None)
    p.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    p.on("request", lambda req: problems.append(f"request {req.url}") if not req.url.startswith("file://") else None)
    p.goto(page_file.as_uri())
    p.locator("table.shapes").wait_for(timeout=20_000)
    yield p
    p.close()
    assert problems == []


def _shown(page, cfg: Config, dtype: str) -> dict:
    """Everything the page shows once it shows `cfg` (the table carries the config it was made for)."""
    page.locator(f"table.shapes[data-config='{_key(cfg, dtype)}']").wait_for(timeout=5_000)
    rows = page.locator("table.shapes tbody tr[data-name]").evaluate_all(
        "trs => trs.map(tr => ({name: tr.dataset.name, bytes: tr.dataset.bytes,"
        " cells: Array.from(tr.cells, (td) => td.querySelector('code')?.textContent ?? td.textContent),"
        " memory: tr.querySelector('.bytes').textContent, label: tr.querySelector('.label').textContent}))")
    kpis = dict(page.locator("[data-key]").evaluate_all("els => els.map(e => [e.dataset.key, e.textContent])"))
    notes = dict(page.locator("[data-note]").evaluate_all("els => els.map(e => [e.dataset.note, e.textContent])"))
    total = page.locator("tfoot [data-key=activation_bytes]").get_attribute("data-bytes")
    return {"rows": rows, "kpis": kpis, "notes": notes, "total": int(total), **page.evaluate(READ_PAGE)}


def _check(shown: dict, cfg: Config, dtype: str) -> None:
    """Every shape and number the page shows equals model.trace / model.budget, formatted as model.units does."""
    t, b = trace(cfg, dtype), budget(cfg)
    assert [r["name"] for r in shown["rows"]] == [r.name for r in t.rows]
    for got, row in zip(shown["rows"], t.rows):
        name, symbolic, shape, numel, _ = got["cells"]
        assert (name, got["label"], symbolic) == (row.local, row.label, row.symbolic)
        assert (shape, numel, int(got["bytes"])) == (fmt.shape(row.shape), fmt.thousands(row.numel), row.nbytes)
        assert got["memory"] == fmt.nbytes(row.nbytes), row.name
    assert shown["total"] == t.activation_bytes
    k, n = shown["kpis"], shown["notes"]
    for key in ("params_exact", "params_approx", "flops_fwd_per_token", "flops_train_per_token",
                "flops_fwd_measured_per_token", "T_attn_equals_dense"):
        assert k[key] == fmt.thousands(getattr(b, key)), key
    assert n["params_exact"] == f"≈ {fmt.params(b.params_exact)}"
    for key in ("flops_fwd_per_token", "flops_train_per_token", "flops_fwd_measured_per_token"):
        assert n[key] == f"≈ {fmt.flops(getattr(b, key))}", key
    gap = 100 * (b.params_approx - b.params_exact) / b.params_exact
    assert n["params_approx"] == f"{'−' if gap < 0 else '+'}{abs(gap):.2f} % vs N"
    assert k["attn_share"] == fmt.percent(b.attn_share)
    assert k["activation_bytes"] == k["activation_bytes_kpi"] == fmt.nbytes(t.activation_bytes)
    parts = [b.params_emb, cfg.L * b.params_attn_block, cfg.L * b.params_mlp_block, b.params_norms, b.params_head]
    chart = shown["chart"]
    assert chart["value"] == parts and chart["exact"] == [fmt.thousands(p) for p in parts]
    assert chart["text"] == [f"{fmt.params(p)} · {fmt.percent(p / b.params_exact)}" if p else "0 (tied to W_te)"
                             for p in parts]
    assert shown["values"] == {f: [getattr(cfg, f)] * 2 for f in export.FIELDS} and shown["tie"] == cfg.tie


@pytest.mark.browser
def test_page_opens_offline_with_the_exported_config(page) -> None:
    shown = _shown(page, PRESETS["gpt2-small"], "fp32")
    _check(shown, PRESETS["gpt2-small"], "fp32")
    assert shown["preset"] == "gpt2-small"
    assert shown["kpis"]["params_exact"] == "124,439,808"
    scores = next(r for r in shown["rows"] if r["name"] == "blocks.0.attn.scores")
    assert scores["cells"][2] == "(8, 12, 1024, 1024)" and scores["memory"] == "384 MiB"
    assert page.locator("h1").text_content() == "Transformer Shapes"


@pytest.mark.browser
def test_sweep_of_configurations_matches_the_model(page) -> None:
    assert len(SWEEP) >= 20
    for cfg, dtype in SWEEP:
        page.evaluate(SET_CONFIG, [dataclasses.asdict(cfg), dtype])
        _check(_shown(page, cfg, dtype), cfg, dtype)
        assert page.locator(".notice").count() == 0  # valid configs are shown as given, no correction


@pytest.mark.browser
def test_h_snaps_to_a_divisor_and_T_is_clamped(page) -> None:
    set_value = "([name, v]) => { Bokeh.documents[0].get_model_by_name(name).value = v; }"
    page.evaluate(set_value, ["d", 770])  # h = 12 does not divide 770
    cfg = dataclasses.replace(PRESETS["gpt2-small"], d=770, h=snap_heads(770, 12))
    assert cfg.h == 11
    _check(_shown(page, cfg, "fp32"), cfg, "fp32")
    assert page.locator(".notice").text_content().startswith("h snapped 12 → 11: 770 is not divisible by 12")
    page.evaluate(set_value, ["h", 13])  # between divisors 11 and 14 of 770: nearest is 14
    cfg = dataclasses.replace(cfg, h=snap_heads(770, 13))
    _check(_shown(page, cfg, "fp32"), cfg, "fp32")
    assert "h snapped 13 → 14" in page.locator(".notice").text_content()
    page.evaluate(set_value, ["T", 3000])
    cfg = dataclasses.replace(cfg, T=1024)
    _check(_shown(page, cfg, "fp32"), cfg, "fp32")
    assert page.locator(".notice").text_content().startswith("T clamped 3,000 → 1,024: T cannot exceed T_max = 1,024")
    page.evaluate(set_value, ["T_max", 100])  # lowering T_max takes T along
    cfg = dataclasses.replace(cfg, T=100, T_max=100)
    _check(_shown(page, cfg, "fp32"), cfg, "fp32")
    assert "T clamped 1,024 → 100" in page.locator(".notice").text_content()
    page.evaluate(set_value, ["L", 2])  # a valid change clears the notice
    cfg = dataclasses.replace(cfg, L=2)
    _check(_shown(page, cfg, "fp32"), cfg, "fp32")
    assert page.locator(".notice").count() == 0
    page.evaluate(set_value, ["B", 10**9])  # out of bounds from script: clamped with the reason
    cfg = dataclasses.replace(cfg, B=BOUNDS["B"][1])
    _check(_shown(page, cfg, "fp32"), cfg, "fp32")
    assert "B = 1,000,000,000 is out of range" in page.locator(".notice").text_content()


@pytest.mark.browser
def test_presets_and_typed_values(page) -> None:
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('preset').value = 'gpt3-175b'; }")
    cfg = PRESETS["gpt3-175b"]
    shown = _shown(page, cfg, "fp32")
    _check(shown, cfg, "fp32")
    assert shown["preset"] == "gpt3-175b" and shown["kpis"]["params_exact"] == fmt.thousands(budget(cfg).params_exact)
    page.evaluate("() => { Bokeh.documents[0].get_model_by_name('d_input').value = 24576; }")  # beyond the slider
    cfg = dataclasses.replace(cfg, d=24576)
    shown = _shown(page, cfg, "fp32")
    _check(shown, cfg, "fp32")
    assert shown["preset"] == "custom"
    assert page.evaluate("() => Bokeh.documents[0].get_model_by_name('d').end") == 24576
    page.get_by_role("checkbox").uncheck()  # a real click
    cfg = dataclasses.replace(cfg, tie=False)
    _check(_shown(page, cfg, "fp32"), cfg, "fp32")
    page.locator(".noUi-handle").nth(export.FIELDS.index("L")).press("ArrowLeft")  # the keyboard on a slider
    cfg = dataclasses.replace(cfg, L=cfg.L - 1)
    _check(_shown(page, cfg, "fp32"), cfg, "fp32")
    page.locator("input[name=B_input]").fill("17")  # typing into B's box
    page.locator("input[name=B_input]").press("Enter")
    cfg = dataclasses.replace(cfg, B=17)
    _check(_shown(page, cfg, "fp32"), cfg, "fp32")
