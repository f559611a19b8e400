"""Problem text -> tokens for near-duplicate detection (synthgen.stages.filter.dedup): one normalisation for
every signature kind.

A problem's text is its code plus its message. Code is split into tokens by one regular
expression (Python's `tokenize` is several times slower and gives up on fragments): comments
and whitespace are dropped, and every identifier that is not a keyword or builtin becomes a
placeholder numbered by first occurrence within its logical line (`v0`, `v1`, ...), so renamed
variables and reformatted code give the same tokens. The message is lower-cased words (its
punctuation is dropped), after a `<message>` mark. A shingle is `ngram` consecutive tokens (one
shingle of all tokens when there are fewer).
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Sequence

# Spaces and tabs are never matched (the search steps over them, a third fewer matches than
# matching them as tokens); a newline is, with the indentation after it, to end a logical line.
# The alternatives are tried in order, the frequent ones first; string literals come after the
# operators, which exclude quotes and "#" so that strings and comments still win where they start.
TOKEN = re.compile(
    r"""[^\W\d]\w*(?![\w'"])"""  # identifier or keyword (not a string prefix)
    r"""|[()\[\]{},;]"""  # common punctuation: it is frequent and starts nothing longer
    r"""|\n\s*"""  # a newline and the whitespace after it
    r"""|\d[\w.]*|\.\d\w*"""  # numbers
    r"""|\*\*=?|//=?|>>=?|<<=?|->|:=|[-+*/%&|^@<>=!]=|[^\s\w'"#]"""  # operators, other punctuation
    r"""|\#[^\r\n]*"""  # comment
    r"""|[rRbBuUfF]{0,2}(?:'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"""
    r'''|"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'''
    r"""|'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*")"""  # string literals
    r"""|['"]"""  # a quote that opens no complete string (broken code)
)
WORD = re.compile(r"\w+")
KEEP = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
MESSAGE_MARK = "<message>"  # separates code tokens from message tokens
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")

# Token kinds; the ones from NAME on are kept (a name as its placeholder).
SKIP, NEWLINE, NAME, OPEN, CLOSE, OTHER = range(6)
CACHED_LENGTH = 40  # longer tokens are strings and comments: classified every time, not cached
_KINDS: dict[str, int] = {}  # token -> kind, per process (bounded)
_KINDS_MAX = 1 << 18
_PLACEHOLDERS = [f"v{i}" for i in range(256)]


def token_kind(tok: str) -> int:
    first = tok[0]
    if first == "\n":
        return NEWLINE
    if first == "#":
        return SKIP
    if (first.isalpha() or first == "_") and tok[-1] not in "'\"" and tok not in KEEP:
        return NAME
    return OPEN if tok in _OPEN else CLOSE if tok in _CLOSE else OTHER


def placeholder(k: int) -> str:
    return _PLACEHOLDERS[k] if k < 256 else f"v{k}"


def code_tokens(code: str) -> list[str]:
    """Tokens of (possibly broken) Python code: no comments or whitespace, identifiers renamed.

    Identifiers that are not keywords or builtins become `v0`, `v1`, ... by first occurrence
    within their logical line (numbering restarts at a newline outside brackets). Numbering per
    line rather than per document keeps an inserted or deleted line from renumbering, and so
    changing, every later shingle; a consistent rename still gives the same tokens.
    """
    names: dict[str, str] = {}
    out: list[str] = []
    append = out.append
    depth = 0
    kinds, get = _KINDS, _KINDS.get
    for tok in TOKEN.findall(code):
        kind = get(tok)
        if kind is None:
            kind = token_kind(tok)
            if len(tok) < CACHED_LENGTH and len(kinds) < _KINDS_MAX:
                kinds[tok] = kind
        if kind == OTHER:  # the most frequent
            append(tok)
        elif kind == NAME:
            name = names.get(tok)
            if name is None:
                name = names[tok] = placeholder(len(names))
            append(name)
        elif kind == NEWLINE:
            if depth == 0:
                names = {}
        elif kind == OPEN:
            depth += 1
            append(tok)
        elif kind == CLOSE:
            depth -= depth > 0
            append(tok)
    return out


def message_tokens(message: str) -> list[str]:
    return [w.lower() for w in WORD.findall(message)]


def has_message(message: str | None) -> bool:
    return bool(message and message.strip())


def problem_tokens(code: str | None, message: str | None) -> list[str]:
    tokens = code_tokens(code) if code else []
    if has_message(message):
        tokens.append(MESSAGE_MARK)
        tokens.extend(message_tokens(message))  # type: ignore[arg-type]
    return tokens


def shingles(tokens: Sequence[str], n: int) -> list[bytes]:
    """The UTF-8 bytes of every run of n tokens joined by spaces (one shingle of all tokens if
    there are fewer)."""
    if len(tokens) < n:
        return [" ".join(tokens).encode()] if tokens else []
    return [" ".join(run).encode() for run in zip(*(tokens[i:] for i in range(n)))]


def problem_shingles(code: str | None, message: str | None, n: int) -> list[bytes]:
    return shingles(problem_tokens(code, message), n)
