"""The package as a wheel: built from a copy of the working tree, installed into a fresh virtual environment, used
from an empty folder outside the checkout.

- The wheel carries every file of the packages `app` and `model` (modules, the BPE ranks model/data/gpt2.tiktoken,
  the export's app/export/page.js): a data file added to a package but not to pyproject.toml fails here.
- Installed (torch pinned to the CPU wheel, as the Makefile does), `app` and `model` import from the environment's
  site-packages, and no other `app` or `model` on its sys.path shadows them.
- `python -m model --preset gpt2-small --json` gives N = 124,439,808; `python -m app export out.html` writes a
  page that shows N from file:// in Chromium, fetching nothing; `panel serve` of the installed app/explorer.py
  answers a request for the explorer.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from appserver import free_port
from processes import stop_group

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "model")
TORCH = "torch==2.13.0"  # the Makefile's pin: plain `torch` pulls the CUDA builds
IGNORED = {"__pycache__", ".pyc"}


def _package_files() -> list[str]:
    """Every file under app/ and model/ in the working tree (git's view where there is one), as wheel paths."""
    try:
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", *PACKAGES], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = [str(p.relative_to(ROOT)) for pkg in PACKAGES for p in (ROOT / pkg).rglob("*") if p.is_file()]
    return sorted(f for f in listed if not IGNORED & {*Path(f).parts, Path(f).suffix} and (ROOT / f).is_file())


def _run(cmd: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(cmd)} exited with {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _wait_listening(port: int, proc: subprocess.Popen, log_path: Path, timeout: float = 120) -> None:
    """Until the server accepts connections (a first page, built while torch and Panel warm up, may take long)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"panel serve exited:\n{log_path.read_text(errors='replace')}"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise AssertionError(f"panel serve did not listen within {timeout:.0f} s")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """`python -m build --wheel` of a copy of the working tree (the checkout gets no build/ or egg-info)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    for name in ("pyproject.toml", "README.md", *_package_files()):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp / "dist")], cwd=source)
    [built] = (tmp / "dist").glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel installed; returns its python. No site packages of this one."""
    env = tmp_path_factory.mktemp("venv") / "env"
    _run([sys.executable, "-m", "venv", str(env)], cwd=env.parent)
    python = env / "bin" / "python"
    # --no-compile: byte-compiling torch's thousands of modules would take most of the install
    _run([str(python), "-m", "pip", "install", "-q", "--no-compile", TORCH, str(wheel)], cwd=env.parent, timeout=900)
    return python


@pytest.fixture
def empty(tmp_path) -> Path:
    """An empty folder outside the checkout, the working directory of every command."""
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_wheel_carries_every_package_file(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [f for f in _package_files() if f not in names]
    assert missing == [], f"the wheel lacks {missing}: add them to [tool.setuptools] in pyproject.toml"
    assert {"model/data/gpt2.tiktoken", "app/export/page.js"} <= names  # read at run time: the BPE ranks, the export


def test_packages_import_from_the_installed_wheel(installed: Path, empty: Path) -> None:
    code = """
import importlib.util, json, os, sys
found = {}
for name in ("app", "model"):
    found[name] = {"origin": importlib.util.find_spec(name).origin,  # a folder or a module of that name:
                   "others": [p for p in sys.path if any(os.path.exists(os.path.join(p or ".", name + ext))
                                                         for ext in ("", ".py"))]}
import app.export, model.tokenizer
found["ids"] = list(model.tokenizer.gpt2().encode("Hello, world"))
print(json.dumps(found))
"""
    found = json.loads(_run([str(installed), "-c", code], cwd=empty).stdout)
    site = _run([str(installed), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=empty).stdout.strip()
    for name in PACKAGES:
        assert found[name]["origin"] == os.path.join(site, name, "__init__.py")
        assert not found[name]["origin"].startswith(str(ROOT))
        assert found[name]["others"] == [site], f"more than one {name!r} on sys.path: {found[name]['others']}"
    assert found["ids"] == [15496, 11, 995]  # GPT-2's ids for "Hello", ",", " world": the shipped ranks work


def test_cli_from_an_empty_folder(installed: Path, empty: Path) -> None:
    out = _run([str(installed), "-m", "model", "--preset", "gpt2-small", "--json"], cwd=empty).stdout
    assert json.loads(out)["budget"]["params_exact"] == 124_439_808
    assert list(empty.iterdir()) == []


def test_export_opens_from_file(installed: Path, empty: Path, chromium) -> None:
    _run([str(installed), "-m", "app", "export", "out.html"], cwd=empty)
    page = chromium.new_page()
    outside: list[str] = []
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file://", "data:"))
               else (outside.append(r.request.url), r.abort()))
    try:
        page.goto((empty / "out.html").as_uri())
        expect(page.locator("body")).to_contain_text("124,439,808", timeout=60_000)
    finally:
        page.close()
    assert outside == []


def test_panel_serve_of_the_installed_app(installed: Path, empty: Path) -> None:
    """`panel serve` of app/explorer.py as installed (README: its path from importlib) answers /explorer."""
    script = _run([str(installed), "-c", "import importlib.util; print(importlib.util.find_spec('app.explorer').origin)"],
                  cwd=empty).stdout.strip()
    assert script.startswith(str(installed.parents[1]))
    port = free_port()
    log_path = empty.parent / "serve.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([str(installed.with_name("panel")), "serve", script, "--address", "127.0.0.1",
                                 "--port", str(port), "--allow-websocket-origin", f"127.0.0.1:{port}"],
                                cwd=empty, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_listening(port, proc, log_path)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/explorer", timeout=180) as r:  # one request
            assert r.status == 200 and "<title>Transformer Shapes</title>" in r.read().decode()
    finally:
        assert stop_group(proc) == []
    assert "Traceback" not in log_path.read_text(errors="replace")
