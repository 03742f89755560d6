#!/usr/bin/env python3
"""Tokenize a TRL-style preference data set exactly as TRL's DPOTrainer prepares it.

Input: JSON lines (optionally gzip-compressed), one preference row per line, in one of TRL's
formats:

* conversational: ``prompt``, ``chosen`` and ``rejected`` are lists of
  ``{"role": ..., "content": ...}`` messages;
* text: ``prompt``, ``chosen`` and ``rejected`` are strings.

Rows without a ``prompt`` field (an implicit prompt shared by ``chosen`` and ``rejected``) are
accepted when no row has one; TRL extracts the common prefix as the prompt. ``tools`` and
``chat_template_kwargs`` fields are passed to the chat template as TRL does; other fields are
ignored.

Output: JSON lines. The first line is a header::

    {"tensorcache": {"kind": "prepared", "source": ..., "source_sha256": ...,
                     "chat_template_sha256": ..., "tokenizer_sha256": ..., "rows": N,
                     "transformers_version": ..., "trl_semantics": "1.13"}}

then one line per input row, in input order: ``{"prompt_ids": [...], "chosen_ids": [...],
"rejected_ids": [...]}``, TRL's tokenized columns (completion ids without the prompt's ids).

The tokenization is TRL's own (``DPOTrainer._prepare_dataset`` with no ``max_length``, so no
row is dropped); when ``trl`` is not installed a built-in copy of TRL 1.13's rules is used and a
note says so. Those rules: text completions get ``tokenizer.eos_token`` appended unless they
already end with it; the prompt and prompt+completion are tokenized separately (text with the
tokenizer's defaults, so with its special tokens; conversations with the chat template, the
prompt with ``add_generation_prompt=True``), and a completion's ids are the ids of
prompt+completion after the first ``len(prompt_ids)`` ids.

Example::

    python scripts/prepare_dataset.py --model-dir models/llama --dataset prefs.jsonl.gz \\
        --out prefs.llama.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

TRL_SEMANTICS = "1.13"
TOKENIZER_FILE = "tokenizer.json"
COMPLETION_FIELDS = ("chosen", "rejected")
PASS_THROUGH_FIELDS = ("tools", "chat_template_kwargs")


class PrepareError(Exception):
    """A problem with the arguments or the input data that the user has to fix; exit code 2."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Reading and checking rows
# --------------------------------------------------------------------------------------------


def read_bytes(path: Path) -> bytes:
    """The file's raw bytes (what ``source_sha256`` is computed over)."""
    try:
        return path.read_bytes()
    except OSError as e:
        raise PrepareError(f"cannot read --dataset '{path}': {e.strerror or e}") from e


def _decompressed(path: Path, raw: bytes) -> bytes:
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise PrepareError(f"{path}: not a valid gzip file: {e}") from e
    if path.name.endswith(".gz"):
        raise PrepareError(f"{path}: name ends with .gz but the content is not gzip-compressed")
    return raw


def parse_rows(path: Path, raw: bytes) -> List[Tuple[int, Dict[str, Any]]]:
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
            if key not in message:
                raise PrepareError(f"{where}: field '{field}' message {k} has no '{key}'")
            if not isinstance(message[key], str):
                raise PrepareError(f"{where}: field '{field}' message {k} '{key}' is "
                                   f"{type(message[key]).__name__}, expected a string")


def check_rows(path: Path, rows: List[Tuple[int, Dict[str, Any]]]) -> Tuple[bool, bool]:
    """Check every row; return (conversational, has_prompt). The first row sets the format."""
    first_line, first = rows[0]
    has_prompt = "prompt" in first
    fields = (("prompt",) if has_prompt else ()) + COMPLETION_FIELDS
    probe = first.get("prompt", first.get("chosen"))
    conversational = isinstance(probe, list)
    kind = "a list of messages" if conversational else "a string"
    for number, row in rows:
        where = f"{path}:{number}"
        if not has_prompt and "prompt" in row:
            raise PrepareError(f"{where}: field 'prompt' present but line {first_line} has none "
                               "(all rows must have an explicit prompt, or none)")
        for field in fields:
            if field not in row:
                raise PrepareError(f"{where}: missing field '{field}'")
            value = row[field]
            if conversational:
                _check_messages(where, field, value)
            elif not isinstance(value, str):
                raise PrepareError(f"{where}: field '{field}' must be {kind} (as on line "
                                   f"{first_line}), got {type(value).__name__}")
    return conversational, has_prompt


