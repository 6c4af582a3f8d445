"""`--hf-model ID`: a model id's config.json from a real hub-layout cache, offline; one line where it cannot be had.

The cache is laid out as huggingface_hub lays it out (blobs/, snapshots/<commit>/config.json a link to its blob,
refs/main naming the commit), and huggingface_hub's own `try_to_load_from_cache` finds the file there too."""
from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import try_to_load_from_cache

from model import hub
from model.cli import main

PUBLISHED = Path(__file__).parent / "hf" / "published"
COUNTS = json.loads((PUBLISHED / "counts.json").read_text())
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def lay_out(cache: Path, model_id: str, data: bytes, ref: str = "main") -> Path:
    """`data` as `model_id`'s config.json in a hub cache at `cache`, as huggingface_hub writes it."""
    repo = cache / ("models--" + model_id.replace("/", "--"))
    blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(data)
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").symlink_to(os.path.relpath(blob, snapshot))
    (repo / "refs").mkdir()
    (repo / "refs" / ref).write_text(COMMIT)
    return snapshot / "config.json"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty hub cache in HF_HUB_CACHE, offline (HF_HUB_OFFLINE): nothing is fetched."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "hub").mkdir()
    return tmp_path / "hub"


@pytest.mark.parametrize("name, model_id", [("mistral-nemo-12b", "mistralai/Mistral-Nemo-Base-2407"),
                                            ("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B")])
def test_a_model_id_is_read_from_the_hub_cache_offline(cache, capsys, name, model_id):
    path = lay_out(cache, model_id, (PUBLISHED / f"{name}.json").read_bytes())
    assert try_to_load_from_cache(model_id, "config.json", cache_dir=cache) == str(path)  # the hub's own layout
    assert main(["--hf-model", model_id, "--table", "budget"]) == 0
    out, err = capsys.readouterr()
    assert f"{COUNTS[name]['parameters']:,}" in out
    assert err.startswith(f"note: {model_id} ({path}): ")


def test_the_cli_and_the_cached_file_give_the_same_model(cache, capsys):
    data = (PUBLISHED / "gemma-3-1b.json").read_bytes()
    lay_out(cache, "google/gemma-3-1b-pt", data)
    assert main(["--hf-model", "google/gemma-3-1b-pt", "--table", "kv", "--csv"]) == 0
    by_id = capsys.readouterr().out
    assert main(["--hf-config", str(PUBLISHED / "gemma-3-1b.json"), "--table", "kv", "--csv"]) == 0
    assert capsys.readouterr().out == by_id


@pytest.mark.parametrize("argv, env, message", [
    (["--hf-model", "Qwen/Qwen3-8B"], {}, "--hf-model Qwen/Qwen3-8B: not in the Hugging Face cache (.*) and "
     "HF_HUB_OFFLINE is set: run `huggingface-cli download Qwen/Qwen3-8B config.json` where the machine is online, "
     "or give --hf-config PATH"),
    (["--hf-model", "Qwen/Qwen3-8B"], {"HF_HUB_OFFLINE": "", "HF_ENDPOINT": "http://127.0.0.1:{port}"},
     "--hf-model Qwen/Qwen3-8B: not in the Hugging Face cache (.*), and http://127.0.0.1:[0-9]+ cannot be "
     "reached (.*): run `huggingface-cli download Qwen/Qwen3-8B config.json`"),
    (["--hf-model", "../../etc/passwd"], {}, "--hf-model '../../etc/passwd' is no Hugging Face model id: give "
     "one such as Qwen/Qwen3-8B, or give --hf-config PATH"),
    (["--hf-model", "Qwen/Qwen3-8B", "--preset", "gpt2-small"], {}, "--preset and --hf-model each name a model: "
     "give one"),
])
def test_a_model_id_that_cannot_be_read_is_one_line(cache, capsys, monkeypatch, argv, env, message):
    with socket.socket() as s:  # a port nothing listens on: the connection is refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for key, value in env.items():
        monkeypatch.setenv(key, value.format(port=port))
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--table", "budget"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.splitlines()[-1]  # argparse's usage line, then the one line
    assert re.match(r".*?: " + message, last), last


def test_a_wrapper_by_id_reads_its_text_model(cache):
    """A gemma3 (multimodal) file in the cache: its text model, the vision tower named as left out."""
    doc = {"model_type": "gemma3", "text_config": json.loads((PUBLISHED / "gemma-3-27b.json").read_text())}
    lay_out(cache, "google/gemma-3-27b-it", json.dumps(doc).encode())
    out = subprocess.run([sys.executable, "-m", "model", "--hf-model", "google/gemma-3-27b-it", "--table", "budget"],
                         capture_output=True, text=True, timeout=120, env={**os.environ})
    assert out.returncode == 0, out.stderr
    assert f"{COUNTS['gemma-3-27b']['parameters']:,}" in out.stdout
    assert "left out: the SigLIP vision tower and the multimodal projector" in out.stderr


def test_the_cache_is_found_where_huggingface_hub_looks(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert hub.cache_dir() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert hub.cache_dir() == tmp_path / "elsewhere"
