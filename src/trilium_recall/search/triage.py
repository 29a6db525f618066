"""Which prompts need no recall, and what part of a prompt a person actually wrote.

Claude Code fires UserPromptSubmit for text no person typed: background-task results
(`<task-notification>` envelopes), messages from other sessions or teammates, loop sentinels,
harness notices. `triage()` first peels off harness text (leading `<system-reminder>` or IDE
blocks, machine envelopes and their trailer lines); an empty remainder is skipped with the
envelope's name, a person's words left beside it are what gets searched. Then the rules for
short prompts: slash commands, acknowledgements, bare follow-ups. A tag merely *mentioned* in a
sentence is never an envelope: only one at the very start counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# A prompt made only of these words (at most ACK_MAX_WORDS) is an acknowledgement or go-ahead.
ACK_MAX_WORDS = 6
_ACK_WORDS = frozenset(
    """ok okay k kk yes y yep yeah yup sure no nope nah thanks thank you thx ty cheers great
    perfect cool nice good fine done lgtm sgtm np go ahead do it continue proceed next sounds
    looks got alright all right correct exactly agreed makes sense on keep going carry ship
    please a lot much very so awesome excellent wonderful brilliant super works that's thats
    is that it's
    ja jo danke gut genau passt klar alles mach das weiter bitte schön oui merci parfait
    d accord daccord vas allez sí si gracias vale perfecto claro dale bueno listo grazie
    bene perfetto certo sim obrigado obrigada valeu beleza beaucoup muchas mille muito
    vielen dank sehr merci beaucoup muchas mille grazie спасибо большое شكرا
    ありがとう ありがとうございます はい 了解 了解しました うん 好 好的 谢谢 谢谢你 是的 对
    job one s""".split()  # "great job", "nice one", "that's great" (that, s)
)
# Words that carry no topic of their own in a follow-up ("and the second one?").
FOLLOW_UP_MAX_WORDS = 8
_FOLLOW_UP_WORDS = frozenset(
    """and or but so the a an that this these those it its they them one ones first second
    third last next other another then now what why how when where which who about else more
    again also too same previous above below there here hmm hm um uh oh ah well wait huh really
    is are was were do does did can could would should will you me i we us please explain
    elaborate detail details mean meant example examples go on tell instead if ok okay for
    rest others all as show give not come let s lets""".split()
)
# A bare instruction to the agent ("fix it", "retry", "commit and push", "run the tests"): these
# verbs with nothing but follow-up words carry no topic a note could answer. Asked, they do:
# "how do I revert?" is a question for a git notebook.
INSTRUCTION_MAX_WORDS = 5
# Not "undo", "revert", "merge", "abort": "undo last commit" is as often a question for a git
# notebook as an order.
_INSTRUCTION_WORDS = frozenset(
    """fix retry redo try commit push stop test tests run rerun build lint format deploy ship
    start restart finish check review implement save keep""".split()
)
_QUESTION_WORDS = frozenset("how what why when where which who can could should does do is".split())
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Every short-prompt rule is about short prompts: a long one is never scanned whole.
SCAN_CHARS = 400
# A person's question beside a pasted envelope, or after an acknowledgement, has at least this
# many words.
MIN_HUMAN_WORDS = 3
# An acknowledgement before a question: its words, each followed by what comes before the next
# word; the marks that end it (before a space: "next.js", "k-means", "go: cannot find module"
# are no acknowledgement), and the words after it that go on into the question.
_LEADING_ACKS = frozenset(
    """ok okay k kk yes yep yeah yup sure no nope nah thanks thank you thx ty cheers great
    perfect cool nice good fine lgtm sgtm np alright right correct exactly agreed awesome
    excellent wonderful brilliant merci danke gracias grazie obrigado obrigada oui ja sí vale
    parfait genau super beaucoup vielen dank muchas mille""".split()
)
_LEADING_WORD = re.compile(r"\s*([^\W_]+)([^\w]*)")
_MARK = re.compile(r"\s*[,!.;—–-]+\s")
# "ok so how …", "thanks, but …", "merci, et …", "danke, aber …"
_GOES_ON = frozenset("but so now and then et mais alors donc und aber dann pero".split())
_SLASH = re.compile(r"^/([A-Za-z][\w:.-]*)(\s|$)")
_QUESTION_MARK = re.compile(r"\?(?:\s|$)")  # one that ends a question, not a URL's query
# A path's first directory is no command: "/boot is full, how do I remove old kernels" reaches
# the model (Claude Code sends an undefined command on as text, anthropics/claude-code#67007).
_ROOT_DIRECTORIES = frozenset(
    """bin boot dev etc home lib lib64 media mnt nix opt proc root run sbin snap srv sys tmp
    usr var data users volumes applications library system private""".split()
)

# Harness blocks that may precede a person's prompt; removed before anything else is decided.
_LEADING_BLOCK = re.compile(
    r"\A\s*<(system-reminder|ide_[a-z_]+)\b[^>]*>.*?</\1>\s*", re.DOTALL | re.IGNORECASE
)
# Envelopes Claude Code (or an agent team) writes into the prompt field itself.
ENVELOPE_TAGS = (
    "task-notification",
    "agent-message",
    "agent-notification",
    "cross-session-message",
    "teammate-message",
    "ci-monitor-event",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "command-name",
    "command-message",
    "command-args",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-prompt-submit-hook",
)
_TAGS = "|".join(re.escape(tag) for tag in ENVELOPE_TAGS)
_ENVELOPE_START = re.compile(rf"\A<\\?({_TAGS})[\s>]", re.IGNORECASE)
_ENVELOPE_BLOCK = re.compile(rf"<\\?({_TAGS})\b[^>]*>.*?</\1>", re.DOTALL | re.IGNORECASE)
_PEER_PREAMBLE = re.compile(r"\AAnother Claude session sent a message:\s*", re.IGNORECASE)
_TRAILER = re.compile(
    r"^(Read the output file to retrieve the result:|Full transcript available at:).*$",
    re.MULTILINE,
)
_CHANNEL = re.compile(r"\A<channel\b[^>]*>(.*?)</channel>\s*\Z", re.DOTALL | re.IGNORECASE)
# Whole prompts that only the harness writes.
_HARNESS_TEXT: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("loop sentinel", re.compile(r"\A<<[\w-]+>>\Z")),
    ("system notification", re.compile(r"\A\[SYSTEM NOTIFICATION", re.IGNORECASE)),
    ("interrupted", re.compile(r"\A\[Request interrupted by user[^\]]*\]\Z")),
    ("compaction summary", re.compile(r"\AThis session is being continued from a previous")),
    ("hook feedback", re.compile(r"\AStop hook feedback:")),
    ("command caveat", re.compile(r"\ACaveat: The messages below were generated by the user")),
)


@dataclass(frozen=True)
class Triage:
    """`skip` names why nothing is searched; otherwise `text` is what a person wrote."""

    skip: str | None
    text: str


def triage(prompt: str, *, from_subagent: bool = False) -> Triage:
    """Skip reason or the person's text, for a prompt as the hook or an API caller sent it."""
    if from_subagent:  # the hook fired inside a subagent or teammate: the lead agent wrote it
        return Triage("machine: subagent", "")
    text, machine = _strip_harness(prompt.lstrip("\ufeff").strip())
    if machine is not None:
        return Triage(f"machine: {machine}", "")
    head = text[:SCAN_CHARS]
    for reason, matches in RULES:
        if matches(head):
            return Triage(reason, "")
    return Triage(None, _without_leading_acknowledgement(text))


