#!/usr/bin/env python3
"""TRL's own reference log-prob precompute, timed: what ``bench --only byo`` compares
TensorCache's fill with.

In this process, for one configuration, it builds what a user of TRL builds::

    DPOTrainer(model, ref_model=None, processing_class=tokenizer, train_dataset=rows,
               args=DPOConfig(precompute_ref_log_probs=True, precompute_ref_batch_size=B,
                              max_length=L, truncation_mode=..., use_cpu=True, ...))

with ``torch.set_num_threads(N)``, and times exactly TRL's ``DPOTrainer._precompute_ref_logps``
(which ``__init__`` calls): hashing the model for its cache key, the forward passes in data set
order (batches of B rows, chosen and rejected in one forward of 2B sequences padded to the
longest), and writing the values to an Arrow file. TRL reuses an Arrow file of earlier values
when one exists for the same data set and model; caching of the ``datasets`` library is turned
off here, so the file name is random and every run computes.

``--warmup-rows K`` runs the same precompute over the first K rows (after TRL's drops) once,
in the same process and trainer, before the timed run. The data set is tokenized by TRL before
either (not timed, reported as ``prepare_seconds``). Rows whose prompt alone fills
``--max-length`` (``keep_start``) are dropped by TRL: they are counted, listed and get no value.

Output: one JSON object on stdout, also written to ``--out``; with ``--values`` the values per
row of the input file. See ``--help`` for the exit codes. One process per configuration: the
peak resident memory is then that configuration's.

Example::

    python scripts/bench_trl.py --hf-dir bench/work/byo/m/small/hf --dataset prefs.jsonl \\
        --batch-size 8 --threads 2 --max-length 1024 --out trl-b8.json --values trl-b8-values.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from trl_timing import BenchTrlError, make_trainer_class, max_rss_bytes, timed_hash_module

TRUNCATION_MODES = ("keep_start", "keep_end")
ROW_COLUMN = "bench_row"
EXIT_OK, EXIT_UNEXPECTED, EXIT_BAD_INPUT, EXIT_TRL_FAILED = 0, 1, 2, 3


class TrlFailed(Exception):
    """TRL (or the model) failed while building the trainer or precomputing; exit code 3."""


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------------------------


def read_rows(path: str) -> List[Dict[str, str]]:
    """Text preference rows ``{"prompt", "chosen", "rejected"}`` of a JSON lines file."""
    rows = []
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        raise BenchTrlError(f"cannot read --dataset '{path}': {e.strerror or e}") from e
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise BenchTrlError(f"{path} line {n}: not JSON ({e.msg})") from e
            if not isinstance(row, dict):
                raise BenchTrlError(f"{path} line {n}: expected an object, got "
                                    f"{type(row).__name__}")
            for key in ("prompt", "chosen", "rejected"):
                if key not in row:
                    raise BenchTrlError(f"{path} line {n}: field '{key}' is missing")
                if not isinstance(row[key], str):
                    raise BenchTrlError(f"{path} line {n}: field '{key}' is "
                                        f"{type(row[key]).__name__}, expected a string (text rows)")
            rows.append({"prompt": row["prompt"], "chosen": row["chosen"],
                         "rejected": row["rejected"]})
    if not rows:
        raise BenchTrlError(f"--dataset '{path}' has no rows")
    return rows


# --------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------


def _out_of_memory(e: BaseException) -> bool:
    """Whether ``e`` (or what caused it) is a failed allocation."""
    while e is not None:
        if isinstance(e, MemoryError) or "can't allocate memory" in str(e):
            return True
        e = e.__cause__ or e.__context__
    return False


def _versions() -> Dict[str, str]:
    import accelerate
    import datasets
    import torch
    import transformers
    import trl

    return {"python": platform.python_version(), "torch": torch.__version__,
            "trl": trl.__version__, "transformers": transformers.__version__,
            "datasets": datasets.__version__, "accelerate": accelerate.__version__}


def run(hf_dir: str, dataset: str, batch_size: int, threads: int, max_length: int,
        truncation_mode: str, warmup_rows: int = 0, values: Optional[str] = None) -> Dict[str, Any]:
    """Run and time TRL's precompute of ``dataset``; the result object (see the module doc)."""
    if batch_size < 1:
        raise BenchTrlError(f"--batch-size {batch_size} invalid, expected >= 1")
    if threads < 1:
        raise BenchTrlError(f"--threads {threads} invalid, expected >= 1")
    if max_length < 2:
        raise BenchTrlError(f"--max-length {max_length} invalid, expected >= 2")
    if truncation_mode not in TRUNCATION_MODES:
        raise BenchTrlError(f"--truncation-mode {truncation_mode} invalid, expected one of "
                            f"{', '.join(TRUNCATION_MODES)}")
    if warmup_rows < 0:
        raise BenchTrlError(f"--warmup-rows {warmup_rows} invalid, expected >= 0")
    if not (Path(hf_dir) / "config.json").is_file():
        raise BenchTrlError(f"--hf-dir '{hf_dir}' is not a Hugging Face model directory (no "
                            "config.json)")
    rows = read_rows(dataset)

    t_start = time.perf_counter()
    import torch

    torch.set_num_threads(threads)
    import datasets
    import transformers
    import trl.trainer.dpo_trainer as dpo
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig

    datasets.disable_caching()
    datasets.disable_progress_bars()
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    try:
        tokenizer = AutoTokenizer.from_pretrained(hf_dir)
        model = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32)
    except Exception as e:  # noqa: BLE001 - any failure here is the model directory's
        raise BenchTrlError(f"cannot load the model and tokenizer of '{hf_dir}': "
                            f"{type(e).__name__}: {e}") from e
    model.eval()
    load_seconds = time.perf_counter() - t_start

    record: Dict[str, Any] = {}
    trainer_class = make_trainer_class(record, warmup_rows)
    data = datasets.Dataset.from_list([dict(r, **{ROW_COLUMN: i}) for i, r in enumerate(rows)])
    with tempfile.TemporaryDirectory(prefix="bench-trl-") as out_dir:
        try:
            args = DPOConfig(output_dir=out_dir, use_cpu=True, report_to="none",
                             precompute_ref_log_probs=True, precompute_ref_batch_size=batch_size,
                             per_device_train_batch_size=batch_size, max_length=max_length,
                             truncation_mode=truncation_mode, bf16=False, fp16=False,
                             save_strategy="no", logging_strategy="no",
                             dataloader_num_workers=0)
        except Exception as e:  # noqa: BLE001
            raise TrlFailed(f"DPOConfig refused the arguments: {type(e).__name__}: {e}") from e
        hash_module = dpo.hash_module
        dpo.hash_module = timed_hash_module(record, hash_module)
        record["_init_start"] = time.perf_counter()
        try:
            trainer = trainer_class(model=model, ref_model=None, args=args, train_dataset=data,
                                    processing_class=tokenizer)
        except BenchTrlError:
            raise
        except Exception as e:  # noqa: BLE001 - TRL's or the model's failure, reported as such
            what = "out of memory" if _out_of_memory(e) else "failed"
            raise TrlFailed(f"TRL's precompute {what}: {type(e).__name__}: {e}") from e
        finally:
            dpo.hash_module = hash_module
        if "seconds" not in record:
            raise TrlFailed("DPOTrainer did not call _precompute_ref_logps: this TRL version "
                            "precomputes differently")
        result_rows = trainer.train_dataset
        index = result_rows[ROW_COLUMN]
        chosen = result_rows["ref_chosen_logps"]
        rejected = result_rows["ref_rejected_logps"]
        peak = max_rss_bytes()

    n = len(rows)
    computed = len(index)
    dropped = sorted(set(range(n)) - set(index))
    by_row_chosen: List[Optional[float]] = [None] * n
    by_row_rejected: List[Optional[float]] = [None] * n
    for i, c, r in zip(index, chosen, rejected):
        by_row_chosen[i], by_row_rejected[i] = float(c), float(r)
    if values:
        payload = {"rows": n, "dropped": dropped, "ref_chosen_logps": by_row_chosen,
                   "ref_rejected_logps": by_row_rejected}
        try:
            Path(values).write_text(json.dumps(payload) + "\n", encoding="utf-8")
        except OSError as e:
            raise BenchTrlError(f"cannot write --values '{values}': {e.strerror or e}") from e

    seconds = record["seconds"]
    loop = record["phases"]["loop_seconds"]
    config = model.config
    return {
        "ok": True,
        "hf_dir": str(Path(hf_dir).absolute()),
        "dataset": str(Path(dataset).absolute()),
        "batch_size": batch_size,
        "threads": threads,
        "torch_threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "max_length": max_length,
        "truncation_mode": truncation_mode,
        "rows": n,
        "computed_rows": computed,
        "dropped_rows": len(dropped),
        "dropped": dropped,
        "warmup_rows": record.get("warmup_rows", 0),
        "warmup_seconds": record.get("warmup_seconds", 0.0),
        "seconds": seconds,
        "examples_per_s": computed / seconds if seconds > 0 else None,
        "loop_examples_per_s": computed / loop if loop > 0 else None,
        "phases": record["phases"],
        "batches": record["_batches"],
        "sequences": record["_sequences"],
        "tokens": record["_tokens"],
        "padded_tokens": record["_padded_tokens"],
        "max_padded_length": record["_max_padded_length"],
        "load_seconds": load_seconds,
        "prepare_seconds": record["prepare_seconds"],
        "memory": {
            "rss_before_bytes": record["rss_before_bytes"],
            "peak_rss_before_bytes": record["peak_rss_before_bytes"],
            "precompute_peak_rss_bytes": record["precompute_peak_rss_bytes"],
            "peak_rss_bytes": max(peak, record["peak_rss_before_bytes"]),
        },
        "model": {
            "architecture": (getattr(config, "architectures", None) or [type(model).__name__])[0],
            "vocab_size": getattr(config, "vocab_size", None),
            "parameters": sum(p.numel() for p in model.parameters()),
            "attn_implementation": getattr(config, "_attn_implementation", None),
            "dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
        },
        "versions": _versions(),
        "values": str(Path(values).absolute()) if values else None,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench_trl.py",
        description="Time TRL's own reference log-prob precompute (DPOTrainer with "
                    "precompute_ref_log_probs=True) on CPU for one configuration; print the "
                    "result as JSON.",
        epilog="Exit codes: 0 done, 2 bad argument or input file (nothing computed), 3 TRL or "
               "the model failed, 1 unexpected failure. On failure the JSON object is "
               '{"ok": false, "error": MESSAGE, "exit_code": CODE}.')
    parser.add_argument("--hf-dir", required=True, metavar="DIR",
                        help="Hugging Face model directory (model and tokenizer)")
    parser.add_argument("--dataset", required=True, metavar="FILE",
                        help='JSON lines of text rows {"prompt", "chosen", "rejected"}')
    parser.add_argument("--batch-size", type=int, default=8, metavar="B",
                        help="precompute_ref_batch_size: rows per forward (2B sequences). "
                             "Default: %(default)s (TRL's default per-device batch)")
    parser.add_argument("--threads", type=int, required=True, metavar="N",
                        help="torch.set_num_threads(N)")
    parser.add_argument("--max-length", type=int, default=1024, metavar="L",
                        help="DPOConfig max_length. Default: %(default)s (TRL's)")
    parser.add_argument("--truncation-mode", default="keep_start", choices=TRUNCATION_MODES,
                        help="DPOConfig truncation_mode. Default: %(default)s (TRL's)")
    parser.add_argument("--warmup-rows", type=int, default=0, metavar="K",
                        help="precompute the first K rows once before the timed run. "
                             "Default: %(default)s")
    parser.add_argument("--out", metavar="FILE", help="also write the JSON result here")
    parser.add_argument("--values", metavar="FILE",
                        help="write ref_chosen_logps/ref_rejected_logps per input row (JSON)")
    return parser


def _emit(result: Dict[str, Any], out: Optional[str]) -> None:
    text = json.dumps(result, indent=1)
    print(text, flush=True)
    if out:
        try:
            Path(out).write_text(text + "\n", encoding="utf-8")
        except OSError as e:
            _log(f"error: cannot write --out '{out}': {e.strerror or e}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TQDM_DISABLE", "1")
    code, message = EXIT_OK, ""
    try:
        result = run(args.hf_dir, args.dataset, args.batch_size, args.threads, args.max_length,
                     args.truncation_mode, warmup_rows=args.warmup_rows, values=args.values)
    except BenchTrlError as e:
        code, message = EXIT_BAD_INPUT, str(e)
    except TrlFailed as e:
        code, message = EXIT_TRL_FAILED, str(e)
    except MemoryError:
        code, message = EXIT_TRL_FAILED, "out of memory"
    except Exception as e:  # noqa: BLE001 - reported, with the traceback, as unexpected
        import traceback

        traceback.print_exc()
        code, message = EXIT_UNEXPECTED, f"unexpected failure: {type(e).__name__}: {e}"
    if code != EXIT_OK:
        _log(f"error: {message}")
        result = {"ok": False, "error": message, "exit_code": code}
    _emit(result, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())
