"""A Hugging Face model id's config.json: `config_json("Qwen/Qwen3-8B")` -> its bytes.

Read first from the local hub cache, as huggingface_hub lays it out: `HF_HUB_CACHE` (else `HF_HOME`/hub, else
~/.cache/huggingface/hub) holds models--{org}--{name}/refs/{revision}, a commit hash, and
models--{org}--{name}/snapshots/{commit}/config.json. Where the cache has no copy, it is fetched from
huggingface.co (`HF_ENDPOINT`; `HF_TOKEN` for a gated model) with the standard library, unless `HF_HUB_OFFLINE`
is set (a served page never fetches: `fetch=False`); nothing is written to the cache. A problem raises `HubError` (a
ValueError) in one line that names the id, where it looked and what to do; the caller names its own way in front
("--hf-model …") and its own alternative after.
"""
from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from pathlib import Path

from . import hf

REVISION = "main"
TIMEOUT_S = 10  # a config.json is a few kB: longer than this, the network is down
MODEL_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}(/[A-Za-z0-9][\w.-]{0,95})?")  # "org/name" or "name", as the Hub names
# a repository ("--" and ".." are not allowed in a name)
DOWNLOAD = "huggingface-cli download {id} config.json"  # what puts a config.json into the cache


class HubError(ValueError):
    """A model id that is malformed, not in the cache and not fetched, or refused by the Hub: one line."""


def cache_dir() -> Path:
    """The hub cache huggingface_hub uses: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def offline() -> bool:
    """HF_HUB_OFFLINE set to 1, true, yes or on: never fetch."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def check_id(model_id: str) -> str:
    """`model_id` if it is a Hub repository id ("Qwen/Qwen3-8B"), else HubError."""
    if not isinstance(model_id, str) or not MODEL_ID.fullmatch(model_id) or "--" in model_id or ".." in model_id:
        raise HubError(f"{model_id!r} is no Hugging Face model id: give one such as Qwen/Qwen3-8B")
    return model_id


def cached(model_id: str, revision: str = REVISION) -> Path | None:
    """The cached config.json of `model_id` at `revision` (a branch or tag in refs/, or a commit), or None."""
    repo = cache_dir() / ("models--" + check_id(model_id).replace("/", "--"))
    ref = repo / "refs" / revision
    try:
        commit = ref.read_text().strip() if ref.is_file() else revision
    except OSError:
        return None
    path = repo / "snapshots" / commit / "config.json"
    return path if path.is_file() else None


def config_json(model_id: str, revision: str = REVISION, fetch: bool = True) -> tuple[bytes, str]:
    """The bytes of `model_id`'s config.json and where they came from (the cached file's path, or its URL); from
    the cache alone where `fetch` is false."""
    path = cached(model_id, revision)
    if path is not None:
        with open(path, "rb") as f:
            return f.read(hf.MAX_BYTES + 1), str(path)
    where = f"not in the Hugging Face cache ({cache_dir()})"
    download = DOWNLOAD.format(id=model_id)
    if not fetch:
        raise HubError(f"{model_id}: {where} of this server: run `{download}` on the server")
    if offline():
        raise HubError(f"{model_id}: {where} and HF_HUB_OFFLINE is set: run `{download}` where the machine is "
                       f"online")
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    url = f"{endpoint}/{model_id}/resolve/{revision}/config.json"
    request = urllib.request.Request(url)
    if os.environ.get("HF_TOKEN"):
        request.add_header("Authorization", f"Bearer {os.environ['HF_TOKEN']}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return response.read(hf.MAX_BYTES + 1), url
    except urllib.error.HTTPError as e:
        why = {401: "the Hub asks for a login (a gated or private model: set HF_TOKEN)",
               403: "the Hub refuses it (a gated model: accept its licence on its page, then set HF_TOKEN)",
               404: "the Hub has no such model or no config.json in it"}.get(e.code, f"the Hub answered {e.code}")
        raise HubError(f"{model_id}: {where}, and {why}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", None) or e
        raise HubError(f"{model_id}: {where}, and {endpoint} cannot be reached ({reason}): run `{download}` where "
                       f"the machine is online") from None
