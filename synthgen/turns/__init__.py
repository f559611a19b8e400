"""The teacher/student turn engine that generate, chain, calibrate and online share.

turn.py (a lineage's state, one turn and its student evaluation), loop.py (the runner, stopping
on SIGTERM/SIGINT at once), report.py (progress and end-of-run statistics), settings.py (what
every stage that runs turns needs).
"""
