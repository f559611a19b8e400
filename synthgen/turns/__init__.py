"""The teacher/student turn engine that generate, chain and calibrate share.

turn.py (one turn and its student evaluation), loop.py (the runner), signals.py (stopping on
SIGTERM/SIGINT at once), report.py (progress and end-of-run statistics), settings.py (what every
stage that runs turns needs).
"""
