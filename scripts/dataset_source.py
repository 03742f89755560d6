"""Preference rows read from a data set as users keep it, with the digest of what was read.

Kinds (the first that fits):

* a folder written by ``datasets``' ``DatasetDict.save_to_disk`` (it holds ``dataset_dict.json``):
  one split of it, named by ``split`` (needed when it holds more than one);
* a folder written by ``Dataset.save_to_disk`` (it holds ``state.json``);
* a Parquet file (name ending ``.parquet``, or content starting with ``PAR1``);
* an Arrow file (name ending ``.arrow``, or Arrow content): the IPC stream format that ``datasets``
  writes, or the IPC file format;
* otherwise JSON lines, optionally gzip-compressed: one JSON object per line, blank lines skipped.

Rows are numbered from 1 in error messages: JSON lines by line (``prefs.jsonl:7``), tables by row
in the split (``prefs.parquet row 7``). A table's null cells are left out of its rows, since Arrow
writes null where a JSON row has no such field: a row read from a table is the JSON row it was
made from.

``sha256`` is the SHA-256 of a file's bytes. For a folder it is the SHA-256 of the lines
``<sha256 of the file's bytes>  <path relative to the folder>\\n`` of every file under it
(symbolic links followed), sorted by the relative path's UTF-8 bytes: what
``cd DIR && find -L . -type f -printf '%P\\n' | LC_ALL=C sort | xargs -d '\\n' sha256sum |
sha256sum`` prints. It covers the whole folder given, every split included.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

DICT_MARKER = "dataset_dict.json"
DATASET_MARKER = "state.json"
ARROW_STREAM_START = b"\xff\xff\xff\xff"
ARROW_FILE_START = b"ARROW1"
PARQUET_START = b"PAR1"


class PrepareError(Exception):
    """A problem with the arguments or the input data that the user has to fix; exit code 2."""


@dataclass
class Source:
    """The rows of a data set, each with its 1-based number, and how to name one in a message."""

    path: Path
    kind: str  # "jsonl", "parquet", "arrow", "dataset", "dataset-dict"
    sha256: str
    rows: List[Tuple[int, Dict[str, Any]]]
    split: Optional[str] = None

    def where(self, number: int) -> str:
        """Where row ``number`` is, for the start of a message: ``prefs.jsonl:7``,
        ``prefs.parquet row 7``, ``prefs split 'test' row 7``."""
        if self.kind == "jsonl":
            return f"{self.path}:{number}"
        split = f" split '{self.split}'" if self.split is not None else ""
        return f"{self.path}{split} row {number}"

    def ref(self, number: int) -> str:
        """Row ``number`` within the same data set: ``line 7`` or ``row 7``."""
        return f"{'line' if self.kind == 'jsonl' else 'row'} {number}"


def read_source(path: Path, split: Optional[str] = None) -> Source:
    """Read every row of ``path`` (of ``split`` of a DatasetDict folder)."""
    if path.is_dir():
        return _read_folder(path, split)
    raw = _read_bytes(path)
    kind = _file_kind(path, raw)
    if split is not None:
        raise PrepareError(f"--split {split}: '{path}' is a single {_KIND_NAMES[kind]} file, which "
                           "holds one split; --split applies only to a folder written by "
                           "DatasetDict.save_to_disk")
    digest = hashlib.sha256(raw).hexdigest()
    if kind == "jsonl":
        return Source(path, kind, digest, _parse_jsonl(path, raw))
    table = _read_parquet(path, raw) if kind == "parquet" else _read_arrow(path, raw)
    return Source(path, kind, digest, _numbered(path, table.to_pylist()))


_KIND_NAMES = {"jsonl": "JSON lines", "parquet": "Parquet", "arrow": "Arrow"}


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise PrepareError(f"cannot read --dataset '{path}': {e.strerror or e}") from e


def _file_kind(path: Path, raw: bytes) -> str:
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(".arrow"):
        return "arrow"
    if name.endswith((".jsonl", ".jsonl.gz", ".json", ".json.gz", ".gz")):
        return "jsonl"
    if raw.startswith(PARQUET_START):
        return "parquet"
    if raw.startswith(ARROW_FILE_START) or raw.startswith(ARROW_STREAM_START):
        return "arrow"
    return "jsonl"


def _numbered(path: Path, rows: List[Dict[str, Any]]) -> List[Tuple[int, Dict[str, Any]]]:
    if not rows:
        raise PrepareError(f"{path}: no rows")
    return [(n, {k: v for k, v in row.items() if v is not None}) for n, row in enumerate(rows, 1)]


# --------------------------------------------------------------------------------------------
# JSON lines
# --------------------------------------------------------------------------------------------


def _decompressed(path: Path, raw: bytes) -> bytes:
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise PrepareError(f"{path}: not a valid gzip file: {e}") from e
    if path.name.endswith(".gz"):
        raise PrepareError(f"{path}: name ends with .gz but the content is not gzip-compressed")
    return raw


def _parse_jsonl(path: Path, raw: bytes) -> List[Tuple[int, Dict[str, Any]]]:
    """Parse JSON lines into (1-based line number, row) pairs; blank lines are skipped."""
    data = _decompressed(path, raw)
    rows: List[Tuple[int, Dict[str, Any]]] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise PrepareError(f"{path}:{number}: not valid UTF-8 ({e.reason} at byte {e.start})") from e
        try:
            row = json.loads(text)
        except json.JSONDecodeError as e:
            raise PrepareError(f"{path}:{number}: not valid JSON: {e.msg} at column {e.colno}") from e
        if not isinstance(row, dict):
            raise PrepareError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        rows.append((number, row))
    if not rows:
        raise PrepareError(f"{path}: no rows")
    return rows


# --------------------------------------------------------------------------------------------
# Parquet and Arrow files
# --------------------------------------------------------------------------------------------


def _pyarrow(path: Path, what: str) -> Any:
    try:
        import pyarrow
    except ImportError as e:
        raise PrepareError(f"{path}: reading {what} needs the pyarrow package "
                           "(pip install pyarrow)") from e
    return pyarrow


def _read_parquet(path: Path, raw: bytes) -> Any:
    pa = _pyarrow(path, "a Parquet file")
    import pyarrow.parquet as pq

    try:
        return pq.read_table(pa.BufferReader(raw))
    except (pa.ArrowException, OSError) as e:
        raise PrepareError(f"{path}: not a readable Parquet file: {e}") from e


def _read_arrow(path: Path, raw: bytes) -> Any:
    """The IPC stream format (what ``datasets`` writes), else the IPC file format."""
    pa = _pyarrow(path, "an Arrow file")
    buffer = pa.py_buffer(raw)
    try:
        return pa.ipc.open_stream(buffer).read_all()
    except (pa.ArrowException, OSError) as stream_error:
        try:
            return pa.ipc.open_file(buffer).read_all()
        except (pa.ArrowException, OSError) as file_error:
            raise PrepareError(f"{path}: not a readable Arrow file (as a stream: {stream_error}; "
                               f"as a file: {file_error})") from file_error


# --------------------------------------------------------------------------------------------
# Folders written by save_to_disk
# --------------------------------------------------------------------------------------------


def folder_sha256(folder: Path) -> str:
    """The digest of every file under ``folder`` (see the module's docstring)."""
    files: List[Tuple[bytes, str]] = []
    for root, _, names in os.walk(folder, followlinks=True):
        for name in names:
            full = Path(root) / name
            if full.is_file():
                rel = full.relative_to(folder).as_posix()
                files.append((rel.encode("utf-8", "surrogateescape"), str(full)))
    listing = hashlib.sha256()
    for rel, full in sorted(files):
        h = hashlib.sha256()
        with open(full, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        listing.update(h.hexdigest().encode("ascii") + b"  " + rel + b"\n")
    return listing.hexdigest()


def _splits(folder: Path) -> List[str]:
    try:
        splits = json.loads((folder / DICT_MARKER).read_text(encoding="utf-8"))["splits"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PrepareError(f"{folder / DICT_MARKER}: cannot read its list of splits: {e}") from e
    if not isinstance(splits, list) or not splits or not all(isinstance(s, str) for s in splits):
        raise PrepareError(f"{folder / DICT_MARKER}: 'splits' must be a non-empty list of names, "
                           f"got {splits!r}")
    return splits


def _read_folder(folder: Path, split: Optional[str]) -> Source:
    if (folder / DICT_MARKER).is_file():
        splits = _splits(folder)
        if split is None:
            if len(splits) > 1:
                raise PrepareError(f"'{folder}' holds the splits {', '.join(splits)}: choose one "
                                   "with --split")
            split = splits[0]
        elif split not in splits:
            raise PrepareError(f"--split {split}: '{folder}' has no such split; it holds "
                               f"{', '.join(splits)}")
        kind, dataset_dir = "dataset-dict", folder / split
    elif (folder / DATASET_MARKER).is_file():
        if split is not None:
            raise PrepareError(f"--split {split}: '{folder}' holds a single Dataset (it has "
                               f"{DATASET_MARKER}, no {DICT_MARKER}); --split applies only to a "
                               "folder written by DatasetDict.save_to_disk")
        kind, dataset_dir = "dataset", folder
    else:
        raise PrepareError(f"--dataset '{folder}' is a folder without {DICT_MARKER} or "
                           f"{DATASET_MARKER}; expected one written by datasets' save_to_disk")
    digest = folder_sha256(folder)
    try:
        import datasets
    except ImportError as e:
        raise PrepareError(f"{folder}: reading a save_to_disk folder needs the datasets package "
                           "(pip install datasets)") from e
    try:
        dataset = datasets.load_from_disk(str(dataset_dir))
    except (OSError, ValueError, KeyError) as e:
        raise PrepareError(f"{dataset_dir}: cannot be read with datasets.load_from_disk: {e}") from e
    if not isinstance(dataset, datasets.Dataset):
        raise PrepareError(f"{dataset_dir}: expected one Dataset, got {type(dataset).__name__}")
    rows = dataset.with_format(None).to_list()
    if not rows:
        where = f"{folder} split '{split}'" if kind == "dataset-dict" else str(folder)
        raise PrepareError(f"{where}: no rows")
    return Source(folder, kind, digest, _numbered(folder, rows),
                  split if kind == "dataset-dict" else None)
