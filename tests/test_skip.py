from __future__ import annotations

import pytest

from trilium_recall.search.triage import Triage, skip_reason, triage


@pytest.mark.parametrize(
    ("prompt", "reason"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        ("/compact", "slash command"),
        ("/clear", "slash command"),
        ("/review src/parser.py", "slash command"),
        ("/review https://github.com/a/b/pull/3?w=1", "slash command"),  # a URL's query
        ("  /model opus", "slash command"),
        ("ok", "acknowledgement"),
        ("OK.", "acknowledgement"),
        ("Yes!", "acknowledgement"),
        ("thanks!", "acknowledgement"),
        ("Thank you", "acknowledgement"),
        ("go ahead", "acknowledgement"),
        ("Do it.", "acknowledgement"),
        ("continue", "acknowledgement"),
        ("sounds good!!", "acknowledgement"),
        ("lgtm", "acknowledgement"),
        ("👍", "acknowledgement"),
        ("...", "acknowledgement"),
        ("and the second one?", "follow-up"),
        ("why?", "follow-up"),
        ("what about that", "follow-up"),
        ("hmm, and then?", "follow-up"),
        ("explain more", "follow-up"),
        ("can you show me an example?", "follow-up"),
        ("let's do it", "follow-up"),
        ("why not?", "follow-up"),
        ("how come?", "follow-up"),
        ("ありがとう", "acknowledgement"),
        ("了解", "acknowledgement"),
        ("ja, mach das", "acknowledgement"),
        ("merci beaucoup", "acknowledgement"),
        ("d'accord, vas-y", "acknowledgement"),
        ("ありがとうございます", "acknowledgement"),
        ("了解しました", "acknowledgement"),
        ("谢谢你", "acknowledgement"),
        ("vielen Dank", "acknowledgement"),
        ("danke sehr", "acknowledgement"),
        ("Спасибо", "acknowledgement"),
        ("شكرا", "acknowledgement"),
        ("great job", "acknowledgement"),
        ("nice one", "acknowledgement"),
        ("thanks a lot, that's great", "acknowledgement"),
        ("fix it", "instruction"),
        ("retry", "instruction"),
        ("commit and push", "instruction"),
        ("run the tests again", "instruction"),
        ("stop", "instruction"),
    ],
)
def test_prompts_that_need_no_recall(prompt: str, reason: str) -> None:
    assert skip_reason(prompt) == reason


@pytest.mark.parametrize(
    "prompt",
    [
        "how do I restore my restic backup?",
        "why is postgres slow after the upgrade",
        "/usr/bin/env python fails on the server",
        "ok so what port does wireguard use",
        "and what about the nginx config for grafana?",
        "wie viel Steuer zahle ich",
        "continue the migration of the homelab to proxmox 8",
        "/boot is full, how do I remove old kernels",  # a path, not a command
        "/tmp fills up every night",
        "/Users is full on my mac",
        # Claude Code sends an undefined command on as text: a question after it is asked
        "/health says degraded, what does that mean?",
        "undo last commit",  # a question for a git notebook as often as an order
        "how do I revert a merge",  # asked, an instruction's verb is a topic
        "commit?",
        "commit message conventions for the team",
    ],
)
def test_prompts_with_something_to_search_are_not_skipped(prompt: str) -> None:
    assert skip_reason(prompt) is None


BASH_DONE = (
    "<task-notification>\n<task-id>b1c496c</task-id>\n"
    "<output-file>/tmp/claude/x/tasks/b1c496c.output</output-file>\n<status>completed</status>\n"
    '<summary>Background command "Commit merge" completed (exit code 0)</summary>\n'
    "</task-notification>\nRead the output file to retrieve the result: /tmp/claude/b1c496c.output"
)
AGENT_DONE = (
    "<task-notification>\n<task-id>a4b5a02</task-id>\n<tool-use-id>toolu_01AbC</tool-use-id>\n"
    '<status>completed</status>\n<summary>Agent "Explore auth" completed</summary>\n'
    "<result>Found 3 call sites of the token refresh in auth.ts and api.ts</result>\n"
    "<usage><total_tokens>812</total_tokens></usage>\n</task-notification>\n"
    "Full transcript available at: /tmp/claude/x/tasks/a4b5a02.output"
)


