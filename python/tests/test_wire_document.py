"""The client's encoder and decoder against the worked examples of docs/wire-protocol.md."""

from __future__ import annotations

import json
import re
import struct

import numpy as np
import pytest

from conftest import ROOT
from tensorcache import BadRequest, ProtocolError, Unauthorized, bf16_to_float32, wire

DOC = (ROOT / "docs" / "wire-protocol.md").read_text()


def example(title: str) -> bytes:
    """The first code block after the heading ``title``, as bytes."""
    section = DOC[DOC.index(title):]
    block = section[section.index("```") + 3:]
    block = block[: block.index("```")]
    hexes = re.findall(r"^[0-9a-f]{2}(?: [0-9a-f]{2})*", block, flags=re.M)
    return bytes.fromhex(" ".join(hexes))


class Bytes:
    """A reader of frames from bytes, as :class:`wire.Reader` reads them from a socket."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def fill(self, view: memoryview) -> None:
        assert self.at + len(view) <= len(self.data), "read past the example"
        view[:] = self.data[self.at : self.at + len(view)]
        self.at += len(view)


def test_get_request_is_the_documents():
    assert wire.encode_get("c", np.array([7, 42]), version=1) == example("### GET of indices [7, 42]")


def test_ok_reply_is_read_as_the_document_says():
    reply = example("### OK reply: one field of width 1")
    assert struct.unpack("<i", reply[:4])[0] == len(reply) - 4
    info = wire.CacheInfo("c", 100, 10, (wire.Field("logp", "F32", ()),))
    out = [np.zeros(2, np.float32)]
    reader = Bytes(reply)
    wire.read_values_into(reader, info, 2, out, "doc", version=1)  # type: ignore[arg-type]
    assert out[0].tolist() == [1.5, -2.0]
    assert reader.at == len(reply)


def test_session_open_is_the_documents():
    frame = wire.encode_session(wire.OPEN, "c", "r", 1, world_size=2, seed=5, global_batch=10, version=2)
    assert frame == example("Worked example: OPEN of run")


V3_INFO = wire.CacheInfo("c", 1000, 256, (wire.Field("emb", "BF16", (2,)), wire.Field("tokens", "I32", ())))


def test_version_3_get_request_is_the_documents():
    frame = example("#### Version 3 GET of indices [7, 42]")
    assert wire.encode_get("c", np.array([7, 42])) == frame  # the client's default version
    assert frame[4] == 3 and struct.unpack("<i", frame[:4])[0] == len(frame) - 4


def test_describe_of_a_typed_cache_is_read_as_the_document_says():
    reply = example("#### DESCRIBE reply of a cache with fields `emb`")
    assert struct.unpack("<i", reply[:4])[0] == len(reply) - 4
    c = wire.ok_body(memoryview(reply[4:]), "doc")
    assert wire.decode_info(c) == V3_INFO
    assert c.at == len(reply) - 4
    assert [f.numpy_dtype for f in V3_INFO.fields] == [np.dtype("<u2"), np.dtype("<i4")]


def test_version_3_ok_reply_is_read_as_the_document_says():
    reply = example("#### Version 3 OK reply: BF16 rows")
    assert struct.unpack("<i", reply[:4])[0] == len(reply) - 4
    out = [np.zeros((2, 2), "<u2"), np.zeros(2, "<i4")]
    reader = Bytes(reply)
    wire.read_values_into(reader, V3_INFO, 2, out, "doc")  # type: ignore[arg-type]
    assert reader.at == len(reply)
    assert out[0].tolist() == [[0x3F80, 0xC000], [0x3F00, 0x4040]]
    assert bf16_to_float32(out[0]).tolist() == [[1.0, -2.0], [0.5, 3.0]]
    assert out[1].dtype == np.int32 and out[1].tolist() == [7, 300000]


def test_version_2_get_of_a_typed_cache_is_refused_as_the_document_says():
    reply = example("#### BAD_REQUEST: a version-2 GET")
    assert struct.unpack("<i", reply[:4])[0] == len(reply) - 4
    out = [np.zeros((2, 2), "<u2"), np.zeros(2, "<i4")]
    with pytest.raises(BadRequest) as e:
        wire.read_values_into(Bytes(reply), V3_INFO, 2, out, "doc", version=2)  # type: ignore[arg-type]
    assert str(e.value) == (
        "field 'emb' of cache 'c' is BF16: protocol version 3 is needed for fields other than F32"
    )
    assert wire.encode_get("c", np.array([7, 42]), version=2)[:5] == bytes.fromhex("19 00 00 00 02")


def test_auth_is_the_documents():
    assert wire.encode_auth("s3cret") == example("#### AUTH with the token `s3cret`")
    ok = example("The node's reply to the right token")
    assert struct.unpack("<i", ok[:4])[0] == len(ok) - 4 == 1
    assert wire.ok_body(memoryview(ok[4:]), "doc").at == 1  # OK, and nothing after the status
    refused = example("#### PROTOCOL: a wrong token")
    assert struct.unpack("<i", refused[:4])[0] == len(refused) - 4
    with pytest.raises(Unauthorized) as e:
        wire.ok_body(memoryview(refused[4:]), "doc")
    assert str(e.value) == "doc refused this client: unauthorized: wrong token"


def test_inputs_are_the_documents():
    request = example("#### INPUTS request of cache `c`")
    assert wire.encode_inputs("c") == request
    assert request[4:6] == bytes((4, 7)) and struct.unpack("<i", request[:4])[0] == len(request) - 4
    two = example("#### OK reply to INPUTS: two recorded inputs")
    assert struct.unpack("<i", two[:4])[0] == len(two) - 4
    assert wire.decode_inputs(memoryview(two[4:]), "doc") == {"dataset": "prefs.jsonl", "n": "1000"}
    # the node's bytes: compact, sorted, as json.dumps writes them so
    text = json.dumps({"n": "1000", "dataset": "prefs.jsonl"}, sort_keys=True, separators=(",", ":"))
    assert two[4:] == b"\x00" + struct.pack("<H", len(text)) + text.encode()
    none = example("#### OK reply to INPUTS: no recorded inputs")
    assert wire.decode_inputs(memoryview(none[4:]), "doc") == {}
    old = example("#### PROTOCOL: INPUTS to a node of versions 1 to 3")
    assert struct.unpack("<i", old[:4])[0] == len(old) - 4
    with pytest.raises(ProtocolError) as e:
        wire.decode_inputs(memoryview(old[4:]), "10.0.0.5:7400")
    assert str(e.value) == (
        "node 10.0.0.5:7400 does not serve recorded inputs (protocol version 4); upgrade the node"
    )
