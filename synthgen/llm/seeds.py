"""Sampling seeds of the LLM client: sample i of a caller key is drawn with seed base + i.

vLLM gives sample j of a request for n samples with seed s the seed s + j (its parallel sampling
copies the request's sampling parameters per child and adds the child's index to the seed). The
client asks for a run of consecutive samples i..i+k-1 in one request with n = k and seed base + i,
so each sample's seed is the same whether it is asked for alone, inside the whole request, or in
the smaller request a re-run sends for the samples a kill left missing.
"""

from __future__ import annotations

import hashlib


def base_seed(key: str) -> int | None:
    """The seed of a caller key's sample 0 (sample i gets base + i); None without a key. Below
    2**30, so base + i stays a non-negative 31-bit int, safe for every server."""
    if not key:
        return None
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:4], "big") >> 2


def request_seed(key: str, sample: int) -> int | None:
    """The sampling seed of sample `sample` of a caller key: base_seed(key) + sample, whether the
    sample is asked for alone or inside an n-request (vLLM's per-sample rule), so distinct turns
    that happen to send the same messages still draw distinct samples, and a replayed request
    draws the same ones."""
    return seed_of(base_seed(key), sample)


def seed_of(base: int | None, sample: int) -> int | None:
    return None if base is None else base + sample


def sample_runs(indices: list[int]) -> list[list[int]]:
    """Consecutive runs of sorted indices: [0, 1, 2, 5, 6] -> [[0, 1, 2], [5, 6]]."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs
