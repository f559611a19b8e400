"""Near-duplicate detection: MinHash signatures of normalised problem text and LSH clustering.

A problem's text is its code, split by one regular expression (Python's `tokenize` is several
times slower and gives up on fragments) with comments and whitespace dropped and identifiers
renamed (`code_tokens`), then its message's lower-cased words after a `<message>` mark. A shingle
is `ngram` consecutive tokens (one shingle of all tokens when there are fewer). Two signature
kinds (`dedup.signature`), never mixed: "token_hashes" (the default) hashes each token once
(xxh64) and a shingle t1..tn to the top 32 bits of fmix64(Horner(t1..tn)) with the odd
`MULTIPLIER`, in numpy, building no shingle string; "shingle_bytes" hashes each shingle's UTF-8
bytes (xxh32 or datasketch's sha1), exactly datasketch's `MinHash` with the same `hashfunc`.

Both are datasketch's affine32 MinHash (num_perm, seed), computed with numpy over blocks of
documents and a process pool (datasketch's `MinHash.bulk` signs a quarter to a third fewer documents
per CPU-second, bench/README.md); a document without shingles stays all-max. Candidate pairs share
a band of the (bands, rows) datasketch's `MinHashLSH(threshold, num_perm, weights)` picks; with
`verify` a pair links only if its estimated Jaccard reaches the threshold. Clusters are the
connected components of the links, each labelled by its smallest document index. Speed against
datasketch, rensa and datatrove: `python bench/dedup.py`.
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import multiprocessing
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import xxhash

from synthgen.stages.filter.settings import DedupSettings

MAX32 = np.uint32(0xFFFFFFFF)
MULTIPLIER = 0x9E3779B97F4A7C15
_BLOCK_DOCS = 256  # documents per numpy pass
_GROUP_SHINGLES = 4096  # shingles per numpy block: (num_perm x 4096) uint32 = 2 MiB at 128
Texts = Sequence[tuple[str | None, str | None]]  # (code, message) per document


# -- text ------------------------------------------------------------------------------------------
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
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")


def code_tokens(code: str) -> list[str]:
    """Tokens of (possibly broken) Python code: no comments or whitespace, and identifiers that are
    not keywords or builtins renamed `v0`, `v1`, ... by first occurrence within their logical line.
    Numbering per line, not per document, keeps an inserted or deleted line from renumbering, and
    so changing, every later shingle; a consistent rename still gives the same tokens."""
    names: dict[str, str] = {}
    out: list[str] = []
    append = out.append
    depth = 0
    for tok in TOKEN.findall(code):
        first = tok[0]
        if first == "\n":
            if depth == 0:
                names = {}
        elif (first.isalpha() or first == "_") and tok[-1] not in "'\"" and tok not in KEEP:
            name = names.get(tok)
            if name is None:
                name = names[tok] = f"v{len(names)}"
            append(name)
        elif first != "#":
            depth += (tok in _OPENING) - (depth > 0 and tok in _CLOSING)
            append(tok)
    return out


def problem_tokens(code: str | None, message: str | None) -> list[str]:
    """Code tokens, then (if there is a message) MESSAGE_MARK and the message's lower-cased words."""
    tokens = code_tokens(code) if code else []
    if message and message.strip():
        tokens += [MESSAGE_MARK, *(w.lower() for w in WORD.findall(message))]
    return tokens


def shingles(tokens: Sequence[str], n: int) -> list[bytes]:
    """The UTF-8 bytes of every run of n tokens joined by spaces (one shingle of all tokens if
    there are fewer)."""
    if len(tokens) < n:
        return [" ".join(tokens).encode()] if tokens else []
    return [" ".join(run).encode() for run in zip(*(tokens[i:] for i in range(n)))]


def problem_shingles(code: str | None, message: str | None, n: int) -> list[bytes]:
    return shingles(problem_tokens(code, message), n)


# -- the "token_hashes" kind: the same normalisation over a block of documents in numpy -----------
# `code_tokens` walks every token in Python; here tokens become ids through a per-process table
# (one C-level dict lookup each) and the renaming (bracket depth, logical lines, placeholder numbers
# by first occurrence per line) is array arithmetic. bench/dedup.py measured a quarter more
# documents per CPU-second than hashing `problem_tokens`' output; tests/stages/filter/test_dedup.py
# holds the two against each other and against datasketch.
_SKIP, _LINE, _NAME, _OPEN, _CLOSE, _OTHER = range(6)  # token kinds; those from _NAME on are kept
_ID_BITS = 31  # token ids stay below 2^31: a (line, id) key packs into one int64


