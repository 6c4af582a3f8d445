"""GPT-2's tokenizer (tiktoken), offline: the BPE ranks ship with this package and their hash is verified.

tiktoken normally downloads its ranks on first use; `gpt2()` never touches the network or tiktoken's cache.
The file is byte-for-byte tiktoken's `r50k_base` (`gpt2` shares its ranks, split pattern and special token).
"""
from __future__ import annotations

import base64
import functools
import hashlib
from dataclasses import dataclass
from importlib import resources

import tiktoken
import torch
from tiktoken_ext.openai_public import r50k_pat_str

from .config import check_field, sizes_fix

RANKS_FILE = "gpt2.tiktoken"
RANKS_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
EOT = 50_256  # <|endoftext|>
MAX_TEXT_CHARS = 100_000  # longer text is cut before encoding, so a pasted book cannot stall a server


def _load_ranks() -> dict[bytes, int]:
    data = (resources.files("model") / "data" / RANKS_FILE).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != RANKS_SHA256:
        raise RuntimeError(f"model/data/{RANKS_FILE} has sha256 {digest}, expected {RANKS_SHA256}: reinstall the package")
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@functools.cache
def gpt2() -> tiktoken.Encoding:
    """tiktoken's GPT-2 `Encoding` (n_vocab 50,257; "Hello world" -> [15496, 995]), built offline."""
    return tiktoken.Encoding("gpt2", pat_str=r50k_pat_str, mergeable_ranks=_load_ranks(),
                             special_tokens={"<|endoftext|>": EOT}, explicit_n_vocab=50_257)


@dataclass(frozen=True)
class Tokens:
    """Text split into GPT-2 tokens. `truncated` says the text was cut to MAX_TEXT_CHARS characters first."""

    ids: tuple[int, ...]
    pieces: tuple[str, ...]  # each token's text (bytes decoded leniently: a piece may be part of a character)
    n_bytes: int  # UTF-8 bytes of the (possibly cut) text
    truncated: bool

    @property
    def bytes_per_token(self) -> float:
        return self.n_bytes / len(self.ids) if self.ids else 0.0


def tokenize(text: str) -> Tokens:
    """Split text into GPT-2 tokens; "<|endoftext|>" in the text is ordinary text, never the special token."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    truncated = len(text) > MAX_TEXT_CHARS
    text = text[:MAX_TEXT_CHARS]
    enc = gpt2()
    ids = enc.encode_ordinary(text)
    pieces = tuple(enc.decode_single_token_bytes(i).decode("utf-8", errors="replace") for i in ids)
    return Tokens(ids=tuple(ids), pieces=pieces, n_bytes=len(text.encode("utf-8")), truncated=truncated)


def batch(text: str, B: int, T: int) -> torch.Tensor:
    """A (B, T) int64 batch of token ids for a forward pass: the text's tokens, repeated to fill B * T (at most
    `model.config.MAX_TOKENS`, as a pass takes: 1 GiB of ids)."""
    B, T = check_field("B", B), check_field("T", T)
    if (fix := sizes_fix(B, T, 1)) is not None:  # ids, no heads: B·T is the product that binds
        raise ValueError(fix)
    ids = tokenize(text).ids or (EOT,)
    n = B * T
    reps = -(-n // len(ids))
    return torch.tensor((ids * reps)[:n], dtype=torch.long).view(B, T)
