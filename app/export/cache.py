"""A disk cache for the exported page's costly parts: each pass structure's rows, memory lines and peak candidates,
and each changes table, come from real passes (forward and backward at three probes) and take about a second each.

An entry is keyed by what it is (the structure's key) and by a fingerprint of the code that computes it: the
sources of `model/` and `app/`, and torch's version. Any change to them starts a fresh set of entries, so
a cached figure is always the one the current code would compute. The folder is `$TRANSFORMER_SHAPES_CACHE`, else
`$XDG_CACHE_HOME/transformer-shapes`, else `~/.cache/transformer-shapes`; `TRANSFORMER_SHAPES_CACHE=off` turns the
cache off. An entry that can't be read (a torn or foreign file) is computed again, and a folder that can't be
written only costs the time.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from typing import Any
from pathlib import Path

import torch

import model

_SOURCES = (Path(model.__file__).parent, Path(__file__).parent.parent)  # model/ and app/


@functools.cache
def fingerprint() -> str:
    """A hash of the code behind every cached entry: the sources of `model/` and `app/`, and torch's version."""
    h = hashlib.sha256(torch.__version__.encode())
    for folder in _SOURCES:
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".py", ".js") and path.is_file():
                h.update(path.relative_to(folder.parent).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:20]


def folder() -> Path | None:
    """Where entries live, or None when the cache is off."""
    given = os.environ.get("TRANSFORMER_SHAPES_CACHE")
    if given == "off":
        return None
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "transformer-shapes"


def cached(kind: str, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()`, or the JSON entry it wrote before for (`kind`, `key`) with the same code."""
    where = folder()
    if where is None:
        return compute()
    path = where / fingerprint() / kind / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")
    try:
        entry = json.loads(path.read_text())
        if entry.get("key") == key:
            return entry["value"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    value = compute()
    _write(path, {"key": key, "value": value})
    return value


def _write(path: Path, entry: dict) -> None:
    """Write `entry` whole or not at all (a reader never sees half a file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as f:
            tmp = Path(f.name)
            json.dump(entry, f)
        os.replace(tmp, path)
    except OSError:
        if "tmp" in locals():
            tmp.unlink(missing_ok=True)
