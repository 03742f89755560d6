"""A distillation teacher's top-K kept as DistillKit-style Parquet shards, read back in trainer
order through Hugging Face ``datasets``, next to the same batches from a TensorCache export.

``write`` turns a per-token TensorCache export (``teacher_ids`` I32 [tokens, K], ``teacher_logps``
F32 [tokens, K], ``teacher_tail_logp`` F32 [tokens]), or a seeded synthetic one
(:mod:`distill_synthetic`), into Parquet shards and reports bytes per token on disk. ``read``
times padded ``[B, T, K]`` batches in a seeded trainer order from the shards (through
``load_dataset("parquet", ...)``, in each of the formats asked) and from the export held in
memory (``load_export`` + ``tensorcache.pytorch.pad_ragged``), checks every timed batch is equal
bit for bit on both sides, prints a table and writes JSON.

``load_dataset`` turns the shards into its own Arrow cache once (``datasets_prepare_s``, its size
``datasets_cache_bytes``) and batches are read from that memory-mapped copy, so both sides read
from memory once the page cache is warm, as it is after ``write``. Of the formats tried (one
process, no DataLoader workers), ``arrow`` (flattening the nested lists in pyarrow) was by far
the fastest; ``numpy``, ``torch`` and ``python`` (Python lists made tensors per example, as
DistillKit's collate does) convert every value per row and are tens of times slower.

What is mirrored from DistillKit (arcee-ai/DistillKit, ``distillkit/sample_common.py`` and
``distillkit/compression/compressor.py``): one Parquet row per example; per-token values as
nested list columns (``list<list<...>>``, one inner list of K per token); shards of a fixed
number of rows named ``data_<i>.parquet``; read back with ``datasets``. DistillKit's raw top-K row
has ``token_ids`` and ``top_values`` columns (what its decompressor accepts as uncompressed), and
those are the names used here. What differs: DistillKit's captures are usually its lossy
compressed form (``compressed_logprobs`` and ``bytepacked_indices``, polynomial-fitted log-probs
plus bit-packed ids: about 114 bytes per token at K=50 and 300 at K=128), which cannot give back
exact float32 values, so the exact raw form is written instead; ``input_ids`` are not stored (the
export holds the teacher's outputs only), an ``example`` index and the ``tail_logp`` list are
added; ids keep the export's ascending order (DistillKit sorts by log-prob); the codec is
pyarrow's zstd by default (DistillKit's writer uses pyarrow's default, snappy: ``--compression
snappy``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))

FORMATS = ("arrow", "numpy", "torch", "python")
COMPRESSIONS = ("zstd", "snappy", "gzip", "none")
Batch = Dict[str, np.ndarray]


class DistillParquetError(Exception):
    """A bad argument or input, or a check that failed; the message says which. Exit code 2."""


def load(path: str) -> Any:
    """The export at ``path``, checked to hold the three teacher fields per token."""
    from tensorcache import Ragged, load_export

    if not Path(path).is_file():
        raise DistillParquetError(f"export '{path}' does not exist, expected a file of "
                                  "'./tensorcache export' or 'write --synthetic --export'")
    from distill_synthetic import FIELDS
    from tensorcache.export import ExportError

    try:
        e = load_export(path)
    except ExportError as err:
        raise DistillParquetError(str(err)) from err

    if sorted(e.values) != sorted(FIELDS) or not all(isinstance(e.values[f], Ragged)
                                                    for f in FIELDS):
        raise DistillParquetError(f"export '{path}' has fields {sorted(e.values)}, expected the "
                                  f"per-token fields {list(FIELDS)}")
    return e


def write_shards(e: Any, out_dir: Path, rows_per_shard: int, compression: str) -> Dict:
    """Writes the export's rows as Parquet shards in ``out_dir``; returns sizes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids, logps, tail = (e.values[f] for f in ("teacher_ids", "teacher_logps",
                                               "teacher_tail_logp"))
    k = ids.values.shape[1]
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("data_*.parquet"):
        old.unlink()
    offsets = ids.offsets
    files: List[str] = []
    for shard, start in enumerate(range(0, e.n, rows_per_shard)):
        stop = min(e.n, start + rows_per_shard)
        t0, t1 = int(offsets[start]), int(offsets[stop])
        if (t1 - t0) * k >= 2 ** 31:
            raise DistillParquetError(f"shard {shard} holds {(t1 - t0) * k} values, over Parquet's "
                                      "2^31 per list column: pass a smaller --rows-per-shard")
        outer = pa.array(offsets[start:stop + 1] - t0, pa.int32())
        inner = pa.array(np.arange(t1 - t0 + 1, dtype=np.int64) * k, pa.int32())

        def nested(values: np.ndarray) -> Any:
            return pa.ListArray.from_arrays(outer, pa.ListArray.from_arrays(
                inner, pa.array(values[t0:t1].reshape(-1))))

        table = pa.table({
            "example": pa.array(np.arange(start, stop, dtype=np.int64)),
            "token_ids": nested(ids.values), "top_values": nested(logps.values),
            "tail_logp": pa.ListArray.from_arrays(outer, pa.array(tail.values[t0:t1]))})
        path = out_dir / f"data_{shard}.parquet"
        pq.write_table(table, path, compression=None if compression == "none" else compression)
        files.append(str(path))
    tokens = int(offsets[-1])
    size = sum(os.path.getsize(f) for f in files)
    return {"shards": len(files), "rows": e.n, "tokens": tokens, "k": k, "bytes": size,
            "bytes_per_token": size / max(tokens, 1), "compression": compression,
            "raw_bytes_per_token": k * 8 + 4}


