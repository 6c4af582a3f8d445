"""model.tokenizer: GPT-2's tiktoken encoding built offline from package data, hash-verified."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import types
from importlib import resources
from pathlib import Path

import pytest
import torch

from model import tokenizer as tok

SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "gpt2.tiktoken"  # ../shared from the repo

OFFLINE = textwrap.dedent("""
    import json, os, socket, sys

    def refuse(*args, **kwargs):
        raise OSError("network blocked by the test")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse

    import tiktoken
    try:  # the control: stock tiktoken needs the network or its cache
        tiktoken.get_encoding("gpt2").encode("x")
        stock = "worked"
    except Exception as exc:
        stock = type(exc).__name__

    from model.tokenizer import gpt2
    enc = gpt2()
    print(json.dumps({"n_vocab": enc.n_vocab, "hello": enc.encode("Hello world"), "stock": stock,
                      "eot": enc.encode("<|endoftext|>", allowed_special="all"),
                      "cache": os.listdir(os.environ["TIKTOKEN_CACHE_DIR"])}))
""")


def test_gpt2_offline_with_an_empty_cache_and_no_network(tmp_path):
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    env = {"TIKTOKEN_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", OFFLINE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["stock"] != "worked"  # the sandbox really is offline with an empty cache
    assert got["n_vocab"] == 50_257
    assert got["hello"] == [15_496, 995]
    assert got["eot"] == [50_256]
    assert got["cache"] == []  # nothing downloaded or written


def test_gpt2_in_process():
    enc = tok.gpt2()
    assert enc is tok.gpt2()  # built once
    assert enc.n_vocab == 50_257 and enc.eot_token == tok.EOT == 50_256
    assert enc.encode("Hello world") == [15_496, 995]
    assert enc.decode(enc.encode("The Transformer, from scratch.")) == "The Transformer, from scratch."


# --- the ranks file and its hash ------------------------------------------------------------------------

def test_package_data_has_the_published_hash():
    data = (resources.files("model") / "data" / "gpt2.tiktoken").read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256 == tok.RANKS_SHA256
    assert len(data.splitlines()) == 50_256  # ranks 0 ... 50,255; <|endoftext|> is the special token


def test_package_data_matches_shared_copy():
    if not SHARED.exists():
        pytest.skip(f"{SHARED} is not on this machine")
    assert hashlib.sha256(SHARED.read_bytes()).hexdigest() == SHA256
    assert SHARED.read_bytes() == (resources.files("model") / "data" / "gpt2.tiktoken").read_bytes()


def test_load_ranks():
    ranks = tok._load_ranks()
    assert len(ranks) == 50_256
    assert ranks[b"!"] == 0 and ranks[b"Hello"] == 15_496 and ranks[b" world"] == 995
    assert sorted(ranks.values()) == list(range(50_256))


def _fake_package(tmp_path: Path, data: bytes) -> types.SimpleNamespace:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "gpt2.tiktoken").write_bytes(data)
    return types.SimpleNamespace(files=lambda package: tmp_path)


def test_corrupted_ranks_are_refused(tmp_path, monkeypatch):
    good = (resources.files("model") / "data" / "gpt2.tiktoken").read_bytes()
    bad = good.replace(b"SGVsbG8= 15496", b"SGVsbG8= 15497")  # one rank changed
    assert bad != good
    monkeypatch.setattr(tok, "resources", _fake_package(tmp_path, bad))
    with pytest.raises(RuntimeError) as err:
        tok._load_ranks()
    msg = str(err.value)
    assert f"sha256 {hashlib.sha256(bad).hexdigest()}" in msg
    assert f"expected {SHA256}" in msg and "model/data/gpt2.tiktoken" in msg and "reinstall" in msg


def test_wrong_expected_hash_is_refused(monkeypatch):
    monkeypatch.setattr(tok, "RANKS_SHA256", "0" * 64)
    tok.gpt2.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=f"has sha256 {SHA256}, expected {'0' * 64}"):
            tok.gpt2()
    finally:
        tok.gpt2.cache_clear()


# --- tokenize ---------------------------------------------------------------------------------------------

def test_tokenize_pieces_and_bytes():
    t = tok.tokenize("Hello world")
    assert t.ids == (15_496, 995) and t.pieces == ("Hello", " world")
    assert t.n_bytes == 11 and t.bytes_per_token == 5.5 and t.truncated is False


def test_pieces_join_back_to_the_text():
    text = "Shapes: (B, T, d) -> (B, h, T, d_head). Attention is all you need!"
    t = tok.tokenize(text)
    assert "".join(t.pieces) == text
    assert list(t.ids) == tok.gpt2().encode(text)


def test_multibyte_characters():
    t = tok.tokenize("naïve 🙂")
    assert t.ids == (2_616, 38_776, 32_485) and t.pieces == ("na", "ïve", " 🙂")
    assert t.n_bytes == len("naïve 🙂".encode()) == 11
    llama = tok.tokenize("🦙")  # 4 UTF-8 bytes split over 3 tokens: each piece alone is not valid UTF-8
    assert llama.ids == (8_582, 99, 247) and llama.pieces == ("\ufffd",) * 3
    assert tok.gpt2().decode(list(llama.ids)) == "🦙" and llama.n_bytes == 4


def test_special_token_text_is_ordinary_text():
    t = tok.tokenize("<|endoftext|>")
    assert tok.EOT not in t.ids and len(t.ids) > 1
    assert "".join(t.pieces) == "<|endoftext|>"


def test_empty_text():
    t = tok.tokenize("")
    assert t.ids == () and t.pieces == () and t.n_bytes == 0 and t.bytes_per_token == 0.0


def test_long_text_is_truncated():
    assert tok.MAX_TEXT_CHARS == 100_000
    exact = tok.tokenize("a" * tok.MAX_TEXT_CHARS)
    over = tok.tokenize("a" * tok.MAX_TEXT_CHARS + "bbbb")
    assert exact.truncated is False and over.truncated is True
    assert over.n_bytes == exact.n_bytes == 100_000
    assert over.ids == exact.ids


@pytest.mark.parametrize("bad", [None, 42, b"bytes"])
def test_tokenize_rejects_non_strings(bad):
    with pytest.raises(ValueError, match=f"text must be a string, got {type(bad).__name__}"):
        tok.tokenize(bad)


# --- batch ------------------------------------------------------------------------------------------------

def test_batch_shape_and_content():
    ids = tok.tokenize("Hello world, hello tokens").ids  # 5 tokens
    assert len(ids) == 5
    x = tok.batch("Hello world, hello tokens", B=3, T=4)
    assert x.shape == (3, 4) and x.dtype == torch.int64
    assert x.flatten().tolist() == list(ids * 3)[:12]  # repeated to fill B * T, row by row


def test_batch_takes_the_first_B_times_T_tokens():
    x = tok.batch("Hello world", B=1, T=1)
    assert x.tolist() == [[15_496]]


def test_batch_of_empty_text_is_end_of_text():
    assert tok.batch("", B=2, T=3).tolist() == [[50_256] * 3] * 2


def test_batch_feeds_the_model():
    from model import GPT, Config

    c = Config(B=2, T=6, d=8, h=2, L=1, V=50_257, T_max=8)
    with torch.device("meta"):
        logits, loss = GPT(c)(tok.batch("Hello world", B=2, T=6).to("meta"))
    assert logits.shape == (2, 6, 50_257) and loss.shape == ()


@pytest.mark.parametrize("B, T, message", [
    (0, 4, "B=0 is out of range"), (2, 0, "T=0 is out of range"), (-1, 3, "B=-1 is out of range"),
    (2.5, 3, "B must be a whole number from 1 to 4,096, got 2.5"), ("2", 3, "B must be a whole number"),
    (2, 10**8, "T=100,000,000 is out of range"),
    (4_096, 2**24, "B·T = 4,096 × 16,777,216 = 68,719,476,736 tokens per pass is more than 134,217,728"),
])
def test_batch_rejects_bad_shapes(B, T, message):
    with pytest.raises(ValueError, match=message):
        tok.batch("hi", B, T)
