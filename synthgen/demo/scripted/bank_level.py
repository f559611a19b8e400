"""One difficulty level of a bank family: a real Python function, its example inputs and a hint.

The family modules (bank_families_numbers, _text, _lists, _grids) declare their levels with this record;
synthgen.demo.scripted.bank_problems turns a level into a problem for any environment.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Level:
    func: Callable
    inputs: tuple[str, ...]
    message: str

    @property
    def params(self) -> list[str]:
        return list(inspect.signature(self.func).parameters)

    def source(self, name: str = "f") -> str:
        text = textwrap.dedent(inspect.getsource(self.func)).strip("\n")
        return re.sub(rf"^def {self.func.__name__}\(", f"def {name}(", text, count=1)

    def run(self, args_text: str) -> Any:
        """The real function on an argument list (literal_eval of our own literals)."""
        args, kwargs = literal_args(args_text)
        return self.func(*args, **kwargs)


def literal_args(text: str) -> tuple[list, dict]:
    call = ast.parse(f"f({text})", mode="eval").body
    return [ast.literal_eval(a) for a in call.args], {k.arg: ast.literal_eval(k.value) for k in call.keywords}
