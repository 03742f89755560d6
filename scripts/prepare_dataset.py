#!/usr/bin/env python3
"""Tokenize a TRL-style preference data set exactly as TRL's DPOTrainer prepares it.

Input (``--dataset``), as the data set is kept; read by ``dataset_source.py``, which says how each
kind is recognised:

* JSON lines, optionally gzip-compressed, one preference row per line;
* a Parquet file (``.parquet``), e.g. from ``Dataset.to_parquet`` or the Hub;
* an Arrow file (``.arrow``): the IPC stream format ``datasets`` writes, or the IPC file format;
* a folder written by ``Dataset.save_to_disk``;
* a folder written by ``DatasetDict.save_to_disk``: ``--split NAME`` picks the split, and is needed
  when it holds more than one. ``--split`` is refused for every other kind (they hold one split).

Rows are in one of TRL's formats, whatever the kind:

* conversational: ``prompt``, ``chosen`` and ``rejected`` are lists of
  ``{"role": ..., "content": ...}`` messages;
* text: ``prompt``, ``chosen`` and ``rejected`` are strings.

Conversational language-modeling rows ``{"messages": [...]}`` (for a teacher's per-token values)
are written as ``{"input_ids": [...], "completion_mask": [...]}`` lines instead, labeled as TRL's
``DataCollatorForChatML`` labels them at ``--max-length`` (see ``dataset_messages.py``); the header
then also records ``max_length``.

Rows without a ``prompt`` field (an implicit prompt shared by ``chosen`` and ``rejected``) are
accepted when no row has one; TRL extracts the common prefix as the prompt. ``tools`` and
``chat_template_kwargs`` fields are passed to the chat template as TRL does; other fields are
ignored. A bad row is named by its number, counted from 1 (JSON lines by line, tables by row in
the split), and its field; nothing is written then.

Output: JSON lines. The first line is a header::

    {"tensorcache": {"kind": "prepared", "source": ..., "split": ..., "source_sha256": ...,
                     "rows_sha256": ..., "chat_template_sha256": ..., "tokenizer_sha256": ...,
                     "rows": N, "transformers_version": ..., "trl_semantics": "1.13"}}

``source`` is the file or folder name, ``split`` the split read from a DatasetDict folder (absent
for the other kinds), ``source_sha256`` the SHA-256 of the file's bytes or the folder digest that
``dataset_source.py`` defines, ``rows_sha256`` ``tensorcache.digests.rows_digest`` over the rows as
read (before tokenizing, in order): the same rows give the same value from every kind.
``chat_template_sha256`` is ``tensorcache.digests.chat_template_digest`` of the tokenizer and
``tokenizer_sha256`` the SHA-256 of the model directory's ``tokenizer.json``.

Then one line per input row, in input order: ``{"prompt_ids": [...], "chosen_ids": [...],
"rejected_ids": [...]}``, TRL's tokenized columns (completion ids without the prompt's ids).

The tokenization (``dataset_tokens.py``) is TRL's own (``DPOTrainer._prepare_dataset`` with no
``max_length``, so no row is dropped); when ``trl`` is not installed a built-in copy of TRL 1.13's
rules is used and a note says so. Those rules: text completions get ``tokenizer.eos_token`` appended unless they
already end with it; the prompt and prompt+completion are tokenized separately (text with the
tokenizer's defaults, so with its special tokens; conversations with the chat template, the
prompt with ``add_generation_prompt=True``), and a completion's ids are the ids of
prompt+completion after the first ``len(prompt_ids)`` ids.

Examples::

    python scripts/prepare_dataset.py --model-dir models/llama --dataset prefs.jsonl.gz \\
        --out prefs.llama.jsonl
    python scripts/prepare_dataset.py --model-dir models/llama --dataset prefs.parquet \\
        --out prefs.llama.jsonl
    python scripts/prepare_dataset.py --model-dir models/llama --dataset prefs-dict/ \\
        --split test --out prefs-test.llama.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from dataset_source import PrepareError, Source, read_source
from dataset_messages import check_messages_rows, tokenize_messages
from dataset_tokens import tokenize_rows

try:
    from tensorcache import digests
except ImportError:  # run from a checkout: the package lies beside scripts/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    for _name in [m for m in sys.modules if m == "tensorcache" or m.startswith("tensorcache.")]:
        del sys.modules[_name]
    from tensorcache import digests

TOKENIZER_FILE = "tokenizer.json"
COMPLETION_FIELDS = ("chosen", "rejected")
PASS_THROUGH_FIELDS = ("tools", "chat_template_kwargs")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Reading and checking rows
# --------------------------------------------------------------------------------------------


def _check_messages(where: str, field: str, value: Any) -> None:
    if not isinstance(value, list):
        raise PrepareError(f"{where}: field '{field}' must be a list of messages like the other "
                           f"fields, got {type(value).__name__}")
    if not value:
        raise PrepareError(f"{where}: field '{field}' is an empty message list")
    for k, message in enumerate(value, start=1):
        if not isinstance(message, dict):
            raise PrepareError(f"{where}: field '{field}' message {k} is "
                               f"{type(message).__name__}, expected an object with role and content")
        for key in ("role", "content"):
            if message.get(key) is None:  # a table fills a message's absent keys with null
                raise PrepareError(f"{where}: field '{field}' message {k} has no '{key}'")
            if not isinstance(message[key], str):
                raise PrepareError(f"{where}: field '{field}' message {k} '{key}' is "
                                   f"{type(message[key]).__name__}, expected a string")


def check_rows(source: Source) -> Tuple[bool, bool]:
    """Check every row; return (conversational, has_prompt). The first row sets the format."""
    rows = source.rows
    first_number, first = rows[0]
    first_ref = source.ref(first_number)
    has_prompt = "prompt" in first
    fields = (("prompt",) if has_prompt else ()) + COMPLETION_FIELDS
    probe = first.get("prompt", first.get("chosen"))
    conversational = isinstance(probe, list)
    kind = "a list of messages" if conversational else "a string"
    for number, row in rows:
        where = source.where(number)
        if not has_prompt and "prompt" in row:
            raise PrepareError(f"{where}: field 'prompt' present but {first_ref} has none "
                               "(all rows must have an explicit prompt, or none)")
        for field in fields:
            if field not in row:
                raise PrepareError(f"{where}: missing field '{field}'")
            value = row[field]
            if conversational:
                _check_messages(where, field, value)
            elif not isinstance(value, str):
                raise PrepareError(f"{where}: field '{field}' must be {kind} (as on "
                                   f"{first_ref}), got {type(value).__name__}")
    return conversational, has_prompt


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def rows_sha256(source: Source) -> str:
    """``digests.rows_digest`` of the rows as read; a value it cannot encode is named by row."""
    try:
        return digests.rows_digest(row for _, row in source.rows)
    except TypeError:
        for number, row in source.rows:
            try:
                digests.rows_digest([row])
            except TypeError as e:
                raise PrepareError(f"{source.where(number)}: {e}") from e
        raise


def write_jsonl_atomically(out: Path, lines: Iterable[Dict[str, Any]]) -> None:
    """Write JSON lines to a temporary file beside ``out`` and rename it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            for obj in lines:
                f.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
                f.write("\n")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_name, 0o666 & ~umask)  # mkstemp makes the file private
        os.replace(tmp_name, out)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise


