"""The dedup bench's corpus (bench/dedup.py): synthetic 40-line chunks of Python-like code from a
fixed seed (the same corpus on every machine) as distinct problems, plus planted near-duplicates
(10%): copies of a chunk with every identifier renamed, indentation and spacing changed outside
string literals, a comment added and, for half of them, one line of code dropped."""

from __future__ import annotations

import hashlib
import random
import re

from synthgen.stages.filter import dedup

LINES = 40

# -- the corpus: synthetic code, the same on every machine ------------------------------------------
# Python-like 40-line chunks from a small statement grammar, driven by random.Random(seed) (whose
# output for an int seed is fixed across platforms and Python versions). Every line carries its own
# numbers, strings, operators and shape, so after synthgen.stages.filter.dedup's normalisation (identifiers become
# placeholders) two chunks share few shingles, as two pieces of real code do.
_SYLLABLES = ["ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "ve", "xa", "yo", "zu", "bri", "cor", "dal", "fen"]
_OPS, _CMPS = ["+", "-", "*", "//", "%", "|", "&", "^", "<<", ">>"], ["<", ">", "<=", ">=", "==", "!="]
_CALLS = ["len", "sum", "max", "min", "sorted", "abs", "str", "int", "repr", "tuple"]
_EXCEPTIONS = ["ValueError", "KeyError", "IndexError", "TypeError", "RuntimeError"]


_WORDS = ["".join(_SYLLABLES[(i >> s) % 16] for s in range(0, 4 * (2 + i % 3), 4)) for i in range(4096)]


def _statement(r: int, names: list[str]) -> tuple[str, bool]:
    """One line of code, every choice taken from the bits of one random number; and whether it opens a block."""
    a, b, c = names[r % len(names)], names[(r >> 4) % len(names)], names[(r >> 8) % len(names)]
    num, word, other = (r >> 12) % 10_000, _WORDS[(r >> 26) % 4096], _WORDS[(r >> 38) % 4096]
    op, cmp = _OPS[(r >> 50) % len(_OPS)], _CMPS[(r >> 54) % len(_CMPS)]
    kind = (r >> 58) % 14
    if kind == 0:
        return f"{a} = {b} {op} {num}", False
    if kind == 1:
        return f"{a} = {_CALLS[num % len(_CALLS)]}({b}) {op} {c}", False
    if kind == 2:
        return f'{a}.{word}({b}, "{other}", {num})', False
    if kind == 3:
        return f"if {a} {cmp} {num}:", True
    if kind == 4:
        return f"for {a} in range({b}, {num}):", True
    if kind == 5:
        return f"while {a} {cmp} {b} {op} {num}:", True
    if kind == 6:
        return f"{a}[{num % 97}] = {b}.{word} {op} {c}", False
    if kind == 7:
        return f"{a} += {_CALLS[num % len(_CALLS)]}({b}[{num % 13}:]) * {num}", False
    if kind == 8:
        return f'raise {_EXCEPTIONS[num % len(_EXCEPTIONS)]}("{word} {other} {num}")', False
    if kind == 9:
        return f"{a} = [{c} {op} {num} for {c} in {b} if {c} {cmp} {num % 101}]", False
    if kind == 10:
        return f'{a} = {{"{word}": {num}, "{other}": {b}}}', False
    if kind == 11:
        return f"# {word} {other} {num}", False
    if kind == 12:
        return f"return {a} {op} {b} {cmp} {num}", False
    return f"{a}, {b} = {b} {op} {num}, {a}", False


def synthetic_chunk(rng: random.Random) -> str:
    """A 40-line function of synthetic code."""
    bits = rng.getrandbits
    names = [_WORDS[bits(12)] for _ in range(4 + bits(3))]
    lines = [f"def {_WORDS[bits(12)]}({', '.join(names[:3])}):"]
    depth = 1
    while len(lines) < LINES:
        text, opens = _statement(bits(64), names)
        if opens and (depth == 5 or len(lines) == LINES - 1):
            continue  # no room for the block's body
        lines.append("    " * depth + text)
        if opens:
            depth += 1
            body, opens = _statement(bits(64), names)
            lines.append("    " * depth + ("pass" if opens or body[0] == "#" else body))  # never an empty block
        elif depth > 1 and bits(2) == 0:
            depth -= 1
    return "\n".join(lines) + "\n"


def chunks(n: int, seed: int = 0) -> list[str]:
    """n distinct 40-line chunks of synthetic code."""
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        text = synthetic_chunk(rng)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def mutate(text: str, rng: random.Random) -> str:
    """A near-duplicate: identifiers renamed, indentation and spacing changed, a comment added
    and, every other time, one line without quotes dropped (string literals are left alone)."""
    renamed: dict[str, str] = {}

    def edit(match: re.Match) -> str:
        tok = match.group(0)
        first = tok[0]
        if first.isspace():
            return re.sub(r"\n( +)", lambda m: "\n" + " " * (len(m.group(1)) // 2), tok)
        if tok == ",":
            return " , "
        if not (first.isalpha() or first == "_") or tok[-1] in "'\"" or tok in dedup.KEEP:
            return tok
        return renamed.setdefault(tok, f"{tok}_{rng.randrange(10**6)}")

    lines = dedup.TOKEN.sub(edit, text).splitlines()
    plain = [i for i, line in enumerate(lines) if line.strip() and not re.search("[\"'#]", line)]
    if plain and rng.random() < 0.5:
        del lines[rng.choice(plain)]
    return "\n".join(lines) + "\n# reviewed copy\n"


def build(n: int, n_sub: int, seed: int = 0) -> tuple[list[str], list[tuple[int, int]]]:
    """Documents (the subsample first) and the (original, copy) index pairs planted."""
    rng = random.Random(seed)
    base_sub, base_rest = int(n_sub * 0.9), int((n - n_sub) * 0.9)
    base = chunks(base_sub + base_rest)
    docs: list[str] = []
    planted: list[tuple[int, int]] = []
    for part, total in ((base[:base_sub], n_sub), (base[base_sub:], n - n_sub)):
        items = [(text, None) for text in part]
        for _ in range(total - len(part)):
            j = rng.randrange(len(part))
            items.append((mutate(part[j], rng), j))
        order = list(range(len(items)))
        rng.shuffle(order)
        where = {old: len(docs) + new for new, old in enumerate(order)}
        for old in order:
            docs.append(items[old][0])
        planted += [(where[items[i][1]], where[i]) for i in range(len(part), len(items))]
    return docs, planted


def corpus_digest(docs: list[str]) -> str:
    digest = hashlib.sha256()
    for doc in docs:
        digest.update(doc.encode())
    return digest.hexdigest()[:16]
