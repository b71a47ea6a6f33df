"""Record text shown inert in a terminal: a record (or a result, or a paste echoed back) may carry escape
sequences, e.g. OSC 52, which writes the user's clipboard, or bidirectional overrides that reorder what is read.
`errkb show`, `match` and `run` print every control character as a visible escape (`\\x1b`) instead."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls (a lone \x9b is CSI on some terminals), bidi overrides.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


def inert_json(text: str) -> str:
    """JSON text (json.dumps already escapes C0 controls) with the rest escaped the JSON way, still valid JSON."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
