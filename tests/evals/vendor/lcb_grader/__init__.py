"""LiveCodeBench's official code-generation grader, vendored for the parity check (tests only).

Copied from github.com/LiveCodeBench/LiveCodeBench at commit 28fef95 (lcb_runner/evaluation/:
testing_util.py, compute_code_generation_metrics.py, pass_k_utils.py), under its MIT licence
(LICENSE beside this file). The only change: the two `lcb_runner.evaluation` imports are relative.
"""
