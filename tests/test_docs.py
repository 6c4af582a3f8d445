"""The README a newcomer reads in five minutes, and docs/ for the rest: every link in both leads somewhere real."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pagetools import run_cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"(?<!!)\[[^\]]+\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (hyphens and underscores kept), spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out, fence = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        fence ^= line.startswith("```")
        if not fence and re.match(r"#{1,6} ", line):
            out.add(slug(line.lstrip("#")))
    return out


def links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)  # code blocks hold no links
    return [a or b for a, b in LINK.findall(text)]


def test_the_readme_is_short_and_gives_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    assert "    make run " in text and "    make test " in text


def test_every_docs_page_is_linked_from_the_readme():
    linked = {link.split("#")[0] for link in links(README)}
    assert {f"docs/{p.name}" for p in DOCS} <= linked


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_leads_to_a_file_and_heading_that_exist(page):
    checked = 0
    for link in links(page):
        if re.match(r"[a-z]+://", link):  # a page outside the project: not fetched (no internet here)
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name}: {link} leads to no file"
        if anchor:
            assert anchor in anchors(path), f"{page.name}: {link} names no heading of {path.name}"
        checked += 1
    assert checked and (page == README or "../README.md" in links(page))  # a docs page leads back to the README


def test_the_readmes_python_example_gives_what_its_comments_say():
    code = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    lines = code.splitlines()
    scope: dict = {}
    exec("\n".join(lines[:2]), scope)
    assert eval("budget(cfg).params_exact", scope) == 124_439_808
    assert eval("trace(cfg).rows[0].shape", scope) == (8, 1024)
    assert eval("plan(cfg).memory.peak", scope) > 0


def test_the_readmes_config_json_command_runs(capsys):
    config = ROOT / "tests" / "hf" / "published" / "qwen3-4b-instruct-2507.json"
    code, out, err = run_cli(["--hf-config", str(config), "--table", "train", "--gpus", "8", "--zero", "3"], capsys)
    assert code == 0 and "N = 4,022,468,096" in out
