"""Text from outside (an LLM, a sandbox child, a user file) made safe to store and print, once.

A Python str may hold code points that no UTF-8 writer accepts: lone surrogates (U+D800-U+DFFF),
which JSON escapes such as "\\ud800" and `surrogateescape` file names produce. Parquet, SQLite,
`json.dumps(ensure_ascii=False)` followed by a write, and the terminal all fail on them. So every
boundary where such text enters synthgen passes it through `safe_text`, and the rest of the
program can take any str it holds as encodable.

Unencodable code points are escaped visibly, never dropped: U+D800 becomes the six characters
`\\ud800`, so a reader sees that something was there and what. `jinja_env` is the one Jinja2
setup that every template folder (prompts, sbatch scripts, card, report) shares.
"""

from __future__ import annotations

import re
from typing import Any

# Surrogates are the only code points a str can hold that UTF-8 cannot encode.
_UNENCODABLE = re.compile("[\ud800-\udfff]")


def safe_text(s: str) -> str:
    """`s` with every code point UTF-8 cannot encode replaced by its `\\uXXXX` escape (visibly)."""
    if s.isascii():
        return s
    return _UNENCODABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", s)


def jinja_env(folder, *, keep_trailing_newline: bool = True, **options: Any):
    """Templates from `folder`. Undefined names are errors, so a template and its context cannot
    drift apart silently; block tags leave no blank lines; partials keep their last newline, so
    includes stack cleanly. Not HTML unless `autoescape=True`."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=keep_trailing_newline,
        **options,
    )
