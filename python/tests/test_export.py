"""tensorcache.load_export on the file `./tensorcache export` writes from a filled cache."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from conftest import EXAMPLES, JOB, launcher, reference
from tensorcache import ExportError, load_export


def export(filled, out) -> str:
    p = launcher(["export", "--data-dir", str(filled), "--out", str(out)] + JOB,
                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text, _ = p.communicate(timeout=600)
    assert p.returncode == 0, text
    return text


def test_the_export_holds_every_value_of_the_segments(filled, tmp_path):
    out = tmp_path / "cache.safetensors"
    export(filled, out)
    e = load_export(out)
    assert e.n == EXAMPLES and e.present.all() and e.missing_ranges() == ()
    ref = reference(filled, e.cache_id)
    assert sorted(e.values) == sorted(ref)
    for name, values in ref.items():
        assert np.array_equal(e.values[name].view(np.uint32), values.view(np.uint32)), name
    assert e.inputs["cache_id"] == e.cache_id and e.inputs["n"] == str(EXAMPLES)
    assert e.inputs["runner_kind"] == "builtin"


def test_a_damaged_or_truncated_export_is_refused(filled, tmp_path):
    out = tmp_path / "cache.safetensors"
    export(filled, out)
    raw = bytearray(out.read_bytes())
    raw[-100] ^= 0x01
    bad = tmp_path / "flipped.safetensors"
    bad.write_bytes(bytes(raw))
    with pytest.raises(ExportError, match="damaged: CRC32C"):
        load_export(bad)
    short = tmp_path / "short.safetensors"
    short.write_bytes(out.read_bytes()[:-7])
    with pytest.raises(ExportError, match="truncated"):
        load_export(short)
    tiny = tmp_path / "tiny.safetensors"
    tiny.write_bytes(b"abc")
    with pytest.raises(ExportError, match="expected a safetensors file"):
        load_export(tiny)
    with pytest.raises(ExportError, match="cannot read export"):
        load_export(tmp_path / "missing.safetensors")
