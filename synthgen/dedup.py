"""Near-duplicate detection: MinHash signatures of normalised problem text and LSH clustering.

A problem's text is its code plus its message. Code is split into tokens by one regular
expression (Python's `tokenize` is several times slower and gives up on fragments): comments
and whitespace are dropped, and every identifier that is not a keyword or builtin becomes a
placeholder numbered by first occurrence within its logical line (`v0`, `v1`, ...), so renamed
variables and reformatted code give the same tokens. The message is lower-cased words (its
punctuation is dropped). A shingle is `ngram` consecutive tokens joined by spaces.

Signatures are exactly datasketch's: `MinHash(num_perm, seed)` (affine32 scheme, the default
sha1_hash32) updated with every shingle's UTF-8 bytes. We compute them without a MinHash object:
hash every shingle once, apply the same permutations to all of a document's hashes at once
with numpy, and spread documents over a process pool. Candidate pairs are documents that share a band, with
the (bands, rows) that datasketch's `MinHashLSH(threshold, num_perm, weights)` picks; with
`verify` a pair links only if its estimated Jaccard (equal slots / num_perm, as
`MinHash.jaccard`) reaches the threshold. Clusters are the connected components of the links;
a cluster is labelled by its smallest document index.

Speed against a plain datasketch loop: `python bench/dedup.py`.
"""

from __future__ import annotations

import builtins
import hashlib
import itertools
import keyword
import multiprocessing
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import xxhash

_TOKEN = re.compile(
    r"""\s+"""  # whitespace: matched so that it is skipped cheaply
    r"""|[^\W\d]\w*(?![\w'"])"""  # identifier or keyword (not a string prefix)
    r"""|[()\[\]{},;]"""  # common punctuation, early: it is frequent and starts nothing longer
    r"""|\#[^\r\n]*"""  # comment
    r"""|[rRbBuUfF]{0,2}(?:'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"""
    r'''|"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'''
    r"""|'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*")"""  # string literals
    r"""|\d[\w.]*|\.\d\w*"""  # numbers
    r"""|\*\*=?|//=?|>>=?|<<=?|->|:=|[-+*/%&|^@<>=!]=|[^\s\w]"""  # operators, punctuation
)
_WORD = re.compile(r"\w+")
_KEEP = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
_SKIP = frozenset(" \t\n\r\f\v#")  # first characters of whitespace tokens and comments
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
MESSAGE_MARK = "<message>"  # separates code tokens from message tokens
_MAX32 = np.uint32(0xFFFFFFFF)
_GROUP_SHINGLES = 4096  # shingles per numpy block: (num_perm x 4096) uint32 = 2 MiB at 128


@dataclass(frozen=True)
class MinHashParams:
    threshold: float = 0.8
    num_perm: int = 128
    ngram: int = 5
    seed: int = 1
    verify: bool = True
    # datasketch's MinHashLSH picks (bands, rows) minimising fp_weight * P(false positive) +
    # fn_weight * P(false negative); fn_weight = recall_weight, fp_weight = 1 - recall_weight.
    # With `verify`, false positives cost only a signature comparison, so recall is favoured:
    # at threshold 0.8 and 128 permutations, 0.9 gives 14 bands x 9 rows (a pair at Jaccard
    # 0.86 becomes a candidate 98% of the time) where datasketch's default 0.5 gives 9 x 13 (75%).
    recall_weight: float = 0.9
    # The 32-bit shingle hash fed to MinHash. "xxh32" (xxhash, as datatrove uses) costs about a
    # fifth of "sha1", datasketch's default; signatures equal datasketch's given the same function
    # (`hashfunc(params)` is what to pass as datasketch's `hashfunc`).
    hash: str = "xxh32"

    def __post_init__(self):
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")
        if not 0.5 <= self.recall_weight < 1.0:
            raise ValueError(f"recall_weight must be in [0.5, 1), got {self.recall_weight}")
        if self.num_perm < 2 or self.ngram < 1:
            raise ValueError("num_perm must be >= 2 and ngram >= 1")
        if self.hash not in HASHES:
            raise ValueError(f"hash must be one of {', '.join(HASHES)}, got {self.hash!r}")


# -- text -> tokens -> shingles ------------------------------------------------------------------
# Token -> kind, per process (bounded): one dict lookup instead of several string tests per token.
_SKIP_KIND, _NEWLINE_KIND, _NAME_KIND, _OPEN_KIND, _CLOSE_KIND, _OTHER_KIND = range(6)
_KINDS: dict[str, int] = {}
_KINDS_MAX = 1 << 18
_PLACEHOLDERS = [f"v{i}" for i in range(256)]


