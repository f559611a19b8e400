"""Near-duplicate detection: MinHash signatures of normalised problem text and LSH clustering.

Text -> tokens and shingle hashes is synthgen.stages.filter.dedup_text. Two signature kinds (the
filter's `dedup.signature`, DedupSettings), never mixed:

- "token_hashes" (the default): each token hashed once and every shingle's hash made from its
  tokens' hashes with numpy, no shingle string built;
- "shingle_bytes": each shingle's UTF-8 bytes hashed (xxh32 or datasketch's sha1), exactly
  datasketch's `MinHash` given the same `hashfunc`.

Both are datasketch's affine32 MinHash (num_perm, seed): min over shingles of
`a * fmix32(hash) + b` (mod 2^32) per permutation (a, b), here computed with numpy over blocks of
documents and spread over a process pool (datasketch's own `MinHash.bulk` signs a quarter to a third
fewer documents per CPU-second, bench/README.md). A document without shingles stays all-max,
like an empty datasketch MinHash. Candidate pairs are documents that share a band, with the
(bands, rows) that datasketch's `MinHashLSH(threshold, num_perm, weights)` picks; with `verify` a
pair links only if its estimated Jaccard (equal slots / num_perm, as `MinHash.jaccard`) reaches
the threshold. Clusters are the connected components of the links; a cluster is labelled by its
smallest document index.

Speed against datasketch, rensa and datatrove: `python bench/dedup.py`.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np
import xxhash

from synthgen.stages.filter.dedup_text import problem_shingle_hashes, problem_shingles
from synthgen.stages.filter.settings import DedupSettings

MAX32 = np.uint32(0xFFFFFFFF)
_BLOCK_DOCS = 256  # documents per numpy pass of the token_hashes kind
_GROUP_SHINGLES = 4096  # shingles per numpy block: (num_perm x 4096) uint32 = 2 MiB at 128


# -- MinHash ---------------------------------------------------------------------------------------
@lru_cache(maxsize=8)
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 permutation parameters (a, b) for (num_perm, seed)."""
    from datasketch import MinHash

    a, b = MinHash(num_perm=num_perm, seed=seed).permutations
    return np.ascontiguousarray(a, dtype=np.uint32), np.ascontiguousarray(b, dtype=np.uint32)


def fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer, as datasketch applies it before permuting (wraps mod 2^32)."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


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


def _shingle_bytes_hashes(texts: Sequence[tuple[str | None, str | None]], params: DedupSettings):
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
def _sign_chunk(job: tuple[list[tuple[str | None, str | None]], DedupSettings]) -> np.ndarray:
    texts, params = job
    a, b = permutations(params.num_perm, params.seed)
    if params.signature == "shingle_bytes":
        return minhash_of_hashes(*_shingle_bytes_hashes(texts, params), a, b)
    parts = []
    for i in range(0, len(texts), _BLOCK_DOCS):
        hashes, counts = problem_shingle_hashes(texts[i : i + _BLOCK_DOCS], params.ngram)
        parts.append(minhash_of_hashes(hashes, counts, a, b))
    return np.concatenate(parts) if parts else np.zeros((0, params.num_perm), dtype=np.uint32)


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def signatures(
    texts: Sequence[tuple[str | None, str | None]],
    params: DedupSettings,
    workers: int | None = None,
    min_parallel: int = 4000,
) -> np.ndarray:
    """(len(texts), num_perm) uint32 signatures of (code, message) pairs, of `params.signature`'s
    kind; a process pool over chunks when there are many."""
    workers = workers or default_workers()
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
    answer but sorts 100k signatures about ten times slower, so it only settles a key collision.
    """
    _, first, inverse = np.unique(_row_keys(matrix), return_index=True, return_inverse=True)
    if not (matrix == matrix[first[inverse]]).all():
        _, first, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    number = np.empty_like(order)
    number[order] = np.arange(len(order))
    return first[order], number[inverse.reshape(-1)]


def cluster(sigs: np.ndarray, params: DedupSettings, groups: np.ndarray | None = None) -> np.ndarray:
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
    # A component's root is its smallest distinct row, whose first document (rows_of is ascending)
    # is the component's smallest document.
    return rows_of[_components(len(usig), map(tuple, pairs.tolist()))][inverse]


def clusters_of(labels: np.ndarray) -> list[list[int]]:
    """The clusters with more than one member, as sorted index lists, sorted by first member."""
    out: dict[int, list[int]] = {}
    for i, label in enumerate(labels.tolist()):
        out.setdefault(label, []).append(i)
    return [members for _, members in sorted(out.items()) if len(members) > 1]


def near_duplicate_labels(
    texts: Sequence[tuple[str | None, str | None]],
    params: DedupSettings,
    groups: np.ndarray | None = None,
    workers: int | None = None,
) -> np.ndarray:
    """Signatures then clusters, in one call."""
    return cluster(signatures(texts, params, workers), params, groups)
