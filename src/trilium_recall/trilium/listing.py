"""A search listing decoded a value at a time.

The listing of every note is one JSON document (58 MB at 100,000 notes). `json.loads` decodes
it in one call that holds the interpreter for the whole document — ~0.6 s here at 100,000
notes on a quiet machine, 2 s under load — and every search thread of the engine waits that
long (bench/bench_full_stall.py). The standard library's own decoder (`raw_decode`) is used
here for every member of the top-level object and every element of an array member, so no
single call decodes more than one note.
"""

from __future__ import annotations

import json
import re

_SPACE = re.compile(r"[ \t\n\r]*")
_decode = json.JSONDecoder().raw_decode


def decode(body: bytes) -> object:
    """What `json.loads(body)` returns for a JSON object; other documents are decoded whole."""
    text = body.decode(json.detect_encoding(body), "surrogatepass")
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return json.loads(text)
    members: dict[str, object] = {}
    at = _skip(text, at + 1)
    while not text.startswith("}", at):
        key, at = _decode(text, at)
        at = _skip(text, _expect(text, _skip(text, at), ":"))
        members[key], at = _array(text, at) if text.startswith("[", at) else _decode(text, at)
        at = _next(text, at, "}")
    if _skip(text, at + 1) != len(text):
        raise json.JSONDecodeError("Extra data", text, at + 1)
    return members


def _array(text: str, at: int) -> tuple[list[object], int]:
    items: list[object] = []
    at = _skip(text, at + 1)
    while not text.startswith("]", at):
        item, at = _decode(text, at)
        items.append(item)
        at = _next(text, at, "]")
    return items, at + 1


def _next(text: str, at: int, close: str) -> int:
    """Past a comma to the next value, or at the closing bracket."""
    at = _skip(text, at)
    if text.startswith(",", at):
        at = _skip(text, at + 1)
        if text.startswith(close, at):
            raise json.JSONDecodeError("Expecting value", text, at)
        return at
    return _expect(text, at, close) - 1


def _expect(text: str, at: int, char: str) -> int:
    if not text.startswith(char, at):
        raise json.JSONDecodeError(f"Expecting '{char}'", text, at)
    return at + 1


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    assert match is not None  # the pattern matches the empty string
    return match.end()