def token_kind(tok: str) -> int:
    """What `code_tokens` does with a token, as a number."""
    first = tok[0]
    if first == "\n":
        return _LINE
    if first == "#":
        return _SKIP
    if (first.isalpha() or first == "_") and tok[-1] not in "'\"" and tok not in KEEP:
        return _NAME
    return _OPEN if tok in _OPENING else _CLOSE if tok in _CLOSING else _OTHER


def token_hash(tok: str) -> int:
    return xxhash.xxh64_intdigest(tok.encode("utf-8", "surrogatepass"))


class _Vocab:
    """Token -> id, with each id's kind and hash in numpy arrays; made anew past 2^18 tokens or 2^26
    characters (string literals and comments are tokens too)."""

    def __init__(self) -> None:
        self.code: dict[str, int] = {}
        self.words: dict[str, int] = {}  # message words: never renamed
        self.kind = np.zeros(4096, dtype=np.uint8)
        self.hash = np.zeros(4096, dtype=np.uint64)
        self.size = self.chars = 0
        self.mark_id = self._add(MESSAGE_MARK, _OTHER)
        self.placeholders = np.zeros(0, dtype=np.uint64)  # hashes of v0, v1, ...

    def full(self) -> bool:
        return self.size > 1 << 18 or self.chars > 1 << 26

    def _add(self, tok: str, kind: int) -> int:
        if self.size == len(self.kind):
            self.kind, self.hash = np.resize(self.kind, 2 * self.size), np.resize(self.hash, 2 * self.size)
        self.kind[self.size], self.hash[self.size] = kind, token_hash(tok)
        self.size += 1
        self.chars += len(tok)
        return self.size - 1

    def ids(self, toks: list[str], word: bool) -> list[int]:
        table = self.words if word else self.code
        ids = list(map(table.get, toks))
        if None in ids:
            for i, got in enumerate(ids):
                if got is None:
                    if (got := table.get(toks[i])) is None:  # (added for an earlier None of the same token)
                        got = table[toks[i]] = self._add(toks[i], _OTHER if word else token_kind(toks[i]))
                    ids[i] = got
        return ids

    def placeholder_hashes(self, count: int) -> np.ndarray:
        if len(self.placeholders) < count:
            more = range(len(self.placeholders), max(count, 256))
            new = np.fromiter((token_hash(f"v{k}") for k in more), dtype=np.uint64, count=len(more))
            self.placeholders = np.concatenate((self.placeholders, new))
        return self.placeholders


_VOCAB: _Vocab | None = None


def _clipped_depth(step: np.ndarray, doc: np.ndarray, starts: np.ndarray, longest: int) -> np.ndarray:
    """Per position, the bracket depth after it: a running sum of +1/-1 that never goes below 0,
    restarting at every document. d_k = S_k - min(0, min_{j<=k} S_j) (S the plain running sum);
    each document's sums are shifted down by doc * big so earlier minima never reach later documents."""
    total = np.cumsum(step)
    before = np.concatenate(([0], total))[starts]
    shift = doc * (2 * (longest + 1))
    shifted = total - before[doc] - shift
    return shifted - np.minimum(np.minimum.accumulate(shifted), -shift)


def _placeholder_ranks(ids: np.ndarray, kind: np.ndarray, doc: np.ndarray, starts, longest) -> tuple:
    """(positions of names, each one's placeholder number by first occurrence within its logical line)."""
    depth = _clipped_depth((kind == _OPEN).astype(np.int64) - (kind == _CLOSE), doc, starts, longest)
    line_end = (kind == _LINE) & (depth == 0)
    line_end[starts[starts < len(ids)]] = True  # (a document's first token starts a line too)
    where = np.flatnonzero(kind == _NAME)
    key = (np.cumsum(line_end)[where].astype(np.int64) << _ID_BITS) | ids[where]
    unique, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # distinct (line, name) by first occurrence: lines stay together
    lines = unique[order] >> _ID_BITS
    new_line = np.concatenate(([True], lines[1:] != lines[:-1]))
    at = np.arange(len(order))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = at - np.maximum.accumulate(np.where(new_line, at, 0))
    return where, rank[inverse.reshape(-1)]


