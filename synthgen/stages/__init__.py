"""The pipeline stages, one package each: run.py does the work, settings.py declares its knobs.

Each stage reads and writes one stage folder of a run (synthgen.store).
"""
