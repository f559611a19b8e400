"""Benchmark: synthgen.dedup against a plain single-process datasketch loop, in the same run.

    python bench/dedup.py [--docs 100000] [--baseline-docs 5000] [--workers N]

Data: non-overlapping 40-line chunks of this Python's standard library (then the venv's
site-packages if more are needed) as distinct problems, plus planted near-duplicates (10%):
copies of a chunk with every identifier renamed, indentation and spacing changed outside string
literals, a comment added and, for half of them, one line of code dropped. The first
`--baseline-docs` documents are a self-contained subsample (originals and their planted copies).

Baseline, on the subsample only (it is slow), extrapolated by its docs/s: for every document a
`datasketch.MinHash` updated shingle by shingle, then `MinHashLSH` insert of all and a query per
document, keeping candidates whose `MinHash.jaccard` reaches the threshold, and union-find. Both
sides use the same normalisation and shingles (synthgen.dedup), so they must find the SAME
clusters. Fast path: `synthgen.dedup.signatures` + `cluster` (numpy, process pool), end to end
from texts to cluster labels. The machine is shared, so the baseline is timed in two halves,
before and after the fast run, and the CPU time per document of both (over all processes) is
printed as well: a figure that background load disturbs less than wall time.

Checks (exit 1 if any fails): clusters identical on the subsample; fast docs/s >= 10x the
baseline's; the full set in <= 40 s; peak memory (main + workers) < 2 GiB. The last line prints
the ratio.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import sys
import sysconfig
import time
from pathlib import Path

from synthgen import dedup

LINES = 40
MAX_SECONDS = 40.0
MIN_RATIO = 10.0
MAX_MEMORY_MIB = 2048.0
_IDENT = re.compile(r"[^\W\d]\w*")


def source_files() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    first = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts)
    extra = sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py"))
    return first + extra


def chunks(n: int) -> list[str]:
    """n distinct 40-line chunks of library code with at least 20 non-blank lines."""
    out: list[str] = []
    seen: set[str] = set()
    for path in source_files():
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for start in range(0, len(lines) - LINES + 1, LINES):
            text = "\n".join(lines[start : start + LINES]) + "\n"
            if sum(1 for line in lines[start : start + LINES] if line.strip()) < 20 or text in seen:
                continue
            seen.add(text)
            out.append(text)
            if len(out) == n:
                return out
    raise SystemExit(f"only {len(out)} chunks of library code found, {n} needed")


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
        if not (first.isalpha() or first == "_") or tok[-1] in "'\"" or tok in dedup._KEEP:
            return tok
        return renamed.setdefault(tok, f"{tok}_{rng.randrange(10**6)}")

    lines = dedup._TOKEN.sub(edit, text).splitlines()
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


def baseline_signatures(docs: list[str], params: dedup.MinHashParams) -> list:
    """Step 1 of the straightforward loop: a datasketch MinHash per document, shingle by shingle."""
    from datasketch import MinHash

    sigs = []
    for text in docs:
        m = MinHash(num_perm=params.num_perm, seed=params.seed, hashfunc=dedup.hashfunc(params))
        for shingle in dedup.problem_shingles(text, None, params.ngram):
            m.update(shingle)
        sigs.append(m)
    return sigs


def baseline_clusters(docs: list[str], params: dedup.MinHashParams, sigs: list | None = None) -> list[list[int]]:
    """The straightforward loop: MinHashes, MinHashLSH insert of all, a query per document."""
    from datasketch import MinHashLSH

    sigs = baseline_signatures(docs, params) if sigs is None else sigs
    lsh = MinHashLSH(
        threshold=params.threshold, num_perm=params.num_perm, weights=dedup.lsh_weights(params.recall_weight)
    )
    for i, m in enumerate(sigs):
        lsh.insert(i, m)
    parent = list(range(len(docs)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, m in enumerate(sigs):
        for j in lsh.query(m):
            if j != i and m.jaccard(sigs[j]) >= params.threshold:
                a, b = find(i), find(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(docs)):
        groups.setdefault(find(i), []).append(i)
    return sorted(g for g in groups.values() if len(g) > 1)


def fast_labels(docs: list[str], params: dedup.MinHashParams, workers: int | None) -> tuple:
    t0 = time.perf_counter()
    sigs = dedup.signatures([(d, None) for d in docs], params, workers=workers)
    t1 = time.perf_counter()
    labels = dedup.cluster(sigs, params)
    return labels, t1 - t0, time.perf_counter() - t1


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


class MemorySampler:
    """Peak resident memory of this process plus all its children, sampled every 20 ms.

    ru_maxrss of children is no use here: a spawned worker is forked before it execs, so its
    recorded peak includes the parent's pages at that moment.
    """

    def __init__(self) -> None:
        import threading

        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _rss(pid: int | str) -> int:
        try:
            with open(f"/proc/{pid}/statm") as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):  # the process is gone
            return 0

    def _sample(self) -> int:
        me = os.getpid()
        kids = [p for p in os.listdir("/proc") if p.isdigit() and self._parent(p) == me]
        return self._rss(me) + sum(self._rss(p) for p in kids)

    @staticmethod
    def _parent(pid: str) -> int:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                return int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return -1

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._sample())

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--baseline-docs", type=int, default=5_000)
    ap.add_argument("--workers", type=int, default=None, help="default: the CPUs this process may use")
    ap.add_argument("--threshold", type=float, default=0.8)
    args = ap.parse_args(argv)
    params = dedup.MinHashParams(threshold=args.threshold)
    workers = args.workers or dedup.default_workers()
    bands, rows = dedup.lsh_shape(params.threshold, params.num_perm, params.recall_weight)

    t = time.perf_counter()
    docs, planted = build(args.docs, args.baseline_docs)
    print(
        f"data: {len(docs)} docs ({len(docs) - len(planted)} library 40-line chunks + {len(planted)} planted "
        f"near-duplicates) built in {time.perf_counter() - t:.1f} s"
    )
    print(
        f"params: num_perm={params.num_perm}, {params.ngram}-token shingles, threshold {params.threshold} "
        f"(LSH {bands} bands x {rows} rows), verify={params.verify}, workers={workers}"
    )

    # The machine is shared: the baseline is timed in two halves, before and after the fast run,
    # so that a change of background load between the two phases biases the ratio less.
    sub = docs[: args.baseline_docs]
    half = len(sub) // 2
    wall, cpu = time.perf_counter(), time.process_time()
    first = baseline_signatures(sub[:half], params)
    base_wall, base_cpu = time.perf_counter() - wall, time.process_time() - cpu

    wall, cpu, kids = time.perf_counter(), time.process_time(), _children_cpu()
    with MemorySampler() as memory:
        labels, sig_s, clu_s = fast_labels(docs, params, workers)
    total = sig_s + clu_s
    fast_cpu = time.process_time() - cpu + _children_cpu() - kids
    rate = len(docs) / total

    wall, cpu = time.perf_counter(), time.process_time()
    base = baseline_clusters(sub, params, first + baseline_signatures(sub[half:], params))
    base_wall += time.perf_counter() - wall
    base_cpu += time.process_time() - cpu
    base_rate = len(sub) / base_wall
    print(
        f"baseline (MinHash.update per shingle + MinHashLSH insert/query, 1 process) on {len(sub)} docs: "
        f"{base_wall:.1f} s = {base_rate:.0f} docs/s (extrapolated to {len(docs)}: {len(docs) / base_rate:.0f} s)"
    )
    found = sum(1 for a, b in planted if labels[a] == labels[b])
    print(
        f"fast on {len(docs)} docs: {total:.1f} s = {rate:.0f} docs/s (signatures {sig_s:.1f} s, "
        f"LSH + clusters {clu_s:.1f} s); {len(dedup.clusters_of(labels))} clusters; planted pairs found "
        f"{found}/{len(planted)}"
    )
    print(
        f"cpu time per doc: baseline {base_cpu / len(sub) * 1e6:.0f} us, fast {fast_cpu / len(docs) * 1e6:.0f} us "
        f"over all processes ({base_cpu / len(sub) / (fast_cpu / len(docs)):.1f}x less work)"
    )

    sub_labels, _, _ = fast_labels(sub, params, workers)
    fast_sub = dedup.clusters_of(sub_labels)
    same = fast_sub == base
    differ = len(set(map(tuple, fast_sub)) ^ set(map(tuple, base)))
    print(f"subsample clusters: baseline {len(base)}, fast {len(fast_sub)}, identical={same} ({differ} differ)")

    mib = memory.peak / 2**20
    print(
        f"peak memory of the fast run (this process + {workers} workers, summed, sampled every 20 ms): "
        f"{mib:.0f} MiB (limit {MAX_MEMORY_MIB:.0f} MiB); this process's own peak over the whole bench "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )
    ratio = rate / base_rate
    checks = {
        "same clusters on the subsample": same,
        f"ratio >= {MIN_RATIO:.0f}x": ratio >= MIN_RATIO,
        f"{len(docs)} docs in <= {MAX_SECONDS:.0f} s": total <= MAX_SECONDS,
        "peak memory < 2 GiB": mib < MAX_MEMORY_MIB,
    }
    print("checks: " + "; ".join(f"{k}: {'ok' if v else 'MISS'}" for k, v in checks.items()))
    print(f"ratio: {ratio:.1f}x ({rate:.0f} vs {base_rate:.0f} docs/s)")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