def skip_reason(prompt: str) -> str | None:
    """The reason this prompt needs no recall, or None when it should be searched."""
    return triage(prompt).skip


def _strip_harness(text: str) -> tuple[str, str | None]:
    """(the person's text, None) or ("", what wrote the whole prompt)."""
    removed = None
    while match := _LEADING_BLOCK.match(text):
        removed = match.group(1).lower()
        text = text[match.end() :]
    if removed is not None and not text.strip():
        return "", removed
    for name, pattern in _HARNESS_TEXT:
        if pattern.search(text):
            return "", name
    if channel := _CHANNEL.match(text):  # a message sent from a chat app: a person wrote it
        return channel.group(1).strip(), None
    body = _PEER_PREAMBLE.sub("", text, count=1)
    start = _ENVELOPE_START.match(body)
    if start is None:
        return text, None
    rest = _TRAILER.sub("", _ENVELOPE_BLOCK.sub("", body)).strip()
    if len(_WORD.findall(rest)) < MIN_HUMAN_WORDS:
        return "", start.group(1).lower()
    return rest, None  # a person pasted an envelope and asked about it


def _words(prompt: str) -> list[str]:
    return _WORD.findall(prompt.casefold())


def _is_empty(prompt: str) -> bool:
    return not prompt.strip()


def _is_slash_command(prompt: str) -> bool:
    """A command, unless its first word is a root directory or a question follows it: Claude
    Code sends an undefined command on as text, so "/health says degraded, what does that
    mean?" is a person asking."""
    command = _SLASH.match(prompt.strip())
    return (
        command is not None
        and command[1].lower() not in _ROOT_DIRECTORIES
        and not _QUESTION_MARK.search(prompt)
    )


def _is_acknowledgement(prompt: str) -> bool:
    words = _words(prompt)
    return len(words) <= ACK_MAX_WORDS and all(word in _ACK_WORDS for word in words)


def _without_leading_acknowledgement(text: str) -> str:
    """ "ok but what about the restic retention?" is "what about the restic retention?": an
    acknowledgement ends at a mark before a space ("thanks! now …", "ok, …") or at a word that
    goes on ("but", "so", "now"); "no module named yaml", "next.js …", "fine-tune …" keep
    their first word."""
    cut = end = 0
    for match in _LEADING_WORD.finditer(text[:SCAN_CHARS]):
        word = match[1].casefold()
        goes_on = end > 0 and word in _GOES_ON
        if match.start() != end or not (goes_on or word in _LEADING_ACKS):
            break
        end = match.end()
        if goes_on:
            return _rest(text, end)
        if _MARK.match(match[2]):
            cut = end
    return _rest(text, cut)


def _rest(text: str, end: int) -> str:
    """What follows the acknowledgement, when it is a prompt of its own."""
    rest = text[end:]
    return rest if end and len(_WORD.findall(rest)) >= MIN_HUMAN_WORDS else text


def _is_bare_follow_up(prompt: str) -> bool:
    words = _words(prompt)
    return 0 < len(words) <= FOLLOW_UP_MAX_WORDS and all(w in _FOLLOW_UP_WORDS for w in words)


def _is_bare_instruction(prompt: str) -> bool:
    words = _words(prompt)
    return (
        0 < len(words) <= INSTRUCTION_MAX_WORDS
        and "?" not in prompt
        and not _QUESTION_WORDS.intersection(words)
        and any(w in _INSTRUCTION_WORDS for w in words)
        and all(w in _INSTRUCTION_WORDS or w in _FOLLOW_UP_WORDS for w in words)
    )


RULES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("empty", _is_empty),
    ("slash command", _is_slash_command),
    ("acknowledgement", _is_acknowledgement),  # also emoji-only / punctuation-only prompts
    ("follow-up", _is_bare_follow_up),
    ("instruction", _is_bare_instruction),
)
