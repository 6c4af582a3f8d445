"""`python -m model`: golden tables in every format, and one clear line with exit status 2 for bad input."""
from __future__ import annotations

import collections
import csv
import dataclasses
import io
import json
import shlex
import subprocess
import sys

import pytest

from model import PRESETS, budget, trace
from model.cli import build_parser, config_from_args, model_options
from model.config import ALL_PRESETS
from pagetools import run_cli

CASES = {
    "gpt2-small.txt": ["--preset", "gpt2-small"],
    "gpt2-small.md": ["--preset", "gpt2-small", "--markdown"],
    "gpt2-small-shapes.csv": ["--preset", "gpt2-small", "--csv"],
    "gpt2-small-budget.csv": ["--preset", "gpt2-small", "--csv", "--table", "budget"],
    "gpt3-175b-budget.txt": ["--preset", "gpt3-175b", "--table", "budget"],
    "tiny-untied-bf16-expanded.txt": ["--B", "2", "--T", "5", "--d", "12", "--h", "3", "--L", "2", "--V", "11",
                                      "--T-max", "8", "--untied", "--dtype", "bf16", "--expand"],
    "tiny-T1.json": ["--B", "1", "--T", "1", "--d", "4", "--h", "4", "--L", "1", "--V", "3", "--T-max", "1", "--json"],
}


run = run_cli  # tests/pagetools.py


@pytest.mark.parametrize("name", CASES)
def test_golden(name, capsys, golden):
    code, out, err = run(CASES[name], capsys)
    assert (code, err) == (0, "")
    golden(name, out)


def test_json_matches_the_api(capsys):
    code, out, _ = run(["--preset", "gpt2-medium", "--json"], capsys)
    doc = json.loads(out)
    cfg = PRESETS["gpt2-medium"]
    assert code == 0 and doc["budget"]["params_exact"] == 354_823_168 == budget(cfg).params_exact
    assert [tuple(r["shape"]) for r in doc["rows"]] == [r.shape for r in trace(cfg).rows]
    assert doc["activation_bytes"] == trace(cfg).activation_bytes


TABLES = ("all", "shapes", "budget", "kv", "train", "changes")


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("fmt", ["text", "--json", "--markdown", "--csv"])
def test_every_table_prints_in_every_format(table, fmt, capsys):
    """`--table T` in each format (a CSV file holds one table, so `all` has none: one line says so)."""
    argv = ["--preset", "llama3.2-1b", "--T", "512", "--table", table, *([] if fmt == "text" else [fmt])]
    code, out, err = run(argv, capsys)
    if (table, fmt) == ("all", "--csv"):
        assert code == 2 and "a CSV file holds one table" in err
        return
    assert (code, err) == (0, "") and out.strip()
    if fmt == "--json":
        assert json.loads(out)["config"]["d"] == 2048


def test_a_tables_json_is_its_part_of_the_whole_report_and_the_whole_report_holds_the_training_plan(capsys):
    argv = ["--preset", "gpt2-small", "--dtype", "bf16"]
    whole = json.loads(run([*argv, "--json", "--gpus", "8", "--zero", "1"], capsys)[1])
    parts = {"shapes": ["rows", "activation_bytes", "saved_bytes", "memory"], "budget": ["budget", "lines"],
             "kv": ["kv"]}
    for table, keys in parts.items():
        doc = json.loads(run([*argv, "--table", table, "--json"], capsys)[1])
        assert list(doc) == ["config", "dtype", *keys] and all(doc[k] == whole[k] for k in keys)
    train = json.loads(run([*argv, "--table", "train", "--json", "--gpus", "8", "--zero", "1"], capsys)[1])
    assert whole["train"] == train["train"] and whole["references"] == train["references"]
    assert whole["train"]["setup"]["gpus"] == 8 and whole["kv"][0]["key"] == "memory/kv_cache"


def test_csv_rows_sum_to_the_activation_total(capsys):
    _, out, _ = run(["--preset", "gpt2-small", "--csv", "--expand"], capsys)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 4 + 12 * 17 + 3
    assert sum(int(r["nbytes"]) for r in rows if r["view"] == "0") == trace(PRESETS["gpt2-small"]).activation_bytes


