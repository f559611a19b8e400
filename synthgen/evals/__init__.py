"""`synthgen eval` and `synthgen serve`: pass@k on LiveCodeBench, HumanEval, Math500, AIME, held-out.

The benchmark loaders, the served models and the summaries, which `train --eval-every` reuses.
"""