# --------------------------------------------------------------------------------------------
# Tokenization
# --------------------------------------------------------------------------------------------


def _trl_rows(rows: List[Dict[str, Any]], tokenizer: Any) -> List[Dict[str, List[int]]]:
    """Tokenize with TRL's own ``DPOTrainer._prepare_dataset`` (no max_length: nothing dropped)."""
    from types import SimpleNamespace

    import datasets
    from trl import DPOTrainer

    datasets.disable_progress_bars()
    dataset = datasets.Dataset.from_list(rows)
    trainer_view = SimpleNamespace(_tokenizer=tokenizer)
    args = SimpleNamespace(dataset_num_proc=None, max_length=None, truncation_mode="keep_start")
    prepared = DPOTrainer._prepare_dataset(trainer_view, dataset, tokenizer, args, "input")
    if len(prepared) != len(rows):
        raise RuntimeError(f"TRL returned {len(prepared)} rows for {len(rows)}")
    columns = prepared.select_columns(["prompt_ids", "chosen_ids", "rejected_ids"])
    return [dict(r) for r in columns]


def _extract_prompt(chosen: Any, rejected: Any) -> Tuple[Any, Any, Any]:
    """TRL 1.13 ``extract_prompt``: the longest common prefix of chosen and rejected."""
    idx = 0
    for idx in range(min(len(chosen), len(rejected))):
        if chosen[idx] != rejected[idx]:
            if chosen[idx - 1] == " ":  # remove the space before the completion
                idx -= 1
            break
    return chosen[:idx], chosen[idx:], rejected[idx:]


def _builtin_rows(rows: List[Dict[str, Any]], tokenizer: Any,
                  conversational: bool) -> List[Dict[str, List[int]]]:
    """TRL 1.13's DPO dataset preparation re-stated with transformers alone."""
    eos = tokenizer.eos_token
    out = []
    for row in rows:
        if "prompt" in row:
            prompt, chosen, rejected = row["prompt"], row["chosen"], row["rejected"]
        else:
            prompt, chosen, rejected = _extract_prompt(row["chosen"], row["rejected"])
        if conversational:
            tools = row.get("tools")
            tools = json.loads(tools) if isinstance(tools, str) else tools
            kwargs = {"tools": tools, **(row.get("chat_template_kwargs") or {})}

            def encode(messages: List[Dict[str, Any]], generation_prompt: bool = False) -> List[int]:
                extra = {"add_generation_prompt": True} if generation_prompt else {}
                result = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True,
                                                       **extra, **kwargs)
                return list(result["input_ids"])

            prompt_ids = encode(prompt, generation_prompt=True)
            chosen_full = encode(prompt + chosen)
            rejected_full = encode(prompt + rejected)
        else:
            if eos is None:
                raise PrepareError("the tokenizer has no eos_token; TRL appends it to text completions")
            chosen = chosen if chosen.endswith(eos) else chosen + eos
            rejected = rejected if rejected.endswith(eos) else rejected + eos
            prompt_ids = list(tokenizer(text=prompt)["input_ids"])
            chosen_full = list(tokenizer(text=prompt + chosen)["input_ids"])
            rejected_full = list(tokenizer(text=prompt + rejected)["input_ids"])
        n = len(prompt_ids)
        out.append({"prompt_ids": prompt_ids, "chosen_ids": chosen_full[n:],
                    "rejected_ids": rejected_full[n:]})
    return out


def _trl_available() -> Optional[str]:
    try:
        import trl
    except ImportError:
        return None
    return str(getattr(trl, "__version__", "unknown"))


