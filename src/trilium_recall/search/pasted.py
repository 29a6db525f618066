"""What a pasted trace or log line carries that names nothing: stack frames and machine ids.

A developer pastes an error with its stack: twelve `at listenInCluster (node:net:1788:12)`
lines, `File "/home/dana/app/cli.py", line 88, in main`, a process id `(node:9120)`, a request's
UUID. Read as written, the frames took the prompt's 24 keyword terms ("491", "listen2",
"home") and its 6 code phrases before the question after them was reached, the embedder read
only the trace (the question began past its 1,000 characters), and the ids counted as words no
note holds. Every such prompt was silent; without the frames and ids the same prompts found
their notes. The exception line and the person's own words are what a note can answer; those
stay, and so do ports ("127.0.0.1:5432" says Postgres) and error codes ("[DEP0005]").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..index.terms import STOP_WORDS, words
from .phrasing import everyday_words

# A whole line that is a frame: JavaScript's and Java's "at f (file:line:col)", "at
# file:line:col", "at async f (…)", "at new NodeError (…)", "at java.base/…(Arrays.java:3537)",
# "at f (Native Method)", "at async Promise.all (index 0)", "... 12 more"; Node's crash header
# ("node:internal/process/promises:288" over the source line and its caret) and its "Require
# stack:" of paths; Python's 'File "…", line 88, in main' with the source line under
# it, and the header; Go's "goroutine 1 [running]:" and its "\t/path/file.go:92 +0x1d" lines.
# A place outside parentheses needs a line and a column: "at 127.0.0.1:5432" is a port.
_FRAME_LINE = re.compile(
    r"""^[ \t]*(?:
        at[ \t]++(?:async[ \t]++)?(?:new[ \t]++)?
          (?:[^\s(]++[ \t]*+(?:\[as[ \t][^\]\n]++\][ \t]*+)?)?
          (?:\((?:node:|[^\s()/\\.]*+[/\\.])[^\s()]*:\d++(?::\d++)?\)
            |(?:node:|[^\s()/\\.]*+[/\\.])[^\s()]*:\d++:\d++)
      | at[ \t]++[^\n(]*+
          \((?i:native(?:[ \t]method)?|unknown[ \t]source|<anonymous>|index[ \t]\d+)\)
      | node:[\w/.-]+:\d+(?:\n[ \t]+\S[^\n]*)?(?:\n[ \t]*\^+)?  # Node's crash header
      | Require[ \t]+stack:(?:\n[ \t]*-[ \t]+\S+)*
      | \.\.\.[ \t]+\d+[ \t]+more
      | File[ \t]+"[^"\n]+",[ \t]+line[ \t]+\d+[^\n]*
        (?:\n[ \t]+(?!File[ \t])\S[^\n]*)?(?:\n[ \t]*[~^]+)?  # its source line, its marks
      | Traceback[ \t]+\(most[ \t]+recent[ \t]+call[ \t]+last\):
      | goroutine[ \t]+\d+[ \t]+\[[^\]\n]+\]:
      | /\S+\.go:\d+[ \t]+\+0x[0-9a-f]+
    )[ \t]*$\n?""",
    re.MULTILINE | re.VERBOSE,
)
# The same frames run together on one line, as a trace pasted into a one-line box arrives.
_INLINE_FRAME = re.compile(r"\bat (?:async )?(?:new )?[\w.$<>\[\]/]+ \([^()\s]+:\d+:\d+\)")
# What a machine wrote: node's process id, a terminal's colour codes (ESC "[31m", or "[31m" with the
# escape lost in the copy; not "\033[31m" written in code), addresses ("0x7ffd4e2a91c0"; an error
# code of eight digits, "0x80070005", stays), a timestamp's time of day, a file's line and column
# ("server.js:42:17" keeps the file; "10:30:00" is no file's); and ids, left in when the notes hold
# them (a healthcheck's UUID in a backup script): UUIDs, hashes of seven or more characters (hex
# whose digits and letters change places at least four times: "4e1f2a0", not "facade12" or
# "C0000005"), and any hex of seven to forty characters with a digit and a letter where git writes a
# commit's id ("commit 9c98333", "could not apply 732a385", "HEAD is now at bcae398").
_MACHINE = re.compile(
    r"""(?P<noise>\(node:\d+\)
      | (?<=[a-z])\[\d+\](?=:)  # syslog's process id: "restic[2001]: Fatal: ..."
      | (?:\x1b|\^\[)\[[0-9;]{0,12}m  # colours, as a terminal wrote them
      | (?<!\\033)(?<!\\x1b)(?<!\\e)(?<!\\u001b)\[[0-9;]{0,12}m(?![\]:,\d])  # escape lost
      | \b0x(?![0-9a-f]{8}\b)[0-9a-f]+\b
      | (?<=\d)[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b
      | (?<=[a-z_)]):\d+:\d+\b)
      | (?P<uuid>\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b)
      | (?P<commit>\b(?:commit|revert|cherry-pick|checkout|reset|show|rebase|apply|at)\s+)
        (?P<id>(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40})\b
      | (?P<hex>\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b)""",
    re.IGNORECASE | re.VERBOSE,
)
_ALTERNATION = re.compile(r"(?:\d+[a-f]+){2}\d|(?:[a-f]+\d+){2}[a-f]", re.IGNORECASE)
_SPACES = re.compile(r"[ \t]{2,}")
# Search reads a prompt's start only: its first 24 terms, 6 code phrases in 4,000 characters,
# 1,000 characters embedded (index/terms.py, hybrid.py).
PASTE_CHARS = 8000


def without_machine_noise(prompt: str, held: Callable[[str], bool] = lambda _: False) -> str:
    """The prompt without stack frames and machine ids (but those `held` says the notes hold);
    the prompt itself when nothing else is left (a trace alone is still all there is to
    search). Only its start is read: search reads no further (a pasted megabyte of log is cut
    to that)."""

    def blank(found: re.Match[str]) -> str:
        if found["commit"]:  # the word before the id stays
            return found[0] if held(found["id"]) else found["commit"]
        machine = found["noise"] or found["uuid"] or _ALTERNATION.search(found["hex"])
        return " " if machine and (found["noise"] or not held(found[0])) else found[0]

    head = prompt[:PASTE_CHARS]
    text = _MACHINE.sub(blank, _INLINE_FRAME.sub(" ", _FRAME_LINE.sub("", head)))
    if text == head:
        return prompt
    text = _SPACES.sub(" ", text).strip()
    return text if any(ch.isalpha() for ch in text) else prompt


# A question under a long paste: search reads a prompt's start (its first 24 keyword terms,
# 1,000 characters embedded), so "how do i get the thread name into each log line?" under 140
# lines of log was never read, and the prompt was silent; asked first, it found its note. The
# person's closing words go first when the paste would hide them.
QUESTION_FIRST_CHARS = 1000
_FENCE = re.compile(r"^\s*(?:```|~~~)")


def question_first(prompt: str) -> str:
    """A long prompt with the person's own closing lines (prose after a paste) moved to its
    start; any other prompt as it is."""
    if len(prompt) <= QUESTION_FIRST_CHARS:
        return prompt
    lines = prompt.rstrip().splitlines()
    start = len(lines)
    while start > 0 and (not lines[start - 1].strip() or _prose(lines[start - 1])):
        start -= 1
    if start == 0:  # all prose (an article, a mail): the person's last paragraph, if short
        paragraphs = re.split(r"\n\s*\n", prompt.rstrip())
        start = len(lines) - len(paragraphs[-1].splitlines()) if len(paragraphs) > 1 else 0
    closing = "\n".join(lines[start:]).strip()
    if not closing or start == 0 or len(closing) > QUESTION_FIRST_CHARS // 2:
        return prompt
    return closing + "\n\n" + "\n".join(lines[:start])


def _prose(line: str) -> bool:
    """A line a person wrote: words mostly of the language (everyday or function words), some
    of them function words; not a fence, not a log line of ids, times and names."""
    if _FENCE.match(line):
        return False
    tokens = words(line)
    common = [t for t in tokens if t in STOP_WORDS or t in everyday_words()]
    has_function_word = any(t in STOP_WORDS for t in tokens)
    return len(tokens) >= 3 and has_function_word and len(common) >= 0.7 * len(tokens)