@pytest.mark.parametrize("argv, message", [
    (["--d", "770"], "d=770 is not divisible by h=12; each head gets d/h features, so h must divide d (nearest divisors of 770: 11, 14)"),
    (["--d", "7.5"], "argument --d: invalid int value: '7.5'"),
    (["--d", "1000000000"], "d=1,000,000,000 is out of range"),
    (["--B", "0"], "B=0 is out of range"),
    (["--L", "-3"], "L=-3 is out of range"),
    (["--T", "4096"], "T=4,096 exceeds T_max=1,024: the learned position table W_pe has only T_max rows"),
    (["--preset", "gpt5"], "argument --preset: unknown preset 'gpt5'; presets: gpt2-small, gpt2-medium"),
    (["--preset", "gpt2-smal"], "unknown preset 'gpt2-smal' (did you mean gpt2-small?); presets: gpt2-small"),
    (["--preset", "Llama3-8B"], "unknown preset 'Llama3-8B' (did you mean llama3-8b?)"),
    (["--csv", "--table", "all"], "a CSV file holds one table"),
    (["--json", "--csv"], "not allowed with argument"),
    (["--dtype", "int8"], "argument --dtype: invalid choice: 'int8'"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["--preset", "mistral-7b", "--W", "0"], "W=0 is out of range"),
    (["--preset", "gpt-oss-20b", "--swiglu-limit", "abc"], "invalid number 'abc': write a number such as 30.0, or none"),
    (["--d-R", "4"], "rope_dim=4 is set but latent_dim is not"),
    (["--preset", "deepseek-v3", "--d-c", "x"], "invalid number 'x': write a whole number, or none"),
    (["--preset", "gemma-3-1b", "--attn-softcap", "50"], "attn_softcap=50 soft-caps the scores, which a fused kernel never"),
    (["--preset", "llama3-8b", "--B", "4096", "--T", "65536", "--T-max", "65536"],
     "B·T = 4,096 × 65,536 = 268,435,456 tokens per pass is more than 134,217,728 (2²⁷), beyond which a tensor of the "
     "pass may not fit torch's 64-bit sizes; lower B to at most 2,048 at this T, or T"),
    (["--preset", "llama3-8b", "--h", "128", "--T", "16777216"], "h·T = 128 × 16,777,216 = 2,147,483,648 is more than"),
    (["--T", "16777217"], "T=16,777,217 is out of range"),
])
def test_bad_arguments_give_one_line_and_status_2(argv, message, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("python -m model: error: ") and message in err


def _argv_of(cfg, parser) -> list[str]:
    """The command line that sets every field of `cfg` from the default preset: each field by its flag."""
    flag = {a.dest: a.option_strings[0] for a in parser._actions if a.option_strings}
    argv = [] if cfg.tie else ["--untied"]
    for name, value in dataclasses.asdict(cfg).items():
        if name == "tie":
            continue
        if isinstance(value, bool):
            argv.append(flag[name] if value else f"--no-{flag[name][2:]}")
        elif value is None or isinstance(value, (list, tuple)):
            argv += [flag[name], ",".join(map(str, value)) if value else "none"]
        else:
            argv += [flag[name], str(value)]
    return argv


@pytest.mark.parametrize("name", ALL_PRESETS)
def test_every_field_of_every_preset_has_a_flag(name):
    """Windows, latent attention and Gemma's and gpt-oss's extras included: the flags rebuild each preset."""
    parser = build_parser()
    cfg = ALL_PRESETS[name]
    assert config_from_args(parser.parse_args(_argv_of(cfg, parser))) == cfg


def _variants(cfg):
    """cfg, and cfg with each of its head, qk-norm, d_ff and h_kv flipped or cleared (where Config takes it)."""
    for change in ({}, {"tie": not cfg.tie, "B": 3, "T": min(cfg.T, 100)}, {"qk_norm": not cfg.qk_norm},
                   {"ff_dim": None}, {"kv_heads": None}, {"kv_heads": 1}):
        try:
            yield dataclasses.replace(cfg, **change)
        except ValueError:  # a variant Config refuses (latent attention with qk-norm)
            pass


@pytest.mark.parametrize("name", PRESETS)
def test_model_options_give_the_model_back(name):
    """`model_options` (the exported page's export commands, compiled) names every field that differs from its
    starting preset, --tied, --no-qk-norm and --d-ff none included: parsed, they rebuild the model."""
    parser = build_parser()
    for cfg in _variants(PRESETS[name]):
        assert config_from_args(parser.parse_args(shlex.split(model_options(cfg)))) == cfg, model_options(cfg)


def test_tied_and_untied_are_one_choice(capsys):
    code, _, err = run(["--tied", "--untied"], capsys)
    assert code == 2 and err.count("\n") == 1 and "not allowed with argument" in err


def test_a_window_or_a_latent_rank_cleared_with_none(capsys):
    code, out, _ = run(["--preset", "gemma-3-1b", "--W", "none", "--json"], capsys)
    assert code == 0
    full = dataclasses.replace(ALL_PRESETS["gemma-3-1b"], window=None, full_layers=())
    assert json.loads(out)["budget"]["params_exact"] == budget(full).params_exact
    kv = ["--preset", "deepseek-v3", "--table", "kv", "--json", "--dtype", "bf16"]
    direct, ranked = (json.loads(run(argv, capsys)[1]) for argv in (kv + ["--d-cq", "none"], kv))
    assert direct["config"]["q_latent_dim"] is None and ranked["config"]["q_latent_dim"] == 1_536
    assert direct.pop("config") != ranked.pop("config") and direct == ranked  # q's rank leaves the cache alone


def test_module_entry_point_runs():
    done = subprocess.run([sys.executable, "-m", "model", "--preset", "gpt2-xl", "--table", "budget"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "1,557,611,200" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "model", "--h", "7"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "nearest divisors of 768: 6, 8" in bad.stderr


def test_a_smaller_position_table_takes_T_down_with_it(capsys):
    code, out, _ = run(["--preset", "gpt3-175b", "--T-max", "1024", "--table", "budget"], capsys)
    assert code == 0 and out.startswith("GPT  N = 174,591,676,416 · B=8 T=1,024 d=12,288 h=96 (d_head=128) L=96 "
                                        "V=50,257 T_max=1,024")


WIDE = [["--preset", "llama3-8b"], ["--preset", "qwen3-0.6b", "--table", "train"], ["--preset", "gpt3-175b", "--table",
        "train", "--B", "1", "--D", "300e9", "--gpus", "1024", "--zero", "3"], ["--preset", "llama3-8b", "--table",
        "changes", "--dtype", "bf16"], ["--preset", "qwen3-0.6b", "--table", "kv"],
        ["--d", "64", "--h", "4", "--L", "2", "--V", "50257", "--T", "16", "--values", "--text", "The cat sat on the mat."]]


@pytest.mark.parametrize("argv, columns", [*((a, c) for a in WIDE for c in (100, 80)),
                                           (["--preset", "gpt2-small", "--expand"], 100)])  # names like blocks.11.ln_1
def test_plain_text_fits_the_terminal_by_wrapping_descriptions_and_formulas(argv, columns, capsys):
    """COLUMNS (or the terminal) sets the width; every figure is still there, its words and formula wrapped (at
    spaces only), a description under its row where the columns leave it too little room."""
    code, out, err = run(argv, capsys, columns=columns)
    assert (code, err) == (0, "")
    assert max(len(line) for line in out.splitlines()) <= columns
    code, full, _ = run(argv, capsys)  # a pipe: lines as long as they are
    assert max(len(line) for line in full.splitlines()) > columns
    chars = lambda text: collections.Counter("".join(text.split()))  # noqa: E731
    assert chars(full) - chars(out) in (collections.Counter(), chars("what"))  # the same text; "what" under its row


@pytest.mark.parametrize("argv", [["--preset", "llama3-8b"], ["--table", "train"], ["--table", "budget"],
                                  ["--preset", "qwen3-0.6b", "--table", "changes"], ["--markdown"]])
def test_N_is_in_the_header_line_and_at_the_foot(argv, capsys):
    """As torchinfo prints "Total params": N in the first line, and (plain text) the last."""
    cfg = PRESETS[argv[1] if argv[0] == "--preset" else "gpt2-small"]
    n = f"{budget(cfg).params_exact:,}"
    code, out, _ = run(argv, capsys)
    lines = out.strip().splitlines()
    assert code == 0 and lines[0].startswith(("GPT  N = " + n + " · B=", "**GPT** N = " + n + " · B="))
    if argv != ["--markdown"]:
        assert lines[-1].startswith(f"Total parameters: N = {n} (")