def tokenize_rows(rows: List[Dict[str, Any]], tokenizer: Any, conversational: bool,
                  engine: str = "auto", log: Any = _stderr) -> Tuple[List[Dict[str, List[int]]], str]:
    """Tokenize checked rows; return (tokenized rows, TRL semantics version used).

    ``engine`` is ``trl`` (TRL's own code), ``builtin`` (the copy of TRL 1.13's rules) or
    ``auto`` (TRL when importable).
    """
    trl_version = _trl_available()
    if engine == "trl" and trl_version is None:
        raise PrepareError("--engine trl: the trl package is not importable")
    if engine in ("trl", "auto") and trl_version is not None:
        semantics = ".".join(trl_version.split(".")[:2])
        if semantics != TRL_SEMANTICS:
            log(f"note: trl {trl_version} is installed; its tokenization is used, recorded as "
                f"trl_semantics {semantics} (this script was written against {TRL_SEMANTICS})")
        return _trl_rows(rows, tokenizer), semantics
    if engine == "auto":
        log(f"note: trl is not installed; using the built-in copy of TRL {TRL_SEMANTICS}'s "
            "tokenization rules (transformers only)")
    return _builtin_rows(rows, tokenizer, conversational), TRL_SEMANTICS


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chat_template_sha256(tokenizer: Any) -> Optional[str]:
    """SHA-256 of the tokenizer's chat template text (UTF-8), or None without one."""
    template = getattr(tokenizer, "chat_template", None)
    if template is None:
        return None
    if not isinstance(template, str):  # several named templates
        template = json.dumps(template, sort_keys=True, ensure_ascii=False)
    return _sha256(template.encode("utf-8"))


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
            out: "str | os.PathLike[str]", engine: str = "auto", log: Any = _stderr) -> int:
    """Tokenize ``dataset`` with the tokenizer in ``model_dir`` into ``out``; return the row count."""
    model_dir, dataset, out = Path(model_dir), Path(dataset), Path(out)
    if out.exists() and out.is_dir():
        raise PrepareError(f"--out '{out}' is a directory")
    raw = read_bytes(dataset)
    numbered = parse_rows(dataset, raw)
    conversational, _ = check_rows(dataset, numbered)
    import transformers  # only once the rows are known to be well formed

    tokenizer = load_model_dir_tokenizer(model_dir)
    if conversational and getattr(tokenizer, "chat_template", None) is None:
        raise PrepareError(f"{dataset} is conversational but the tokenizer in '{model_dir}' has no "
                           "chat template")
    keep = ("prompt",) + COMPLETION_FIELDS + PASS_THROUGH_FIELDS
    rows = [{k: row[k] for k in keep if k in row} for _, row in numbered]
    tokenized, semantics = tokenize_rows(rows, tokenizer, conversational, engine, log)
    header = {"tensorcache": {
        "kind": "prepared",
        "source": dataset.name,
        "source_sha256": _sha256(raw),
        "chat_template_sha256": chat_template_sha256(tokenizer),
        "tokenizer_sha256": _sha256((model_dir / TOKENIZER_FILE).read_bytes()),
        "rows": len(tokenized),
        "transformers_version": transformers.__version__,
        "trl_semantics": semantics,
    }}
    body = ({"prompt_ids": [int(x) for x in r["prompt_ids"]],
             "chosen_ids": [int(x) for x in r["chosen_ids"]],
             "rejected_ids": [int(x) for x in r["rejected_ids"]]} for r in tokenized)
    write_jsonl_atomically(out, _chain([header], body))
    return len(tokenized)


def _chain(first: List[Dict[str, Any]], rest: Iterable[Dict[str, Any]]) -> Iterable[Dict[str, Any]]:
    yield from first
    yield from rest


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prepare_dataset.py",
        description=(
            "Tokenize TRL-style preference rows (conversational or text; JSON lines, optionally "
            "gzip) exactly as TRL's DPOTrainer prepares them, with the tokenizer and chat "
            "template of a TensorCache model directory. Writes a header line, then one "
            '{"prompt_ids", "chosen_ids", "rejected_ids"} line per input row, in order.'
        ),
        epilog="Exit codes: 0 written, 2 bad argument or malformed input (the message names the "
               "file, line and field), 1 unexpected failure.",
    )
    parser.add_argument("--model-dir", required=True, metavar="DIR",
                        help="model directory with tokenizer.json (e.g. from export_hf_model.py)")
    parser.add_argument("--dataset", required=True, metavar="IN.jsonl[.gz]",
                        help="preference rows: prompt/chosen/rejected as strings or message lists")
    parser.add_argument("--out", required=True, metavar="OUT.jsonl",
                        help="file to write (replaced atomically)")
    parser.add_argument("--engine", choices=("auto", "trl", "builtin"), default="auto",
                        help="auto: TRL's own code when trl is importable, else the built-in copy "
                             "of TRL 1.13's rules. Default: %(default)s")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        n = prepare(args.model_dir, args.dataset, args.out, args.engine)
    except PrepareError as e:
        _stderr(f"error: {e}")
        return 2
    _stderr(f"wrote {n} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
