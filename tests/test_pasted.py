"""A pasted trace's frames and a machine's ids are left out of what is searched (search/pasted.py):
the exception line and the person's words are what a note can answer."""

from __future__ import annotations

import pytest

from conftest import add_note
from trilium_recall.index.terms import code_phrases, prompt_terms
from trilium_recall.search.pasted import (
    PASTE_CHARS,
    QUESTION_FIRST_CHARS,
    question_first,
    without_machine_noise,
)
from trilium_recall.search.topic import index_holds, topic_of

NODE_TRACE = """node:events:491
      throw er; // Unhandled 'error' event
      ^

Error: listen EADDRINUSE: address already in use :::3000
    at Server.setupListenHandle [as _listen2] (node:net:1740:16)
    at listenInCluster (node:net:1788:12)
    at Server.listen (node:net:1876:7)
    at Object.<anonymous> (/home/dana/projects/shop/api/src/server.js:41:8)
    at Module._compile (node:internal/modules/cjs/loader:1254:14)
    at Module._extensions..js (node:internal/modules/cjs/loader:1308:10)
    at Module.load (node:internal/modules/cjs/loader:1117:32)
    at Module._load (node:internal/modules/cjs/loader:958:12)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:81:12)
    at node:internal/main/run_main_module:23:47
    at new Promise (<anonymous>)
    at async Promise.all (/app/lib/boot.js:12:3)

can my server wait a second and try the port again instead of crashing"""

PYTHON_TRACE = """Traceback (most recent call last):
  File "/home/dana/projects/invoicer/src/cli.py", line 88, in <module>
    main()
  File "/home/dana/projects/invoicer/src/cli.py", line 61, in main
    totals = load_totals(args.path)
             ^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/lib/python3.11/json/__init__.py", line 293, in load
    return loads(fp.read(),
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)

why does json.load fail on an empty file"""

JAVA_TRACE = """Exception in thread "main" java.lang.IllegalStateException: closed
\tat com.acme.app.Store.read(Store.java:42)
\tat com.acme.app.Main.main(Main.java:7)
\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
\tat com.acme.app.Boot.run(Unknown Source)
\t... 12 more
why is the store closed already"""


@pytest.mark.parametrize(
    ("prompt", "searched"),
    [
        (
            NODE_TRACE,
            "Error: listen EADDRINUSE: address already in use :::3000",
        ),
        (
            PYTHON_TRACE,
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n\n"
            "why does json.load fail on an empty file",
        ),
        (
            JAVA_TRACE,
            'Exception in thread "main" java.lang.IllegalStateException: closed\n'
            "why is the store closed already",
        ),
    ],
)
def test_a_trace_s_frames_are_left_out_and_its_error_and_question_kept(
    prompt: str, searched: str
) -> None:
    cleaned = without_machine_noise(prompt)
    assert searched.split("\n")[0] in cleaned and prompt.split("\n")[-1] in cleaned
    assert "\tat " not in cleaned and "    at " not in cleaned
    assert 'File "' not in cleaned and ":1740:16" not in cleaned


def test_node_s_own_frames_and_crash_header_are_left_out() -> None:
    prompt = (
        "node:internal/process/promises:288\n"
        "            triggerUncaughtException(err, true /* fromPromise */);\n"
        "            ^\n\n"
        'TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string\n'
        "    at new NodeError (node:internal/errors:405:5)\n"
        "    at async Promise.all (index 0)\n"
        "Error: Cannot find module './config'\n"
        "Require stack:\n"
        "- /home/dev/myapp/src/index.js\n"
        "- /home/dev/myapp/server.js\n"
        "why does the path end up undefined"
    )
    cleaned = without_machine_noise(prompt)
    assert cleaned.startswith("TypeError [ERR_INVALID_ARG_TYPE]")
    assert "Cannot find module './config'" in cleaned and cleaned.endswith("undefined")
    for frame in ("NodeError", "index 0", "triggerUncaught", "Require stack", "myapp", "^"):
        assert frame not in cleaned


def test_the_question_after_a_long_trace_is_what_the_keywords_read() -> None:
    """Read as written, the frames took all 24 terms ("491", "listen2", "home") and the six code
    phrases before the question was reached."""
    asked = topic_of(NODE_TRACE, application_is_topic=lambda: False)
    terms = prompt_terms(asked)
    assert {"server", "port", "crashing", "eaddrinuse"} <= set(terms)
    assert not {"listen2", "1740", "home", "dana", "loader"} & set(terms)
    assert not any("internal" in phrase for phrase in code_phrases(asked))


@pytest.mark.parametrize(
    ("prompt", "cleaned"),
    [
        (
            "(node:9120) [DEP0005] DeprecationWarning: Buffer() is deprecated",
            "[DEP0005] DeprecationWarning: Buffer() is deprecated",
        ),
        (
            "GET /api/orders/9b2c1f4e-3d5a-4e7b-8c6d-1a2b3c4d5e6f hangs with ECONNRESET",
            "GET /api/orders/ hangs with ECONNRESET",
        ),
        ("commit 3f2a9c1d broke the build", "commit broke the build"),
        ("error: commit 4e1f2a0 is a merge", "error: commit is a merge"),  # git's short hash
        ("revert 9c98333 and 732a385", "revert and 732a385"),  # an id where git writes one
        ("HEAD is now at bcae398 fix", "HEAD is now at fix"),
        ("segfault at 0x7ffd4e2a91c0 in libfoo", "segfault at in libfoo"),
        ("2026-12-05 14:03:22,118 ERROR worker crashed", "2026-12-05 ERROR worker crashed"),
        (
            "panicked at src/main.rs:14:18: index out of bounds",
            "panicked at src/main.rs : index out of bounds",
        ),
        (
            "ReferenceError: process is not defined at Object.<anonymous> (config.ts:3:15)",
            "ReferenceError: process is not defined",
        ),
        # A terminal's colours, with the escape or with it lost in the copy.
        ("\x1b[31mCalledProcessError\x1b[0m: exit 1", "CalledProcessError : exit 1"),
        ("[1;31mFAILED[0m tests/test_io.py", "FAILED tests/test_io.py"),
        (  # syslog's process id
            "Dec  7 10:00:01 nas restic[2001]: Fatal: unable to open config file",
            "Dec 7 nas restic : Fatal: unable to open config file",
        ),
    ],
)
def test_ids_a_machine_wrote_are_left_out(prompt: str, cleaned: str) -> None:
    assert without_machine_noise(prompt) == cleaned


