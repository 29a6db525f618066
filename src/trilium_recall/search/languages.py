"""Which language a prompt is written in, which languages a notebook holds and which one a note
is written in: cheaply, from stop words and script, so the gate can tell a prompt in another
language than the notes.

Such a prompt shares no keywords with the notes by construction (the e5 model is multilingual,
FTS5 is not), so the gate must not ask for keyword agreement then (gate.py, issue 23). Nor when
the note closest in meaning is in another language than the prompt: a notebook mostly in
English may keep a recipe in German or a travel plan in Japanese.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..index.terms import words

# Frequent function words of each language (tokens as FTS5 folds them: lower case, no
# diacritics). A prompt needs two of one language's and more than of English's to be called
# that language, so the few that are English words too ("was", "come", "do") count only beside
# others. Some are shared by the Romance languages ("de", "un"): which one is named matters
# less than that it is not English. A short question holds few of them ("come salvo il
# file in png senza perdere i livelli?"): each list carries its language's common ones.
MARKERS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the and is are to of how what why with for my it does do can this that i in on".split()
    ),
    "de": frozenset(
        "der die das und ist ich nicht wie mit ein eine einen auf fur warum wo kann meine mein "
        "zu den dem was es bei wird werden sich oder aber auch im vom zum sind habe muss von "
        "nach aus noch nur schon mir mich du wir ihr sie wenn dass weil welche welcher welches "
        "wieviel wieviele kein keine dann diese dieser dieses gibt soll sollte beim zur uber "
        "unter ohne sein seine ihre haben".split()
    ),
    "fr": frozenset(
        "le les et est je pas comment avec une des pour dans mon ma mes que qui du sur faire "
        "quoi pourquoi au aux ou mais il elle sont peut cette ce ne un de quand sous ces sa "
        "ses leur nous vous tu moi donc puis faut quel quelle quels dois entre tres aussi "
        "deja encore avoir etre suis cela chaque lorsque".split()
    ),
    "es": frozenset(
        "el los las y es como con una para por que mi mis en del hacer puedo se al lo pero "
        "esta este son cual donde cuando hay un de nada muy tambien cuanto cuantos tengo "
        "tiene debo sobre entre desde hasta algo porque eso esto estos su sus hago quiero "
        "puede".split()
    ),
    "pt": frozenset(
        "o os as e como com uma para por que meu minha nao do da em no na posso fazer um "
        "se ao isso esta qual onde quando voce tem de devo tenho nas nos dos das sem mais "
        "pelo pela tambem ja muito seu sua ele ela eu quero pode preciso porque depois".split()
    ),
    "it": frozenset(
        "il lo gli e come con una per che mio mia non del della nel posso fare perche un "
        "si al questo questa sono qual dove quando ho di da senza su quali quale cosa devo "
        "anche dei delle nella sul alla ancora sempre molto voglio puo tra ogni ci".split()
    ),
}
# Markers that are English words too: a language all of whose markers in a prompt are these
# is that language only when the prompt has a letter English does not write ("as
# configurações do wireguard no raspberry pi"); an English error message is full of them.
ENGLISH_WORDS = frozenset("no as do come die".split())
# Markers that say the notebook holds a language: distinctive in running text (the English
# "die" or "per" would misfire), each its own stem, as the index counts stems ("les" would be
# counted as "le", Italian's too). A language is held when a share of sections has each.
NOTEBOOK_MARKERS: dict[str, tuple[str, ...]] = {
    "en": ("the", "and"),
    "de": ("und", "ist"),
    "fr": ("est", "avec"),
    "es": ("para", "una"),
    "pt": ("nao", "uma"),
    "it": ("della", "sono"),
}
NOTEBOOK_SHARE = 0.02  # of sections holding every marker of a language
# A section is told to be in a language by at least this many of its marker words, two of them
# of three letters or more, and, for a language other than English, more than twice as many as
# English's: code and identifiers hold the short markers of every language ("e", "o", "se",
# "do", "as"), running text holds its longer ones too.
SECTION_MARKERS = 4
SECTION_LONG_MARKERS = 2
SECTION_CHARS = 4000  # a section's start says its language; a long one is not read whole
_SCRIPTS: tuple[tuple[str, Callable[[int], bool]], ...] = (
    ("cjk", lambda c: 0x3040 <= c <= 0x9FFF or 0xAC00 <= c <= 0xD7AF),
    ("cyrillic", lambda c: 0x0400 <= c <= 0x04FF),
    ("greek", lambda c: 0x0370 <= c <= 0x03FF),
    ("arabic", lambda c: 0x0600 <= c <= 0x06FF),
)


def prompt_language(prompt: str) -> str | None:
    """A language code, a script name for non-Latin prompts, or None when unsure (too few
    function words, e.g. a bare list of identifiers)."""
    if script := _script(prompt):
        return script
    found = _markers(prompt)
    if prompt.isascii():  # "git push rejected: no upstream branch set as default"
        found = {
            lang: words if lang == "en" or words - ENGLISH_WORDS else set()
            for lang, words in found.items()
        }
    language = _most_markers(found)
    count = len(found[language])
    if language == "en":
        return "en" if count >= 1 else None
    return language if count >= 2 and count > len(found["en"]) else None


def text_language(text: str) -> str | None:
    """The language (or script) a note's section is written in; None when unsure (code, a
    list of names, too short)."""
    text = text[:SECTION_CHARS]
    if script := _script(text):
        return script
    found = _markers(text)
    language = _most_markers(found)
    markers = found[language]
    if len(markers) < SECTION_MARKERS or sum(len(w) >= 3 for w in markers) < SECTION_LONG_MARKERS:
        return None
    return language if language == "en" or len(markers) > 2 * len(found["en"]) else None


def _markers(text: str) -> dict[str, set[str]]:
    """Each language's marker words in the text, each counted once: a pasted Java stack trace
    repeats Portuguese "com" (with) on every line."""
    tokens = set(words(text))
    return {language: tokens & markers for language, markers in MARKERS.items()}


def _most_markers(found: dict[str, set[str]]) -> str:
    """The language with the most marker words; English on a tie."""
    return max(found, key=lambda language: (len(found[language]), language == "en"))


def _script(text: str) -> str | None:
    """The script most of the text's letters are in, when it is not Latin."""
    letters = [ord(ch) for ch in text if ch.isalpha()]
    for script, test in _SCRIPTS:
        if letters and sum(map(test, letters)) > len(letters) / 2:
            return script
    return None


def notebook_languages(
    document_counts: Callable[[Sequence[str]], tuple[int, dict[str, int]]],
) -> tuple[str, ...]:
    """The languages at least NOTEBOOK_SHARE of the sections are written in, from the keyword
    index's document counts (`Store.term_document_counts`)."""
    words = [w for markers in NOTEBOOK_MARKERS.values() for w in markers]
    total, counts = document_counts(words)
    if not total:
        return ()
    return tuple(
        language
        for language, markers in NOTEBOOK_MARKERS.items()
        if min(counts[w] for w in markers) >= NOTEBOOK_SHARE * total
    )


def is_foreign(language: str | None, held: Sequence[str]) -> bool:
    """A prompt in a language (or script) the notebook does not hold; unsure counts as not."""
    return bool(held) and language is not None and language not in held


def in_another_language(language: str | None, notebook: Sequence[str], closest: str | None) -> bool:
    """No keyword agreement can be asked of the prompt: its language is none the notebook
    holds, or not the one the note closest in meaning is written in (unsure counts as not)."""
    return is_foreign(language, notebook) or (
        closest is not None and is_foreign(language, (closest,))
    )
