"""Prompts that need no recall: slash commands, bare acknowledgements, bare follow-ups.

Table-driven: each rule is (reason, test). The first rule that matches names the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_ACK_PHRASES = frozenset(
    " ".join(line.split())
    for line in """ok
okay
k
kk
yes
y
yep
yeah
yup
sure
no
nope
nah
thanks
thank you
thanks a lot
thx
ty
cheers
great
perfect
cool
nice
good
fine
done
lgtm
sgtm
np
go ahead
do it
continue
proceed
next
sounds good
looks good
got it
alright
all right
right
correct
exactly
agreed
makes sense
go on
keep going
carry on
ship it
yes please
ok thanks
ok go ahead
please do
please continue
ok do it
yes do it
great thanks
perfect thanks
nice thanks""".splitlines()
)
# Words that carry no topic of their own in a follow-up ("and the second one?").
_FOLLOW_UP_WORDS = frozenset(
    """and or but so the a an that this these those it its they them one ones first second
    third last next other another then now what why how when where which who about else more
    again also too same previous above below there here hmm hm um uh oh ah well wait huh really
    is are was were do does did can could would should will you me i we us please explain
    elaborate more detail details mean meant example examples go on tell more that one this one
    instead then what if ok okay so""".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SLASH = re.compile(r"^/[A-Za-z][\w:.-]*(\s|$)")


def _words(prompt: str) -> list[str]:
    return _WORD.findall(prompt.casefold())


def _is_empty(prompt: str) -> bool:
    return not prompt.strip()


def _is_slash_command(prompt: str) -> bool:
    return bool(_SLASH.match(prompt.strip()))


def _is_acknowledgement(prompt: str) -> bool:
    words = _words(prompt)
    return not words or " ".join(words) in _ACK_PHRASES


def _is_bare_follow_up(prompt: str) -> bool:
    words = _words(prompt)
    return 0 < len(words) <= 8 and all(w in _FOLLOW_UP_WORDS for w in words)


RULES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("empty", _is_empty),
    ("slash command", _is_slash_command),
    ("acknowledgement", _is_acknowledgement),  # also emoji-only / punctuation-only prompts
    ("follow-up", _is_bare_follow_up),
)


def skip_reason(prompt: str) -> str | None:
    """The reason this prompt needs no recall, or None when it should be searched."""
    for reason, matches in RULES:
        if matches(prompt):
            return reason
    return None
