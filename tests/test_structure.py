"""The code's shape (issue 24), read from the source with `ast`: no import circle among model/ and app/, imports
made inside functions counted (those under `if TYPE_CHECKING:` are not run, so not counted); no module imports a
private name of another; model/ never imports panel, bokeh or transformers, and app/ never imports transformers."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "app")


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


class _Imports(ast.NodeVisitor):
    """Every import statement of a module, in functions too, but not under `if TYPE_CHECKING:`."""

    def __init__(self) -> None:
        self.found: list[ast.Import | ast.ImportFrom] = []

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING":
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append(node)


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[tuple[str, str | None]]:
    """(the module imported, the name taken from it or None) for each name of an import statement."""
    if isinstance(node, ast.Import):
        return [(alias.name, None) for alias in node.names]
    base = node.module or ""
    if node.level:
        here = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else []))
    return [(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base, a.name) for a in node.names]


def _imports() -> dict[str, list[tuple[str, str | None]]]:
    out = {}
    for module, path in MODULES.items():
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        out[module] = [t for node in visitor.found for t in _targets(module, node)]
    return out


IMPORTS = _imports()


def _own(target: str) -> str | None:
    """The module of model/ or app/ that `target` names (a package's submodule or the package), or None."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def _circles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    graph = {m: {o for t, _ in IMPORTS[m] if (o := _own(t)) and o != m} for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            if component:
                out.append(sorted([v, *component]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_source_is_read():
    assert {"model.config", "model.changes", "app.state", "app.export.spec"} <= set(MODULES)
    assert ("model.config", "Config") in IMPORTS["model.changes"]


def test_no_import_circle_among_model_and_app():
    assert _circles() == []


def test_no_module_imports_a_private_name_of_another():
    private = [(m, t, name) for m, found in IMPORTS.items() for t, name in found
               if name and name.startswith("_") and not name.startswith("__") and _own(t) not in (None, m)]
    assert private == []


@pytest.mark.parametrize("package, banned", [("model", ("panel", "bokeh", "transformers")), ("app", ("transformers",))])
def test_what_a_package_never_imports(package, banned):
    """model/ is the records (no panel or bokeh); transformers is a test dependency, never a run-time one."""
    found = [(m, t) for m, imports in IMPORTS.items() if m.split(".")[0] == package for t, _ in imports
             if t.split(".")[0] in banned]
    assert found == []


def _names(package: str) -> dict[str, list[str]]:
    """Each module or package name under `package` (a file's stem, a folder's name, at any depth) -> where it is."""
    out: dict[str, list[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        for depth, name in enumerate(parts[1:], start=2):
            where = "/".join(parts[:depth]) + ("/" if depth < len(parts) else ".py")
            if where not in out.setdefault(name, []):
                out[name].append(where)
    return out


def test_no_module_name_means_two_things_in_model_and_app():
    """A name is one module's: app/ does not reuse a name of model/ (`cli` aside: each package's command line), so
    `training` or `values` leads to one file, not to a model's and a card's."""
    model, app = _names("model"), _names("app")
    clashes = {name: model[name] + app[name] for name in sorted(model.keys() & app.keys())
               if name not in ("cli", "__init__", "__main__")}
    assert clashes == {}, f"names in both model/ and app/: {clashes}"
