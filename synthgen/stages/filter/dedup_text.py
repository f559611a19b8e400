"""Problem text -> tokens, shingles and shingle hashes for near-duplicate detection
(synthgen.stages.filter.dedup): one normalisation for both signature kinds.

A problem's text is its code plus its message. Code is split into tokens by one regular
expression (Python's `tokenize` is several times slower and gives up on fragments): comments
and whitespace are dropped, and every identifier that is not a keyword or builtin becomes a
placeholder numbered by first occurrence within its logical line (`v0`, `v1`, ...), so renamed
variables and reformatted code give the same tokens. The message is lower-cased words (its
punctuation is dropped), after a `<message>` mark. A shingle is `ngram` consecutive tokens (one
shingle of all tokens when there are fewer).

"shingle_bytes" hashes each shingle's UTF-8 bytes (`problem_shingles`). "token_hashes"
(`problem_shingle_hashes`) hashes each token once, xxh64 (seed 0) of its UTF-8 bytes, a
placeholder `v<k>` as that string, and a shingle t1..tn to the top 32 bits of
fmix64(Horner(t1..tn)), Horner = (...((t1 * P + t2) * P + t3)...) * P + tn mod 2^64 with
P = `MULTIPLIER` (odd, so each step is a bijection), fmix64 MurmurHash3's 64-bit finalizer. It
computes the same renaming as `code_tokens` with numpy over a block of documents (bracket depth,
logical lines, placeholder numbers by first occurrence per line) from a per-process token table,
without building a token or shingle string: measured about 10% more documents per CPU-second than
hashing `problem_tokens`' output, which is why the normalisation is written twice
(tests/stages/filter/test_dedup.py checks both against each other and against datasketch).
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Sequence

import numpy as np
import xxhash

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
MULTIPLIER = 0x9E3779B97F4A7C15
_P = np.uint64(MULTIPLIER)
_VOCAB_MAX = 1 << 18  # distinct tokens kept per process
_VOCAB_CHARS = 1 << 26
_ID_BITS = 31  # token ids stay below 2^31 (placeholder keys pack (line, id) into one int64)


def token_kind(tok: str) -> int:
    first = tok[0]
    if first == "\n":
        return NEWLINE
    if first == "#":
        return SKIP
    if (first.isalpha() or first == "_") and tok[-1] not in "'\"" and tok not in KEEP:
        return NAME
    return OPEN if tok in _OPEN else CLOSE if tok in _CLOSE else OTHER


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
    for tok in TOKEN.findall(code):
        kind = token_kind(tok)
        if kind == OTHER:  # the most frequent
            append(tok)
        elif kind == NAME:
            name = names.get(tok)
            if name is None:
                name = names[tok] = f"v{len(names)}"
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


# -- token hashes (the "token_hashes" kind) --------------------------------------------------------
def fmix64(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xC4CEB9FE1A85EC53)
    return h ^ (h >> np.uint64(33))


def token_hash(tok: str) -> int:
    return xxhash.xxh64_intdigest(tok.encode("utf-8", "surrogatepass"))


class _Vocab:
    """Token -> id, with each id's kind and hash in numpy arrays (one per process: `_vocab`)."""

    def __init__(self) -> None:
        self.code: dict[str, int] = {}  # code token -> id
        self.words: dict[str, int] = {}  # message word -> id (kind OTHER: never renamed)
        self.kind = np.zeros(4096, dtype=np.uint8)
        self.hash = np.zeros(4096, dtype=np.uint64)
        self.size = self.chars = 0
        self.mark_id = self._add(MESSAGE_MARK, OTHER)
        self._placeholders = np.zeros(0, dtype=np.uint64)

    def _add(self, tok: str, kind: int) -> int:
        if self.size == len(self.kind):
            self.kind = np.resize(self.kind, 2 * self.size)
            self.hash = np.resize(self.hash, 2 * self.size)
        i = self.size
        self.kind[i], self.hash[i] = kind, token_hash(tok)
        self.size += 1
        self.chars += len(tok)
        return i

    def fill(self, toks: list[str], ids: list, word: bool) -> list[int]:
        """`ids` (from dict.get) with every None replaced by the token's id, new if need be."""
        table = self.words if word else self.code
        for i, got in enumerate(ids):
            if got is None:
                tok = toks[i]
                got = table.get(tok)  # (added for an earlier None of the same token)
                if got is None:
                    got = table[tok] = self._add(tok, OTHER if word else token_kind(tok))
                ids[i] = got
        return ids

    def placeholders(self, count: int) -> np.ndarray:
        """Hashes of v0 .. v<count-1>."""
        if len(self._placeholders) < count:
            more = range(len(self._placeholders), max(count, 256))
            new = np.fromiter((token_hash(f"v{k}") for k in more), dtype=np.uint64, count=len(more))
            self._placeholders = np.concatenate((self._placeholders, new))
        return self._placeholders


_VOCAB: _Vocab | None = None


def _vocab() -> _Vocab:
    """The process's token table, made on first use (no work at import) and made anew between blocks
    once it holds `_VOCAB_MAX` tokens or `_VOCAB_CHARS` characters (string literals, comments)."""
    global _VOCAB
    if _VOCAB is None or _VOCAB.size > _VOCAB_MAX or _VOCAB.chars > _VOCAB_CHARS:
        _VOCAB = _Vocab()
    return _VOCAB