def trainer_order(present: np.ndarray, batch: int, seed: int, steps: int) -> List[np.ndarray]:
    """The first ``steps`` batches of ``batch`` present examples in a seeded shuffled order."""
    order = np.random.default_rng(seed).permutation(np.flatnonzero(present))
    if len(order) < batch:
        raise DistillParquetError(f"batch size {batch} over the {len(order)} present examples")
    whole = len(order) // batch
    return [order[(s % whole) * batch:(s % whole + 1) * batch] for s in range(steps)]


def pad(values: np.ndarray, lengths: np.ndarray) -> Batch:
    """Concatenated per-token values of a batch as ``[B, T, ...]`` (0 after each example's tokens)
    and a ``[B, T]`` mask."""
    t = int(lengths.max()) if len(lengths) else 0
    mask = np.arange(t)[None, :] < lengths[:, None]
    out = np.zeros((len(lengths), t) + values.shape[1:], values.dtype)
    out[mask] = values
    return {"values": out, "mask": mask}


def batch_of(ids: np.ndarray, logps: np.ndarray, tail: np.ndarray, lengths: np.ndarray) -> Batch:
    a, b, c = pad(ids, lengths), pad(logps, lengths), pad(tail, lengths)
    return {"ids": a["values"], "logps": b["values"], "tail": c["values"], "mask": a["mask"]}


def reader_for(fmt: str, ds: Any, k: int) -> Callable[[np.ndarray], Batch]:
    """A function from example indices to a padded batch, reading ``ds`` in format ``fmt``
    (``python``: the default Python lists, made tensors per example as DistillKit's collate
    does)."""
    view = ds if fmt == "python" else ds.with_format(fmt)
    if fmt == "arrow":
        def read(idx: np.ndarray) -> Batch:
            t = view[idx.tolist()]
            col = {c: t.column(c).combine_chunks()
                   for c in ("token_ids", "top_values", "tail_logp")}
            lengths = col["tail_logp"].value_lengths().to_numpy().astype(np.int64)
            flat = {c: col[c].flatten().flatten().to_numpy() for c in ("token_ids", "top_values")}
            return batch_of(flat["token_ids"].reshape(-1, k), flat["top_values"].reshape(-1, k),
                            col["tail_logp"].flatten().to_numpy(), lengths)
        return read
    if fmt == "numpy":
        def read(idx: np.ndarray) -> Batch:
            rows = view[idx.tolist()]
            parts = [[np.asarray(x, dt).reshape((-1,) + shape) for x in rows[c]]
                     for c, dt, shape in (("token_ids", np.int32, (k,)),
                                          ("top_values", np.float32, (k,)),
                                          ("tail_logp", np.float32, ()))]
            lengths = np.array([len(x) for x in parts[2]], np.int64)
            return batch_of(*(np.concatenate(p) for p in parts), lengths)
        return read
    import torch
    from torch.nn.utils.rnn import pad_sequence

    def read(idx: np.ndarray) -> Batch:
        rows = view[idx.tolist()]
        tail = [torch.as_tensor(x, dtype=torch.float32) for x in rows["tail_logp"]]
        lengths = torch.tensor([len(x) for x in tail])
        mask = torch.arange(int(lengths.max()))[None, :] < lengths[:, None]
        ids = [torch.as_tensor(x, dtype=torch.int32).reshape(-1, k) for x in rows["token_ids"]]
        lp = [torch.as_tensor(x, dtype=torch.float32).reshape(-1, k) for x in rows["top_values"]]
        return {"ids": pad_sequence(ids, batch_first=True).numpy(),
                "logps": pad_sequence(lp, batch_first=True).numpy(),
                "tail": pad_sequence(tail, batch_first=True).numpy(), "mask": mask.numpy()}
    return read


