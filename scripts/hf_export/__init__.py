"""The pieces of ``export_hf_model.py``: loading a model (``load``), tracing it and checking the
traced ``model.pt`` (``trace``), the split into ``body.pt`` + ``head.pt`` (``split``) and what
``tensorcache-model.json`` records (``metadata``). Here: the model directory's file names and
format versions, and the error the user has to fix."""

from __future__ import annotations

import sys
from typing import Callable

FORMAT_VERSION = 1
SPLIT_FORMAT_VERSION = 2
MODEL_FILE = "model.pt"
BODY_FILE = "body.pt"
HEAD_FILE = "head.pt"
TOKENIZER_FILE = "tokenizer.json"
METADATA_FILE = "tensorcache-model.json"

Log = Callable[[str], None]


class ExportError(Exception):
    """A problem with the arguments or the model that the user has to fix; exit code 2."""


def stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def save_reproducible(module, path) -> None:  # type: ignore[no-untyped-def]
    """Saves a traced module so that the same model gives the same bytes wherever it is exported.

    TorchScript's archive records the tracing call stack (absolute paths and line numbers of this
    exporter, torch and transformers) in its ``*.debug_pkl`` entries, and a ``serialization_id``
    hashed over them; the model directory's digest enters the cache id, so those made every
    checkout's cache a different one. Loading needs neither: they are left out."""
    import os
    import zipfile

    module.save(str(path))
    kept = str(path) + ".kept"
    with zipfile.ZipFile(str(path)) as src, zipfile.ZipFile(kept, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            name = info.filename
            if name.endswith(".debug_pkl") or name.endswith("/.data/serialization_id"):
                continue
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            dst.writestr(entry, src.read(name))
    os.replace(kept, str(path))
