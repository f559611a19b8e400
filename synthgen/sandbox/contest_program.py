"""Loading a contest program inside the sandbox's child, as LiveCodeBench's grader loads it
(standard library only; contest_runner.py says the semantics): the preamble's namespace, a stdin
program wrapped into one function, and the callable that one test runs.
"""

import ast
import builtins
import sys

import values

_STAR = "string re datetime collections heapq bisect copy math random statistics itertools functools operator io sys"
_STAR = _STAR.split() + ["json"]
PREAMBLE = "".join(f"from {name} import *\n" for name in _STAR + ["builtins", "typing"])
PREAMBLE += "".join(f"import {name}\n" for name in _STAR)
RECURSION_LIMIT = 50000
# What of `sys` each child binds anew (argv in its set-up; stdin and stdout for its tests): the
# preamble's `from sys import *` bound the template's, so a child binds these names again.
PER_CHILD_SYS = ("argv", "stdin", "stdout", "stderr")
_prepared = []  # the preamble's namespace, built once in the template


def prepare_namespace():
    """Run the preamble once, in the template before it forks any child (no job's data is near):
    each child starts from this namespace instead of importing every module again."""
    _prepared.append(_run_preamble())


def _run_preamble():
    scope = {"__name__": "solution", "__builtins__": builtins}
    exec(compile(PREAMBLE, "<preamble>", "exec"), scope)
    return scope


def _wrapped(code):
    """LiveCodeBench's shape of a stdin program: a trailing `if __name__ == '__main__':` unwrapped,
    imports on top, the rest one function's body."""
    body = ast.parse(code, "<solution>").body
    last = body[-1] if body else None
    if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
        body = body[:-1] + last.body
    imports = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom))]
    rest = [s for s in body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    rest = rest or [ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)]
    fields = {"name": "wrapped_function", "body": rest, "decorator_list": [], "returns": None, "type_comment": None}
    fields["args"] = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    if "type_params" in ast.FunctionDef._fields:
        fields["type_params"] = []
    where = {"lineno": getattr(rest[0], "lineno", 1), "col_offset": 0, "end_col_offset": 0}
    where["end_lineno"] = getattr(rest[-1], "end_lineno", where["lineno"])
    return ast.Module(body=imports + [ast.FunctionDef(**fields, **where)], type_ignores=[])


def load(job):
    """Run the module once; return what one test calls with its input."""
    mode, code = job["mode"], job["code"]
    tree = _wrapped(code) if mode == "stdin" else ast.parse(code, "<solution>")
    scope = {"__name__": "solution", "__builtins__": builtins}
    if job.get("preamble"):
        for node in tree.body:  # the grader's preamble comes first, so this is a SyntaxError there too
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                raise SyntaxError("from __future__ imports must occur at the beginning of the file")
        scope = _prepared.pop() if _prepared else _run_preamble()
        for name in PER_CHILD_SYS:
            scope[name] = getattr(sys, name)
        sys.setrecursionlimit(RECURSION_LIMIT)
    exec(compile(tree, "<solution>", "exec"), scope)
    if mode == "stdin":
        main = scope["wrapped_function"]
        return lambda text: _as_script(main)
    if mode == "expr":
        return lambda text: eval(compile(text, "<test>", "eval"), scope)
    owner = scope["Solution"]() if "class Solution" in code else None
    method = getattr(owner, job["entry"]) if owner is not None else scope.get(job["entry"])
    if method is None:
        raise NameError(f"the program defines no function {job['entry']!r}")
    return lambda text: method(*values.decode(text))


def _as_script(main):
    try:
        main()
    except SystemExit:
        pass  # exit() ends the program; what it printed is its answer