def export_reader(e: Any) -> Callable[[np.ndarray], Batch]:
    """Batches from the export in memory: the examples' tokens gathered, then ``pad_ragged``."""
    from tensorcache import Ragged
    from tensorcache.pytorch import pad_ragged

    fields = [e.values[f] for f in ("teacher_ids", "teacher_logps", "teacher_tail_logp")]
    offsets, all_lengths = fields[0].offsets, fields[0].lengths()

    def read(idx: np.ndarray) -> Batch:
        lengths = all_lengths[idx]
        ends = np.cumsum(lengths)
        rows = np.repeat(offsets[idx] - (ends - lengths), lengths) + np.arange(int(ends[-1]))
        sub = np.concatenate(([0], ends))
        p = [pad_ragged(Ragged(f.values[rows], sub)) for f in fields]
        return {"ids": p[0]["values"].numpy(), "logps": p[1]["values"].numpy(),
                "tail": p[2]["values"].numpy(), "mask": p[0]["mask"].numpy()}
    return read


def same(a: Batch, b: Batch) -> bool:
    """Bit-for-bit equality of two batches (float32 compared as their bit patterns)."""
    return all(a[n].shape == b[n].shape and a[n].dtype == b[n].dtype
               and np.array_equal(a[n].view(np.uint8), b[n].view(np.uint8)) for n in a)


def timed(read: Callable[[np.ndarray], Batch], batches: List[np.ndarray], warmup: int,
          reference: Optional[Callable[[np.ndarray], Batch]] = None) -> Dict:
    """Reads the batches, times those past the warm-up; compares each timed one with
    ``reference``'s batch of the same indices when given."""
    latencies, tokens, unequal = [], 0, []
    for step, idx in enumerate(batches):
        start = time.perf_counter()
        batch = read(idx)
        elapsed = time.perf_counter() - start
        if step < warmup:
            continue
        latencies.append(elapsed)
        tokens += int(batch["mask"].sum())
        if reference is not None and not same(batch, reference(idx)):
            unequal.append(step)
    total = sum(latencies)
    return {"batches": len(latencies), "batches_per_s": len(latencies) / total,
            "tokens_per_s": tokens / total, "p50_ms": 1e3 * float(np.percentile(latencies, 50)),
            "p99_ms": 1e3 * float(np.percentile(latencies, 99)),
            "checked": reference is not None, "unequal_steps": unequal}


def cmd_write(a: argparse.Namespace) -> Dict:
    if a.rows_per_shard < 1:
        raise DistillParquetError(f"--rows-per-shard {a.rows_per_shard}, expected at least 1")
    if a.synthetic is not None:
        import distill_synthetic

        if a.k < 1:
            raise DistillParquetError(f"--k {a.k}, expected at least 1 (e.g. 16, 64, 128)")
        if a.export is None:
            raise DistillParquetError("--synthetic needs --export PATH to write the export to")
        try:
            values, offsets, present = distill_synthetic.synthesize(
                a.synthetic, a.k, a.vocab, a.seed, a.missing)
        except ValueError as e:
            raise DistillParquetError(str(e)) from e
        distill_synthetic.write_export(Path(a.export), values, offsets, present)
    elif a.export is None:
        raise DistillParquetError("write needs --export PATH (an export to read) or --synthetic N")
    result = write_shards(load(a.export), Path(a.out_dir), a.rows_per_shard, a.compression)
    print(f"{result['shards']} shards, {result['rows']} rows, {result['tokens']} tokens, "
          f"K={result['k']}: {result['bytes']} bytes on disk, "
          f"{result['bytes_per_token']:.1f} bytes/token ({a.compression}; "
          f"{result['raw_bytes_per_token']} raw)")
    return result


def run_all(files: List[str], cache: str, e: Any, k: int, formats: List[str],
            batches: List[np.ndarray], warmup: int) -> Tuple[Dict, float, int]:
    """Loads the shards through ``datasets`` and times the export and each format's batches."""
    import datasets

    datasets.disable_progress_bars()
    start = time.perf_counter()
    ds = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=cache)
    prepare_s = time.perf_counter() - start
    arrow_bytes = sum(f.stat().st_size for f in Path(cache).rglob("*.arrow"))
    if len(ds) != e.n or ds[e.n - 1]["example"] != e.n - 1:
        raise DistillParquetError(f"the shards hold {len(ds)} rows, expected the export's {e.n} "
                                  "in example order")
    reference = export_reader(e)
    runs = {"export_in_memory": timed(reference, batches, warmup)}
    for fmt in formats:
        runs[f"datasets_{fmt}"] = timed(reader_for(fmt, ds, k), batches, warmup, reference)
    return runs, prepare_s, arrow_bytes


