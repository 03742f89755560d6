"""Digests of what a cache was filled from, computed the same way wherever they are checked.

A fill records them (the Java side for text rows, ``scripts/prepare_dataset.py`` for prepared
files, ``scripts/export_hf_model.py`` for a model and its tokenizer); a trainer computes them again
from the objects it is given and compares (``tensorcache.trl``). Only ``rows_digest`` needs no
third-party package; the others take a torch module or a tokenizer but import nothing themselves.

``rows_digest``: SHA-256 over every row, in order, each encoded as the mapping of its fields in
``ROW_FIELDS`` that are present and not None, with this encoding (``u32`` big-endian):

* str: ``s`` u32(byte length) UTF-8 bytes; int: ``i`` then its decimal digits as a str;
* float: ``r`` then ``repr()`` as a str; bool: ``t`` or ``f``; None: ``n``;
* list or tuple: ``l`` u32(count) then each item;
* mapping: ``m`` u32(count) then, by key in code-point order, the key as a str and the value;
  entries whose value is None are left out (Arrow fills absent struct keys with None, JSON has
  none: the same rows read either way give the same digest).
"""

from __future__ import annotations

import hashlib
import json
import struct
from typing import Any, Iterable, Mapping, Optional

ROW_FIELDS = ("prompt", "chosen", "rejected", "tools", "chat_template_kwargs")


def _u32(n: int) -> bytes:
    return struct.pack(">I", n)


def _str(s: str) -> bytes:
    b = s.encode("utf-8")
    return b"s" + _u32(len(b)) + b


def _encode(value: Any, out: "hashlib._Hash") -> None:
    if value is None:
        out.update(b"n")
    elif isinstance(value, bool):
        out.update(b"t" if value else b"f")
    elif isinstance(value, str):
        out.update(_str(value))
    elif isinstance(value, int):
        out.update(b"i" + _str(str(value)))
    elif isinstance(value, float):
        out.update(b"r" + _str(repr(value)))
    elif isinstance(value, Mapping):
        entries = sorted((str(k), v) for k, v in value.items() if v is not None)
        out.update(b"m" + _u32(len(entries)))
        for k, v in entries:
            out.update(_str(k))
            _encode(v, out)
    elif isinstance(value, (list, tuple)):
        out.update(b"l" + _u32(len(value)))
        for item in value:
            _encode(item, out)
    else:
        raise TypeError(f"cannot digest a value of type {type(value).__name__}: {value!r:.80}")


def rows_digest(rows: Iterable[Mapping[str, Any]]) -> str:
    """SHA-256 (hex) of the rows' ``prompt``/``chosen``/``rejected``/``tools``/
    ``chat_template_kwargs`` fields, in order; a ``datasets.Dataset`` iterates as such rows."""
    h = hashlib.sha256()
    for row in rows:
        _encode({k: row[k] for k in ROW_FIELDS if k in row and row[k] is not None}, h)
    return h.hexdigest()


def state_digest(module: Any) -> str:
    """SHA-256 (hex) of a torch module's state: every entry by name, floating tensors as float32
    (so a model loaded in bfloat16 or float16 from a checkpoint of that dtype digests the same as
    the float32 copy an export loads), each with its name and shape."""
    import torch  # only callers that hold a module get here

    h = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        t = tensor.detach().cpu()
        if t.is_floating_point():
            t = t.to(torch.float32)
        t = t.contiguous()
        h.update(_str(name) + _str(str(t.dtype)) + _str(json.dumps(list(t.shape))))
        h.update(memoryview(t.numpy()).cast("B"))
    return h.hexdigest()


def tokenizer_digest(tokenizer: Any) -> Optional[str]:
    """SHA-256 (hex) of a fast tokenizer's full state (its ``tokenizer.json`` as the tokenizers
    library writes it), or None for a tokenizer without one."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    return hashlib.sha256(backend.to_str().encode("utf-8")).hexdigest()


def chat_template_digest(tokenizer: Any) -> Optional[str]:
    """SHA-256 (hex) of the tokenizer's chat template text (UTF-8), or None without one."""
    template = getattr(tokenizer, "chat_template", None)
    if template is None:
        return None
    if not isinstance(template, str):  # several named templates
        template = json.dumps(template, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(template.encode("utf-8")).hexdigest()
