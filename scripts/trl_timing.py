"""What ``bench_trl.py`` measures with: this process's resident memory, and TRL's own
``DPOTrainer`` with its reference precompute warmed up and timed (hashing, forward passes,
writing), phase by phase."""

from __future__ import annotations

import resource
import sys
import time
from typing import Any, Dict, Optional


class BenchTrlError(Exception):
    """A problem with the arguments or the input files; exit code 2."""


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


def timed_hash_module(record: Dict[str, Any], hash_module: Any) -> Any:
    """TRL's ``hash_module`` (the model's cache key), timed into ``record``."""

    def timed_hash(module: Any) -> Any:
        t = time.perf_counter()
        try:
            return hash_module(module)
        finally:
            record["_hash_end"] = time.perf_counter()
            record["_hash_seconds"] = record.get("_hash_seconds", 0.0) + record["_hash_end"] - t

    return timed_hash


def make_trainer_class(record: Dict[str, Any], warmup_rows: int) -> Any:
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