def token_stream(texts: Texts) -> tuple[np.ndarray, np.ndarray]:
    """(the kept tokens' uint64 hashes, concatenated; each document's token count)."""
    global _VOCAB
    if _VOCAB is None or _VOCAB.full():
        _VOCAB = _Vocab()
    vocab, ids_all, lengths = _VOCAB, [], []
    for code, message in texts:
        start = len(ids_all)
        if code:
            ids_all += vocab.ids(TOKEN.findall(code), False)
        if message and message.strip():
            ids_all += [vocab.mark_id, *vocab.ids([w.lower() for w in WORD.findall(message)], True)]
        lengths.append(len(ids_all) - start)
    ids = np.array(ids_all, dtype=np.int64)
    kind, hashes = vocab.kind[ids], vocab.hash[ids]
    counts = np.array(lengths, dtype=np.int64)
    doc = np.repeat(np.arange(len(counts)), counts)
    if (kind == _NAME).any():
        where, ranks = _placeholder_ranks(ids, kind, doc, np.cumsum(counts) - counts, int(counts.max()))
        hashes[where] = vocab.placeholder_hashes(int(ranks.max()) + 1)[ranks]
    keep = kind >= _NAME
    return hashes[keep], np.bincount(doc[keep], minlength=len(counts)).astype(np.int64)


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
        combined *= np.uint64(MULTIPLIER)
        combined += stream[k : k + windows]
    starts = np.cumsum(counts) - counts
    doc = np.repeat(np.arange(len(counts)), counts)[:windows]
    valid = np.arange(windows) - starts[doc] < per_doc[doc]  # windows that end inside their document
    return (fmix64(combined[valid]) >> np.uint64(32)).astype(np.uint32), per_doc


