"""Checks `synthgen train` makes before it loads anything heavy: the train extra, the model, the tracker.

Each failure is one line and exit 2 (UserError), before torch is imported where that is possible.
`check_model` opens no network connection: what looks like a path (it starts with `.`/`~`, has
more than one `/`, or its first folder exists here) is never sent to the Hub, and with
HF_HUB_OFFLINE=1 a Hub id must be in the local cache. `default_report_to` is tensorboard when
installed (event files, offline and on CPU: `tensorboard --logdir OUTPUT/runs`), else nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
from pathlib import Path

from synthgen.errors import UserError

TRAIN_MODULES = ("torch", "trl", "transformers", "datasets", "accelerate")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def require_train_extra() -> None:
    for name in TRAIN_MODULES:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise UserError(
                f"training needs the train extra ({name} is missing: {exc.msg}); "
                f"install synthgen[train], e.g. pip install 'synthgen[train]'"
            ) from None


def looks_like_path(name: str) -> bool:
    if name.startswith((".", "~", "/")) or os.sep in name.replace("/", "") or name.count("/") > 1 or name.endswith("/"):
        return True
    first = name.split("/", 1)[0]
    return "/" in name and Path(first).is_dir()


def check_model(name: str) -> str:
    """The model to load, after the offline checks above; a bad one is a one-line UserError."""
    path = Path(name).expanduser()
    if path.exists():
        if not path.is_dir() or not (path / "config.json").is_file():
            raise UserError(
                f"--model {name}: not a model folder (needs config.json; "
                f"`synthgen train --make-tiny-model DIR` writes a tiny one)"
            )
        return str(path)
    if looks_like_path(name):
        raise UserError(f"--model {name}: no such model folder")
    if not _HUB_ID.match(name):
        raise UserError(f"--model {name}: neither a model folder nor a Hugging Face Hub id (org/name)")
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        from huggingface_hub import try_to_load_from_cache

        if not isinstance(try_to_load_from_cache(name, "config.json"), str):
            raise UserError(
                f"--model {name}: not a local folder, and not in the Hugging Face cache while HF_HUB_OFFLINE=1"
            )
    return name


def default_report_to() -> list[str]:
    has_tb = importlib.util.find_spec("tensorboard") is not None or importlib.util.find_spec("tensorboardX") is not None
    return ["tensorboard"] if has_tb else ["none"]
