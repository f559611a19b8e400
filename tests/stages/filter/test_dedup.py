"""synthgen.stages.filter.dedup: normalisation, both signature kinds equal to datasketch fed the same shingle
hashes, and the same clusters as datasketch."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import xxhash
from datasketch import MinHash, MinHashLSH

from synthgen.stages.filter import dedup
from synthgen.stages.filter.settings import DedupSettings

PARAMS = DedupSettings()
BYTES = DedupSettings(signature="shingle_bytes")
M64 = (1 << 64) - 1

BASE = '''
def f(numbers, limit):
    """Sum the even numbers below the limit, skipping multiples of seven."""
    total = 0
    for value in numbers:
        if value % 2 == 0 and value < limit:
            if value % 7 == 0:
                continue
            total += value * value
    return total - len(numbers)
'''

RENAMED = '''
def f(xs, cap):
    """Sum the even numbers below the limit, skipping multiples of seven."""
    acc = 0
    for v in xs:
        if v % 2 == 0 and v < cap:
            if v % 7 == 0:
                continue
            acc += v * v
    return acc - len(xs)
'''

REFORMATTED = '''
def f( numbers,limit ):
  """Sum the even numbers below the limit, skipping multiples of seven."""
  # running total
  total=0
  for value in numbers :
    if value%2==0 and value<limit:
      if value % 7 == 0: continue
      total += value*value   # square it
  return total-len( numbers )
'''

DISTINCT = [
    'def f(s):\n    words = s.split()\n    return " ".join(w[::-1] for w in words if len(w) > 3)\n',
    "def f(grid):\n    rows = len(grid)\n    best = 0\n    for r in range(rows):\n        best = max(best, sum(grid[r]))\n"
    "    return best * rows\n",
    "def f(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, (a + b) % 1000003\n    return a\n",
    "def f(d):\n    out = {}\n    for k, v in sorted(d.items()):\n        out.setdefault(v, []).append(k)\n    return out\n",
]


def _fmix64(h: int) -> int:
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & M64
    return h ^ (h >> 33)


def token_shingle_hashes(code, message, n) -> list[int]:
    """The "token_hashes" kind spelt out in plain Python: xxh64 per token, Horner over n of them
    with the odd multiplier, fmix64, the top 32 bits."""
    hashes = [xxhash.xxh64_intdigest(t.encode()) for t in dedup.problem_tokens(code, message)]
    runs = [hashes] if 0 < len(hashes) < n else [hashes[i : i + n] for i in range(len(hashes) - n + 1)]
    out = []
    for run in runs:
        combined = 0
        for h in run:
            combined = (combined * 0x9E3779B97F4A7C15 + h) & M64
        out.append(_fmix64(combined) >> 32)
    return out


def datasketch_minhash(code, message=None, params=PARAMS) -> MinHash:
    """datasketch's MinHash, fed shingle by shingle: for "token_hashes" the 32-bit hashes above
    (an identity hashfunc), else the shingle bytes (its default sha1 hash when params.hash is sha1)."""
    if params.signature == "token_hashes":
        m = MinHash(num_perm=params.num_perm, seed=params.seed, hashfunc=lambda h: h)
        for h in token_shingle_hashes(code, message, params.ngram):
            m.update(h)
        return m
    if params.hash == "sha1":
        m = MinHash(num_perm=params.num_perm, seed=params.seed)
        for shingle in dedup.problem_shingles(code, message, params.ngram):
            m.update(shingle)
        return m
    m = MinHash(num_perm=params.num_perm, seed=params.seed, hashfunc=dedup.hashfunc(params))
    for shingle in dedup.problem_shingles(code, message, params.ngram):
        m.update(shingle)
    return m


def test_tokens_ignore_names_whitespace_and_comments():
    assert dedup.code_tokens(BASE) == dedup.code_tokens(RENAMED)
    assert dedup.code_tokens("x = 1  # one\ny = x + 2\n") == dedup.code_tokens("a=1\nb = a+2")
    # Keywords, builtins, literals and strings stay; "#" inside a string is not a comment.
    assert dedup.code_tokens("return len(x) + 3 # c") == ["return", "len", "(", "v0", ")", "+", "3"]
    assert dedup.code_tokens('s = "a # b"') == ["v0", "=", '"a # b"']
    # Numbering restarts per logical line, so a deleted line does not renumber the rest.
    assert dedup.code_tokens("a = 1\nb = c\n") == ["v0", "=", "1", "v0", "=", "v1"]
    assert dedup.code_tokens("f(a,\n  b)") == ["v0", "(", "v1", ",", "v2", ")"]
    # Broken code: a quote that opens no string is a token of its own; string prefixes stay on the string.
    assert dedup.code_tokens("x = 'abc\ny = 1") == ["v0", "=", "'", "v1", "v0", "=", "1"]
    assert dedup.code_tokens("s = rb'x' + f\"{y}\" # c") == ["v0", "=", "rb'x'", "+", 'f"{y}"']


def test_message_is_part_of_the_text():
    assert dedup.problem_tokens("x = 1", "Add TWO.")[-3:] == [dedup.MESSAGE_MARK, "add", "two"]
    assert dedup.problem_tokens("x = 1", None) == dedup.problem_tokens("x = 1", "   ")


def test_shingles_of_short_and_empty_texts():
    assert dedup.shingles([], 5) == []
    assert dedup.shingles(["a", "b"], 5) == [b"a b"]
    assert dedup.shingles(list("abcdef"), 5) == [b"a b c d e", b"b c d e f"]


LONG = "x" * 60  # past the per-process token table: hashed afresh in every block
ODD_TEXTS = [
    (BASE, "hint"),
    (RENAMED, None),
    ("", None),
    ("x", None),
    (None, "Only a message, no code"),
    ("f(a,\n  b)\nc = a", "   "),
    (f"{LONG} = {LONG} + '{LONG}'\n{LONG}.y = 1", "a v0 v1 word"),
    (") ) x = (( y", None),  # unbalanced brackets: depth never goes below 0
]


@pytest.mark.parametrize("num_perm,seed,ngram", [(128, 1, 5), (64, 7, 3), (256, 1, 1)])
@pytest.mark.parametrize(
    "kind,hash_name", [("token_hashes", "xxh32"), ("shingle_bytes", "xxh32"), ("shingle_bytes", "sha1")]
)
def test_signatures_equal_datasketch(num_perm, seed, ngram, kind, hash_name):
    params = DedupSettings(num_perm=num_perm, seed=seed, ngram=ngram, signature=kind, hash=hash_name)
    texts = ODD_TEXTS + [(d, None) for d in DISTINCT]
    sigs = dedup.signatures(texts, params, workers=1)
    for (code, message), sig in zip(texts, sigs):
        assert np.array_equal(sig, datasketch_minhash(code, message, params).hashvalues)


def test_token_hashes_survive_block_edges_and_a_full_cache(monkeypatch):
    """Documents split over numpy blocks, and tokens that no longer fit the per-process table,
    give the same signatures as one document at a time."""
    texts = [(d + f"\nz{i} = {i} * {LONG}{i}\n", f"note {i}") for i in range(12) for d in DISTINCT[:2]]
    expected = [datasketch_minhash(c, m).hashvalues for c, m in texts]
    monkeypatch.setattr(dedup, "_BLOCK_DOCS", 5)
    monkeypatch.setattr(dedup._Vocab, "full", lambda self: True)
    for sig, want in zip(dedup.signatures(texts, PARAMS, workers=1), expected):
        assert np.array_equal(sig, want)


def test_signature_kind_is_checked():
    with pytest.raises(ValueError, match="signature\n  Input should be 'token_hashes' or 'shingle_bytes'"):
        DedupSettings(signature="strings")
    with pytest.raises(ValueError, match="is for signature shingle_bytes"):
        DedupSettings(hash="sha1")


def test_process_pool_gives_the_same_signatures():
    texts = [(d + f"\n# {i}\nz = {i}\n", None) for i in range(40) for d in DISTINCT[:1]]
    one = dedup.signatures(texts, PARAMS, workers=1)
    two = dedup.signatures(texts, PARAMS, workers=2, min_parallel=1)
    assert np.array_equal(one, two)


def test_lsh_shape_is_datasketchs():
    for threshold in (0.5, 0.8, 0.9):
        for weight in (0.5, 0.9):
            lsh = MinHashLSH(threshold=threshold, num_perm=128, weights=dedup.lsh_weights(weight))
            assert dedup.lsh_shape(threshold, 128, weight) == (lsh.b, lsh.r)
    assert dedup.lsh_shape(0.8, 128, 0.9) == (14, 9)


def test_planted_cluster_found_and_distinct_problems_kept_apart():
    texts = [(BASE, None), (DISTINCT[0], None), (RENAMED, None), (DISTINCT[1], None), (REFORMATTED, None)]
    texts += [(d, None) for d in DISTINCT[2:]]
    labels = dedup.near_duplicate_labels(texts, PARAMS, workers=1)
    assert dedup.clusters_of(labels) == [[0, 2, 4]]
    assert labels.tolist()[:5] == [0, 1, 0, 3, 0]


def test_groups_keep_clusters_apart():
    texts = [(BASE, None), (RENAMED, None), (BASE, None)]
    labels = dedup.near_duplicate_labels(texts, PARAMS, groups=np.array([0, 1, 1]), workers=1)
    assert labels.tolist() == [0, 1, 1]


def test_exact_copies_collapse_without_quadratic_pairs():
    texts = [(BASE, None)] * 3000 + [(DISTINCT[0], None)]
    labels = dedup.near_duplicate_labels(texts, PARAMS, workers=1)
    assert set(labels[:3000].tolist()) == {0} and labels[3000] == 3000


def _bench():
    path = Path(__file__).resolve().parents[3] / "bench" / "dedup.py"
    spec = importlib.util.spec_from_file_location("bench_dedup", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_same_clusters_as_the_plain_datasketch_loop():
    bench = _bench()
    docs, planted = bench.build(800, 400)
    sub = docs[:400]
    expected = bench.baseline_clusters(sub, BYTES)
    labels = dedup.near_duplicate_labels([(d, None) for d in sub], BYTES, workers=1)
    assert dedup.clusters_of(labels) == expected
    # The token_hashes kind hashes shingles another way: the planted clusters all the same.
    fast = dedup.near_duplicate_labels([(d, None) for d in sub], PARAMS, workers=1)
    assert dedup.clusters_of(fast) == expected
    sub_planted = [(a, b) for a, b in planted if b < 400]
    assert sub_planted and sum(labels[a] == labels[b] for a, b in sub_planted) >= 0.9 * len(sub_planted)
    # Without verification the clusters are plain LSH buckets; datasketch's query sees the same.
    loose = DedupSettings(verify=False, signature="shingle_bytes")
    sigs = dedup.signatures([(d, None) for d in sub], loose, workers=1)
    lsh = MinHashLSH(threshold=loose.threshold, num_perm=loose.num_perm, weights=dedup.lsh_weights(loose.recall_weight))
    mins = [MinHash(num_perm=128, hashvalues=s, scheme="affine32") for s in sigs]
    for i, m in enumerate(mins):
        lsh.insert(i, m)
    pairs = {(min(i, j), max(i, j)) for i, m in enumerate(mins) for j in lsh.query(m) if i != j}
    bands, rows = dedup.lsh_shape(loose.threshold, loose.num_perm, loose.recall_weight)
    assert {tuple(p) for p in dedup.candidate_pairs(sigs, bands, rows).tolist()} == pairs


def test_distinct_rows_survives_key_collisions(monkeypatch):
    rng = np.random.default_rng(1)
    matrix = rng.integers(0, 3, (500, 3)).astype(np.uint32)
    expected = dedup._distinct_rows(matrix)
    monkeypatch.setattr(dedup, "_row_keys", lambda m: np.zeros(len(m), dtype=np.uint64))
    rows_of, inverse = dedup._distinct_rows(matrix)
    assert np.array_equal(rows_of, expected[0]) and np.array_equal(inverse, expected[1])
    assert np.array_equal(matrix[rows_of][inverse], matrix)