def cmd_read(a: argparse.Namespace) -> Dict:
    if a.batch_size < 1 or a.steps < 1 or a.warmup < 0:
        raise DistillParquetError(f"--batch-size {a.batch_size}, --steps {a.steps}, --warmup "
                                  f"{a.warmup}: expected at least 1, 1 and 0")
    formats = a.formats.split(",")
    if any(f not in FORMATS for f in formats):
        raise DistillParquetError(f"--formats {a.formats}, expected some of {','.join(FORMATS)}")
    files = sorted(str(p) for p in Path(a.shards).glob("data_*.parquet"))
    if not files:
        raise DistillParquetError(f"no data_*.parquet in '{a.shards}', expected the shards of "
                                  "'write'")
    start = time.perf_counter()
    e = load(a.export)
    load_s = time.perf_counter() - start
    k = e.values["teacher_ids"].values.shape[1]
    batches = trainer_order(e.present, a.batch_size, a.seed, a.warmup + a.steps)
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    cache = a.cache_dir or tempfile.mkdtemp(prefix="distill-parquet-hf-")
    try:
        runs, prepare_s, arrow_bytes = run_all(files, cache, e, k, formats, batches, a.warmup)
    finally:
        if a.cache_dir is None:  # a temporary cache goes; one asked for is kept for reuse
            shutil.rmtree(cache, ignore_errors=True)
    result = {"rows": e.n, "k": k, "batch_size": a.batch_size, "seed": a.seed,
              "warmup": a.warmup, "steps": a.steps, "export_load_s": load_s,
              "datasets_prepare_s": prepare_s, "parquet_bytes": sum(map(os.path.getsize, files)),
              "datasets_cache_bytes": arrow_bytes, "runs": runs}
    best = max(formats, key=lambda f: runs[f"datasets_{f}"]["batches_per_s"])
    result["best_datasets_format"] = best
    print(f"{'source':<18} {'batches/s':>10} {'tokens/s':>12} {'p50 ms':>8} {'p99 ms':>8}  equal")
    for name, r in runs.items():
        eq = "-" if not r["checked"] else ("yes" if not r["unequal_steps"] else "NO")
        print(f"{name:<18} {r['batches_per_s']:>10.1f} {r['tokens_per_s']:>12.0f} "
              f"{r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f}  {eq}")
    print(f"export load {load_s:.2f}s, datasets prepare {prepare_s:.2f}s, best format {best}")
    bad = {n: r["unequal_steps"] for n, r in runs.items() if r["unequal_steps"]}
    if bad:
        raise DistillParquetError(f"Parquet batches differ from the export's at steps {bad}")
    return result


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="write Parquet shards from an export (or a synthetic one)")
    w.add_argument("--export", help="a per-token TensorCache export (written first if --synthetic)")
    w.add_argument("--synthetic", type=int, metavar="N", help="synthesize N examples first")
    w.add_argument("--k", type=int, default=64, help="synthetic top-K (default 64)")
    w.add_argument("--vocab", type=int, default=151936, help="synthetic vocabulary (151936)")
    w.add_argument("--missing", type=float, default=0.0, help="synthetic fraction absent (0)")
    w.add_argument("--seed", type=int, default=0)
    w.add_argument("--out-dir", required=True,
                   help="directory of the data_<i>.parquet shards (old ones there are replaced)")
    w.add_argument("--rows-per-shard", type=int, default=500)
    w.add_argument("--compression", choices=COMPRESSIONS, default="zstd")
    r = sub.add_parser("read", help="time trainer-order batches from the shards and the export")
    r.add_argument("--shards", required=True, help="directory of the data_<i>.parquet shards")
    r.add_argument("--export", required=True, help="the export the shards were written from")
    r.add_argument("--batch-size", type=int, default=8)
    r.add_argument("--steps", type=int, default=50, help="timed batches (default 50)")
    r.add_argument("--warmup", type=int, default=5, help="untimed batches first (default 5)")
    r.add_argument("--seed", type=int, default=0, help="seed of the trainer order")
    r.add_argument("--formats", default=",".join(FORMATS), help="datasets formats to time")
    r.add_argument("--cache-dir", help="datasets cache (default: a new temporary directory)")
    for s in (w, r):
        s.add_argument("--out", help="write the results as JSON here")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    a = parser().parse_args(argv)
    try:
        result = cmd_write(a) if a.command == "write" else cmd_read(a)
    except DistillParquetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
