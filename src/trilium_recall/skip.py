"""Prompts that need no recall: slash commands, bare acknowledgements, bare follow-ups.

Table-driven: each rule is (reason, test). The first rule that matches names the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A prompt made only of these words (at most 6) is an acknowledgement or a go-ahead.
_ACK_WORDS = frozenset(
    """ok okay k kk yes y yep yeah yup sure no nope nah thanks thank you thx ty cheers great
    perfect cool nice good fine done lgtm sgtm np go ahead do it continue proceed next sounds
    looks got alright all right correct exactly agreed makes sense on keep going carry ship
    please a lot much very so awesome excellent wonderful brilliant super works that's thats
    is that it's""".split()
)
# Words that carry no topic of their own in a follow-up ("and the second one?").
_FOLLOW_UP_WORDS = frozenset(
    """and or but so the a an that this these those it its they them one ones first second
    third last next other another then now what why how when where which who about else more
    again also too same previous above below there here hmm hm um uh oh ah well wait huh really
    is are was were do does did can could would should will you me i we us please explain
    elaborate detail details mean meant example examples go on tell instead if ok okay for
    rest others all as""".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Every rule is about short prompts: a long one is never skipped, and never scanned whole.
_SCAN_CHARS = 400
_SLASH = re.compile(r"^/[A-Za-z][\w:.-]*(\s|$)")


def _words(prompt: str) -> list[str]:
    return _WORD.findall(prompt.casefold())


def _is_empty(prompt: str) -> bool:
    return not prompt.strip()


def _is_slash_command(prompt: str) -> bool:
    return bool(_SLASH.match(prompt.strip()))


def _is_acknowledgement(prompt: str) -> bool:
    words = _words(prompt)
    return len(words) <= 6 and all(word in _ACK_WORDS for word in words)


def _is_bare_follow_up(prompt: str) -> bool:
    words = _words(prompt)
    return 0 < len(words) <= 8 and all(word in _FOLLOW_UP_WORDS for word in words)


RULES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("empty", _is_empty),
    ("slash command", _is_slash_command),
    ("acknowledgement", _is_acknowledgement),  # also emoji-only / punctuation-only prompts
    ("follow-up", _is_bare_follow_up),
)


def skip_reason(prompt: str) -> str | None:
    """The reason this prompt needs no recall, or None when it should be searched."""
    head = prompt.strip()[:_SCAN_CHARS]
    for reason, matches in RULES:
        if matches(head):
            return reason
    return None
