"""Static (AST) checks on teacher code: what a verifiable problem may import and call.

A problem is only verifiable if its function is a pure computation: the same inputs give the
same outputs on any machine, at any time. So teacher code may import only pure standard modules,
use `random` only with a fixed seed, and call nothing that reads the clock, the environment,
files, the network or the interpreter's internals. What slips through (hash order, `id()`) is
caught by the sandbox's two-hash-seed run; hostile code is the sandbox's job, not this one's.
"""

from __future__ import annotations

import ast

# Pure, deterministic standard modules (the root name of the import is checked): numbers, containers
# and algorithms, text and bytes, the language itself.
ALLOWED_MODULES = frozenset(
    {"cmath", "decimal", "fractions", "math", "numbers", "random", "statistics"}
    | {"array", "bisect", "collections", "copy", "dataclasses", "functools", "heapq", "itertools", "operator"}
    | {"base64", "hashlib", "json", "re", "string", "struct", "textwrap", "unicodedata"}
    | {"__future__", "abc", "calendar", "datetime", "enum", "typing"}
)
# Builtins that do I/O or read the user, and those that run or reach code by name.
FORBIDDEN_CALLS = frozenset(
    {"open", "input", "breakpoint", "exit", "quit", "help"}
    | {"eval", "exec", "compile", "__import__", "globals", "locals"}
)
# Attribute names that read the clock or the local time zone.
CLOCK_ATTRS = frozenset({"now", "today", "utcnow", "fromtimestamp", "utcfromtimestamp"})
# Attributes that are the classic ways out of a restricted namespace: dunders, and frames.
ESCAPE_ATTRS = frozenset(
    {"__subclasses__", "__globals__", "__builtins__", "__code__", "__closure__", "__loader__", "__spec__"}
    | {"__bases__", "__mro__", "__base__", "__import__", "__getattribute__"}
    | {"f_globals", "f_locals", "f_back", "gi_frame", "cr_frame", "tb_frame"}
)
_SEEDERS = frozenset({"seed", "Random"})


def forbidden_uses(code: str) -> list[str]:
    """Human-readable reasons why `code` is not a pure computation ([] when it looks fine).

    The code must already parse; a SyntaxError here is the caller's compile_error.
    """
    tree = ast.parse(code)
    problems: list[str] = []
    random_names: set[str] = set()  # local names bound to the random module or its functions
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root not in ALLOWED_MODULES:
                    problems.append(f"imports {alias.name}")
                elif root == "random":
                    random_names.add(alias.asname or "random")
        elif isinstance(node, ast.ImportFrom):
            root = (node.module or "").split(".")[0]
            if node.level or root not in ALLOWED_MODULES:
                problems.append(f"imports from {node.module or '.'}")
            elif root == "random":
                random_names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
                problems.append(f"calls {node.func.id}()")
            if isinstance(node.func, ast.Attribute) and node.func.attr in CLOCK_ATTRS:
                problems.append(f"reads the clock ({ast.unparse(node.func)}())")
        elif isinstance(node, ast.Attribute) and node.attr in ESCAPE_ATTRS:
            problems.append(f"touches {node.attr}")
        elif isinstance(node, ast.Name) and node.id in ("__builtins__", "__loader__", "__spec__"):
            problems.append(f"touches {node.id}")
    if random_names and not _seeded(tree):
        problems.append("uses random without a fixed seed (random.seed(<constant>) or random.Random(<constant>))")
    return list(dict.fromkeys(problems))


def _seeded(tree: ast.AST) -> bool:
    """Whether a seed(...) or Random(...) call with a constant argument appears anywhere."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in _SEEDERS and node.args and isinstance(node.args[0], ast.Constant):
            return True
    return False


def compile_problem(code: str, required: tuple[str, ...]) -> str | None:
    """None if `code` parses and defines every function in `required` at top level, else why not."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"cannot parse: {type(exc).__name__}"
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    async_defs = {n.name for n in tree.body if isinstance(n, ast.AsyncFunctionDef)}
    for name in required:
        if name not in defined:
            return f"does not define a top-level function {name}"
        if name in async_defs:
            return f"{name} must be a plain function, not async"
    return None
