"""Parsing of raw LLM text into the pieces the environments work with: fenced blocks and arguments.

Real completions are messy: reasoning or `<think>` text left in the content, draft blocks
before the final ones, `<answer>` tags, prose between blocks, Windows line endings, fences with
odd language tags, inputs that span lines, and truncated output. Everything here is parsing
only: argument lists are read with `ast` (`ast.parse("f(...)")` builds a tree, it runs
nothing) and every argument must be a plain Python literal, so a student's "input" can never
smuggle code into the sandbox call it becomes.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from synthgen.envs import reasons

# Language tags as models actually write them, folded onto the few kinds we care about.
_LANG_ALIASES = {
    **dict.fromkeys(("python", "py", "python3", "py3"), "python"),
    **dict.fromkeys(("input", "inputs"), "input"),
    **dict.fromkeys(("output", "outputs"), "output"),
    **dict.fromkeys(("message", "msg", "hint"), "message"),
}
_KNOWN = frozenset(_LANG_ALIASES.values())
_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+\-.]*)[ \t]*(.*)$")
MAX_ARGS_CHARS = 20_000  # an argument list longer than this is not a reasonable test input


@dataclass
class Block:
    lang: str  # python | input | output | message | other | "" (no tag)
    text: str
    closed: bool  # False when the text ended inside the block (a truncated answer)
    tag: str = ""  # the tag as written


class ArgsError(ValueError):
    """An argument list that is not `literal, ..., name=literal` (message says why)."""


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def answer_region(text: str) -> str:
    """The part of a completion that holds the answer.

    Reasoning that leaked into the content ends at the last `</think>`; if the model wrapped its
    answer in `<answer>` tags, the last such section wins (earlier ones are drafts).
    """
    text = normalize_newlines(text or "")
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    lower = text.lower()
    start = lower.rfind("<answer>")
    if start >= 0:
        end = lower.find("</answer>", start)
        text = text[start + len("<answer>") : end if end >= 0 else len(text)]
    return text


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block in `text`, in order; one-line blocks (```input 3, 4```) included."""
    lines = normalize_newlines(text).split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, tag, rest = m.groups()
        lang = _fold(tag)
        if rest.rstrip().endswith(fence[0] * 3) and rest.strip() != "":
            # One-line form: ```input 3, 4``` (the paper's own example writes inputs like this).
            blocks.append(Block(lang, rest.rstrip().rstrip(fence[0]).strip(), True, tag))
            i += 1
            continue
        body: list[str] = [rest] if rest.strip() else []
        j = i + 1
        closed = reopened = False
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                closed = True
                break
            inner = _OPEN.match(lines[j])
            if inner and _fold(inner.group(2)) in _KNOWN and not inner.group(3).strip():
                # A forgotten closing fence: a new ```input (etc.) line starts the next block.
                closed = reopened = True
                break
            body.append(lines[j])
            j += 1
        blocks.append(Block(lang, "\n".join(body).strip("\n"), closed, tag))
        i = j if reopened else j + 1
    return blocks


def _fold(tag: str) -> str:
    return _LANG_ALIASES.get(tag.lower(), "other") if tag else ""


def parse_python(code: str) -> ast.Module | None:
    """`code`'s syntax tree (nothing runs), or None when it does not parse."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def function_def(code: str | ast.Module, name: str = "f") -> ast.FunctionDef | None:
    """The top-level (not async) definition of `name` in `code` (source or tree); None when it has
    none or does not parse."""
    tree = parse_python(code) if isinstance(code, str) else code
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None) if tree else None


def defines(code: str, name: str) -> bool:
    """Whether `code` parses and defines a top-level function `name` (no execution)."""
    tree = parse_python(code)
    return tree is not None and any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in tree.body
    )


def has_code(message: str) -> bool:
    """Whether a teacher's message holds code (a definition of f, or a fenced block)."""
    return "def f" in message or "```" in message


def mentions_def(code: str, name: str) -> bool:
    """A textual check that tolerates code that does not compile (it still claims to define `name`)."""
    return re.search(rf"^\s*(async\s+)?def\s+{re.escape(name)}\s*\(", code, re.M) is not None


