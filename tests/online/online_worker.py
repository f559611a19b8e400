"""Runs one online training run from a settings JSON file, with the learning-curve reward (for the kill -9 test).

python tests/online/online_worker.py SETTINGS.json GAIN
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from synthgen.online.run import run_online
    from synthgen.train.settings import TrainSettings
    from tests.helpers.curve import CurveScorer

    logging.basicConfig(level=logging.WARNING)
    settings = TrainSettings(**json.loads(Path(argv[0]).read_text()))
    scorer = CurveScorer(float(argv[1]))
    run_online(settings, scorer=scorer, callbacks=[scorer.callback()])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
