#!/usr/bin/env python3
"""Reference log-probs of preference rows in PyTorch eager mode, timed: the Python reference of
``bench --only byo``.

It computes what TRL's ``DPOTrainer`` computes with ``precompute_ref_log_probs=True``: for each
row's chosen and rejected sequence (prompt + completion, already tokenized and cut), under
``torch.no_grad()``, ``model(input_ids, attention_mask).logits``, ``log_softmax`` over the
vocabulary, the log-prob of each next token gathered, masked to the completion tokens and summed.
Micro-batches are laid out as TensorCache's runner lays them out: ``--micro-batch`` rows give one
forward pass over their chosen sequences followed by their rejected ones, right-padded with
``--pad-id`` to a multiple of ``--step-multiple`` positions.

Input (``--sequences``): JSON lines, one per row, ``{"chosen": [ids], "chosen_start": k,
"rejected": [ids], "rejected_start": k}`` where ``*_start`` is the first position whose token is
a completion token. Output on stdout: one JSON line per timed chunk (``--chunk-rows``), then one
JSON line with the rate, the threads, the time spent per phase and every row's values. With
``--step`` a caller can interleave its own measurements with the chunks: the script prints a
``ready`` line after its warm-up and waits for a line on stdin before each chunk.

Example::

    python scripts/bench_eager.py --hf-dir bench/work/byo/model/hf --sequences seqs.jsonl \\
        --micro-batch 16 --threads 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple


def read_sequences(path: str) -> List[Dict[str, Any]]:
    """The rows of ``path``, checked for the four keys."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            for key in ("chosen", "chosen_start", "rejected", "rejected_start"):
                if key not in row:
                    raise ValueError(f"{path} line {n}: field '{key}' is missing")
            rows.append(row)
    return rows


def padded_batches(rows: Sequence[Dict[str, Any]], micro_batch: int, pad_id: int,
                   step_multiple: int) -> List[Tuple[Any, Any, Any, List[int]]]:
    """Per micro-batch: ids, mask, counted-token mask (aligned with next tokens), slots.

    ``slots[s]`` is the batch row of sequence ``s`` (chosen ones first), or -1 for a sequence with
    no counted token, which gets no forward pass and the value 0.
    """
    import torch

    out = []
    for start in range(0, len(rows), micro_batch):
        micro = rows[start:start + micro_batch]
        seqs = [(r["chosen"], r["chosen_start"]) for r in micro]
        seqs += [(r["rejected"], r["rejected_start"]) for r in micro]
        slots, kept = [], []
        for ids, first in seqs:
            counted = max(0, len(ids) - max(1, first))
            slots.append(len(kept) if counted > 0 else -1)
            if counted > 0:
                kept.append((ids, first))
        longest = max([1] + [len(ids) for ids, _ in kept])
        steps = (longest + step_multiple - 1) // step_multiple * step_multiple
        ids_t = torch.full((max(1, len(kept)), steps), pad_id, dtype=torch.long)
        mask = torch.zeros((max(1, len(kept)), steps), dtype=torch.long)
        counted = torch.zeros((max(1, len(kept)), steps - 1), dtype=torch.float32)
        for r, (ids, first) in enumerate(kept):
            ids_t[r, :len(ids)] = torch.tensor(ids, dtype=torch.long)
            mask[r, :len(ids)] = 1
            counted[r, max(1, first) - 1:len(ids) - 1] = 1.0
        out.append((ids_t, mask, counted, slots) if kept else (None, None, None, slots))
    return out


