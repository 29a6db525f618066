"""What a prompt asks about: the prompt less the words that only say where to look.

"What do my notes say about restic?", "check my trilium notes for the wireguard port", "in
trilium, how do I restore a backup": the topic is restic, the wireguard port, restoring a
backup. Searched as written, the pointing words counted as topic: "notes", "check" and "say"
took a share of the keyword weight that no section answers, "trilium" (a word the built-in
demo notebook never holds) counted as an unknown word, and the sentence was embedded as one
about note-taking. On the demo notebook all three prompts were silent; read for their topic
each gets its note. The eval sets' English prompts wrapped in such words ("according to my
notes, …", "… (it's in my notes somewhere)") lost a tenth of their hit@3; read for their topic
they keep it, and unrelated prompts stay as silent as unwrapped (`eval/pointing.py`,
eval/RESULTS.md).

So search reads the prompt without them: a clause that only points at the notes ("according to
my notes,", "(it's in my notes somewhere)", "— check my trilium") goes whole, and elsewhere the
phrase itself ("in my notes", "my notes say", "did I jot down"). Only a phrase that points
counts: "my notes" needs a word of looking or a place before it ("export my notes to markdown"
is about the notes), and "trilium" a place too, and only in a notebook not about Trilium unless
it is "my trilium" (its User Guide imported as notes is asked "how do I add a table in
trilium", where the name is part of the question).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..index.store import Store
from ..index.terms import STOP_WORDS, words
from .pasted import question_first, without_machine_noise
from .technologies import notebook_holds

APPLICATION = "trilium"
_FLAGS = re.IGNORECASE
# Where the pointing starts: a preposition or a verb of looking. Without one, "my notes" is
# often the topic ("export my notes to markdown", "protect my notes with a password").
_LEAD = (
    r"(?:(?:look(?:ing)?|search(?:ing)?|check(?:ing)?|see|dig|grep|go)\s+(?:(?:in|through|into)\s+)?"
    r"|according\s+to\s+|based\s+on\s+|(?:in|from|inside|within|across|per|through)\s+)"
)
_OWN = r"(?:my|our)\s+(?:own\s+)?"
# "notebook" is left out: a developer's "my notebook" is a Jupyter notebook; "journal" too: in a
# notebook kept in Trilium it is as often the topic ("how do the day notes in my journal work").
_NOTES = r"(?:notes?|note\s+collection|knowledge\s+base|second\s+brain)"
_APP = rf"{APPLICATION}(?:\s*next)?"
# A name ends where a word does not go on: "notes.py", "trilium-data", "trilium.db" and "my
# notes app" name files and things, not where to look.
_WHOLE = r"(?![\w/-]|\.\w|\s+app\b)"
# "my notes say", "my notes have on": the verb belongs to the pointing, not to the topic.
_SAY = (
    r"(?:say|says|said|mention|mentions|mentioned|have|has|had|contain|contains|show|shows|"
    r"tell|tells)\b"
)
_ABOUT = r"(?:\s+(?:about|on|for|regarding)\b)?"
_TAIL = rf"(?:\s+{_SAY})?{_ABOUT}"
# The application's name as a place ends the phrase: "in trilium, …", "in trilium about …";
# "in trilium I can't find the sync settings" asks about the application.
_PLACE_END = r"(?=\s*+(?:$|[,;:?!)\]—–]|\.(?:\s|$)|\s-\s|(?:about|for|on|regarding)\b))"

OWN_NOTES = re.compile(
    rf"\bwhat\s+(?:do|does|did)\s+{_OWN}(?:{_APP}\s+)?{_NOTES}{_WHOLE}\s+{_SAY}{_ABOUT}"
    rf"|\b{_OWN}(?:{_APP}\s+)?{_NOTES}{_WHOLE}\s+(?:say|says|said|mention|mentions|mentioned"
    rf"|(?:should|must|might|may|would)\s+(?:have|say|mention))\b{_ABOUT}"
    rf"|\b{_LEAD}{_OWN}(?:{_APP}\s+)?{_NOTES}{_WHOLE}{_TAIL}"
    rf"|\b{_LEAD}{_OWN}{_APP}{_WHOLE}{_PLACE_END}{_TAIL}"
    r"|\b(?:any|some)\s+notes\s+(?:on|about|regarding)\b"
    r"|\b(?:in|aus)\s+(?:meinen|unseren)\s+notizen\b"
    r"|\b(?:dans|selon)\s+(?:mes|nos)\s+notes\b"
    r"|\b(?:en|según)\s+(?:mis|nuestras)\s+notas\b"
    r"|\b(?:nas|em|segundo)\s+(?:minhas|nossas)\s+notas\b"
    r"|\b(?:nelle|secondo\s+le)\s+(?:mie|nostre)\s+note\b",
    _FLAGS,
)
# Also as a label the prompt starts with: "Trilium: how do I read a file line by line?"
APPLICATION_AS_PLACE = re.compile(
    rf"\A\s*{_APP}(?:\s+{_NOTES})?\s*:(?=\s)"
    rf"|\b{_LEAD}{_APP}(?:\s+{_NOTES})?{_WHOLE}{_PLACE_END}{_TAIL}",
    _FLAGS,
)
# Having written it down: "what did I jot down …", "what did I write about …", "have I written
# anything on …". Only with "down", "about", "on", "regarding", a place ("in my notes") or the
# end after the verb (and its "it", "anything"): "did I write this function right" and "did I
# write anything wrong here" ask about code. Verbs that are also code's ("log", "save",
# "record", "put", "keep") are left out.
_PLACE = rf"(?:in|into)\s+(?:{_OWN}(?:{_APP}\s+)?{_NOTES}|(?:{_OWN})?{_APP}){_WHOLE}"
_WRITTEN_END = (
    r"(?:\s+(?:it|this|that|them|anything|something))?"
    rf"(?:\s+down\b|(?=\s+(?:about|on|regarding)\b)|(?=\s*+(?:[?.!]|$))|(?=\s+{_PLACE}))"
)
RECORDED = re.compile(
    r"\b(?:(?:did|have|had)\s+(?:i|we)\s+(?:ever\s+)?(?:write|written|note|noted|jot|jotted)"
    rf"|(?:i|we)\s+(?:wrote|noted|jotted)){_WRITTEN_END}"
    # "did I take notes on …", "have I made a note of …"
    r"|\b(?:did|have|had)\s+(?:i|we)\s+(?:ever\s+)?(?:take|taken|make|made)\s+"
    r"(?:any\s+|some\s+|a\s+)?notes?\s+(?:on|about|of|regarding)\b",
    _FLAGS,
)
# Words a clause that only points at the notes is made of, besides stop words.
POINTING_WORDS = frozenset(
    """check look search think thought wrote write written jot jotted noted saved kept put
    remember recall somewhere probably maybe surely say says said mention mentioned see""".split()
)
# A run of spaces is read once, from its start (`(?<!\s)`, possessive `*+`): long runs of
# blanks cost linear time, not quadratic.
_LEADING_CLAUSE = re.compile(
    r"\A([^:,;—–()?]*?)(?:(?<!\s)\s*+[:,;—–]\s++|(?<!\s)\s++-\s++|[.?!]\s++)"
)
_TRAILING_CLAUSE = re.compile(
    r"(?:(?<!\s)\s*+[,;—–]\s*+|(?<!\s)\s++-\s++)([^:,;—–()]*?)\s*+([?.!]*+)\s*+\Z"
)
_PARENTHESES = re.compile(r"(?<!\s)\s*+\(([^()]*+)\)")
_CUT = "\x00"
# Spaces around a cut close up; before a closing mark, with the space.
_CUT_BEFORE_MARK = re.compile(rf"(?<![ \t])[ \t]*+(?:{_CUT}[ \t]*+)++(?=[?.!,;:](?:\s|$))")
_CUT_SPACES = re.compile(rf"(?<![ \t])[ \t]*+(?:{_CUT}[ \t]*+)++")
# A longer prompt (a pasted log, a file and a question) is searched as written: its pointing
# words are a small share of its words, and reading it whole would cost the hook's time.
TOPIC_CHARS = 2000


def index_holds(store: Store, text: str) -> bool:
    """Whether the notes hold every word of `text` ("5f3c1a9e-2b7d-…": a UUID a note keeps)."""
    _, counts = store.term_document_counts(words(text))
    return bool(counts) and all(counts.values())


def application_is_topic(store: Store) -> bool:
    """Whether enough of the notebook's sections name Trilium for the name to be a topic."""
    total, counts = store.term_document_counts([APPLICATION])
    return notebook_holds(counts[APPLICATION], total)


