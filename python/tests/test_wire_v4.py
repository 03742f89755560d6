"""Version 4 of the lookup protocol: INPUTS, a cache's recorded inputs. Against a small fake node
whose replies are built here with ``struct`` and ``json`` (well-formed ones, malformed ones, and a
node of versions 1 to 3), and against real nodes."""

from __future__ import annotations

import json
import socket
import struct
import threading
from typing import List, Optional, Tuple

import pytest

from tensorcache import BadRequest, ProtocolError, TensorCacheClient, wire

RECORDED = {"dataset": "prefs \"v2\".jsonl", "model_dir": "/models/Größe\\tiny\n", "n": "3000",
            "tokenizer_sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}
OLD_NODE = "protocol version 4, expected 1, 2 or 3"  # what a node of versions 1 to 3 answers


def frame(body: bytes) -> bytes:
    return struct.pack("<i", len(body)) + body


def string(b: bytes) -> bytes:
    return struct.pack("<H", len(b)) + b


class FakeNode:
    """A lookup port in a thread that answers DESCRIBE of one scalar F32 field and INPUTS with
    ``self.json`` (bytes), or, with ``self.old``, every version-4 request as a node of versions 1
    to 3 does: PROTOCOL, then the connection closed."""

    def __init__(self) -> None:
        self.json = json.dumps(RECORDED, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        self.old = False
        self.requests: List[Tuple[int, int, str]] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _exactly(conn: socket.socket, n: int) -> Optional[bytes]:
        data = b""
        while len(data) < n:
            got = conn.recv(n - len(data))
            if not got:
                return None
            data += got
        return data

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while True:
                head = self._exactly(conn, 4)
                body = self._exactly(conn, struct.unpack("<i", head)[0]) if head else None
                if body is None:
                    return
                version, op, n = struct.unpack("<BBH", body[:4])
                cache = body[4:4 + n].decode()
                self.requests.append((version, op, cache))
                if version == 4 and self.old:
                    conn.sendall(frame(b"\x03" + string(OLD_NODE.encode())))
                    return
                if cache != "c":
                    message = f"unknown cache '{cache}', expected one of [c]".encode()
                    conn.sendall(frame(b"\x01" + string(message)))
                elif op == wire.DESCRIBE:
                    conn.sendall(frame(b"\x00" + string(b"c") + struct.pack("<qiH", 100, 10, 1)
                                       + string(b"logp") + string(b"F32") + b"\x00"))
                else:  # INPUTS
                    conn.sendall(frame(b"\x00" + string(self.json)))

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def fake():
    node = FakeNode()
    yield node
    node.close()


def test_inputs_are_asked_in_version_4_and_read_as_json(fake):
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        inputs = client.inputs("c")
        assert client.describe("c").n == 100
        fake.json = b' {\n "n" : "1",  "a":"\\u00e9\\t"}'  # any valid JSON of strings
        assert client.inputs("c") == {"a": "é\t", "n": "1"}
        assert client.transport.idle == 1, "one connection, in step throughout"
    assert inputs == RECORDED and list(inputs) == sorted(RECORDED)
    assert fake.requests == [(4, wire.INPUTS, "c"), (1, wire.DESCRIBE, "c"), (4, wire.INPUTS, "c")]


def test_a_cache_with_no_recorded_inputs_gives_an_empty_dict(fake):
    fake.json = b"{}"
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        assert client.inputs("c") == {}


def test_an_unknown_cache_is_a_bad_request_and_the_connection_stays(fake):
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        with pytest.raises(BadRequest, match=r"^unknown cache 'nope', expected one of \[c\]$"):
            client.inputs("nope")
        assert client.inputs("c") == RECORDED
        assert client.transport.idle == 1


@pytest.mark.parametrize("reply, message", [
    (b"[]", "reply to INPUTS of no JSON object: b'\\[\\]'"),
    (b'{"n":3000}', "recorded input 'n' is 3000 in the reply to INPUTS, expected a string"),
    (b'{"a":null}', "recorded input 'a' is null in the reply to INPUTS, expected a string"),
    (b'{"a":["b"]}', r"recorded input 'a' is \[\"b\"\] in the reply to INPUTS, expected a string"),
    (b'{"a":"1","a":"2"}', "recorded input 'a' twice in the reply to INPUTS"),
    (b'{"a":', "reply to INPUTS of no valid JSON: "),
    (b'{} {}', "reply to INPUTS of no valid JSON: Extra data"),
    (b'{"a":"\xff"}', "reply to INPUTS of no valid JSON: "),
    (b"\xef\xbb\xbf{}", "reply to INPUTS of no valid JSON: "),
])
def test_anything_but_a_json_object_of_strings_is_a_protocol_error(fake, reply, message):
    fake.json = reply
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        with pytest.raises(ProtocolError, match=message):
            client.inputs("c")
        assert client.transport.idle == 0, "the connection out of step is closed, not pooled"


def test_bytes_after_the_json_are_a_protocol_error():
    body = b"\x00" + string(b"{}") + b"\x00"
    with pytest.raises(ProtocolError, match="1 bytes after the reply to INPUTS"):
        wire.decode_inputs(memoryview(body), "peer")


def test_a_node_of_versions_1_to_3_is_named_as_one_to_upgrade(fake):
    fake.old = True
    with TensorCacheClient(fake.endpoint, timeout=10) as client:
        with pytest.raises(ProtocolError) as e:
            client.inputs("c")
        assert str(e.value) == (
            f"node {fake.endpoint} does not serve recorded inputs (protocol version 4); upgrade the node"
        )
        assert client.transport.idle == 0, "the node closed the connection"
        assert client.describe("c").fields[0].name == "logp", "other requests are still served"
    assert [v for v, _, _ in fake.requests] == [4, 1]


def test_other_requests_keep_their_versions():
    assert wire.encode_inputs("c")[4:6] == bytes((4, wire.INPUTS))
    assert wire.encode_describe("c")[4:6] == bytes((1, wire.DESCRIBE))
    assert wire.encode_auth("t")[4:6] == bytes((3, wire.AUTH))


# ---- against real nodes (conftest.py): their inputs are whatever the fill recorded


def test_a_node_serves_the_caches_recorded_inputs(nodes):
    cache = nodes[0].cache
    with TensorCacheClient([n.endpoint for n in nodes], timeout=60) as client:
        inputs = client.inputs(cache)
        assert isinstance(inputs, dict)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in inputs.items()), inputs
        assert list(inputs) == sorted(inputs)
        if "cache_id" in inputs:
            assert inputs["cache_id"] == cache
        if "n" in inputs:
            assert inputs["n"] == str(client.describe(cache).n)
        assert client.inputs(cache) == inputs, "asked again, the same"


def test_a_node_refuses_inputs_of_an_unknown_cache_as_describe_does(nodes):
    with TensorCacheClient(nodes[1].endpoint, timeout=60) as client:
        with pytest.raises(BadRequest) as described:
            client.describe("no-such-cache")
        with pytest.raises(BadRequest) as asked:
            client.inputs("no-such-cache")
        assert str(asked.value) == str(described.value)
        assert str(asked.value).startswith("unknown cache 'no-such-cache', expected one of ")
        assert isinstance(client.inputs(nodes[0].cache), dict), "the connection stays usable"
        assert client.transport.idle == 1


def test_a_node_refuses_inputs_in_version_3(nodes):
    host, port = nodes[2].endpoint.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as s:
        request = bytearray(wire.encode_inputs(nodes[2].cache))
        request[4] = 3
        s.sendall(bytes(request))
        with pytest.raises(ProtocolError, match=r"op 7 in protocol version 3, expected 1 or 2 or a session"
                                                r" op 3\.\.5 or AUTH 6$"):
            wire.ok_body(wire.Reader(s).frame(), "node")