def run_batches(model: Any, batches: Sequence[Tuple[Any, Any, Any, List[int]]], device: Any,
                phases: Optional[Dict[str, float]] = None) -> List[Tuple[float, float]]:
    """(chosen, rejected) sums of every row of ``batches``, in order."""
    import torch

    values: List[Tuple[float, float]] = []
    with torch.no_grad():
        for ids, mask, counted, slots in batches:
            sums: List[float] = []
            if ids is not None:
                t0 = time.perf_counter()
                ids_d, mask_d, counted_d = ids.to(device), mask.to(device), counted.to(device)
                logits = model(input_ids=ids_d, attention_mask=mask_d, use_cache=False).logits
                if device.type == "cuda":
                    torch.cuda.synchronize()
                t1 = time.perf_counter()
                logps = logits.log_softmax(-1)
                per_token = logps[:, :-1].gather(-1, ids_d[:, 1:].unsqueeze(-1)).squeeze(-1)
                sums = (per_token * counted_d).sum(1).tolist()
                t2 = time.perf_counter()
                if phases is not None:
                    phases["forward_s"] += t1 - t0
                    phases["log_softmax_gather_s"] += t2 - t1
            b = len(slots) // 2
            for i in range(b):
                c, r = slots[i], slots[b + i]
                values.append((sums[c] if c >= 0 else 0.0, sums[r] if r >= 0 else 0.0))
    return values


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench_eager.py",
        description="Time TRL's reference log-prob computation (forward, log_softmax, gather, "
                    "mask, sum) in PyTorch eager mode on pre-tokenized sequences; prints JSON.")
    parser.add_argument("--hf-dir", required=True, metavar="DIR",
                        help="the Hugging Face model directory (save_pretrained)")
    parser.add_argument("--sequences", required=True, metavar="FILE",
                        help="JSON lines {chosen, chosen_start, rejected, rejected_start}")
    parser.add_argument("--micro-batch", type=int, default=16, metavar="N",
                        help="rows per forward pass (2N sequences). Default: %(default)s")
    parser.add_argument("--threads", type=int, default=0, metavar="N",
                        help="torch.set_num_threads(N); 0 keeps torch's default")
    parser.add_argument("--pad-id", type=int, default=0, help="pad token id. Default: %(default)s")
    parser.add_argument("--step-multiple", type=int, default=16, metavar="N",
                        help="pad lengths to a multiple of N. Default: %(default)s")
    parser.add_argument("--warmup", type=int, default=2, metavar="N",
                        help="micro-batches run before timing. Default: %(default)s")
    parser.add_argument("--attn", default="eager", choices=("eager", "sdpa"),
                        help="attention implementation. Default: %(default)s (as exported)")
    parser.add_argument("--device", default="cpu", help="torch device. Default: %(default)s")
    parser.add_argument("--chunk-rows", type=int, default=0, metavar="N",
                        help="time the rows in chunks of N (a multiple of --micro-batch), one "
                             "JSON line each; 0: one chunk")
    parser.add_argument("--step", action="store_true",
                        help="print {\"ready\": true, ...} after the warm-up, then read a line "
                             "from stdin before each chunk (for a caller that interleaves "
                             "its own measurements)")
    return parser


def _emit(obj: Dict[str, Any]) -> None:
    print(json.dumps(obj), flush=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command line entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.micro_batch < 1 or args.step_multiple < 1 or args.threads < 0 or args.chunk_rows < 0:
        print("error: --micro-batch and --step-multiple must be >= 1, --threads and --chunk-rows "
              ">= 0", file=sys.stderr)
        return 2
    if args.chunk_rows % args.micro_batch != 0:
        print(f"error: --chunk-rows {args.chunk_rows} is not a multiple of --micro-batch "
              f"{args.micro_batch}", file=sys.stderr)
        return 2
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    t0 = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(args.hf_dir, dtype=torch.float32,
                                                 attn_implementation=args.attn).to(device).eval()
    load_s = time.perf_counter() - t0
    rows = read_sequences(args.sequences)
    t0 = time.perf_counter()
    batches = padded_batches(rows, args.micro_batch, args.pad_id, args.step_multiple)
    pad_s = time.perf_counter() - t0
    run_batches(model, batches[:args.warmup], device)
    per_chunk = (args.chunk_rows or len(rows)) // args.micro_batch or 1
    about = {
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "device": str(device),
        "attn_implementation": args.attn,
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "load_s": load_s,
        "pad_s": pad_s,
    }
    if args.step:
        _emit({"ready": True, **about})
    phases = {"forward_s": 0.0, "log_softmax_gather_s": 0.0, "cpu_s": 0.0}
    values: List[Tuple[float, float]] = []
    seconds = 0.0
    for k, first in enumerate(range(0, len(batches), per_chunk)):
        if args.step and not sys.stdin.readline():
            break  # the caller is gone
        chunk_phases = {"forward_s": 0.0, "log_softmax_gather_s": 0.0}
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        chunk_values = run_batches(model, batches[first:first + per_chunk], device, chunk_phases)
        took = time.perf_counter() - t0
        chunk_phases["cpu_s"] = time.process_time() - cpu0
        values += chunk_values
        seconds += took
        for key, v in chunk_phases.items():
            phases[key] += v
        _emit({"chunk": k, "rows": len(chunk_values), "seconds": took, **chunk_phases})
    _emit({
        "examples": len(values),
        "seconds": seconds,
        "examples_per_s": len(values) / seconds if seconds > 0 else 0.0,
        **about,
        "phases": phases,
        "chosen_logp": [c for c, _ in values],
        "rejected_logp": [r for _, r in values],
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