@pytest.mark.parametrize(
    "prompt",
    [
        "connect ECONNREFUSED 127.0.0.1:5432 after upgrading node",  # a port says Postgres
        "mysql ERROR 1045 (28000): Access denied",  # codes people type
        "we meet at 10:30 on friday",
        "at 10:30 the backup failed",
        "backup window 01:00:00 to 05:00:00",  # times of day, no file's line and column
        "what does 0x80070005 mean on my windows vm",  # an error code of eight digits
        "C0000005 access violation in the facade12 build",  # no hash's alternation
        "1e10000 rows, a 2b3d4e grid",  # a float, and hex too short for a hash
        "generate an ed25519 key at once",  # no id's place, no hash's alternation
        "the nightly job failed at 20260412 again",  # a number where an id could be
        "the db refuses connections\nat 127.0.0.1:5432\nsince the upgrade",  # a port, no frame
        "the cafe added 12 beds",
        "restic forget --keep-daily 7 --prune\n",  # even its trailing newline
        'print("\\033[1;32mok\\033[0m") shows no colour',  # colour codes written in code
        "the timeout is [5m] and arr[0] is empty",
        "rate(errors[5m:1m]) over a window [5m, 10m]",  # PromQL, not colours
        'console.log("\\u001b[31mred")',  # written in code
        "",
    ],
)
def test_a_prompt_without_machine_noise_is_searched_as_written(prompt: str) -> None:
    assert without_machine_noise(prompt) == prompt


def test_a_trace_alone_is_still_all_there_is_to_search() -> None:
    frames = "    at f (/app/a.js:1:2)\n    at g (/app/b.js:3:4)"
    assert without_machine_noise(frames) == frames


def test_only_the_start_a_search_reads_is_cleaned() -> None:
    """A pasted megabyte of log is read as far as search reads, not scanned whole."""
    log = "(node:1) warning\n" + "x " * PASTE_CHARS
    cleaned = without_machine_noise(log)
    assert cleaned.startswith("warning") and len(cleaned) <= PASTE_CHARS


def test_an_id_the_notes_hold_is_searched(store, embedder) -> None:
    """A healthcheck's UUID kept in a backup script is the best evidence there is; one no note
    holds is a request's id."""
    uuid = "5f3c1a9e-2b7d-4c61-9f0a-7e2d81b44c10"
    script = [("restic-backup.sh", f"curl -fsS https://hc-ping.com/{uuid}")]
    add_note(store, embedder, "s", "restic-backup.sh", script)

    def searched(prompt: str) -> str:
        return topic_of(prompt, lambda: False, lambda text: index_holds(store, text))

    assert searched(f"which check is {uuid}?") == f"which check is {uuid}?"
    assert searched("which check is 9b2c1f4e-3d5a-4e7b-8c6d-1a2b3c4d5e6f?") == "which check is ?"
    assert searched("(node:4242) warning at 3f2a9c1d") == "warning at"  # a pid is never kept


LOG = "\n".join(
    f"2024-03-01 12:00:{i % 60:02d},825 INFO [worker-{i % 4}] pid 4121 served request {i} in 12ms"
    for i in range(140)
)


@pytest.mark.parametrize("between", ["\n\n", "\n", "\n```\n"])
def test_a_question_under_a_long_log_is_what_search_reads_first(between: str) -> None:
    question = "how do i get the thread name into each log line?\nthanks in advance"
    asked = topic_of(LOG + between + question, application_is_topic=lambda: False)
    assert asked.startswith(question)
    assert {"thread", "name", "log", "line"} <= set(prompt_terms(asked)[:8])
    assert "served request 0 in 12ms" in asked  # the log is still there, after it


def test_what_is_first_already_or_short_or_all_prose_stays_in_place() -> None:
    asked_first = "how do i get the thread name into each log line?\n" + LOG
    assert question_first(asked_first) == asked_first
    short = "2024-03-01 INFO pid 4121 served\nwhy is the pid here?"
    assert len(short) < QUESTION_FIRST_CHARS and question_first(short) == short
    essay = "I wonder why the build is slow on my laptop and fast on the server. " * 30
    assert question_first(essay) == essay  # one paragraph of prose: no paste to move it past
    trace_only = LOG + "\nERROR [worker-1] pid 4121 crashed"
    assert question_first(trace_only) == trace_only


def test_a_question_under_a_long_pasted_text_is_read_first() -> None:
    """A pasted article or mail is prose too: the short last paragraph after it is the
    person's question."""
    article = ("The backup runs every night and copies the photos to the NAS. " * 20 + "\n") * 5
    question = "how do I restore my restic backup?"
    asked = question_first(article + "\n" + question)
    assert asked.startswith(question + "\n\n")
    assert asked.split() == (question + " " + article).split()
