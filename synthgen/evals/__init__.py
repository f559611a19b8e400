"""`synthgen eval` and `synthgen serve`: pass@k on LiveCodeBench, HumanEval, Math500, AIME, held-out.

The estimator, the benchmark loaders, the served model's sampling and the summaries; the
training-time hook reuses them.
"""
