"""The client's encoder and decoder against the worked examples of docs/wire-protocol.md."""

from __future__ import annotations

import re
import struct

import numpy as np

from conftest import ROOT
from tensorcache import wire

DOC = (ROOT / "docs" / "wire-protocol.md").read_text()


def example(title: str) -> bytes:
    """The first code block after the heading ``title``, as bytes."""
    section = DOC[DOC.index(title):]
    block = section[section.index("```") + 3:]
    block = block[: block.index("```")]
    hexes = re.findall(r"^[0-9a-f]{2}(?: [0-9a-f]{2})*", block, flags=re.M)
    return bytes.fromhex(" ".join(hexes))


def test_get_request_is_the_documents():
    assert wire.encode_get("c", np.array([7, 42])) == example("### GET of indices [7, 42]")


def test_ok_reply_is_read_as_the_document_says():
    reply = example("### OK reply: one field of width 1")
    assert struct.unpack("<i", reply[:4])[0] == len(reply) - 4
    info = wire.CacheInfo("c", 100, 10, (wire.Field("logp", "F32", ()),))

    class Bytes:
        def __init__(self, data: bytes) -> None:
            self.data, self.at = data, 0

        def fill(self, view: memoryview) -> None:
            view[:] = self.data[self.at : self.at + len(view)]
            self.at += len(view)

    out = [np.zeros(2, np.float32)]
    wire.read_values_into(Bytes(reply), info, 2, out, "doc")  # type: ignore[arg-type]
    assert out[0].tolist() == [1.5, -2.0]


def test_session_open_is_the_documents():
    frame = wire.encode_session(wire.OPEN, "c", "r", 1, world_size=2, seed=5, global_batch=10)
    assert frame == example("Worked example: OPEN of run")