def load_model_dir_tokenizer(model_dir: Path) -> Any:
    """The tokenizer saved in a model directory (with its chat template)."""
    if not model_dir.is_dir():
        raise PrepareError(f"--model-dir '{model_dir}' is not a directory")
    if not (model_dir / TOKENIZER_FILE).is_file():
        raise PrepareError(f"--model-dir '{model_dir}' has no {TOKENIZER_FILE}")
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(model_dir))
    except (OSError, ValueError, KeyError) as e:
        raise PrepareError(f"cannot load the tokenizer in '{model_dir}': {e}") from e


def prepare(model_dir: "str | os.PathLike[str]", dataset: "str | os.PathLike[str]",
            out: "str | os.PathLike[str]", engine: str = "auto", log: Any = _stderr,
            split: Optional[str] = None, max_length: Optional[int] = None) -> int:
    """Tokenize ``dataset`` (``split`` of a DatasetDict folder) with the tokenizer in ``model_dir``
    into ``out``; return the row count. ``max_length`` is for messages rows only."""
    model_dir, dataset, out = Path(model_dir), Path(dataset), Path(out)
    if out.exists() and out.is_dir():
        raise PrepareError(f"--out '{out}' is a directory")
    source = read_source(dataset, split)
    messages = "messages" in source.rows[0][1]
    if messages:
        conversations = check_messages_rows(source, _check_messages)
    else:
        conversational, _ = check_rows(source)
        if max_length is not None:
            raise PrepareError(f"--max-length {max_length} is for messages rows; preference rows "
                               "are cut by the run (its --max-length)")
    if max_length is not None and max_length < 2:
        raise PrepareError(f"--max-length {max_length} invalid, expected at least 2")
    rows_digest = rows_sha256(source)
    import transformers  # only once the rows are known to be well formed

    tokenizer = load_model_dir_tokenizer(model_dir)
    if (messages or conversational) and getattr(tokenizer, "chat_template", None) is None:
        raise PrepareError(f"{dataset} is conversational but the tokenizer in '{model_dir}' has no "
                           "chat template")
    if messages:
        tokenized, semantics, max_length = tokenize_messages(
            conversations, tokenizer, max_length, engine, lambda i: source.where(source.rows[i][0]))
    else:
        keep = ("prompt",) + COMPLETION_FIELDS + PASS_THROUGH_FIELDS
        rows = [{k: row[k] for k in keep if k in row} for _, row in source.rows]
        tokenized, semantics = tokenize_rows(rows, tokenizer, conversational, engine, log)
    header: Dict[str, Any] = {"kind": "prepared", "source": dataset.name}
    if source.split is not None:
        header["split"] = source.split
    header.update({
        "source_sha256": source.sha256,
        "rows_sha256": rows_digest,
        "chat_template_sha256": digests.chat_template_digest(tokenizer),
        "tokenizer_sha256": _sha256((model_dir / TOKENIZER_FILE).read_bytes()),
        "rows": len(tokenized),
        "transformers_version": transformers.__version__,
        "trl_semantics": semantics,
    })
    if messages:
        header["max_length"] = max_length
        write_jsonl_atomically(out, _chain([{"tensorcache": header}], tokenized))
        return len(tokenized)
    body = ({"prompt_ids": [int(x) for x in r["prompt_ids"]],
             "chosen_ids": [int(x) for x in r["chosen_ids"]],
             "rejected_ids": [int(x) for x in r["rejected_ids"]]} for r in tokenized)
    write_jsonl_atomically(out, _chain([{"tensorcache": header}], body))
    return len(tokenized)


