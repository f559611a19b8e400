"""The run directory on disk: stage folders, atomic files, markers, locks, schemas and checks.

layout.py (StageDir: where a stage's files live; finished? which shards?), files.py (atomic writes
and swaps), lock.py (one writer), readiness.py (inputs finished, the settings check, WholeStage),
records.py and record_checks.py (the schemas and their checks), attempts.py (a sharded stage's
buffered rows and kept student attempts), paths.py (output paths checked first), bins.py
(difficulty bins), run_info.py, measurement.py (the columns every measured row carries).
"""
