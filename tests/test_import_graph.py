"""The house rules of the package's import graph, read with ast: no import circles, the scripted
stand-in fenced off from the pipeline, and no loose modules beyond the few that every room uses.

Every `import` and `from ... import` counts, at module level or inside a function (a function-level
import is still a dependency, only a later one), and under `if TYPE_CHECKING:` too (a type the
module needs is a dependency, whether or not it runs). `from pkg import name` is an edge to
`pkg.name` when that is a module, else to `pkg`.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "synthgen"
# The modules that may import the scripted stand-in (synthgen.demo): the demo itself, the command
# line that registers `synthgen demo` and `synthgen scripted-server`, and the entry points that run
# that command line (`python -m synthgen`, `python -m synthgen.cli.sandbox`).
MAY_IMPORT_DEMO = ("synthgen.demo", "synthgen.cli", "synthgen.__main__")
# The loose modules at synthgen/'s top level (besides __init__ and __main__): what every room uses.
LOOSE = {"errors", "text"}


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under `root` (a package folder)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of `modules` that `name` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _longest_known(alias.name, modules)
                if target:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else _longest_known(base, modules)
                if target:
                    found.add(target)
    found.discard(name)
    return found


def _longest_known(dotted: str, modules: dict[str, Path]) -> str | None:
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    modules = module_files(root, package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles_through_checked_modules():
    graph = import_graph(PACKAGE_ROOT, "synthgen")
    assert "synthgen.envs.base" in graph and "synthgen.demo.scripted.bank" in graph  # the walk found the package
    assert not cycles(graph), f"import cycles: {cycles(graph)}"


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for child in graph.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def test_no_pipeline_module_reaches_the_scripted_stand_in():
    """The scripted server ships (the demo runs it) but the pipeline never depends on it, even through others."""
    graph = import_graph(PACKAGE_ROOT, "synthgen")
    leaks = {
        name: sorted(m for m in reachable(graph, name) if _within(m, ("synthgen.demo",)))
        for name in graph
        if not _within(name, MAY_IMPORT_DEMO)
    }
    assert {name: found for name, found in leaks.items() if found} == {}


def test_the_top_level_holds_only_the_shared_loose_modules():
    loose = {p.stem for p in PACKAGE_ROOT.glob("*.py")} - {"__init__", "__main__"}
    assert loose == LOOSE and len(loose) <= 3


def test_the_walk_sees_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / "demo"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from demo.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def later():\n    from .. import c\n")
    (pkg / "c.py").write_text("import demo.a\n")
    (pkg / "d.py").write_text("from demo import a\n")
    graph = import_graph(pkg, "demo")
    assert graph["demo.a"] == {"demo.sub.b"} and graph["demo.sub.b"] == {"demo.c"} and graph["demo.c"] == {"demo.a"}
    assert cycles(graph) == [["demo.a", "demo.c", "demo.sub.b"]]


def test_typing_only_imports_count(tmp_path):
    pkg = tmp_path / "demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import demo.b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from demo.a import X\n")
    assert cycles(import_graph(pkg, "demo")) == [["demo.a", "demo.b"]]
