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
