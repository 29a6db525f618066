from __future__ import annotations

import pytest

from trilium_recall.skip import skip_reason


@pytest.mark.parametrize(
    ("prompt", "reason"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        ("/compact", "slash command"),
        ("/clear", "slash command"),
        ("/review src/parser.py", "slash command"),
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
    ],
)
def test_prompts_with_something_to_search_are_not_skipped(prompt: str) -> None:
    assert skip_reason(prompt) is None
