"""Text as every surface prints it: encodable, on one line, clipped, counted.

Strings that can always be encoded as UTF-8:

JSON (ours from clients, Trilium's from a note title cut in half an emoji) may carry lone
UTF-16 surrogates; Python keeps them in `str`, but SQLite, the embedder and every encoder then
fail. They are replaced with U+FFFD at the edges where text comes in.
"""

from __future__ import annotations

import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads already joins valid pairs


def valid_utf8(value: Any) -> Any:
    """`value` with every string in it (also inside lists and dicts) made encodable."""
    if isinstance(value, str):
        return value if value.isascii() else _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [valid_utf8(item) for item in value]
    if isinstance(value, dict):
        return {valid_utf8(key): valid_utf8(item) for key, item in value.items()}
    return value


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# The marks that turn text's direction: a prompt holding U+202E "gnp.exe" would print as
# "exe.png". Dropped, not spaced: a Hebrew or Arabic title keeps its words whole.
_DIRECTION = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+")


# Invisible inside a word: a soft hyphen, zero-width spaces and joiners' lookalikes, a byte-order
# mark. Web clips carry them, and a word holding one ("fire\u00adwall") matches no keyword.
# U+200D stays: emoji sequences are made with it.
INVISIBLE = re.compile("[\u00ad\u200b\u2060\ufeff]")


def one_line(text: str) -> str:
    """`text` on one line: control characters and runs of white space become one space, the
    marks that turn its direction are dropped."""
    return " ".join(_CONTROL.sub(" ", _DIRECTION.sub("", text)).split())


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the last one "…" when anything was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def counted(number: int, noun: str) -> str:
    """ "1 term", "3 terms": English plurals by "s", which is all the nouns printed need."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
