"""MinHash with numpy over 32-bit shingle hashes, as datasketch's `MinHash` (affine32 scheme)
computes it, and the "shingle_bytes" signature kind (synthgen.stages.filter.dedup).

datasketch's affine32 MinHash of an item is min over items of `a * fmix32(hash(item)) + b`
(mod 2^32) per permutation (a, b). Here all of a document's hashes are permuted at once, as a
(num_perm, shingles) block of a few thousand shingles that stays in cache, with one `reduceat`
for the per-document minimum. A document without shingles stays all-max, like an empty
datasketch MinHash.

The "shingle_bytes" kind hashes each shingle's UTF-8 bytes (synthgen.stages.filter.dedup_text.shingles) with
xxh32 (xxhash, seed 0) or sha1 (datasketch's default `sha1_hash32`): exactly datasketch's
signatures given the same `hashfunc`.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import xxhash

from synthgen.stages.filter.dedup_text import problem_shingles

MAX32 = np.uint32(0xFFFFFFFF)
_GROUP_SHINGLES = 4096  # shingles per numpy block: (num_perm x 4096) uint32 = 2 MiB at 128


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


def hashfunc(hash_name: str):
    """The per-item function datasketch's MinHash must be given to produce the same signatures."""
    if hash_name == "sha1":
        from datasketch.hashfunc import sha1_hash32

        return sha1_hash32
    return xxhash.xxh32_intdigest


def signatures_of_shingles(
    docs: Sequence[list[bytes]], a: np.ndarray, b: np.ndarray, hash_name: str = "xxh32"
) -> np.ndarray:
    """(len(docs), num_perm) uint32 signatures of each document's shingle bytes."""
    counts = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
    hashes = HASHES[hash_name](list(itertools.chain.from_iterable(docs)))
    return minhash_of_hashes(hashes, counts, a, b)


def shingle_bytes_signatures(
    texts: Sequence[tuple[str | None, str | None]], n: int, a: np.ndarray, b: np.ndarray, hash_name: str
) -> np.ndarray:
    # A shingle seen twice changes no minimum: with the cheap xxh32 hashing the repeats costs less
    # than finding them; with sha1 a set per document saves the repeats' share of the sha1 calls.
    shingled = [problem_shingles(c, m, n) for c, m in texts]
    if hash_name == "sha1":
        shingled = [list(set(doc)) for doc in shingled]
    return signatures_of_shingles(shingled, a, b, hash_name)
