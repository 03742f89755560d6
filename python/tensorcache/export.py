"""Reads a cache export: the one safetensors file ``./tensorcache export`` (and ``demo``) writes.

The file holds one tensor per field, shaped ``[n, *shape]``, then ``__present__`` (``U8``, 1 for
an example the cache holds); a per-token cache's fields are ``[total tokens, *shape]`` instead,
followed by ``__offsets__`` (``I64 [n + 1]``), and read as :class:`Ragged` values; its metadata names the cache (``cache_id``, ``fingerprint``), its
layout (``n``, ``range_size``, ``fields``), the CRC32C of the data (``crc32c``) and, since exports
record them, the inputs the cache was filled from (``inputs``, see :mod:`tensorcache.trl`).
Reading needs numpy only; every check the Java side makes on the layout is made here too, and the
checksum over the data is verified before any value is handed out.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Tuple, Union

import numpy as np

from .crc32c import crc32c
from .errors import TensorCacheError
from .ragged import Ragged

FORMAT = "tensorcache-export/1"
PRESENT = "__present__"
OFFSETS = "__offsets__"
_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "I32": "<i4", "I64": "<i8", "U8": "u1"}


class ExportError(TensorCacheError, ValueError):
    """A file that is not a whole, intact TensorCache export; the message says what is wrong."""


@dataclass(frozen=True)
class Export:
    """A cache export in memory: ``values[name]`` per field (``[n, *shape]``, the field's numpy
    dtype, BF16 as ``uint16`` patterns; for a per-token field a :class:`Ragged` of ``[tokens,
    *shape]`` values and ``[n + 1]`` offsets), ``present`` (bool ``[n]``) and the recorded
    ``inputs``."""

    path: Path
    cache_id: str
    fingerprint: str
    n: int
    range_size: int
    values: Dict[str, Union[np.ndarray, Ragged]]
    present: np.ndarray
    inputs: Dict[str, str] = field(default_factory=dict)

    def missing_ranges(self) -> Tuple[Tuple[int, int], ...]:
        """The ``[start, end)`` example spans the export holds no value for, merged."""
        spans = []
        missing = np.flatnonzero(~self.present)
        if missing.size:
            breaks = np.flatnonzero(np.diff(missing) != 1)
            starts = np.concatenate(([missing[0]], missing[breaks + 1]))
            ends = np.concatenate((missing[breaks], [missing[-1]])) + 1
            spans = list(zip(starts.tolist(), ends.tolist()))
        return tuple(spans)


def load_export(path: Union[str, "os.PathLike[str]"]) -> Export:
    """Reads and verifies the export at ``path``; raises :class:`ExportError` naming what is wrong
    (not an export, truncated, a tensor of the wrong shape, a bad checksum)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise ExportError(f"cannot read export '{p}': {e.strerror or e}") from e
    if len(raw) < 8:
        raise ExportError(f"'{p}' has {len(raw)} bytes, expected a safetensors file")
    (header_length,) = struct.unpack("<Q", raw[:8])
    if header_length > len(raw) - 8:
        raise ExportError(f"'{p}' is truncated: header of {header_length} bytes, file of {len(raw)}")
    try:
        header = json.loads(raw[8:8 + header_length].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ExportError(f"'{p}' has no readable safetensors header: {e}") from e
    meta = header.pop("__metadata__", None) or {}
    if meta.get("format") != FORMAT:
        raise ExportError(f"'{p}' has format {meta.get('format')!r}, expected {FORMAT!r} (a file of "
                          "./tensorcache export)")
    n, range_size = int(meta["n"]), int(meta["range_size"])
    data = memoryview(raw)[8 + header_length:]
    fields = json.loads(meta["fields"])
    per_token = [f["name"] for f in fields if f.get("per_token")]
    if per_token and len(per_token) != len(fields):
        raise ExportError(f"'{p}' mixes per-token fields {per_token} with fixed-shape ones, "
                          "expected fields of one kind")
    extra = [{"name": OFFSETS, "dtype": "I64", "shape": [], "rows": n + 1}] if per_token else []
    names = [f["name"] for f in fields] + [t["name"] for t in extra] + [PRESENT]
    if sorted(header) != sorted(names):
        raise ExportError(f"'{p}' holds tensors {sorted(header)}, expected {sorted(names)}")
    tokens = _tokens(p, header, per_token)
    end = 0
    arrays: Dict[str, np.ndarray] = {}
    for f in fields + extra + [{"name": PRESENT, "dtype": "U8", "shape": []}]:
        t = header[f["name"]]
        rows = tokens if f.get("per_token") else f.get("rows", n)
        shape = [rows] + list(f["shape"])
        if t["dtype"] != f["dtype"] or t["shape"] != shape or t["dtype"] not in _DTYPES:
            raise ExportError(f"'{p}': tensor {f['name']} is {t['dtype']}{t['shape']}, expected "
                              f"{f['dtype']}{shape}")
        start, stop = t["data_offsets"]
        dtype = np.dtype(_DTYPES[t["dtype"]])
        if start != end or stop - start != dtype.itemsize * int(np.prod(shape)):
            raise ExportError(f"'{p}': tensor {f['name']} at bytes {start}-{stop}, expected it at "
                              f"{end} with {dtype.itemsize * int(np.prod(shape))} bytes")
        end = stop
        if stop > len(data):
            raise ExportError(f"'{p}' is truncated: tensor {f['name']} ends at byte {stop} of "
                              f"{len(data)}")
        arrays[f["name"]] = np.frombuffer(data[start:stop], dtype=dtype).reshape(shape)
    if end != len(data):
        raise ExportError(f"'{p}' has {len(data) - end} bytes after its last tensor")
    crc = "%08x" % crc32c(data)
    if crc != meta.get("crc32c"):
        raise ExportError(f"'{p}' is damaged: CRC32C of its data is {crc}, its header says "
                          f"{meta.get('crc32c')}")
    flags = arrays.pop(PRESENT)
    if flags.size and flags.max() > 1:
        bad = int(np.flatnonzero(flags > 1)[0])
        raise ExportError(f"'{p}': {PRESENT}[{bad}] is {flags[bad]}, expected 0 or 1")
    if per_token:
        offsets = arrays.pop(OFFSETS)
        _check_offsets(p, offsets, flags, tokens)
        arrays = {name: Ragged(a, offsets) for name, a in arrays.items()}
    inputs = json.loads(meta["inputs"]) if "inputs" in meta else {}
    return Export(p, meta["cache_id"], meta["fingerprint"], n, range_size, arrays,
                  flags.astype(bool), inputs)


def _tokens(p: Path, header: Dict, per_token: list) -> int:  # type: ignore[type-arg]
    """The total tokens of a per-token export, as its first per-token tensor's shape gives it."""
    if not per_token:
        return 0
    shape = header[per_token[0]].get("shape")
    if not isinstance(shape, list) or not shape or not isinstance(shape[0], int) or shape[0] < 0:
        raise ExportError(f"'{p}': tensor {per_token[0]} has shape {shape}, expected [tokens, ...]")
    return int(shape[0])


def _check_offsets(p: Path, offsets: np.ndarray, flags: np.ndarray, tokens: int) -> None:
    """Offsets start at 0, end at the tokens, and give tokens exactly to the present examples."""
    lengths = np.diff(offsets)
    if offsets[0] != 0 or offsets[-1] != tokens or np.any(lengths < 0):
        raise ExportError(f"'{p}': {OFFSETS} run from {int(offsets[0])} to {int(offsets[-1])}, "
                          f"expected 0 to {tokens}, never falling")
    wrong = np.flatnonzero((lengths > 0) != flags.astype(bool))
    if wrong.size:
        i = int(wrong[0])
        raise ExportError(f"'{p}': example {i} has {int(lengths[i])} tokens and presence "
                          f"{int(flags[i])}, expected tokens exactly where present")