def canonical_args(text: str) -> str:
    """Parse an argument list (`3, [1, 2]`, `s='a,b', k=2`, or a whole call `f(3)`) and return it
    in one canonical spelling; raises ArgsError if it is not a list of literal arguments."""
    text = normalize_newlines(text or "").strip()
    if not text:
        raise ArgsError("empty argument list")
    if len(text) > MAX_ARGS_CHARS:
        raise ArgsError(f"argument list longer than {MAX_ARGS_CHARS} characters")
    call = _parse_call(text)
    # `f(3, 4)` written out in full: take its arguments, not a call nested in a call.
    inner = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "f":
        call = inner
    parts: list[str] = []
    seen_kw: set[str] = set()
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            raise ArgsError("starred arguments are not allowed")
        _require_literal(arg)
        parts.append(ast.unparse(arg))
    for kw in call.keywords:
        if kw.arg is None:
            raise ArgsError("**-arguments are not allowed")
        if kw.arg in seen_kw:
            raise ArgsError(f"keyword {kw.arg!r} given twice")
        seen_kw.add(kw.arg)
        _require_literal(kw.value)
        parts.append(f"{kw.arg}={ast.unparse(kw.value)}")
    if not parts:
        raise ArgsError("no arguments")
    return ", ".join(parts)


def split_args(text: str) -> tuple[list[str], dict[str, str]]:
    """The canonical positional and keyword argument texts of a canonical argument list."""
    call = _parse_call(text)
    return [ast.unparse(a) for a in call.args], {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}


