"""A seeded synthetic distillation teacher's per-token top-K, written as a TensorCache export.

For benchmarks that have no real export: completion lengths drawn log-normal (median 200, a long
tail cut at 2048), and for every token K distinct vocabulary ids (ascending, as an export keeps
them; skewed towards low ids, as frequent BPE tokens are) whose log-probs follow a Zipf law over
ranks with a per-token exponent (peaked and flat tokens both occur) and a little noise; the tail
log-prob is the log of the mass left outside the top K. The export is laid out as RowExport
writes a per-token cache: the fields ``[total tokens, ...shape]`` in spec order, ``__offsets__``
``I64 [n + 1]``, ``__present__`` ``U8 [n]``, and the metadata ``tensorcache.load_export`` checks.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from tensorcache.export import FORMAT, crc32c  # noqa: E402

MEDIAN_LENGTH, LENGTH_SIGMA, MAX_LENGTH = 200, 0.9, 2048
# Zipf exponents per token: about 0.8 (a flat, uncertain teacher) to 2.0 (a confident one)
ZIPF_LEVELS = np.linspace(0.8, 2.0, 25)
ID_SKEW = 3.0  # ids drawn as V * u**ID_SKEW: most of a top-K among the low (frequent) ids
LOGIT_NOISE = 0.1
CHUNK = 1 << 16  # tokens generated at a time, to bound memory

FIELDS = ("teacher_ids", "teacher_logps", "teacher_tail_logp")
_BYTES = {"I32": "<i4", "F32": "<f4", "I64": "<i8", "U8": "u1"}


def completion_lengths(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` completion lengths, log-normal with median 200, clipped to [1, 2048]."""
    raw = rng.lognormal(np.log(MEDIAN_LENGTH), LENGTH_SIGMA, size=n)
    return np.clip(np.rint(raw), 1, MAX_LENGTH).astype(np.int64)


def _zipf_normalizers(vocab: int) -> np.ndarray:
    """The sum over the whole vocabulary of ``rank ** -s`` for each exponent level."""
    ranks = np.arange(1, vocab + 1, dtype=np.float64)
    return np.array([np.sum(ranks ** -s) for s in ZIPF_LEVELS])


def teacher_topk(rng: np.random.Generator, tokens: int, k: int, vocab: int,
                 normalizers: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``tokens`` tokens' top-K: ids ``int32 [tokens, k]`` distinct and ascending per token,
    log-probs ``float32 [tokens, k]`` and the tail log-prob ``float32 [tokens]``."""
    # strictly increasing ids below vocab: sort skewed draws, then lift each above the one before
    draws = np.sort(np.floor((vocab - k) * rng.random((tokens, k)) ** ID_SKEW), axis=1)
    steps = np.arange(k)
    ids = (np.maximum.accumulate(draws - steps, axis=1) + steps).astype(np.int32)
    level = rng.integers(0, len(ZIPF_LEVELS), size=tokens)
    s = ZIPF_LEVELS[level][:, None]
    logp = -s * np.log(np.arange(1, k + 1))[None, :] - np.log(normalizers[level])[:, None]
    logp = logp + rng.normal(0.0, LOGIT_NOISE, size=(tokens, k))
    total = np.exp(logp).sum(axis=1)
    over = total > 1.0 - 1e-4  # noise may push the top K's mass to 1: scale it back under
    logp[over] += (np.log(1.0 - 1e-4) - np.log(total[over]))[:, None]
    tail = np.log1p(-np.exp(logp).sum(axis=1))
    logp = rng.permuted(logp, axis=1)  # an id's rank is not its place in ascending id order
    return ids, logp.astype(np.float32), tail.astype(np.float32)


def synthesize(n: int, k: int, vocab: int, seed: int, missing: float = 0.0
               ) -> Tuple[Dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """``n`` examples' fields (``[total tokens, ...]``), their offsets and presence flags; a
    fraction ``missing`` of examples are absent (no tokens)."""
    if n < 1 or k < 1 or vocab <= k:
        raise ValueError(f"n={n}, k={k}, vocab={vocab}: expected n >= 1, k >= 1, vocab > k")
    if not 0.0 <= missing < 1.0:
        raise ValueError(f"missing fraction {missing}, expected 0 <= missing < 1")
    rng = np.random.default_rng(seed)
    lengths = completion_lengths(rng, n)
    present = rng.random(n) >= missing
    lengths[~present] = 0
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    total = int(offsets[-1])
    ids = np.empty((total, k), np.int32)
    logps = np.empty((total, k), np.float32)
    tail = np.empty(total, np.float32)
    normalizers = _zipf_normalizers(vocab)
    for start in range(0, total, CHUNK):
        stop = min(total, start + CHUNK)
        ids[start:stop], logps[start:stop], tail[start:stop] = teacher_topk(
            rng, stop - start, k, vocab, normalizers)
    return {"teacher_ids": ids, "teacher_logps": logps, "teacher_tail_logp": tail}, offsets, present


def write_export(path: Path, values: Dict[str, np.ndarray], offsets: np.ndarray,
                 present: np.ndarray, range_size: int = 1024) -> None:
    """Writes per-token fields (``teacher_ids`` I32, the others F32; one token's shape is each
    array's shape past its first axis) as a TensorCache export at ``path``."""
    specs: List[dict] = []
    tensors: List[Tuple[str, str, np.ndarray]] = []
    for name, a in values.items():
        dtype = "I32" if a.dtype == np.int32 else "F32"
        specs.append({"name": name, "dtype": dtype, "shape": list(a.shape[1:]), "per_token": True})
        tensors.append((name, dtype, a))
    tensors.append(("__offsets__", "I64", np.asarray(offsets)))
    tensors.append(("__present__", "U8", np.asarray(present)))
    header: Dict[str, dict] = {}
    parts: List[bytes] = []
    end = 0
    for name, dtype, a in tensors:
        raw = np.ascontiguousarray(a, dtype=_BYTES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [end, end + len(raw)]}
        parts.append(raw)
        end += len(raw)
    data = b"".join(parts)
    spec_text = json.dumps(specs)
    fingerprint = hashlib.sha256(spec_text.encode() + str(len(present)).encode()).hexdigest()
    header["__metadata__"] = {
        "format": FORMAT, "cache_id": "t-" + fingerprint[:16], "fingerprint": fingerprint,
        "n": str(len(present)), "range_size": str(range_size), "fields": spec_text,
        "crc32c": "%08x" % crc32c(data)}
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.write(data)
