"""The tools a user would pick instead of synthgen.stages.filter.dedup, run the way each is meant to be run, for
bench/dedup.py's peer phase. Every method takes the documents and returns a cluster label per
document (equal labels: one cluster), single-process, at the same LSH shape (14 bands x 9 rows
at threshold 0.8) wherever the tool lets it be set:

- synthgen, both signature kinds (`workers=1`);
- rensa (Rust MinHash, optional): `RMinHash.from_token_sets` on synthgen's shingle bytes,
  `RMinHashLSH` insert and `query_all`, candidates kept when `jaccard` >= threshold (rensa needs
  num_perm divisible by the bands: 126 = 14 x 9); rensa's own way (its README: the words of the
  raw text, `text.split()`); and rensa's sketch of synthgen's token-hash shingle hashes
  (`digest_matrix_from_flat_token_hashes`) clustered by synthgen's LSH;
- datatrove (optional): its three MinHash dedup steps (signatures to files and sorted, buckets,
  clusters) with 14 buckets x 9 hashes, 64-bit xxhash, run in a temporary folder; fed synthgen's
  shingles (its `get_shingles` hashes synthgen's shingle strings) and with its own shingling
  (`simplify_text`, word 5-grams; its English word tokenizer is spaCy's, and where spaCy is not
  installed NLTK's word tokenizer stands in); it has no Jaccard check;
- datasketch by hand: shingles once per document, `MinHash.bulk` (xxh32), `MinHashLSH`
  insert and query, `MinHash.jaccard` >= threshold, union-find.
A method whose package is missing is skipped, with the reason.
"""

from __future__ import annotations

import importlib.util
import os
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from synthgen.stages.filter import dedup
from synthgen.stages.filter.dedup import problem_shingle_hashes, problem_shingles
from synthgen.stages.filter.settings import DedupSettings

THRESHOLD, BANDS, ROWS, SEED, NGRAM = 0.8, 14, 9, 1, 5
os.environ.setdefault("TQDM_DISABLE", "1")  # datatrove's cluster step draws a progress bar


