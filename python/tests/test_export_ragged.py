"""load_export on a per-token export: fields as Ragged values, offsets checked against presence."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from tensorcache import ExportError, Ragged, load_export
from tensorcache.export import crc32c


def write(path, ids, offsets, present, fields=None) -> None:
    """A per-token export as RowExport lays it out: fields, __offsets__, __present__."""
    fields = fields or [{"name": "ids", "dtype": "I32", "shape": [2], "per_token": True}]
    tensors = [("ids", "I32", list(ids.shape), ids.astype("<i4").tobytes()),
               ("__offsets__", "I64", [len(offsets)], np.asarray(offsets, "<i8").tobytes()),
               ("__present__", "U8", [len(present)], np.asarray(present, "u1").tobytes())]
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"format": "tensorcache-export/1", "cache_id": "t-0123456789abcdef",
                              "fingerprint": "0" * 64, "n": str(len(present)), "range_size": "2",
                              "fields": json.dumps(fields), "crc32c": "%08x" % crc32c(data)}
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def test_a_per_token_field_reads_as_a_ragged_value_per_example(tmp_path):
    ids = np.arange(10, dtype=np.int32).reshape(5, 2)
    write(tmp_path / "e", ids, [0, 2, 2, 5], [1, 0, 1])
    e = load_export(tmp_path / "e")
    r = e.values["ids"]
    assert isinstance(r, Ragged) and r.lengths().tolist() == [2, 0, 3]
    assert r[2].tolist() == [[4, 5], [6, 7], [8, 9]]
    assert e.present.tolist() == [True, False, True]


def test_offsets_that_give_tokens_to_a_missing_example_are_refused(tmp_path):
    ids = np.zeros((3, 2), dtype=np.int32)
    write(tmp_path / "e", ids, [0, 2, 3, 3], [1, 0, 1])
    with pytest.raises(ExportError, match="example 1 has 1 tokens and presence 0"):
        load_export(tmp_path / "e")
    write(tmp_path / "f", ids, [0, 2, 2, 2], [1, 0, 1])
    with pytest.raises(ExportError, match="run from 0 to 2, expected 0 to 3"):
        load_export(tmp_path / "f")
