"""scripts/distill_parquet.py: an export's teacher top-K written as Parquet shards reads back, in
trainer order through ``datasets``, as padded batches equal bit for bit to the export's own."""

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("datasets")
pytest.importorskip("torch")

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS.parent / "python"))
sys.path.insert(0, str(SCRIPTS))
import distill_parquet  # noqa: E402
from tensorcache.export import crc32c  # noqa: E402

K = 5
# example 2 is absent (no tokens); example 4 is the longest of its batch
LENGTHS = [3, 1, 0, 7, 12, 2, 5, 1, 9, 4]


def write_export(path, lengths, k, seed=3):
    """A per-token export laid out by hand as RowExport writes one: fields [tokens, ...] in spec
    order, __offsets__ I64 [n + 1], __present__ U8 [n], metadata with the data's CRC32C."""
    rng = np.random.default_rng(seed)
    tokens = sum(lengths)
    ids = np.sort(rng.choice(151936, size=(tokens, k)), axis=1).astype("<i4")
    logps = (-rng.exponential(3.0, size=(tokens, k))).astype("<f4")
    logps[0, 0] = -0.0  # a sign bit only bit-for-bit equality sees
    tail = (-rng.exponential(5.0, size=tokens)).astype("<f4")
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype("<i8")
    present = (np.asarray(lengths) > 0).astype("u1")
    fields = [{"name": "teacher_ids", "dtype": "I32", "shape": [k], "per_token": True},
              {"name": "teacher_logps", "dtype": "F32", "shape": [k], "per_token": True},
              {"name": "teacher_tail_logp", "dtype": "F32", "shape": [], "per_token": True}]
    tensors = [("teacher_ids", "I32", ids), ("teacher_logps", "F32", logps),
               ("teacher_tail_logp", "F32", tail), ("__offsets__", "I64", offsets),
               ("__present__", "U8", present)]
    header, data = {}, b""
    for name, dtype, a in tensors:
        raw = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"format": "tensorcache-export/1", "cache_id": "t-0123456789abcdef",
                              "fingerprint": "0" * 64, "n": str(len(lengths)), "range_size": "4",
                              "fields": json.dumps(fields), "crc32c": "%08x" % crc32c(data)}
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return ids, logps, tail, offsets


def expected_batch(ids, logps, tail, offsets, idx):
    """The padded batch built example by example, independently of the script."""
    t = max(int(offsets[i + 1] - offsets[i]) for i in idx)
    out = {"ids": np.zeros((len(idx), t, K), np.int32),
           "logps": np.zeros((len(idx), t, K), np.float32),
           "tail": np.zeros((len(idx), t), np.float32), "mask": np.zeros((len(idx), t), bool)}
    for b, i in enumerate(idx):
        s, e = offsets[i], offsets[i + 1]
        out["ids"][b, :e - s], out["logps"][b, :e - s] = ids[s:e], logps[s:e]
        out["tail"][b, :e - s], out["mask"][b, :e - s] = tail[s:e], True
    return out


@pytest.fixture()
def shards(tmp_path):
    export = tmp_path / "export.safetensors"
    arrays = write_export(export, LENGTHS, K)
    out = tmp_path / "shards"
    code = distill_parquet.main(["write", "--export", str(export), "--out-dir", str(out),
                                 "--rows-per-shard", "3", "--out", str(tmp_path / "w.json")])
    assert code == 0
    return export, out, arrays


def test_shards_hold_every_row_and_report_bytes_per_token(shards, tmp_path):
    _, out, _ = shards
    written = json.loads((tmp_path / "w.json").read_text())
    assert len(list(out.glob("data_*.parquet"))) == 4 == written["shards"]
    assert written["tokens"] == sum(LENGTHS) and written["rows"] == len(LENGTHS)
    assert written["bytes_per_token"] == pytest.approx(written["bytes"] / sum(LENGTHS))


