"""Malformed bodies at POST /recall and /mcp of the real engine: only 2xx/4xx, and it stays up.

Hypothesis throws ≥ 1,000 bodies at each endpoint (any JSON shape, wrong types, huge and
control-character strings, lone surrogates, invalid UTF-8, FTS5 syntax, hook payloads with wrong
fields, wrong content types; for /mcp malformed JSON-RPC of every kind, batches, invalid JSON),
authenticated so they reach the handlers. The bugs this fuzzing found (lone surrogates, deep
nesting) are fixed; their reproducers stay at the end as regression tests.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import RESTIC_ANSWER, RESTIC_PROMPT

EXAMPLES = 1000
MCP_PROTOCOL = "2025-06-18"
MCP_ACCEPT = "application/json, text/event-stream"
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.function_scoped_fixture,
    ],
)

# ---------------------------------------------------------------- strategies


def chance(k: int, n: int) -> st.SearchStrategy[bool]:
    """True k times in n. (Hypothesis favours small integers and first branches:
    `integers(0, 9) == 0` would come up far more often than one time in ten.)"""
    return st.sampled_from([True] * k + [False] * (n - k))


# Every code point, lone surrogates and control characters included.
any_char = st.characters(exclude_categories=())
any_text = st.text(any_char, max_size=40)
control_text = st.text(st.characters(max_codepoint=0x1F), min_size=1, max_size=20)
FTS_SYNTAX = """" ' AND OR NOT NEAR( NEAR/3 ) ( * ^ : - + title: {title}: \x00 \\ % _ restic
    backup wireguard port '' "" *restic* MATCH bm25( ;-- near""".split()
fts_text = st.lists(st.sampled_from(FTS_SYNTAX), min_size=1, max_size=12).map(" ".join)
# Long prompts cost the embedder ~1 s each here (it reads the first 2,000 characters): rare.
huge_text = st.sampled_from([2_001, 20_000, 300_000]).map(
    lambda n: ("restic backup wireguard ünïcødé " * (n // 32 + 1))[:n]
)
topical_text = st.tuples(
    st.sampled_from(["restore my restic backup ", "wireguard port ", "", "how do I "]), any_text
).map("".join)
prompt_text = st.one_of(
    any_text,
    any_text,
    control_text,
    fts_text,
    fts_text,
    topical_text,
    topical_text,
    topical_text,
    st.sampled_from(["", " ", "/compact", "ok", "and the second one?", "\x00", "\ud800", "🦘"]),
    chance(1, 10).flatmap(lambda huge: huge_text if huge else topical_text),
)
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), any_text
)
json_values = st.recursive(
    json_scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(any_text, kids, max_size=4),
    max_leaves=12,
)
# Session ids are namespaced ("fuzz-…") so fuzzing never marks notes "already sent" to another
# test's session.


@st.composite
def recall_objects(draw: st.DrawFn) -> dict[str, Any]:
    def mostly(good: st.SearchStrategy[Any]) -> Any:  # the right type 4 times in 5
        return draw(good if draw(chance(4, 5)) else json_values)

    body: dict[str, Any] = {"prompt": mostly(prompt_text)}
    if draw(st.booleans()):
        body["session_id"] = mostly(any_text.map(lambda s: "fuzz-" + s))
    if draw(st.booleans()):
        body["instance"] = mostly(st.sampled_from(["default", "", "work", "DEFAULT"]))
    if draw(chance(1, 4)):
        body.update(draw(st.dictionaries(any_text, json_values, max_size=3)))
    if draw(st.booleans()):  # a Claude Code UserPromptSubmit payload, fields right or wrong
        body["hook_event_name"] = mostly(st.just("UserPromptSubmit"))
        for name in ("session_id", "transcript_path", "cwd", "permission_mode"):
            if draw(st.booleans()):
                body[name] = mostly(any_text.map(lambda s: "fuzz-" + s))
    if not draw(chance(4, 5)):
        body.pop("prompt", None)
    return body


def _dump(value: Any, ascii_only: bool) -> bytes:
    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=True)
    return text.encode("utf-8", "surrogatepass")  # lone surrogates become invalid UTF-8


invalid_json = st.one_of(
    st.binary(max_size=300),
    st.sampled_from(
        [
            b"",
            b"{",
            b"}",
            b"[",
            b"null",
            b"NaN",
            b"Infinity",
            b'{"prompt": NaN}',
            b'{"prompt": "unterminated',
            b"{'prompt': 'single quotes'}",
            b'{"prompt": "a",}',
            b"\xef\xbb\xbf{}",
            b'{"prompt": "\xff\xfe"}',
            b'{"prompt": "\xc3\x28"}',
            b'{"prompt": "\xed\xa0\x80 restic"}',
            b'{"prompt": "x"} trailing',
            '{"prompt": "restic"}'.encode("utf-16"),
            b'{"prompt": "\\u12"}',
        ]
    ),
    st.tuples(st.binary(max_size=20), st.binary(max_size=20)).map(
        lambda p: b'{"prompt": "' + p[0] + b"restic" + p[1] + b'"}'
    ),
)
deep_json = st.integers(100, 200_000).flatmap(
    lambda depth: st.sampled_from([b"[" * depth, b'{"a":' * depth, b"[" * depth + b"]" * depth])
)
oversize = st.sampled_from([2 * 1024 * 1024 - 12, 2 * 1024 * 1024 + 1]).map(
    lambda n: b'{"prompt": "' + b"a" * n + b'"}'
)  # just under and over the 2 MB cap
recall_objects_bytes = st.builds(_dump, recall_objects(), st.booleans())
# Weighted by hand: one_of over repeated branches does not draw them evenly.
recall_bodies = st.integers(0, 19).flatmap(
    lambda n: (
        recall_objects_bytes
        if n < 14
        else st.builds(_dump, json_values, st.booleans())
        if n < 16
        else invalid_json
        if n < 18
        else deep_json
        if n < 19
        else oversize
    )
)
content_types = st.one_of(
    st.sampled_from(
        [
            "application/json",
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json; charset=latin-1",
            "",
            "*/*",
        ]
    ),
    # printable ASCII without edge spaces: what an HTTP client can send at all
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30).map(str.strip),
)

MCP_METHODS = """initialize ping tools/list tools/call resources/list resources/read
    resources/templates/list prompts/list prompts/get completion/complete logging/setLevel
    notifications/initialized notifications/cancelled notifications/progress
    sampling/createMessage roots/list""".split()
rpc_ids = st.one_of(st.integers(), st.text(max_size=10), st.none(), st.floats(), json_values)


@st.composite
def rpc_messages(draw: st.DrawFn) -> Any:
    message: dict[str, Any] = {}
    fields = {
        "jsonrpc": st.one_of(st.just("2.0"), st.just("2.0"), json_values),
        "id": rpc_ids,
        "method": st.one_of(st.sampled_from(MCP_METHODS), any_text, json_values),
        "params": st.one_of(json_values, recall_calls()),
        "result": json_values,
        "error": st.one_of(json_values, st.fixed_dictionaries({"code": json_values})),
    }
    for name, strategy in fields.items():
        if draw(chance(9, 10) if name in ("jsonrpc", "method", "id", "params") else chance(1, 10)):
            message[name] = draw(strategy)
    return message


@st.composite
def recall_calls(draw: st.DrawFn) -> dict[str, Any]:
    """tools/call params: the recall tool (mostly) with arguments right or wrong."""
    arguments = {}
    for name, good in (
        ("query", prompt_text),
        ("limit", st.integers(-5, 20)),
        ("instance", st.sampled_from(["default", "work", ""])),
    ):
        if draw(chance(3, 4)):
            arguments[name] = draw(st.one_of(good, good, json_values))
    return {
        "name": draw(st.one_of(st.just("recall"), st.just("recall"), any_text)),
        "arguments": draw(st.one_of(st.just(arguments), st.just(arguments), json_values)),
    }


def _tool_call(params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


mcp_bodies = st.one_of(
    st.builds(_dump, rpc_messages(), st.booleans()),
    st.builds(_dump, rpc_messages(), st.booleans()),
    st.builds(_dump, recall_calls().map(_tool_call), st.booleans()),
    st.builds(_dump, recall_calls().map(_tool_call), st.booleans()),
    st.builds(_dump, st.lists(rpc_messages(), max_size=5), st.booleans()),
    st.builds(_dump, json_values, st.booleans()),
    invalid_json,
    deep_json,
)

# ---------------------------------------------------------------- the engine under fire


class Sender:
    """One keep-alive client; a fresh connection after a 5xx (uvicorn closes that one)."""

    def __init__(self) -> None:
        self.client = httpx.Client(timeout=60)
        self.sent = 0

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
        self.sent += 1
        answer = self.client.post(url, content=body, headers=headers)
        if answer.status_code >= 500:
            self.client.close()
            self.client = httpx.Client(timeout=60)
        return answer

    def close(self) -> None:
        self.client.close()


@pytest.fixture
def sender() -> Iterator[Sender]:
    opened = Sender()
    yield opened
    opened.close()


def _check(answer: httpx.Response, body: bytes) -> None:
    assert answer.status_code < 500, (answer.status_code, body[:500], answer.text[:500])
    assert answer.status_code != 401, "the fuzz must reach the handlers"


def _assert_still_healthy(engine: Any) -> None:
    health = httpx.get(f"{engine.url}/health", timeout=10)
    assert health.status_code == 200 and health.json()["status"] == "ok", health.text
    answer = httpx.post(
        f"{engine.url}/recall", json={"prompt": RESTIC_PROMPT}, headers=engine.headers, timeout=10
    )
    assert answer.status_code == 200, answer.text
    assert sorted(p["note_id"] for p in answer.json()["passages"]) == RESTIC_ANSWER, answer.text
    assert engine.process.process.poll() is None, "the engine process died"


def test_fuzz_recall_answers_only_2xx_or_4xx(demo_engine, sender: Sender) -> None:
    url = f"{demo_engine.url}/recall"
    statuses: dict[int, int] = {}

    @FUZZ
    @given(body=recall_bodies, content_type=content_types, explain=st.booleans())
    def throw(body: bytes, content_type: str, explain: bool) -> None:
        headers = {**demo_engine.headers, "Content-Type": content_type}
        answer = sender.post(url + ("?explain=1" if explain else ""), body, headers)
        statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
        _check(answer, body)
        if answer.status_code == 400:
            assert isinstance(answer.json()["error"], str), answer.text
        elif answer.status_code == 200 and answer.content:
            assert isinstance(answer.json(), dict), answer.text

    started = time.monotonic()
    throw()
    print(
        f"/recall fuzz: {sender.sent} bodies in {time.monotonic() - started:.0f} s, "
        f"statuses {statuses}"
    )
    assert sender.sent >= EXAMPLES
    assert statuses.get(200, 0) > EXAMPLES // 10, statuses  # many bodies reached the search
    _assert_still_healthy(demo_engine)


@pytest.fixture
def mcp_session(demo_engine) -> str | None:
    """An initialized MCP exchange. The engine keeps no sessions (stateless: a client that never
    closed its sessions filled the SDK's 10,000), so it names none, and every message reaches
    the handlers alone."""
    headers = {**demo_engine.headers, "Accept": MCP_ACCEPT, "Content-Type": "application/json"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": MCP_PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"},
        },
    }
    with httpx.Client(timeout=30) as client:
        answer = client.post(f"{demo_engine.url}/mcp", json=init, headers=headers)
        assert answer.status_code == 200, answer.text
        session = answer.headers.get("mcp-session-id")
        assert session is None
        headers |= {"mcp-protocol-version": MCP_PROTOCOL}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post(f"{demo_engine.url}/mcp", json=note, headers=headers).status_code == 202
    return session


def _mcp_recall(engine: Any, session: str | None) -> str:
    headers = {
        **engine.headers,
        "Accept": MCP_ACCEPT,
        "Content-Type": "application/json",
        "mcp-protocol-version": MCP_PROTOCOL,
        **({"mcp-session-id": session} if session else {}),
    }
    call = _tool_call({"name": "recall", "arguments": {"query": RESTIC_PROMPT}})
    answer = httpx.post(f"{engine.url}/mcp", json=call, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.text


def test_fuzz_mcp_answers_only_2xx_or_4xx(
    demo_engine, mcp_session: str | None, sender: Sender
) -> None:
    url = f"{demo_engine.url}/mcp"
    statuses: dict[int, int] = {}
    assert "Backups (restic)" in _mcp_recall(demo_engine, mcp_session)

    @FUZZ
    @given(
        body=mcp_bodies,
        session=st.one_of(
            st.just(mcp_session),
            st.just(mcp_session),
            st.just(mcp_session),
            st.none(),
            st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=40),
        ),
        accept=st.one_of(
            st.just(MCP_ACCEPT),
            st.just(MCP_ACCEPT),
            st.just(MCP_ACCEPT),
            st.sampled_from(["application/json", "text/event-stream", "*/*", ""]),
        ),
        content_type=st.one_of(
            st.just("application/json"), st.just("application/json"), content_types
        ),
        protocol=st.one_of(
            st.just(MCP_PROTOCOL),
            st.just(MCP_PROTOCOL),
            st.none(),
            st.sampled_from(["2024-11-05", "2025-03-26", "1999-01-01", "x"]),
        ),
    )
    def throw(
        body: bytes, session: str | None, accept: str, content_type: str, protocol: str | None
    ) -> None:
        headers = {**demo_engine.headers, "Accept": accept, "Content-Type": content_type}
        if session is not None:
            headers["mcp-session-id"] = session
        if protocol is not None:
            headers["mcp-protocol-version"] = protocol
        answer = sender.post(url, body, headers)
        statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
        _check(answer, body)

    started = time.monotonic()
    throw()
    print(
        f"/mcp fuzz: {sender.sent} bodies in {time.monotonic() - started:.0f} s, "
        f"statuses {statuses}"
    )
    assert sender.sent >= EXAMPLES
    assert statuses.get(200, 0) > EXAMPLES // 10, statuses  # many reached the session
    _assert_still_healthy(demo_engine)
    assert "Backups (restic)" in _mcp_recall(demo_engine, mcp_session)


# ------------------------------------------------- regressions: bugs the fuzzing found


def _post_raw(engine: Any, body: bytes) -> httpx.Response:
    headers = {**engine.headers, "Content-Type": "application/json"}
    with httpx.Client(timeout=30) as client:
        return client.post(f"{engine.url}/recall", content=body, headers=headers)


@pytest.mark.parametrize(
    "body",
    [
        b'{"prompt": "restic \\ud800 backup"}',
        b'{"prompt": "restic \xed\xa0\x80 backup"}',
    ],
    ids=["json-escape", "cesu-bytes"],
)
def test_lone_surrogate_in_prompt_is_mended_not_a_500(demo_engine, body: bytes) -> None:
    answer = _post_raw(demo_engine, body)
    assert answer.status_code == 200, answer.text
    # Both decode to "restic \ufffd backup": the same answer as that prompt sent clean, led by
    # the restic script.
    clean = _post_raw(demo_engine, '{"prompt": "restic \ufffd backup"}'.encode())
    found = [p["note_id"] for p in answer.json()["passages"]]
    assert found == [p["note_id"] for p in clean.json()["passages"]]
    assert found[0] == "3KuZbB1SI2Nr"


def test_lone_surrogate_in_session_id_is_mended_not_a_500(demo_engine) -> None:
    body = b'{"prompt": "restore my restic backup", "session_id": "fuzz-\\udc80"}'
    assert _post_raw(demo_engine, body).status_code == 200


def test_an_overlong_session_id_is_a_400_that_says_why(demo_engine) -> None:
    """Each note sent stores the id: a megabyte's id would grow the index by megabytes."""
    body = {"prompt": "restore my restic backup", "session_id": "s" * 201}
    answer = _post_raw(demo_engine, json.dumps(body).encode())
    assert answer.status_code == 400
    assert answer.json() == {"error": "'session_id' must be at most 200 characters"}
    body["session_id"] = "s" * 200
    assert _post_raw(demo_engine, json.dumps(body).encode()).status_code == 200


def test_deeply_nested_json_is_a_400(demo_engine) -> None:
    assert _post_raw(demo_engine, b"[" * 100_000).status_code == 400