def components(n: int, pairs) -> np.ndarray:
    """Union-find over (i, j) links: a label per document (the smallest index of its cluster)."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in pairs:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return np.array([find(i) for i in range(n)], dtype=np.int64)


def _pairs_of(groups) -> set[tuple[int, int]]:
    out = set()
    for members in groups:
        members = sorted(members)
        out.update((a, b) for k, a in enumerate(members) for b in members[k + 1 :])
    return out


def precision_recall(labels, planted: list[tuple[int, int]]) -> tuple[float, float, int]:
    """Pair-level precision and recall against the planted groups (an original and its copies),
    and the number of false links (pairs linked that were not planted together)."""
    truth: dict[int, set[int]] = {}
    for original, copy in planted:
        truth.setdefault(original, {original}).add(copy)
    expected = _pairs_of(truth.values())
    found: dict[int, list[int]] = {}
    for i, label in enumerate(np.asarray(labels).tolist()):
        found.setdefault(label, []).append(i)
    linked = _pairs_of(g for g in found.values() if len(g) > 1)
    hit = len(linked & expected)
    return (hit / len(linked) if linked else 1.0), (hit / len(expected) if expected else 1.0), len(linked - expected)


def _shingles(docs: list[str]) -> list[list[bytes]]:
    return [problem_shingles(d, None, NGRAM) for d in docs]


# -- synthgen ---------------------------------------------------------------------------------------
def synthgen(kind: str) -> Callable[[list[str]], np.ndarray]:
    params = DedupSettings(threshold=THRESHOLD, seed=SEED, ngram=NGRAM, signature=kind)
    return lambda docs: dedup.near_duplicate_labels([(d, None) for d in docs], params, workers=1)


# -- rensa ------------------------------------------------------------------------------------------
def _rensa_clusters(token_sets) -> np.ndarray:
    import rensa

    minhashes = rensa.RMinHash.from_token_sets(token_sets, num_perm=BANDS * ROWS, seed=SEED)
    lsh = rensa.RMinHashLSH(threshold=THRESHOLD, num_perm=BANDS * ROWS, num_bands=BANDS)
    lsh.insert_many(minhashes, 0)
    links = []
    for i, candidates in enumerate(lsh.query_all(minhashes)):
        mine = minhashes[i]
        links += [(i, j) for j in candidates if j > i and mine.jaccard(minhashes[j]) >= THRESHOLD]
    return components(len(token_sets), links)


def rensa_shingles(docs: list[str]) -> np.ndarray:
    return _rensa_clusters(_shingles(docs))


def rensa_words(docs: list[str]) -> np.ndarray:
    return _rensa_clusters([d.split() for d in docs])


def rensa_token_hashes(docs: list[str]) -> np.ndarray:
    import rensa

    hashes, counts = problem_shingle_hashes([(d, None) for d in docs], NGRAM)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.uint64)
    matrix = rensa.RMinHash.digest_matrix_from_flat_token_hashes(
        hashes.astype(np.uint64), offsets, num_perm=BANDS * ROWS, seed=SEED
    )
    sigs = np.array(matrix.to_rows(), dtype=np.uint32)
    params = DedupSettings(threshold=THRESHOLD, num_perm=BANDS * ROWS, seed=SEED, ngram=NGRAM)
    return dedup.cluster(sigs, params)


# -- datasketch -------------------------------------------------------------------------------------
def datasketch_by_hand(docs: list[str]) -> np.ndarray:
    import xxhash
    from datasketch import MinHash, MinHashLSH

    params = DedupSettings(threshold=THRESHOLD, seed=SEED, ngram=NGRAM)
    sigs = MinHash.bulk(_shingles(docs), num_perm=params.num_perm, seed=SEED, hashfunc=xxhash.xxh32_intdigest)
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=params.num_perm, weights=dedup.lsh_weights(params.recall_weight))
    with lsh.insertion_session() as session:
        for i, m in enumerate(sigs):
            session.insert(i, m)
    links = [(i, j) for i, m in enumerate(sigs) for j in lsh.query(m) if j > i and m.jaccard(sigs[j]) >= THRESHOLD]
    return components(len(docs), links)


# -- datatrove --------------------------------------------------------------------------------------
def _word_tokenizer():
    """datatrove's English tokenizer (spaCy) when installed, else NLTK's word tokenizer in its place."""
    from datatrove.utils.word_tokenizers import WordTokenizer, load_word_tokenizer

    if importlib.util.find_spec("spacy"):
        return load_word_tokenizer("en"), "spaCy"
    from nltk.tokenize import NLTKWordTokenizer

    class NLTKWords(WordTokenizer):
        def __init__(self) -> None:
            super().__init__("en")
            self._words = NLTKWordTokenizer()

        def word_tokenize(self, text: str) -> list[str]:
            return [w for w in self._words.tokenize(text) if w.strip()]

        def sent_tokenize(self, text: str) -> list[str]:
            return [text]

        def span_tokenize(self, text: str) -> list[tuple[int, int]]:
            return [(0, len(text))]

    return NLTKWords(), "NLTK (spaCy not installed)"


def datatrove(own_shingles: bool) -> Callable[[list[str]], np.ndarray]:
    def run(docs: list[str]) -> np.ndarray:
        import xxhash
        from datatrove.data import Document
        from datatrove.pipeline.dedup.minhash import (
            MinhashConfig,
            MinhashDedupBuckets,
            MinhashDedupCluster,
            MinhashDedupSignature,
        )
        from loguru import logger

        logger.remove()  # datatrove logs every step at INFO
        config = MinhashConfig(n_grams=NGRAM, num_buckets=BANDS, hashes_per_bucket=ROWS, seed=SEED)

        class SynthgenShingles(MinhashDedupSignature):
            def get_shingles(self, text: str) -> np.ndarray:
                found = problem_shingles(text, None, NGRAM)
                return np.fromiter(map(self._hash_func, found), dtype=np.uint64).reshape((-1, 1))

        with tempfile.TemporaryDirectory(prefix="bench-datatrove-") as tmp:
            sigs, buckets, out = (str(Path(tmp) / p) for p in ("sigs", "buckets", "remove"))
            step = (MinhashDedupSignature if own_shingles else SynthgenShingles)(
                output_folder=sigs, config=config, language=_word_tokenizer()[0]
            )
            if own_shingles:  # datatrove hashes str, which xxhash >= 4 (its extra pins < 4) wants encoded
                step._hash_func = lambda text: xxhash.xxh64_intdigest(text.encode())
            else:
                step._hash_func = xxhash.xxh64_intdigest  # datatrove's 64-bit xxhash, of synthgen's bytes
            step.run((Document(text=d, id=str(i)) for i, d in enumerate(docs)), rank=0, world_size=1)
            for rank in range(BANDS):
                MinhashDedupBuckets(input_folder=sigs, output_folder=buckets, config=config).run(
                    None, rank=rank, world_size=BANDS
                )
            MinhashDedupCluster(input_folder=buckets, output_folder=out, config=config).run(None, 0, 1)
            links = []
            for path in sorted(Path(buckets).glob("*.dups")):
                data = path.read_bytes()
                links += [(a, b) for _, a, _, b in struct.iter_unpack("<4I", data)]
        return components(len(docs), links)

    return run


def methods() -> list[tuple[str, Callable[[list[str]], np.ndarray] | None, str]]:
    """(name, method or None, note: what it is or why it was skipped)."""
    have = {name: importlib.util.find_spec(name) is not None for name in ("rensa", "datatrove", "nltk", "spacy")}
    out: list[tuple[str, Callable | None, str]] = [
        ("synthgen token_hashes", synthgen("token_hashes"), "the default signature kind"),
        ("synthgen shingle_bytes", synthgen("shingle_bytes"), "shingle strings hashed with xxh32"),
        ("datasketch by hand", datasketch_by_hand, "MinHash.bulk on synthgen's shingles, MinHashLSH, jaccard check"),
    ]
    missing = "not installed (pip install -e '.[bench]')"
    for name, fn, note in (
        ("rensa, synthgen's shingles", rensa_shingles, "RMinHash on synthgen's shingle strings, RMinHashLSH"),
        ("rensa, its own way", rensa_words, "words of the raw text, as rensa's README"),
        ("rensa sketch of token hashes", rensa_token_hashes, "rensa's MinHash of synthgen's shingle hashes"),
    ):
        out.append((name, fn if have["rensa"] else None, note if have["rensa"] else "rensa " + missing))
    own_ok = have["datatrove"] and (have["spacy"] or have["nltk"])
    tokenizer = "spaCy" if have["spacy"] else "NLTK in place of spaCy"
    out.append(
        (
            "datatrove, synthgen's shingles",
            datatrove(False) if have["datatrove"] else None,
            "its 3 MinHash steps on synthgen's shingle strings" if have["datatrove"] else "datatrove " + missing,
        )
    )
    out.append(
        (
            "datatrove, its own shingling",
            datatrove(True) if own_ok else None,
            f"simplify_text + word 5-grams ({tokenizer})" if own_ok else "datatrove and nltk or spacy " + missing,
        )
    )
    return out