@pytest.mark.parametrize("fmt", distill_parquet.FORMATS)
def test_batches_read_through_datasets_equal_the_export_bit_for_bit(shards, tmp_path, fmt):
    import datasets

    export, out, arrays = shards
    files = sorted(str(p) for p in out.glob("data_*.parquet"))
    ds = datasets.load_dataset("parquet", data_files=files, split="train",
                               cache_dir=str(tmp_path / "hf"))
    read = distill_parquet.reader_for(fmt, ds, K)
    reference = distill_parquet.export_reader(distill_parquet.load(str(export)))
    for idx in distill_parquet.trainer_order(np.asarray(LENGTHS) > 0, 4, seed=1, steps=4):
        want = expected_batch(*arrays, idx)
        got = read(idx)
        assert distill_parquet.same(got, want), (fmt, idx)
        assert distill_parquet.same(reference(idx), want), idx
        assert 2 not in idx  # the trainer order skips the absent example
    # example 0's first log-prob is -0.0: equal to 0.0 as a float, not bit for bit
    zero = expected_batch(*arrays, np.array([0]))
    flipped = dict(zero, logps=zero["logps"].copy())
    flipped["logps"][0, 0, 0] = 0.0
    assert not distill_parquet.same(read(np.array([0])), flipped)


def test_read_times_every_source_and_checks_them(shards, tmp_path):
    export, out, _ = shards
    code = distill_parquet.main(["read", "--shards", str(out), "--export", str(export),
                                 "--batch-size", "3", "--steps", "4", "--warmup", "1",
                                 "--cache-dir", str(tmp_path / "hf"),
                                 "--out", str(tmp_path / "r.json")])
    assert code == 0
    r = json.loads((tmp_path / "r.json").read_text())
    formats = {f"datasets_{f}" for f in distill_parquet.FORMATS}
    assert set(r["runs"]) == {"export_in_memory"} | formats
    for run in r["runs"].values():
        assert run["batches"] == 4 and run["batches_per_s"] > 0 and run["unequal_steps"] == []
    assert r["best_datasets_format"] in distill_parquet.FORMATS


def test_help_prints_usage_and_writes_nothing(tmp_path):
    for args in ([], ["write"], ["read"]):
        p = subprocess.run([sys.executable, str(SCRIPTS / "distill_parquet.py"), *args, "--help"],
                           capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 0 and "usage:" in p.stdout
    assert list(tmp_path.iterdir()) == []


def test_bad_arguments_say_what_is_wrong(tmp_path, capsys):
    missing = tmp_path / "nope.safetensors"
    assert distill_parquet.main(["write", "--export", str(missing),
                                 "--out-dir", str(tmp_path / "o")]) == 2
    assert f"export '{missing}' does not exist" in capsys.readouterr().err
    assert distill_parquet.main(["write", "--synthetic", "4", "--k", "0", "--export",
                                 str(tmp_path / "e"), "--out-dir", str(tmp_path / "o")]) == 2
    assert "--k 0, expected at least 1" in capsys.readouterr().err
    assert distill_parquet.main(["read", "--shards", str(tmp_path), "--export",
                                 str(missing)]) == 2
    assert "no data_*.parquet in" in capsys.readouterr().err
    (tmp_path / "bad.safetensors").write_bytes(b"\x00" * 4)
    assert distill_parquet.main(["write", "--export", str(tmp_path / "bad.safetensors"),
                                 "--out-dir", str(tmp_path / "o")]) == 2
    assert "expected a safetensors file" in capsys.readouterr().err


def test_a_synthetic_export_has_realistic_shapes(tmp_path):
    import distill_synthetic
    from tensorcache import load_export

    path = tmp_path / "s.safetensors"
    values, offsets, present = distill_synthetic.synthesize(300, 16, 151936, seed=5, missing=0.1)
    distill_synthetic.write_export(path, values, offsets, present)
    e = load_export(path)
    lengths = e.values["teacher_ids"].lengths()[e.present]
    assert 120 < np.median(lengths) < 300 and lengths.max() <= 2048 and lengths.min() >= 1
    ids = e.values["teacher_ids"].values
    assert np.all(np.diff(ids, axis=1) > 0) and ids.min() >= 0 and ids.max() < 151936
    mass = np.exp(e.values["teacher_logps"].values.astype(np.float64)).sum(axis=1)
    tail = np.exp(e.values["teacher_tail_logp"].values.astype(np.float64))
    np.testing.assert_allclose(mass + tail, 1.0, rtol=1e-5)
    assert 240 < e.present.sum() < 295
