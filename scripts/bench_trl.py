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
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

TRUNCATION_MODES = ("keep_start", "keep_end")
ROW_COLUMN = "bench_row"
EXIT_OK, EXIT_UNEXPECTED, EXIT_BAD_INPUT, EXIT_TRL_FAILED = 0, 1, 2, 3


class BenchTrlError(Exception):
    """A problem with the arguments or the input files; exit code 2."""


class TrlFailed(Exception):
    """TRL (or the model) failed while building the trainer or precomputing; exit code 3."""


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# memory
# --------------------------------------------------------------------------------------------


def _status_kib(key: str) -> Optional[int]:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def current_rss_bytes() -> Optional[int]:
    kib = _status_kib("VmRSS")
    return None if kib is None else kib * 1024


def max_rss_bytes() -> int:
    """``ru_maxrss`` of this process in bytes (Linux reports KiB, macOS bytes)."""
    value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return value if sys.platform == "darwin" else value * 1024


def reset_peak_rss() -> bool:
    """Reset the peak resident set size (``VmHWM``, and with it ``ru_maxrss``) to the current
    one; False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


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


def _timed_hash(record: Dict[str, Any], hash_module: Any) -> Any:
    """TRL's ``hash_module`` (the model's cache key), timed into ``record``."""

    def timed_hash(module: Any) -> Any:
        t = time.perf_counter()
        try:
            return hash_module(module)
        finally:
            record["_hash_end"] = time.perf_counter()
            record["_hash_seconds"] = record.get("_hash_seconds", 0.0) + record["_hash_end"] - t

    return timed_hash


def _make_trainer_class(record: Dict[str, Any], warmup_rows: int) -> Any:
    """A ``DPOTrainer`` whose ``_precompute_ref_logps`` runs TRL's own, warmed up and timed."""
    from trl import DPOTrainer

    class TimedDPOTrainer(DPOTrainer):
        def _precompute_ref_logps(self, dataset: Any, name: str, batch_size: int) -> Any:
            if "seconds" in record:  # only the training set is timed; nothing else is passed
                return super()._precompute_ref_logps(dataset, name, batch_size)
            record["prepare_seconds"] = time.perf_counter() - record["_init_start"]
            record["computed_rows"] = len(dataset)
            if len(dataset) == 0:
                raise BenchTrlError(f"TRL dropped every row: each prompt fills max_length "
                                    f"{self.args.max_length}")
            if warmup_rows:
                k = min(warmup_rows, len(dataset))
                t = time.perf_counter()
                super()._precompute_ref_logps(dataset.select(range(k)), name + "-warmup", batch_size)
                record["warmup_rows"] = k
                record["warmup_seconds"] = time.perf_counter() - t
            record.update({"_hash_seconds": 0.0, "_forward_seconds": 0.0, "_batches": 0,
                           "_sequences": 0, "_tokens": 0, "_padded_tokens": 0,
                           "_max_padded_length": 0, "_last_forward_end": None})
            record["rss_before_bytes"] = current_rss_bytes()
            record["peak_rss_before_bytes"] = max_rss_bytes()
            record["peak_reset"] = reset_peak_rss()
            record["_timing"] = True
            t0 = time.perf_counter()
            try:
                out = super()._precompute_ref_logps(dataset, name, batch_size)
            finally:
                record["_timing"] = False
            t1 = time.perf_counter()
            record["precompute_peak_rss_bytes"] = max_rss_bytes() if record["peak_reset"] else None
            record["seconds"] = t1 - t0
            hash_end = record.get("_hash_end", t0)
            last = record["_last_forward_end"] or hash_end
            record["phases"] = {"hash_seconds": record["_hash_seconds"],
                                "loop_seconds": last - hash_end,
                                "forward_seconds": record["_forward_seconds"],
                                "write_seconds": t1 - last}
            return out

        def compute_ref_log_probs(self, model: Any, inputs: Dict[str, Any]) -> Any:
            if not record.get("_timing"):
                return super().compute_ref_log_probs(model, inputs)
            t = time.perf_counter()
            out = super().compute_ref_log_probs(model, inputs)
            end = time.perf_counter()
            ids = inputs["input_ids"]
            record["_forward_seconds"] += end - t
            record["_last_forward_end"] = end
            record["_batches"] += 1
            record["_sequences"] += int(ids.shape[0])
            record["_tokens"] += int(inputs["attention_mask"].sum())
            record["_padded_tokens"] += int(ids.numel())
            record["_max_padded_length"] = max(record["_max_padded_length"], int(ids.shape[1]))
            return out

    return TimedDPOTrainer


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
    trainer_class = _make_trainer_class(record, warmup_rows)
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
        dpo.hash_module = _timed_hash(record, hash_module)
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
