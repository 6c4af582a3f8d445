"""The exported page's disk cache: an entry is read back only for its own key and the same code."""
from __future__ import annotations

import json

import pytest

from app.export import cache


@pytest.fixture
def where(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_SHAPES_CACHE", str(tmp_path))
    return tmp_path


def _counting(value):
    calls = []

    def compute():
        calls.append(1)
        return value
    return compute, calls


def test_an_entry_is_computed_once_and_read_back(where):
    compute, calls = _counting({"rows": [1, 2, 3]})
    assert cache.cached("structure", "tied,fp32,B", compute) == {"rows": [1, 2, 3]}
    assert cache.cached("structure", "tied,fp32,B", compute) == {"rows": [1, 2, 3]}
    assert len(calls) == 1
    other, other_calls = _counting(["other"])
    assert cache.cached("structure", "untied,fp32,B", other) == ["other"]
    assert len(other_calls) == 1
    assert not list(where.rglob("*.tmp"))


def test_a_torn_or_foreign_entry_is_computed_again(where):
    compute, calls = _counting([1])
    cache.cached("changes", "k", compute)
    (path,) = where.rglob("*.json")
    path.write_text('{"key": "k", "val')
    assert cache.cached("changes", "k", compute) == [1]
    path.write_text(json.dumps({"key": "another key", "value": [2]}))
    assert cache.cached("changes", "k", compute) == [1]
    assert len(calls) == 3
    assert json.loads(path.read_text()) == {"key": "k", "value": [1]}


def test_off_and_an_unwritable_folder_only_cost_time(tmp_path, monkeypatch):
    compute, calls = _counting(7)
    monkeypatch.setenv("TRANSFORMER_SHAPES_CACHE", "off")
    assert cache.folder() is None
    assert cache.cached("budget", "tied", compute) == cache.cached("budget", "tied", compute) == 7
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("TRANSFORMER_SHAPES_CACHE", str(blocker))
    assert cache.cached("budget", "tied", compute) == 7
    assert len(calls) == 3


def test_the_fingerprint_follows_the_code(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "rules.py"
    source.write_text("LIMIT = 1\n")
    monkeypatch.setattr(cache, "_SOURCES", (tmp_path / "pkg",))
    first = cache.fingerprint.__wrapped__()
    source.write_text("LIMIT = 2\n")
    assert cache.fingerprint.__wrapped__() != first
    assert len(cache.fingerprint()) == 20