def _kind(tok: str) -> int:
    first = tok[0]
    if first in _SKIP:
        return _SKIP_KIND if first == "#" or "\n" not in tok else _NEWLINE_KIND
    if (first.isalpha() or first == "_") and tok[-1] not in "'\"" and tok not in _KEEP:
        return _NAME_KIND
    return _OPEN_KIND if tok in _OPEN else _CLOSE_KIND if tok in _CLOSE else _OTHER_KIND


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
    for tok in _TOKEN.findall(code):
        kind = get(tok)
        if kind is None:
            kind = _kind(tok)
            if len(tok) < 40 and len(kinds) < _KINDS_MAX:  # long ones are strings and comments
                kinds[tok] = kind
        if kind == _SKIP_KIND:  # the most frequent: whitespace
            continue
        if kind == _OTHER_KIND:
            append(tok)
        elif kind == _NAME_KIND:
            placeholder = names.get(tok)
            if placeholder is None:
                k = len(names)
                placeholder = names[tok] = _PLACEHOLDERS[k] if k < 256 else f"v{k}"
            append(placeholder)
        elif kind == _NEWLINE_KIND:
            if depth == 0:
                names = {}
        elif kind == _OPEN_KIND:
            depth += 1
            append(tok)
        elif kind == _CLOSE_KIND:
            depth -= depth > 0
            append(tok)
    return out


def message_tokens(message: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(message)]


def problem_tokens(code: str | None, message: str | None) -> list[str]:
    tokens = code_tokens(code) if code else []
    if message and message.strip():
        tokens.append(MESSAGE_MARK)
        tokens.extend(message_tokens(message))
    return tokens


def shingles(tokens: Sequence[str], n: int) -> list[bytes]:
    """The UTF-8 bytes of every run of n tokens (one shingle of all tokens if there are fewer)."""
    if len(tokens) < n:
        return [" ".join(tokens).encode()] if tokens else []
    return [" ".join(run).encode() for run in zip(*(tokens[i:] for i in range(n)))]


def problem_shingles(code: str | None, message: str | None, n: int) -> list[bytes]:
    return shingles(problem_tokens(code, message), n)  # what both the fast path and datasketch hash


# -- signatures ------------------------------------------------------------------------------------
@lru_cache(maxsize=8)
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 permutation parameters (a, b) for (num_perm, seed)."""
    from datasketch import MinHash

    a, b = MinHash(num_perm=num_perm, seed=seed).permutations
    return np.ascontiguousarray(a, dtype=np.uint32), np.ascontiguousarray(b, dtype=np.uint32)


def _fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer, as datasketch applies it before permuting (wraps mod 2^32)."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def sha1_32(items: Sequence[bytes]) -> np.ndarray:
    """datasketch.hashfunc.sha1_hash32 of every item: the first 4 digest bytes, little-endian."""
    sha1 = hashlib.sha1
    digests = b"".join([sha1(item).digest() for item in items])
    return np.frombuffer(digests, dtype="<u4")[::5]  # the first 4 of every 20 bytes


def xxh32(items: Sequence[bytes]) -> np.ndarray:
    """xxhash's 32-bit digest (seed 0) of every item."""
    digest = xxhash.xxh32_intdigest
    return np.fromiter(map(digest, items), dtype=np.uint32, count=len(items))


HASHES = {"sha1": sha1_32, "xxh32": xxh32}


def hashfunc(params: MinHashParams):
    """The per-item function datasketch's MinHash must be given to produce the same signatures."""
    if params.hash == "sha1":
        from datasketch.hashfunc import sha1_hash32

        return sha1_hash32
    return xxhash.xxh32_intdigest


def signatures_of_shingles(
    docs: Sequence[list[bytes]], a: np.ndarray, b: np.ndarray, hash_name: str = "xxh32"
) -> np.ndarray:
    """(len(docs), num_perm) uint32 signatures of each document's shingles.

    A document without shingles stays all-max, like an empty datasketch MinHash. Works on blocks
    of about `_GROUP_SHINGLES` shingles: their sha1 hashes in one pass, permuted as a
    (num_perm, shingles) block that stays in cache, and one `reduceat` for the per-document
    minimum.
    """
    out = np.full((len(docs), len(a)), _MAX32, dtype=np.uint32)
    hash_all = HASHES[hash_name]
    a_col, b_col = a[:, None], b[:, None]
    start = 0
    while start < len(docs):
        stop, total = start, 0
        while stop < len(docs) and (stop == start or total + len(docs[stop]) <= _GROUP_SHINGLES):
            total += len(docs[stop])
            stop += 1
        block = docs[start:stop]
        if total:
            counts = np.fromiter((len(d) for d in block), dtype=np.int64, count=len(block))
            hv = _fmix32(hash_all(list(itertools.chain.from_iterable(block))))
            permuted = np.multiply(a_col, hv[None, :])
            permuted += b_col
            offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))
            filled = np.flatnonzero(counts)
            out[start + filled] = np.minimum.reduceat(permuted, offsets[filled], axis=1).T
        start = stop
    return out