@pytest.mark.parametrize(
    ("prompt", "reason"),
    [
        (BASH_DONE, "machine: task-notification"),
        (AGENT_DONE, "machine: task-notification"),
        (BASH_DONE + "\n" + AGENT_DONE, "machine: task-notification"),
        (
            "<task-notification>\n<task-id>byethc2ei</task-id>\n"
            '<summary>Monitor event: "CI on PR 6342"</summary>\n<event>checks: FAILURE</event>\n'
            "If this event is something the user would act on now, send a PushNotification.\n"
            "</task-notification>",
            "machine: task-notification",
        ),
        (
            "[SYSTEM NOTIFICATION - NOT USER INPUT]\nThis is an automated background-task event."
            "\n<task-notification>\n<task-id>b9</task-id>\n</task-notification>",
            "machine: system notification",
        ),
        (
            '<agent-message from="a3082f9692f641e94">\n[Subagent hand-back] all 12 tests pass.\n'
            "</agent-message>",
            "machine: agent-message",
        ),
        (
            "Another Claude session sent a message:\n"
            '<cross-session-message from="uds:/tmp/x.sock" from-name="engine-58">\n'
            "Status check — which files are you editing?\n</cross-session-message>",
            "machine: cross-session-message",
        ),
        (
            '<teammate-message teammate_id="r1-a" color="pink">\n'
            '{"type":"idle_notification","from":"r1-a"}\n</teammate-message>',
            "machine: teammate-message",
        ),
        ("<<autonomous-loop-dynamic>>", "machine: loop sentinel"),
        (
            "<system-reminder>\nBackground shell finished.\n</system-reminder>",
            "machine: system-reminder",
        ),
        ("[Request interrupted by user for tool use]", "machine: interrupted"),
        (
            "This session is being continued from a previous conversation that ran out",
            "machine: compaction summary",
        ),
        ("Stop hook feedback:\nfix the tests first", "machine: hook feedback"),
    ],
)
def test_prompts_no_person_typed_are_skipped_with_the_envelope_named(
    prompt: str, reason: str
) -> None:
    assert triage(prompt) == Triage(reason, "")


@pytest.mark.parametrize(
    ("prompt", "searched"),
    [
        (
            "why does my UserPromptSubmit hook see <task-notification> tags on every agent run?",
            "why does my UserPromptSubmit hook see <task-notification> tags on every agent run?",
        ),
        (
            "filter `<teammate-message>` envelopes out of the memory index",
            "filter `<teammate-message>` envelopes out of the memory index",
        ),
        (
            "<system-reminder>\nYou are in worktree x.\n</system-reminder>\nfix the flaky test",
            "fix the flaky test",
        ),
        (
            "<ide_opened_file>The user opened a.ts.</ide_opened_file>\nwhy does refresh fail?",
            "why does refresh fail?",
        ),
        (
            "<task-notification>\n<task-id>b9</task-id>\n<status>failed</status>\n"
            "</task-notification>\nwhy did this fail? it worked yesterday",
            "why did this fail? it worked yesterday",
        ),
        (
            '<channel source="plugin:telegram:telegram">did the deploy finish?</channel>',
            "did the deploy finish?",
        ),
    ],
)
def test_a_person_s_words_beside_harness_text_are_what_gets_searched(
    prompt: str, searched: str
) -> None:
    assert triage(prompt) == Triage(None, searched)


def test_a_subagent_s_prompt_is_skipped_and_a_long_envelope_costs_little() -> None:
    assert triage("how do i restore restic", from_subagent=True).skip == "machine: subagent"
    huge = "<task-notification>" + "<result>" + "x " * 500_000 + "</result></task-notification>"
    assert triage(huge).skip == "machine: task-notification"


@pytest.mark.parametrize(
    ("prompt", "searched"),
    [
        ("ok but what about the restic retention?", "what about the restic retention?"),
        ("thanks! now what is my restic backup retention?", "what is my restic backup retention?"),
        ("ok, how do I restore restic", "how do I restore restic"),
        ("great so how does the backup work", "how does the backup work"),
        ("ok. how do i rotate the restic key", "how do i rotate the restic key"),
        ("yes - do the restic prune with 7 daily", "do the restic prune with 7 daily"),
        # no mark before a space or word that goes on after it: the word is the prompt's own
        ("no module named yaml after pip install", "no module named yaml after pip install"),
        ("next.js app router caching is stale", "next.js app router caching is stale"),
        ("go: cannot find main module", "go: cannot find main module"),
        ("fine-tune llama on my notes", "fine-tune llama on my notes"),
        ("nice -n 19 for the backup job", "nice -n 19 for the backup job"),
        ("now() returns the wrong timezone", "now() returns the wrong timezone"),
        ("please explain the backup schedule", "please explain the backup schedule"),
        ("is the backup encrypted?", "is the backup encrypted?"),
        ("ok, the port?", "ok, the port?"),  # too little left to be a prompt of its own
        ("merci ! et l'hôtel à Lyon ?", "l'hôtel à Lyon ?"),
        ("danke, aber wie viel Steuer zahle ich?", "wie viel Steuer zahle ich?"),
        ("gracias. ¿cómo restauro la copia de restic?", "cómo restauro la copia de restic?"),
        ("ja ist nicht genug", "ja ist nicht genug"),  # no mark after it: the prompt's own word
    ],
)
def test_a_leading_acknowledgement_is_not_searched(prompt: str, searched: str) -> None:
    """Searched, "ok" matched the "OK" of a journal note, and the restic question went silent."""
    assert triage(prompt) == Triage(None, searched)
