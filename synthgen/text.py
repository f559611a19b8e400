"""Text from outside (an LLM, a sandbox child, a user file) made safe to store and print, once.

A Python str may hold code points that no UTF-8 writer accepts: lone surrogates (U+D800-U+DFFF),
which JSON escapes such as "\\ud800" and `surrogateescape` file names produce. Parquet, SQLite,
`json.dumps(ensure_ascii=False)` followed by a write, and the terminal all fail on them. So every
boundary where such text enters synthgen passes it through `safe_text`, and the rest of the
program can take any str it holds as encodable.

Unencodable code points are escaped visibly, never dropped: U+D800 becomes the six characters
`\\ud800`, so a reader sees that something was there and what.
"""

from __future__ import annotations

import re

# Surrogates are the only code points a str can hold that UTF-8 cannot encode.
_UNENCODABLE = re.compile("[\ud800-\udfff]")


def safe_text(s: str) -> str:
    """`s` with every code point UTF-8 cannot encode replaced by its `\\uXXXX` escape (visibly)."""
    if s.isascii():
        return s
    return _UNENCODABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", s)
