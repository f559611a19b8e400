"""The run directory on disk: stage folders, atomic files, markers, locks, schemas and checks.

layout.py (StageDir), files.py (atomic writes and swaps), status.py (finished? which shards?),
lock.py (one writer), records.py and record_checks.py (the schemas and their checks), writer.py
(buffered row output), readiness.py, paths.py (output paths checked first), run_info.py,
measurement.py (the columns every measured row carries).
"""
