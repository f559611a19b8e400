"""Near misses of a teacher's function: small AST changes to `f`, as source text (nothing runs here).

    for m in mutants(code, limit=32):
        m.kind, m.source      # "comparison", the whole module with one change inside f

The kinds (only nodes inside `def f` change; helpers and module code stay as written):

    arithmetic   + <-> -, * -> +, // <-> /, % -> //, ** -> *  (also in `x += ...`)
    comparison   == <-> !=, < <-> >, <= <-> >=, in <-> not in, is <-> is not
    boundary     < <-> <=, > <-> >=, range(..., n) -> range(..., n + 1) and n - 1
    constant     an integer literal c -> c + 1 and c - 1
    boolean      and <-> or, `not x` -> `not not x`
    branch       an if's body dropped (pass), an else dropped
    return       the values of two return statements of f swapped

Duplicate sources are dropped; a cap keeps kinds in turn (round-robin in the order above), so a
capped list still covers every kind present. Some mutants are equivalent to `f` and survive any
inputs, which is why a score is compared against a threshold, not against 1.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from synthgen.envs.parsing import function_def, parse_python

KINDS = ("arithmetic", "comparison", "boundary", "constant", "boolean", "branch", "return")


def _both_ways(*pairs: tuple[type, type]) -> dict[type, type]:
    return {**dict(pairs), **{b: a for a, b in pairs}}


# Operators and what each becomes: comparisons negated, loosened or tightened, flipped; arithmetic.
_NEGATED = _both_ways((ast.Eq, ast.NotEq), (ast.In, ast.NotIn), (ast.Is, ast.IsNot))
_LOOSENED = _both_ways((ast.Lt, ast.LtE), (ast.Gt, ast.GtE))
_FLIP = _both_ways((ast.Lt, ast.Gt), (ast.LtE, ast.GtE))
_ARITH = _both_ways((ast.Add, ast.Sub), (ast.FloorDiv, ast.Div))
_ARITH |= {ast.Mult: ast.Add, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult}


@dataclass(frozen=True)
class Mutant:
    kind: str
    source: str  # the whole module, f changed in one place


# Changes the node (in a copy of the tree; `nodes` is that copy's walk of f).
Edit = Callable[[ast.AST, list[ast.AST]], None]


def _set(attr: str, make: Callable[[ast.AST], object]) -> Edit:
    """An edit that sets the node's `attr` to `make(node)`."""
    return lambda n, _nodes: setattr(n, attr, make(n))


def _set_op(i: int, new: type) -> Edit:
    def edit(n, _nodes):
        n.ops[i] = new()

    return edit


def _sites(node: ast.AST, returns: list[int], index: int) -> Iterator[tuple[str, Edit]]:
    """(kind, edit) for every change this node allows."""
    if isinstance(node, (ast.BinOp, ast.AugAssign)):
        if type(node.op) in _ARITH:
            yield "arithmetic", _set("op", lambda _n, new=_ARITH[type(node.op)]: new())
    elif isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for kind, table in (("comparison", _NEGATED), ("boundary", _LOOSENED), ("comparison", _FLIP)):
                if type(op) in table:
                    yield kind, _set_op(i, table[type(op)])
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        for delta in (1, -1):
            yield "constant", _set("value", lambda n, delta=delta: n.value + delta)
    elif isinstance(node, ast.BoolOp):
        yield "boolean", _set("op", lambda n: ast.Or() if isinstance(n.op, ast.And) else ast.And())
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "boolean", _set("operand", lambda n: ast.UnaryOp(ast.Not(), n.operand))
    elif isinstance(node, ast.If):
        yield "branch", _set("body", lambda _n: [ast.Pass()])
        if node.orelse:
            yield "branch", _set("orelse", lambda _n: [])
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and node.args:
        at = 1 if len(node.args) >= 2 else 0
        for op in (ast.Add, ast.Sub):

            def edit(n, _nodes, op=op, at=at):
                n.args[at] = ast.BinOp(n.args[at], op(), ast.Constant(1))

            yield "boundary", edit
    if isinstance(node, ast.Return) and node.value is not None and index in returns:
        k = returns.index(index)
        if k + 1 < len(returns):

            def swap(n, nodes, other=returns[k + 1]):
                n.value, nodes[other].value = nodes[other].value, n.value

            yield "return", swap


def _walk_f(tree: ast.Module) -> list[ast.AST]:
    fn = function_def(tree)
    return list(ast.walk(fn)) if fn is not None else []


def mutants(code: str, limit: int = 32) -> list[Mutant]:
    """Up to `limit` distinct mutants of `f` in `code` (none when code has no top-level f)."""
    tree = parse_python(code)
    nodes = _walk_f(tree) if tree else []
    if not nodes:
        return []
    original = ast.unparse(tree)
    returns = [i for i, n in enumerate(nodes) if isinstance(n, ast.Return) and n.value is not None]
    by_kind: dict[str, list[tuple[int, Edit]]] = {k: [] for k in KINDS}
    for index, node in enumerate(nodes):
        for kind, edit in _sites(node, returns, index):
            by_kind[kind].append((index, edit))
    seen = {original}
    out: list[Mutant] = []
    queues = {k: list(v) for k, v in by_kind.items() if v}
    while queues and len(out) < limit:
        for kind in list(queues):
            if not queues[kind]:
                del queues[kind]
                continue
            index, edit = queues[kind].pop(0)
            made = _apply(tree, index, edit)
            if made is None:
                continue
            if made not in seen:
                seen.add(made)
                out.append(Mutant(kind, made + "\n"))
                if len(out) >= limit:
                    break
    return out


def _apply(tree: ast.Module, index: int, edit: Edit) -> str | None:
    twin = copy.deepcopy(tree)
    nodes = _walk_f(twin)
    try:
        edit(nodes[index], nodes)
        return ast.unparse(ast.fix_missing_locations(twin))
    except (AttributeError, IndexError, TypeError, ValueError, RecursionError):
        return None