def _sign_chunk(job: tuple[list[tuple[str | None, str | None]], int, np.ndarray, np.ndarray, str]) -> np.ndarray:
    texts, n, a, b, hash_name = job
    # A shingle seen twice changes no minimum: with the cheap xxh32 hashing the repeats costs less
    # than finding them; with sha1 a set per document saves the repeats' share of the sha1 calls.
    shingled = [problem_shingles(c, m, n) for c, m in texts]
    if hash_name == "sha1":
        shingled = [list(set(doc)) for doc in shingled]
    return signatures_of_shingles(shingled, a, b, hash_name)


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def signatures(
    texts: Sequence[tuple[str | None, str | None]],
    params: MinHashParams,
    workers: int | None = None,
    min_parallel: int = 4000,
) -> np.ndarray:
    """Signatures of (code, message) pairs; a process pool over chunks when there are many."""
    a, b = permutations(params.num_perm, params.seed)
    workers = workers or default_workers()
    texts = list(texts)
    if workers <= 1 or len(texts) < min_parallel:
        return _sign_chunk((texts, params.ngram, a, b, params.hash))
    size = max(500, -(-len(texts) // (workers * 8)))
    jobs = [(texts[i : i + size], params.ngram, a, b, params.hash) for i in range(0, len(texts), size)]
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


def _components(n: int, edges: Iterable[tuple[int, int]]) -> np.ndarray:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    return np.fromiter((find(i) for i in range(n)), dtype=np.int64, count=n)


def _distinct_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the first row of each distinct row, in order; distinct-row number of every row).

    Rows are grouped by a 64-bit key and then compared whole; `np.unique(axis=0)` gives the same
    answer but sorts 100k signatures about ten times slower.
    """
    key = _row_keys(matrix)
    order = np.argsort(key, kind="stable")
    sk = key[order]
    starts = np.concatenate(([True], sk[1:] != sk[:-1]))
    first = np.maximum.accumulate(np.where(starts, np.arange(len(sk)), 0))
    rep = np.empty(len(sk), dtype=np.int64)
    rep[order] = order[first]  # the first row (in input order) with the same key
    if not (matrix == matrix[rep]).all():  # a key collision: fall back to an exact sort
        _, idx, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
        order = np.argsort(idx, kind="stable")
        renumber = np.empty_like(order)
        renumber[order] = np.arange(len(order))
        return idx[order], renumber[inverse.reshape(-1)]
    rows_of = np.flatnonzero(rep == np.arange(len(rep)))
    number = np.full(len(rep), -1, dtype=np.int64)
    number[rows_of] = np.arange(len(rows_of))
    return rows_of, number[rep]


def cluster(sigs: np.ndarray, params: MinHashParams, groups: np.ndarray | None = None) -> np.ndarray:
    """A label per document: the smallest document index of its near-duplicate cluster.

    `groups` (ints) restricts links to documents of the same group (e.g. the same environment).
    Documents with identical signatures (and group) are merged first, so that many exact copies
    do not turn into a quadratic number of candidate pairs.
    """
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
    ucomp = _components(len(usig), map(tuple, pairs.tolist()))
    comp = ucomp[inverse]
    # Relabel each component by its smallest document index.
    smallest = np.full(len(usig), n, dtype=np.int64)
    np.minimum.at(smallest, comp, np.arange(n, dtype=np.int64))
    return smallest[comp]


def clusters_of(labels: np.ndarray) -> list[list[int]]:
    """The clusters with more than one member, as sorted index lists, sorted by first member."""
    out: dict[int, list[int]] = {}
    for i, label in enumerate(labels.tolist()):
        out.setdefault(label, []).append(i)
    return [members for _, members in sorted(out.items()) if len(members) > 1]


def near_duplicate_labels(
    texts: Sequence[tuple[str | None, str | None]],
    params: MinHashParams,
    groups: np.ndarray | None = None,
    workers: int | None = None,
) -> np.ndarray:
    """Signatures then clusters, in one call."""
    return cluster(signatures(texts, params, workers), params, groups)