def _token_ids(texts: Sequence[tuple[str | None, str | None]], vocab: _Vocab) -> tuple[list[int], list[int]]:
    """All documents' token ids, concatenated, and each document's count."""
    ids_all: list[int] = []
    lengths: list[int] = []
    code_get, word_get = vocab.code.get, vocab.words.get
    findall = TOKEN.findall
    for code, message in texts:
        start = len(ids_all)
        if code:
            toks = findall(code)
            ids = list(map(code_get, toks))
            ids_all += vocab.fill(toks, ids, False) if None in ids else ids
        if has_message(message):
            ids_all.append(vocab.mark_id)
            words = message_tokens(message)  # type: ignore[arg-type]
            ids = list(map(word_get, words))
            ids_all += vocab.fill(words, ids, True) if None in ids else ids
        lengths.append(len(ids_all) - start)
    return ids_all, lengths


def _clipped_depth(step: np.ndarray, doc: np.ndarray, starts: np.ndarray, longest: int) -> np.ndarray:
    """Per position, the bracket depth after it: a running sum of +1/-1 that never goes below 0,
    restarting at every document. d_k = S_k - min(0, min_{j<=k} S_j) (S the plain running sum);
    each document's sums are shifted down by doc * big so earlier documents' minima never reach
    a later document's."""
    total = np.cumsum(step)
    before = np.concatenate(([0], total))[starts]  # the sum before each document
    big = 2 * (longest + 1)
    shift = doc * big
    shifted = total - before[doc] - shift
    low = np.minimum(np.minimum.accumulate(shifted), -shift)
    return shifted - low


def _rename(ids: np.ndarray, kind: np.ndarray, hashes: np.ndarray, doc: np.ndarray, starts, longest, vocab) -> None:
    """Give every name the hash of its placeholder (by first occurrence within its logical line)."""
    step = (kind == OPEN).astype(np.int64) - (kind == CLOSE)
    depth = _clipped_depth(step, doc, starts, longest)
    line_end = (kind == NEWLINE) & (depth == 0)
    line_end[starts[starts < len(ids)]] = True  # (a document's first token starts a line too)
    line = np.cumsum(line_end)
    where = np.flatnonzero(kind == NAME)
    if not len(where):
        return
    key = (line[where].astype(np.int64) << _ID_BITS) | ids[where]
    unique, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # distinct (line, name) by first occurrence: lines stay together
    lines = unique[order] >> _ID_BITS
    new_line = np.concatenate(([True], lines[1:] != lines[:-1]))
    at = np.arange(len(order))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = at - np.maximum.accumulate(np.where(new_line, at, 0))
    ranks = rank[inverse.reshape(-1)]
    hashes[where] = vocab.placeholders(int(ranks.max()) + 1)[ranks]


def token_stream(texts: Sequence[tuple[str | None, str | None]]) -> tuple[np.ndarray, np.ndarray]:
    """(the kept tokens' uint64 hashes, concatenated; each document's token count)."""
    vocab = _vocab()
    ids_list, length_list = _token_ids(texts, vocab)
    ids = np.array(ids_list, dtype=np.int64)
    kind, hashes = vocab.kind[ids], vocab.hash[ids]
    lengths = np.array(length_list, dtype=np.int64)
    doc = np.repeat(np.arange(len(lengths)), lengths)
    starts = np.cumsum(lengths) - lengths
    if len(ids):
        _rename(ids, kind, hashes, doc, starts, int(lengths.max()), vocab)
    keep = kind >= NAME
    return hashes[keep], np.bincount(doc[keep], minlength=len(lengths)).astype(np.int64)


def shingle_hashes(stream: np.ndarray, counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(uint32 hashes of every document's n-token shingles, concatenated; shingles per document)."""
    short = (counts > 0) & (counts < n)
    if short.any():
        # Horner over fewer tokens equals Horner over the same tokens after leading zeros: padded
        # to n tokens, a short document has exactly its one shingle of all tokens.
        starts = np.cumsum(counts) - counts
        stream = np.insert(stream, np.repeat(starts[short], n - counts[short]), np.uint64(0))
        counts = np.where(short, n, counts)
    windows = len(stream) - n + 1
    per_doc = np.maximum(counts - n + 1, 0)
    if windows <= 0:
        return np.zeros(0, dtype=np.uint32), per_doc
    combined = stream[:windows].copy()
    for k in range(1, n):
        combined *= _P
        combined += stream[k : k + windows]
    starts = np.cumsum(counts) - counts
    doc = np.repeat(np.arange(len(counts)), counts)[:windows]
    valid = np.arange(windows) - starts[doc] < per_doc[doc]  # windows that end inside their document
    return (fmix64(combined[valid]) >> np.uint64(32)).astype(np.uint32), per_doc


def problem_shingle_hashes(texts: Sequence[tuple[str | None, str | None]], n: int) -> tuple[np.ndarray, np.ndarray]:
    return shingle_hashes(*token_stream(texts), n)