def _chain(first: List[Dict[str, Any]], rest: Iterable[Dict[str, Any]]) -> Iterable[Dict[str, Any]]:
    yield from first
    yield from rest


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prepare_dataset.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Tokenize TRL-style preference rows exactly as TRL's DPOTrainer prepares them, with\n"
            "the tokenizer and chat template of a TensorCache model directory. Writes a header\n"
            "line, then one {\"prompt_ids\", \"chosen_ids\", \"rejected_ids\"} line per input "
            "row, in order.\n\n"
            "Rows: prompt, chosen and rejected as strings (text) or as lists of {\"role\",\n"
            "\"content\"} messages (conversational); prompt may be left out of every row.\n\n"
            "--dataset takes:\n"
            "  IN.jsonl, IN.jsonl.gz  JSON lines (gzip when the content is gzip)\n"
            "  IN.parquet             a Parquet file\n"
            "  IN.arrow               an Arrow file (the IPC stream datasets writes, or IPC file)\n"
            "  DIR/                   a folder written by Dataset.save_to_disk (has state.json)\n"
            "  DIR/ --split NAME      a folder written by DatasetDict.save_to_disk (has\n"
            "                         dataset_dict.json): the split NAME; --split may be left\n"
            "                         out when it holds one split only\n"
            "--split is refused for the other kinds: each holds one split."
        ),
        epilog="Exit codes: 0 written; 2 bad argument or malformed input (the message names the\n"
               "file, the line or the row counted from 1, and the field; nothing is written);\n"
               "1 unexpected failure.",
    )
    parser.add_argument("--model-dir", required=True, metavar="DIR",
                        help="model directory with tokenizer.json (e.g. from export_hf_model.py)")
    parser.add_argument("--dataset", required=True, metavar="IN",
                        help="preference rows: a JSON lines file (optionally gzip), a .parquet or "
                             ".arrow file, or a folder written by save_to_disk")
    parser.add_argument("--split", metavar="NAME",
                        help="the split of a DatasetDict folder to read; needed when it holds "
                             "more than one")
    parser.add_argument("--out", required=True, metavar="OUT.jsonl",
                        help="file to write (replaced atomically)")
    parser.add_argument("--max-length", type=int, metavar="N",
                        help="messages rows only: keep the last N tokens, as TRL's "
                             "DataCollatorForChatML does. Default: min(model_max_length, 1024)")
    parser.add_argument("--engine", choices=("auto", "trl", "builtin"), default="auto",
                        help="auto: TRL's own code when trl is importable, else the built-in copy "
                             "of TRL 1.13's rules. Default: %(default)s")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        n = prepare(args.model_dir, args.dataset, args.out, args.engine, split=args.split,
                    max_length=args.max_length)
    except PrepareError as e:
        _stderr(f"error: {e}")
        return 2
    _stderr(f"wrote {n} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