def problem_shingle_hashes(texts: Texts, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The "token_hashes" kind: (uint32 hashes of every document's shingles, concatenated; shingles per document)."""
    return shingle_hashes(*token_stream(texts), n)


# -- MinHash ---------------------------------------------------------------------------------------
@lru_cache(maxsize=8)
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 permutation parameters (a, b) for (num_perm, seed)."""
    from datasketch import MinHash

    a, b = MinHash(num_perm=num_perm, seed=seed).permutations
    return np.ascontiguousarray(a, dtype=np.uint32), np.ascontiguousarray(b, dtype=np.uint32)


def _fmix(h: np.ndarray, shifts: tuple[int, int, int], multipliers: tuple[int, int]) -> np.ndarray:
    """MurmurHash3's finalizer over h's unsigned type (wraps): fmix32 or fmix64 by the constants."""
    kind = h.dtype.type
    for shift, multiplier in zip(shifts, multipliers):
        h = (h ^ (h >> kind(shift))) * kind(multiplier)
    return h ^ (h >> kind(shifts[2]))


def fmix32(h: np.ndarray) -> np.ndarray:
    """The 32-bit finalizer, as datasketch applies it before permuting."""
    return _fmix(h, (16, 13, 16), (0x85EBCA6B, 0xC2B2AE35))


def fmix64(h: np.ndarray) -> np.ndarray:
    return _fmix(h, (33, 33, 33), (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53))


def minhash_of_hashes(hashes: np.ndarray, counts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(counts), num_perm) uint32 signatures; document i owns the next counts[i] of `hashes`
    (uint32 shingle hashes, documents in order)."""
    counts = np.asarray(counts, dtype=np.int64)
    out = np.full((len(counts), len(a)), MAX32, dtype=np.uint32)
    if not len(hashes):
        return out
    hv = fmix32(np.asarray(hashes, dtype=np.uint32))
    ends = np.cumsum(counts)
    starts = ends - counts
    a_col, b_col = a[:, None], b[:, None]
    # One buffer for every block: a fresh 2 MiB array per block would be mapped and faulted in
    # page by page each time, which cost several times the arithmetic.
    buffer = np.empty((len(a), _GROUP_SHINGLES + 1024), dtype=np.uint32)
    doc = 0
    while doc < len(counts):
        # documents [doc, stop) whose shingles fill about one block (at least one document)
        stop = max(doc + 1, int(np.searchsorted(ends, starts[doc] + _GROUP_SHINGLES, side="right")))
        lo, hi = starts[doc], ends[stop - 1]
        if hi > lo:
            if hi - lo > buffer.shape[1]:  # one document longer than a block
                buffer = np.empty((len(a), hi - lo), dtype=np.uint32)
            permuted = buffer[:, : hi - lo]
            np.multiply(a_col, hv[None, lo:hi], out=permuted)
            permuted += b_col
            filled = doc + np.flatnonzero(counts[doc:stop])
            out[filled] = np.minimum.reduceat(permuted, starts[filled] - lo, axis=1).T
        doc = stop
    return out


def hashfunc(params: DedupSettings):
    """The per-item function datasketch's MinHash must be given to match "shingle_bytes" signatures."""
    if params.hash == "sha1":
        from datasketch.hashfunc import sha1_hash32

        return sha1_hash32
    return xxhash.xxh32_intdigest


def _shingle_bytes_hashes(texts: Texts, params: DedupSettings):
    """(uint32 hashes of every document's shingle bytes, concatenated; shingles per document)."""
    docs = [problem_shingles(c, m, params.ngram) for c, m in texts]
    counts = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    items = [s for doc in docs for s in doc]
    if params.hash == "xxh32":
        # A shingle seen twice changes no minimum; with xxh32 the repeats cost less than finding them.
        return np.fromiter(map(xxhash.xxh32_intdigest, items), dtype=np.uint32, count=len(items)), counts
    # datasketch's sha1_hash32: the first 4 digest bytes, little-endian; a set per document saves
    # the repeats' share of the sha1 calls.
    docs = [set(doc) for doc in docs]
    counts = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    digests = b"".join([hashlib.sha1(s).digest() for doc in docs for s in doc])
    return np.frombuffer(digests, dtype="<u4")[::5], counts


# -- signatures ------------------------------------------------------------------------------------
def _sign_chunk(job: tuple[Texts, DedupSettings]) -> np.ndarray:
    texts, params = job
    a, b = permutations(params.num_perm, params.seed)
    parts = []
    for i in range(0, len(texts), _BLOCK_DOCS):
        block = texts[i : i + _BLOCK_DOCS]
        if params.signature == "shingle_bytes":
            parts.append(minhash_of_hashes(*_shingle_bytes_hashes(block, params), a, b))
        else:
            parts.append(minhash_of_hashes(*problem_shingle_hashes(block, params.ngram), a, b))
    return np.concatenate(parts) if parts else np.zeros((0, params.num_perm), dtype=np.uint32)


def signatures(texts: Texts, params: DedupSettings, workers: int | None = None, min_parallel: int = 4000) -> np.ndarray:
    """(len(texts), num_perm) uint32 signatures of (code, message) pairs, of `params.signature`'s
    kind; a process pool over chunks when there are many."""
    from synthgen.sandbox.isolation import usable_cpus  # (here: the spawned workers need not import it)

    workers = workers or usable_cpus()
    texts = list(texts)
    if workers <= 1 or len(texts) < min_parallel:
        return _sign_chunk((texts, params))
    size = max(500, -(-len(texts) // (workers * 8)))
    jobs = [(texts[i : i + size], params) for i in range(0, len(texts), size)]
    # spawn, not fork: the parent may hold polars/arrow threads, which fork does not copy safely.
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.map(_sign_chunk, jobs, chunksize=1)
    return np.concatenate(parts, axis=0)


# -- LSH clustering --------------------------------------------------------------------------------
def lsh_weights(recall_weight: float) -> tuple[float, float]:
    """MinHashLSH's (false positive, false negative) weights; they sum to exactly 1.0."""
    return 1.0 - recall_weight, recall_weight


@lru_cache(maxsize=32)
def lsh_shape(threshold: float, num_perm: int, recall_weight: float = 0.5) -> tuple[int, int]:
    """The (bands, rows per band) that datasketch's MinHashLSH picks for these settings."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=lsh_weights(recall_weight))
    return lsh.b, lsh.r


def _row_keys(cols: np.ndarray) -> np.ndarray:
    """A 64-bit key per row of a uint32 matrix (equal rows, equal keys; collisions checked later)."""
    key = np.zeros(cols.shape[0], dtype=np.uint64)
    for j in range(cols.shape[1]):
        key = (key * np.uint64(0x9E3779B97F4A7C15)) ^ cols[:, j].astype(np.uint64)
        key ^= key >> np.uint64(29)
    return key


def _same_key_pairs(key: np.ndarray) -> np.ndarray:
    """All (i, j), i < j, of rows with equal keys."""
    order = np.argsort(key, kind="stable")
    sk = key[order]
    cuts = np.flatnonzero(sk[1:] != sk[:-1]) + 1
    starts = np.concatenate(([0], cuts))
    sizes = np.diff(np.concatenate((starts, [len(sk)])))
    pairs = []
    two = starts[sizes == 2]
    if len(two):
        pairs.append(np.stack([order[two], order[two + 1]], axis=1))
    for s, g in zip(starts[sizes > 2], sizes[sizes > 2]):
        i, j = np.triu_indices(int(g), k=1)
        members = order[s : s + g]
        pairs.append(np.stack([members[i], members[j]], axis=1))
    if not pairs:
        return np.empty((0, 2), dtype=np.int64)
    out = np.concatenate(pairs).astype(np.int64)
    return np.sort(out, axis=1)


def candidate_pairs(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """Unique (i, j), i < j, of signatures equal on at least one band (as MinHashLSH buckets)."""
    found = []
    for band in range(bands):
        cols = np.ascontiguousarray(sigs[:, band * rows : (band + 1) * rows])
        pairs = _same_key_pairs(_row_keys(cols))
        if len(pairs):
            exact = (cols[pairs[:, 0]] == cols[pairs[:, 1]]).all(axis=1)
            found.append(pairs[exact])
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    merged = np.concatenate(found)
    code = np.unique(merged[:, 0] * np.int64(len(sigs)) + merged[:, 1])
    return np.stack([code // len(sigs), code % len(sigs)], axis=1)


def _jaccard_ok(sigs: np.ndarray, pairs: np.ndarray, threshold: float, step: int = 1 << 16) -> np.ndarray:
    keep = np.empty(len(pairs), dtype=bool)
    for s in range(0, len(pairs), step):
        p = pairs[s : s + step]
        equal = (sigs[p[:, 0]] == sigs[p[:, 1]]).sum(axis=1)
        keep[s : s + step] = equal / float(sigs.shape[1]) >= threshold
    return keep


def _components(n: int, pairs: np.ndarray) -> np.ndarray:
    """Per node of the graph with edges `pairs`, the smallest node of its connected component."""
    from scipy.sparse import coo_matrix  # (datasketch's own dependency)
    from scipy.sparse.csgraph import connected_components

    _, component = connected_components(coo_matrix((np.ones(len(pairs)), pairs.T), shape=(n, n)), directed=False)
    smallest = np.full(n, n, dtype=np.int64)
    np.minimum.at(smallest, component, np.arange(n))
    return smallest[component]


def _distinct_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the first row of each distinct row, in order; distinct-row number of every row).
    Rows are grouped by a 64-bit key, then compared whole: `np.unique(axis=0)` sorts 100k signatures
    about ten times slower, so it only settles a key collision."""
    _, first, inverse = np.unique(_row_keys(matrix), return_index=True, return_inverse=True)
    if not (matrix == matrix[first[inverse]]).all():
        _, first, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    number = np.empty_like(order)
    number[order] = np.arange(len(order))
    return first[order], number[inverse.reshape(-1)]


def cluster(sigs: np.ndarray, params: DedupSettings, groups: np.ndarray | None = None) -> np.ndarray:
    """A label per document: the smallest document index of its near-duplicate cluster. `groups`
    (ints) links only documents of one group (e.g. environment). Identical signatures (and group)
    are merged first, so that many exact copies do not make a quadratic number of candidate pairs."""
    n = len(sigs)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    g = np.zeros(n, dtype=np.uint32) if groups is None else np.asarray(groups).astype(np.uint32)
    rows_of, inverse = _distinct_rows(np.column_stack([g, sigs]))
    usig, ugroup = sigs[rows_of], g[rows_of]
    bands, rows = lsh_shape(params.threshold, params.num_perm, params.recall_weight)
    pairs = candidate_pairs(usig, bands, rows)
    pairs = pairs[ugroup[pairs[:, 0]] == ugroup[pairs[:, 1]]]
    if params.verify and len(pairs):
        pairs = pairs[_jaccard_ok(usig, pairs, params.threshold)]
    # A component's root is its smallest distinct row, whose first document (rows_of is ascending)
    # is the component's smallest document.
    return rows_of[_components(len(usig), pairs)][inverse]


def clusters_of(labels: np.ndarray) -> list[list[int]]:
    """The clusters with more than one member, as sorted index lists, sorted by first member."""
    out: dict[int, list[int]] = {}
    for i, label in enumerate(labels.tolist()):
        out.setdefault(label, []).append(i)
    return [members for _, members in sorted(out.items()) if len(members) > 1]


def near_duplicate_labels(
    texts: Texts, params: DedupSettings, groups: np.ndarray | None = None, workers: int | None = None
) -> np.ndarray:
    """Signatures then clusters, in one call."""
    return cluster(signatures(texts, params, workers), params, groups)
