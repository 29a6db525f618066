"""The listing decoder (trilium/listing.py) reads what json.loads reads, a value at a time."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trilium_recall.trilium.listing import decode

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_OBJECTS = st.dictionaries(st.text(), _VALUES | st.lists(_VALUES, max_size=6), max_size=5)


@settings(max_examples=300, deadline=None)
@given(_OBJECTS, st.sampled_from([None, 0, 2]), st.sampled_from([(",", ":"), (", ", ": ")]))
def test_an_object_decodes_as_json_loads_decodes_it(document, indent, separators) -> None:
    body = json.dumps(document, indent=indent, separators=separators).encode()
    assert decode(body) == json.loads(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"results": []}',
        b' \n{ "results" : [ {"noteId": "a"} , {"noteId": "b"} ] , "n" : null }\r\n',
        b'{"title": "half \\ud83d emoji"}',  # a lone surrogate escape, as JavaScript writes
        '{"title": "caf\u00e9"}'.encode("utf-16"),  # json.loads detects the encoding too
        b"[1, 2]",
        b'"text"',
    ],
)
def test_documents_decode_as_json_loads_decodes_them(body: bytes) -> None:
    assert decode(body) == json.loads(body)


@pytest.mark.parametrize(
    "body",
    [b'{"a": [1,]}', b'{"a": 1,}', b'{"a" 1}', b'{"a": 1} x', b'{"results": [1, 2', b"", b"{"],
)
def test_what_json_loads_refuses_is_refused(body: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(body)
    with pytest.raises(ValueError):
        decode(body)