def topic_of(
    prompt: str,
    application_is_topic: Callable[[], bool],
    held: Callable[[str], bool] = lambda _: False,
) -> str:
    """`prompt` without what only says where to look, and without a pasted trace's frames and
    the machine ids the notes do not hold (`held`, pasted.py); the prompt itself if nothing else
    is left; a long paste's closing question first (pasted.question_first).
    `application_is_topic` is asked only of a prompt that names the application: most never
    do, and they cost /recall no index read."""
    prompt = without_machine_noise(question_first(prompt), held)
    named = APPLICATION in prompt.casefold()
    place = () if not named or application_is_topic() else (APPLICATION_AS_PLACE,)
    patterns = (RECORDED, OWN_NOTES, *place)  # "did I write" before "in my notes about"
    if len(prompt) > TOPIC_CHARS or not any(p.search(prompt) for p in patterns):
        return prompt
    text = _PARENTHESES.sub(lambda m: "" if _only_points(m[1], patterns) else m[0], prompt)
    lead = _LEADING_CLAUSE.match(text)
    if lead and _only_points(lead[1], patterns):
        text = text[lead.end() :]
    trail = _TRAILING_CLAUSE.search(text)
    if trail and _only_points(trail[1], patterns):
        text = text[: trail.start()] + trail[2]
    for pattern in patterns:
        text = pattern.sub(_CUT, text)
    text = _CUT_SPACES.sub(" ", _CUT_BEFORE_MARK.sub("", text)).strip(" ,;:—–-")
    return text if not _only_pointing_words(text) else prompt


def _only_points(clause: str, patterns: Sequence[re.Pattern[str]]) -> bool:
    """The clause names the notes and has nothing else but stop words and pointing words."""
    if not any(p.search(clause) for p in patterns):
        return False
    for pattern in patterns:
        clause = pattern.sub(" ", clause)
    return _only_pointing_words(clause)


def _only_pointing_words(text: str) -> bool:
    return all(w in STOP_WORDS or w in POINTING_WORDS for w in words(text))