def _parse_call(text: str) -> ast.Call:
    try:
        # Newlines around the text let a trailing comment end without swallowing the ")".
        tree = ast.parse(f"f(\n{text}\n)", mode="eval")
    except SyntaxError as exc:
        raise ArgsError(f"not a Python argument list: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ArgsError(f"not a Python argument list: {type(exc).__name__}") from None
    return tree.body  # type: ignore[return-value]


def _require_literal(node: ast.AST) -> None:
    from synthgen.sandbox import values

    # The same literal grammar as outputs (values.from_literal: ast only, nothing evaluated), minus
    # bare `nan`/`inf`, which are not names inside the sandbox.
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    if any(isinstance(n, ast.Name) and id(n) not in called for n in ast.walk(node)):
        raise ArgsError(f"not a literal: {short(ast.unparse(node))}")
    try:
        values.from_literal(ast.unparse(node))
    except (ValueError, RecursionError, MemoryError):
        raise ArgsError(f"not a literal: {short(ast.unparse(node))}") from None


def input_list(block_text: str) -> list[str]:
    """Inputs from one ```input block: normally one argument list, possibly spanning lines.

    Models sometimes put several inputs in one block, one per line; if the whole block does not
    parse but every non-empty line does, each line is an input.
    """
    try:
        return [canonical_args(block_text)]
    except ArgsError as whole:
        lines = [
            ln for ln in normalize_newlines(block_text).split("\n") if ln.strip() and not ln.strip().startswith("#")
        ]
        if len(lines) < 2:
            raise whole
        try:
            return [canonical_args(ln) for ln in lines]
        except ArgsError:
            raise whole from None


def short(text: str, limit: int = 80) -> str:
    """One-line, length-capped form of `text` for reason details."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class FormatError(Exception):
    """A teacher or student answer that cannot be read; `reason` is a synthgen.envs.reasons code."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass
class TeacherAnswer:
    """The pieces of one complete answer set in a teacher completion (texts as written)."""

    code: str
    helpers: dict[str, str]  # fuzzing: pre_test_f / test_f source, when given in their own blocks
    input_blocks: list[str]
    message: str | None


def teacher_answer(
    text: str, helper_names: tuple[str, ...] = (), need_message: bool = False, need_inputs: bool = True
) -> TeacherAnswer:
    """The last complete answer set of a teacher completion (raises FormatError with the reason).

    A set starts at a python block that defines `f`; the input, message and helper blocks that
    follow it belong to it. Earlier sets are drafts. A message (or a helper function) written
    just before the code instead of after it is picked up too. `need_inputs=False` accepts a set
    without ```input blocks (fuzzing's examples are optional).
    """
    blocks = fenced_blocks(answer_region(text))
    if not blocks:
        raise FormatError(reasons.FORMAT_ERROR, "no fenced ``` blocks in the answer")
    starts = [i for i, b in enumerate(blocks) if b.lang in ("python", "") and mentions_def(b.text, "f")]
    if not starts:
        if any(b.lang == "python" and not b.closed for b in blocks):
            raise FormatError(reasons.FORMAT_ERROR, "the ```python block is not closed (truncated answer?)")
        raise FormatError(reasons.FORMAT_ERROR, "no ```python block that defines a function f")
    problems: list[str] = []
    for pos in range(len(starts) - 1, -1, -1):
        begin = starts[pos]
        end = starts[pos + 1] if pos + 1 < len(starts) else len(blocks)
        before = blocks[(starts[pos - 1] + 1) if pos > 0 else 0 : begin]
        found = _collect(blocks[begin:end], before, helper_names, need_message, need_inputs)
        if isinstance(found, TeacherAnswer):
            return found
        problems.append(found)
    raise FormatError(reasons.FORMAT_ERROR, problems[0])


def _collect(group: list[Block], before: list[Block], helper_names, need_message, need_inputs) -> TeacherAnswer | str:
    head = group[0]
    if not head.closed:
        return "the ```python block is not closed (truncated answer?)"
    helpers: dict[str, str] = {}
    inputs: list[str] = []
    messages: list[str] = []

    def take_helpers(block: Block) -> None:
        for name in helper_names:
            if mentions_def(block.text, name) and name not in helpers:
                helpers[name] = block.text

    for block in group[1:]:
        if not block.closed:
            return f"a ```{block.tag or 'block'} is not closed (truncated answer?)"
        if block.lang == "input":
            inputs.append(block.text)
        elif block.lang == "message":
            messages.append(block.text)
        elif block.lang in ("python", ""):
            take_helpers(block)
    for block in reversed(before):
        if block.closed and block.lang == "message" and not messages:
            messages.append(block.text)
        if block.closed and block.lang in ("python", ""):
            take_helpers(block)
    missing = [n for n in helper_names if n not in helpers and not mentions_def(head.text, n)]
    if missing:
        return f"no definition of {', '.join(missing)} in the answer"
    if not inputs and need_inputs:
        return "no ```input blocks after the code"
    message = messages[-1].strip() if messages else None
    if need_message and not message:
        return "no ```message block (or it is empty)"
    return TeacherAnswer(head.text.strip("\n"), helpers, inputs, message)


def last_block(text: str, langs: tuple[str, ...], predicate=None) -> Block | None:
    """The last closed block of the first kind in `langs` that has one (and satisfies `predicate`),
    in the answer region. Kinds go in order of preference: with ("python", ""), an untagged block is
    read only when no ```python block fits (a real student's untagged block after its program is
    what the program prints, not a second program).

    A final block the text ends inside counts as closed when its body reads whole (Python that
    parses, or any other kind as it is): truncated answers never get here (`Environment.score`
    fails them first), so the model ended its answer there. One that does not parse stays
    unclosed: where the code ends could be read two ways.
    """
    blocks = fenced_blocks(answer_region(text))
    if blocks and not blocks[-1].closed and _reads_whole(blocks[-1]):
        blocks[-1] = Block(blocks[-1].lang, blocks[-1].text, True, blocks[-1].tag)
    for lang in langs:
        for block in reversed(blocks):
            if block.closed and block.lang == lang and (predicate is None or predicate(block)):
                return block
    return None


def _reads_whole(block: Block) -> bool:
    return bool(block.text.strip()) and (block.lang not in ("python", "") or parse_python(block.text) is not None)


def missing(what: str, text: str) -> FormatError:
    """The format failure of an answer with no `what`, saying what the answer holds instead."""
    return FormatError(reasons.FORMAT_ERROR, f"no {what}; the answer has {describe_blocks(text)}")


def describe_blocks(text: str) -> str:
    """What a completion holds, for a format failure's detail: "no fenced block at all (prose only)",
    or its blocks' kinds as written ("a ```python block and an untagged block", "an unclosed ```input block")."""
    blocks = fenced_blocks(answer_region(text))
    if not blocks:
        return "no fenced block at all (prose only)" if (text or "").strip() else "nothing (an empty answer)"
    names = []
    for block in blocks:
        kind = f"```{block.tag} block" if block.tag else "untagged ``` block"
        names.append(kind if block.closed else f"unclosed {kind}")
    counted = [(n, names.count(n)) for n in dict.fromkeys(names)]
    parts = [f"{'an' if n[0] in 'aeiou' else 'a'} {n}" if k == 1 else f"{k} {n}s" for n, k in counted]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def strip_main_guard(code: str) -> str:
    """Drop top-level `if __name__ == "__main__":` demo sections (sloppy but harmless)."""
    tree = parse_python(code)
    if tree is None:
        return code
    lines = code.split("\n")
    cut: list[tuple[int, int]] = []
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__":
            cut.append((node.lineno - 1, node.end_lineno or node.lineno))
    for start, stop in reversed(cut):
        del lines[start:stop]
    return "\n".join(lines).strip("\n")


def split_functions(code: str, names: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """Move the top-level definitions of `names` out of `code`: (rest, {name: source})."""
    tree = parse_python(code)
    if tree is None:
        return code, {}
    lines = code.split("\n")
    taken: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names and node.name not in taken:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            spans.append((first, node.end_lineno or node.lineno))
            taken[node.name] = "\n".join(lines[first : node.end_lineno]).strip("\n")
    for start, stop in sorted(spans, reverse=True):
        del lines[start:stop]
    rest = re.sub(r"\n{3,}", "\n\n\n", "\n".join(lines)).strip("\n")
    return rest, taken


def input_answer(text: str) -> str:
    """A student's input (abduction, fuzzing): the last closed ```input block as a canonical
    argument list. A ```python block holding just `f(...)` (or the arguments) is accepted too.
    Every failure's detail says what the answer holds instead, in words a person reads in the attempts."""
    block = last_block(text, ("input",))
    where = "the ```input block"
    if block is None:
        block = last_block(text, ("python", ""), lambda b: not mentions_def(b.text, "f") and b.text.strip() != "")
        if block is None:
            raise missing("closed ```input block with the arguments", text)
        where = f"no ```input block, and the last {'```' + block.tag if block.tag else 'untagged ```'} block"
    try:
        return canonical_args(block.text)
    except ArgsError as exc:
        why = f"{where} is not a list of literal arguments ({exc}): {short(block.text, 60)}"
        raise FormatError(reasons.FORMAT_ERROR, why) from None


def output_value(block: Block) -> str:
    """A student's value (deduction) from its ```output block: the whole block as a Python literal,
    or, after prose or comment lines, its last line alone when that is the only line that reads as
    a literal. A block with several literal lines ("[1, 2] (a list)", then "[[1, 2], [3, 4]]", as
    a real student wrote it) names more than one value: a format failure, never a guess."""
    whole = block.text.strip()
    what = f"```{block.tag} block" if block.tag else "untagged ``` block"
    if not whole:
        raise FormatError(reasons.FORMAT_ERROR, f"the {what} is empty")
    if is_literal(whole):
        return whole
    lines = [ln.strip() for ln in block.text.split("\n") if ln.strip() and not ln.strip().startswith("#")]
    literal = [ln for ln in lines if is_literal(ln)]
    if literal and literal == lines[-1:]:
        return lines[-1]
    if len(literal) > 1:
        why = f"the {what} holds {len(literal)} lines that each read as a value (one is asked for): {short(whole, 80)}"
        raise FormatError(reasons.FORMAT_ERROR, why)
    why = "nor is its last line" if len(lines) > 1 else "a value the way repr prints it"
    raise FormatError(reasons.FORMAT_ERROR, f"the {what} is not a Python literal ({why}): {short(whole, 80)}")


def is_literal(text: str) -> bool:
    """Whether `text` reads as one Python literal (values.from_literal: nothing evaluated)."""
    from synthgen.sandbox import values

    try:
        values.from_literal(text)
    except ValueError:
        return False
    return True


def teacher_inputs(blocks: list[str]) -> list[str]:
    """Canonical argument lists from the teacher's ```input blocks (a malformed one -> bad_inputs)."""
    inputs: list[str] = []
    for i, text in enumerate(blocks, 1):
        try:
            inputs.extend(input_list(text))
        except ArgsError as exc:
            raise FormatError(reasons.BAD_INPUTS, f"input block {i} ({short(text, 60)}): {exc}") from None
    return inputs


def is_definitions_only(code: str) -> bool:
    """Whether `code` parses and holds only imports, definitions and constant assignments."""
    tree = parse_python(code)
    allowed = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
    return tree is not None and bool(tree.body) and all(isinstance(node, allowed) for node in tree.body)
