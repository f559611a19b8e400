"""`synthgen eval` and `synthgen serve`: pass@k of a model on LiveCodeBench, HumanEval, Math500, AIME
and held-out problems."""
